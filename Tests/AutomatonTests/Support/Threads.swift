import Dispatch
import Foundation
import Testing

/// Runs `body(index)` on `count` new threads at once and waits for all of them, failing the test
/// (instead of hanging) if they have not finished within `timeout` seconds.
func runOnThreads(
    _ count: Int,
    timeout: Int = 60,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable (Int) -> Void
) {
    let group = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            start.wait()
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<count { start.signal() }
    let result = group.wait(timeout: .now() + .seconds(timeout))
    #expect(result == .success, "threads did not finish within \(timeout) s: deadlock or livelock", sourceLocation: sourceLocation)
}

/// Waits for `group`, failing the test instead of hanging if it takes longer than `timeout` seconds.
@discardableResult
func waitOrFail(
    _ group: DispatchGroup,
    timeout: Int = 60,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    let result = group.wait(timeout: .now() + .seconds(timeout))
    #expect(result == .success, "did not finish within \(timeout) s", sourceLocation: sourceLocation)
    return result == .success
}
