import Testing

/// The thread helpers release what a body captured before they return: tests that assert what an
/// automaton's release does (its lifetime ends, its replies complete) read the outcome right after
/// `runOnThreads`, and a thread still holding the body would release the automaton later, elsewhere.
@Suite("Thread helpers release their bodies before returning")
struct ThreadHelperTests {
    final class Captured: Sendable {}

    @Test("runOnThreads: nothing the body captured is alive when it returns", arguments: 0..<50)
    func runOnThreadsReleases(round: Int) async {
        weak var alive: Captured?
        do {
            let captured = Captured()
            alive = captured
            await runOnThreads(4) { _ in _ = captured }
        }
        #expect(alive == nil)
    }

    @Test("onDedicatedThread: nothing the body captured is alive when it returns", arguments: 0..<50)
    func onDedicatedThreadReleases(round: Int) async {
        weak var alive: Captured?
        do {
            let captured = Captured()
            alive = captured
            let result = await onDedicatedThread { ObjectIdentifier(captured) }
            #expect(result != nil)
        }
        #expect(alive == nil)
    }
}
