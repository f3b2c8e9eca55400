import Automaton
import Signals
import Testing

/// A search box: each query starts an async effect that waits 300 ms on a clock, then finds results.
enum SearchInput: Sendable, Equatable, CustomStringConvertible {
    case query(String)
    case found(String)

    var description: String {
        switch self {
        case let .query(text): "query(\(text))"
        case let .found(text): "found(\(text))"
        }
    }
}

@Suite("Async effects on virtual time (TestScheduler.clock)")
struct VirtualTimeEffectTests {
    @Test("under .latest, a new query cancels the sleeping effect of the previous one; only the last one finds")
    func latestCancelsSleepingEffect() async throws {
        let scheduler = TestScheduler()
        let clock = scheduler.clock
        let started = Recording<String>()
        let cancelled = Recording<String>()
        // The cancelled effect's task runs its `catch` on the concurrency pool, after the input that
        // cancelled it was processed: the test awaits it here rather than assuming it already ran.
        let (cancellations, cancellation) = AsyncStream<Void>.makeStream()
        let automaton = Automaton<String, SearchInput>(
            state: "idle",
            mapping: { _, input in
                switch input {
                case let .query(text):
                    let effect = SignalProducer<SearchInput, Never>(
                        operation: {
                            started.append(text)
                            do {
                                try await clock.sleep(for: .milliseconds(300))
                            } catch {
                                cancelled.append(text)
                                cancellation.yield()
                                throw error
                            }
                            return .found(text)
                        }, catch: { _ in .found("error") })
                    return ("searching \(text)", effect)
                case let .found(text):
                    return ("showing \(text)", .empty)
                }
            }, strategy: .latest)
        // Made before anything is sent, so no reply can be missed.
        var replies = automaton.replies.stream().makeAsyncIterator()

        automaton.send(.query("a"))
        await clock.waitForSleepers(1)
        await clock.advance(by: .milliseconds(200))
        automaton.send(.query("ab"))  // disposes the first effect: its task is cancelled, its sleep throws
        await clock.waitForSleepers(1)
        #expect(scheduler.pendingActionCount == 1)

        await clock.advance(by: .milliseconds(299))
        #expect(automaton.state.value == "searching ab")
        await clock.advance(by: .milliseconds(1))

        var seen: [String] = []
        for _ in 0..<3 {
            seen.append("\(try #require(await replies.next()))")
        }
        #expect(
            seen == [
                "success(query(a), idle => searching a)",
                "success(query(ab), searching a => searching ab)",
                "success(found(ab), searching ab => showing ab)",
            ])
        #expect(automaton.state.value == "showing ab")
        var cancellationIterator = cancellations.makeAsyncIterator()
        await cancellationIterator.next()
        #expect(started.values == ["a", "ab"])
        #expect(cancelled.values == ["a"])
        #expect(scheduler.pendingActionCount == 0)
        #expect(clock.sleeperCount == 0)
    }
}
