import Dispatch
import Foundation
import Testing

@testable import Automaton

// The reply waiter's phases, driven one by one: every order in which the engine's answer, the task's
// suspension and the end of its wait (cancellation, time-out) can come.

@Suite("Ask: the reply waiter, in every order of answer, suspension and end of the wait")
struct AskReplyWaiterTests {
    private typealias Waiter = ReplyWaiter<Int, Int>
    private static let reply = Reply<Int, Int>.success(1, 0, 1)

    @Test(
        "the wait ends (cancelled, timed out), then the answer comes, then the task suspends: it gets the error",
        arguments: [AskError.cancelled, .timedOut])
    func endedThenAnsweredThenSuspended(error: AskError) async {
        let waiter = Waiter()
        waiter.stopWaiting(with: error)
        waiter.answer(.success(Self.reply))
        #expect(await waiter.wait() == .failure(error))
    }

    @Test("the wait ends, then the task suspends, then the answer comes: it gets the error, the answer is dropped")
    func endedThenSuspendedThenAnswered() async {
        let waiter = Waiter()
        waiter.stopWaiting(with: .timedOut)
        #expect(await waiter.wait() == .failure(.timedOut))
        waiter.answer(.success(Self.reply))
    }

    @Test("the answer comes, then the wait ends, then the task suspends: the answer wins")
    func answeredThenEndedThenSuspended() async {
        let waiter = Waiter()
        waiter.answer(.success(Self.reply))
        waiter.stopWaiting(with: .cancelled)
        #expect(await waiter.wait() == .success(Self.reply))
    }

    @Test("the answer comes before the task looks: taken without suspending")
    func answeredThenTaken() {
        let waiter = Waiter()
        waiter.answer(.success(Self.reply))
        #expect(waiter.takeAnswer() == .success(Self.reply))
    }
}
