import Foundation
import Testing

/// The long tests (10,000,000-step chains, memory over 10,000,000 inputs) run only when `LONG_TESTS` is
/// set, as in CI's release job: `LONG_TESTS=1 swift test -c release -Xswiftc -enable-testing`.
enum LongTests {
    static var isEnabled: Bool {
        ProcessInfo.processInfo.environment["LONG_TESTS"] != nil
    }
}

extension Tag {
    /// A test that takes minutes in a debug build; see `LongTests`.
    @Tag static var long: Self
}

/// Objects whose instances are counted, to prove that nothing an automaton used stays alive.
final class LiveObject: Sendable {
    private static let live = LiveCount()

    init() { Self.live.add(1) }
    deinit { Self.live.add(-1) }

    static var count: Int { live.value }
}

private final class LiveCount: @unchecked Sendable {
    // Safe: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0

    func add(_ delta: Int) {
        lock.lock()
        count += delta
        lock.unlock()
    }

    var value: Int {
        lock.lock()
        defer { lock.unlock() }
        return count
    }
}

/// The process's resident memory in bytes, from /proc/self/status (Linux only; nil elsewhere).
func residentMemory() -> Int? {
    #if os(Linux)
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").compactMap { Int($0) }.first
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    #else
        return nil
    #endif
}
