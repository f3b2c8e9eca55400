import Testing

@testable import Automaton

/// The waiter's phases, each order of its three parties (the engine's answer, the task's suspension,
/// its cancellation or time-out) played out deterministically on one thread.
@Suite("ReplyWaiter: every order of answer, suspension and cancellation")
struct ReplyWaiterTests {
    typealias Waiter = ReplyWaiter<Int, String>

    @Test("answered before the task suspends: the task resumes at once with the answer")
    func answerThenSuspend() async throws {
        let waiter = Waiter()
        waiter.answer(.success(.success("a", 0, 1)))
        let answer = await waiter.wait()
        #expect(try answer.get() == .success("a", 0, 1))
    }

    @Test("stopped, then answered, then suspended: the task gets its error, the answer is dropped")
    func stopThenAnswerThenSuspend() async {
        let waiter = Waiter()
        waiter.stopWaiting(with: .cancelled)
        waiter.answer(.success(.success("a", 0, 1)))
        let answer = await withUnsafeContinuation { waiter.suspend($0) }
        #expect(throws: AskError.cancelled) { try answer.get() }
    }

    @Test("answered, then stopped: the answer wins")
    func answerThenStop() async throws {
        let waiter = Waiter()
        waiter.answer(.success(.failure("a", 0)))
        waiter.stopWaiting(with: .timedOut)
        let answer = await waiter.wait()
        #expect(try answer.get() == .failure("a", 0))
    }

    @Test("suspended, then timed out, then answered: the task gets .timedOut, the late answer is dropped")
    func suspendThenStopThenAnswer() async {
        let waiter = Waiter()
        let task = Task { await waiter.wait() }
        // Wait until suspended: the stop then resumes it.
        while waiter.phase.withCriticalRegion({ if case .suspended = $0 { false } else { true } }) {
            await Task.yield()
        }
        waiter.stopWaiting(with: .timedOut)
        waiter.answer(.success(.success("a", 0, 1)))
        let answer = await task.value
        #expect(throws: AskError.timedOut) { try answer.get() }
    }
}
