import Automaton
import Signals
import Testing

/// An effect event of the model's outcomes: effect `id`, keyed `key` (if any), after `replies` replies.
private func event(_ id: UInt64, key: Int?, _ kind: EffectEvent<Int>.Kind, after replies: Int) -> TimedEffectEvent {
    TimedEffectEvent(
        event: .value(EffectEvent(id: id, key: key.map(EffectKey.init), kind: kind)), afterReplies: replies)
}

@Suite("Keyed effects agree with a reference model: replies, states and effect events (BRIEF §5.9)")
struct KeyedEffectModelTests {
    // MARK: The model against the contract's text

    @Test(
        "under .queue, a second effect of the key waits and starts when the first ends, with its input; events interleave with replies"
    )
    func queuedEffectStartsWhenTheRunningOneEnds() {
        let rows = [row(0, to: 1, .scheduled([], completion: 5), .keyed(0, .queue))]
        let testCase = handCase(.virtualTimeKeyedMerge, rows: rows, inputs: outside(0, 0, at: [0, 1]))
        expectModelAndAutomaton(
            testCase,
            Outcome(
                replies: [.value(.success(0, 0, 1)), .value(.success(0, 1, 1)), .completed],
                states: [1, 1],
                finalState: 1,
                mappingCalls: 2,
                scheduledEffectsEnded: [true, true],
                effectEvents: [
                    event(0, key: 0, .started(by: 0), after: 1),
                    // The second input's effect waits: no event yet.
                    event(0, key: 0, .ended, after: 2),
                    event(1, key: 0, .started(by: 0), after: 2),
                    event(1, key: 0, .ended, after: 2),
                    TimedEffectEvent(event: .completed, afterReplies: 3),
                ]
            ))
    }

    @Test(
        "under .first, a second effect is dropped; an unrelated input cancels nothing; a cancel row cancels the running one before its reply"
    )
    func firstDropsAndCancelRowCancels() {
        let rows = [
            row(0, to: 1, .pending([]), .keyed(0, .first)),
            row(1, to: 2, .empty, .cancel([0])),
            row(2, to: 3, .empty),
        ]
        var testCase = handCase(.synchronousKeyedLatest, rows: rows, inputs: outside(0, 2, 0, 1, 0))
        testCase.ending = .release
        expectModelAndAutomaton(
            testCase,
            Outcome(
                replies: [
                    .value(.success(0, 0, 1)), .value(.success(2, 1, 3)), .value(.success(0, 3, 1)),
                    .value(.success(1, 1, 2)), .value(.success(0, 2, 1)), .completed,
                ],
                states: [1, 3, 1, 2, 1],
                finalState: 1,
                mappingCalls: 5,
                effectEvents: [
                    event(0, key: 0, .started(by: 0), after: 1),
                    event(1, key: 0, .cancelled(.dropped(by: 0)), after: 3),
                    event(0, key: 0, .cancelled(.cancelled(by: 1)), after: 3),
                    event(2, key: 0, .started(by: 0), after: 5),
                    event(2, key: 0, .cancelled(.released), after: 6),
                    TimedEffectEvent(event: .completed, afterReplies: 6),
                ]
            ))
    }

    @Test("under .latest (the key's policy), a new effect replaces the running one and what its inputs started")
    func latestKeyReplacesTheChain() {
        // 0 starts K (keyed, pending), which emits 1; 1 starts E (un-keyed, pending) as K's child.
        let rows = [
            row(0, to: 1, .pending([1]), .keyed(0, .latest)),
            row(1, to: 2, .pending([])),
        ]
        var testCase = handCase(.synchronousKeyedLatest, rows: rows, inputs: outside(0, 0))
        testCase.ending = .interruptInput
        expectModelAndAutomaton(
            testCase,
            Outcome(
                replies: [
                    .value(.success(0, 0, 1)), .value(.success(1, 1, 2)), .value(.success(0, 2, 1)),
                    .value(.success(1, 1, 2)), .interrupted,
                ],
                states: [1, 2, 1, 2],
                finalState: 2,
                mappingCalls: 4,
                effectEvents: [
                    event(0, key: 0, .started(by: 0), after: 1),
                    event(1, key: nil, .started(by: 1), after: 2),
                    event(0, key: 0, .cancelled(.replaced(by: 0)), after: 2),
                    event(1, key: nil, .cancelled(.replaced(by: 0)), after: 2),
                    event(2, key: 0, .started(by: 0), after: 3),
                    event(3, key: nil, .started(by: 1), after: 4),
                    event(2, key: 0, .cancelled(.interrupted), after: 4),
                    event(3, key: nil, .cancelled(.interrupted), after: 4),
                    TimedEffectEvent(event: .interrupted, afterReplies: 5),
                ]
            ))
    }

    // MARK: Random cases

    /// Checks `count` cases of `kind` and that the generator reached every keyed rule.
    private func check(_ kind: CaseKind, count: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let summary = ModelCheck.check(
            kind, count: ModelCheck.caseCount(default: count), sourceLocation: sourceLocation)
        #expect(summary.disagreements.isEmpty, sourceLocation: sourceLocation)
        #expect(summary.casesReplacingByKey * 20 >= summary.cases, "replacing by key", sourceLocation: sourceLocation)
        #expect(summary.casesCancellingByKey * 20 >= summary.cases, "cancelling by key", sourceLocation: sourceLocation)
        #expect(summary.casesDroppingByKey * 20 >= summary.cases, "dropping (first)", sourceLocation: sourceLocation)
        #expect(summary.casesQueueingByKey * 20 >= summary.cases, "queueing", sourceLocation: sourceLocation)
        if kind.usesVirtualTime {
            #expect(
                summary.casesStartingAfterWaiting * 20 >= summary.cases, "starting after waiting",
                sourceLocation: sourceLocation)
        }
    }

    @Test("synchronous effects under .latest: keyed tables agree with the model on 200 random cases")
    func synchronousLatest() {
        check(.synchronousKeyedLatest, count: 200)
    }

    @Test("synchronous effects under .merge: keyed tables agree with the model on 150 random cases")
    func synchronousMerge() {
        check(.synchronousKeyedMerge, count: 150)
    }

    @Test("virtual-time effects under .latest: keyed tables agree with the model on 200 random cases")
    func virtualTimeLatest() {
        check(.virtualTimeKeyedLatest, count: 200)
    }

    @Test("virtual-time effects under .merge: keyed tables agree with the model on 150 random cases")
    func virtualTimeMerge() {
        check(.virtualTimeKeyedMerge, count: 150)
    }
}
