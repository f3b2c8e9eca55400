import Dispatch
import Foundation
import Signals
import Testing

// Tests that block or compute for long do it on threads of their own and `await` the result, so they
// never hold one of the few threads Swift Testing runs tests on (2 on this kind of machine): holding
// them starves the asynchronous tests running in parallel.

/// Runs `body` on a new thread with a stack of `stackSize` bytes and returns its result, failing the
/// test (and returning nil) if it has not finished within `timeout` seconds.
func onDedicatedThread<Result: Sendable>(
    stackSize: Int = 1 << 20,
    timeout: Int = 300,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () -> Result
) async -> Result? {
    let outcome = Locked<Result?>(nil)
    let done = DispatchGroup()
    done.enter()
    let slot = BodySlot(body)
    let thread = Thread {
        let result = slot.take()()
        outcome.withCriticalRegion { $0 = result }
        done.leave()
    }
    thread.stackSize = stackSize
    thread.start()
    guard await waitOrFail(done, timeout: timeout, sourceLocation: sourceLocation) else { return nil }
    return outcome.withCriticalRegion { $0 }
}

/// Runs `body(index)` on `count` new threads at once and waits for all of them, failing the test
/// (instead of hanging) if they have not finished within `timeout` seconds.
func runOnThreads(
    _ count: Int,
    timeout: Int = 300,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable (Int) -> Void
) async {
    let group = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        group.enter()
        let slot = BodySlot(body)
        let thread = Thread {
            start.wait()
            slot.take()(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    for _ in 0..<count { start.signal() }
    await waitOrFail(group, timeout: timeout, sourceLocation: sourceLocation)
}

/// Hands a thread's body to it once, so that what the body captured (an automaton, say) is released
/// when the body returns, before the waiter is told the thread finished. A `Thread` keeps its block
/// until the thread exits, after that; a test asserting what a release does would otherwise race it.
final class BodySlot<Body: Sendable>: Sendable {
    private let body: Locked<Body?>

    init(_ body: Body) {
        self.body = Locked(body)
    }

    /// The body, which the slot no longer holds. Called once.
    func take() -> Body {
        guard
            let taken = body.withCriticalRegion({ slot in
                defer { slot = nil }; return slot
            })
        else {
            preconditionFailure("a thread's body is taken once")
        }
        return taken
    }
}

/// Waits for `group` on a thread of its own, failing the test instead of hanging if it takes longer
/// than `timeout` seconds.
@discardableResult
func waitOrFail(
    _ group: DispatchGroup,
    timeout: Int = 300,
    sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    let finished = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        Thread {
            continuation.resume(returning: group.wait(timeout: .now() + .seconds(timeout)) == .success)
        }.start()
    }
    #expect(finished, "did not finish within \(timeout) s: deadlock or livelock", sourceLocation: sourceLocation)
    return finished
}

/// Lets `parties` threads begin each round together, so that what they do next races as closely as
/// it can: `arrive()` returns once every party has arrived, or false after `timeout` seconds (a party
/// that failed), so a broken test fails instead of hanging.
final class Rendezvous: @unchecked Sendable {
    // Safe: `arrived` and `round` are only read or written while `condition` is locked.
    private let condition = NSCondition()
    private let parties: Int
    private var arrived = 0
    private var round = 0

    init(parties: Int) {
        self.parties = parties
    }

    @discardableResult
    func arrive(timeout: TimeInterval = 60) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let current = round
        arrived += 1
        if arrived == parties {
            arrived = 0
            round += 1
            condition.broadcast()
            return true
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while round == current {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }
}

/// Waits for what another thread signals, without holding one of Swift Testing's threads.
enum Watchdog {
    /// Waits on a thread of its own for `semaphore`, up to `seconds`; false if it was not signalled.
    static func signalled(_ semaphore: DispatchSemaphore, within seconds: Double = 300) async -> Bool {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: semaphore.wait(timeout: .now() + seconds) == .success)
            }
        }
    }
}
