import Automaton
import Signals
import Testing

@Suite("Input completion, interruption and release (BRIEF §5.6, §5.7)")
struct TerminationTests {
    @Test("input completion with no running effect completes the replies at once and stops outside inputs")
    func inputCompletionWithoutEffects() {
        let (input, inputObserver) = Signal<TreeInput, Never>.pipe()
        let automaton = Automaton(state: 0, input: input, mapping: { state, _ in state + 1 })
        let replies = automaton.replies.record()

        inputObserver.send(value: .start)
        inputObserver.sendCompleted()
        automaton.send(.start)

        #expect(replies.values == [.value(.success(.start, 0, 1)), .completed])
        #expect(automaton.state.value == 1)
    }

    @Test("input completion during a running effect: its inputs are still processed; replies complete when it ends")
    func inputCompletionDuringEffect() {
        let effect = ControlledEffect<TreeInput>()
        let (input, inputObserver) = Signal<TreeInput, Never>.pipe()
        let automaton = Automaton(
            state: 0, input: input,
            mapping: { state, input in
                input == .start ? (state + 1, effect.producer) : (state + 10, .empty)
            })
        let replies = automaton.replies.record()

        inputObserver.send(value: .start)
        inputObserver.sendCompleted()
        automaton.send(.child)  // ignored: no more outside inputs
        effect.runs[0].observer.send(value: .child)
        #expect(replies.values == [.value(.success(.start, 0, 1)), .value(.success(.child, 1, 11))])

        effect.runs[0].observer.sendCompleted()

        #expect(
            replies.values == [
                .value(.success(.start, 0, 1)),
                .value(.success(.child, 1, 11)),
                .completed,
            ])
        #expect(effect.liveRuns == [])
    }

    @Test("input interruption disposes running effects and interrupts the replies")
    func inputInterruption() {
        let effect = ControlledEffect<TreeInput>()
        let (input, inputObserver) = Signal<TreeInput, Never>.pipe()
        let automaton = Automaton(state: 0, input: input, mapping: { state, _ in (state + 1, effect.producer) })
        let replies = automaton.replies.record()

        inputObserver.send(value: .start)
        inputObserver.send(value: .start)
        inputObserver.sendInterrupted()
        effect.runs[0].observer.send(value: .child)

        #expect(effect.liveRuns == [])
        #expect(
            replies.values == [
                .value(.success(.start, 0, 1)),
                .value(.success(.start, 1, 2)),
                .interrupted,
            ])
    }

    @Test("release before any effect: replies complete, then state completes, and the automaton is freed")
    func releaseWithoutEffects() {
        let (input, inputObserver) = Signal<TreeInput, Never>.pipe()
        var automaton: Automaton<Int, TreeInput>? = Automaton(
            state: 0, input: input, mapping: { state, _ in state + 1 })
        weak let weakAutomaton = automaton
        let log = Recording<String>()
        automaton?.replies.observe { log.append("reply \($0)") }
        automaton?.state.signal.observe { log.append("state \($0)") }
        inputObserver.send(value: .start)

        automaton = nil

        #expect(weakAutomaton == nil)
        #expect(
            log.values == [
                "state value(1)", "reply value(success(start, 0 => 1))", "reply completed", "state completed",
            ])
        inputObserver.send(value: .start)  // nothing left to receive it
        #expect(log.count == 4)
    }

    @Test("release during a running effect: replies complete, then the effect is disposed, then state completes")
    func releaseDuringEffect() {
        let log = Recording<String>()
        let effect = ControlledEffect<TreeInput>("effect", log: log)
        var automaton: Automaton<Int, TreeInput>? = Automaton(
            state: 0,
            mapping: { state, _ in (state + 1, effect.producer) },
            strategy: .merge
        )
        weak let weakAutomaton = automaton
        automaton?.replies.observe { log.append("reply \($0)") }
        automaton?.state.signal.observe { log.append("state \($0)") }
        automaton?.send(.start)

        automaton = nil
        effect.runs[0].observer.send(value: .child)  // after release: ignored

        #expect(weakAutomaton == nil)
        #expect(
            log.values == [
                "state value(1)", "reply value(success(start, 0 => 1))", "start effect#0",
                "reply completed", "end effect#0", "state completed",
            ])
    }
}
