import Automaton
import Signals
import Testing

/// A hand-written case, for checking the model itself against the contract's text.
func handCase(
    _ kind: CaseKind,
    rows: [Row],
    inputs: [OutsideInput],
    delivery: OutsideDelivery = .scheduledUpFront,
    initialState: Int = 0,
    observerSends: [ObserverSend] = []
) -> GeneratedCase {
    GeneratedCase(
        seed: 0,
        kind: kind,
        stateCount: 4,
        inputCount: 4,
        initialState: initialState,
        hasEffects: true,
        rows: rows,
        inputs: inputs,
        delivery: delivery,
        observerSends: observerSends
    )
}

/// `input | any => toState | effect`.
func row(_ input: Int, to toState: Int, _ effect: EffectSpec) -> Row {
    Row(input: .value(input), target: .state(from: .any, to: toState), effect: effect)
}

/// Outside inputs sent with `automaton.send` at the given instants (0 by default).
func outside(_ inputs: Int..., at times: [Int]? = nil) -> [OutsideInput] {
    inputs.enumerated().map { OutsideInput(input: $0.element, time: times?[$0.offset] ?? 0, throughSignal: false) }
}

/// Expects both the model and the automaton to show exactly `expected`. If `expected` lists no effect
/// events, the model's and the automaton's are compared with each other instead.
func expectModelAndAutomaton(
    _ testCase: GeneratedCase,
    _ expected: Outcome,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    var model = ReferenceModel.run(testCase).outcome
    var automaton = runAutomaton(testCase)
    if expected.effectEvents.isEmpty {
        #expect(model.effectEvents == automaton.effectEvents, "effect events", sourceLocation: sourceLocation)
        model.effectEvents = []
        automaton.effectEvents = []
    }
    #expect(model == expected, "model", sourceLocation: sourceLocation)
    #expect(automaton == expected, "automaton", sourceLocation: sourceLocation)
}

/// `input | any => toState | effect.keyed(key, policy)`, or `| .cancel(key)`.
func row(_ input: Int, to toState: Int, _ effect: EffectSpec, _ keying: Keying) -> Row {
    Row(input: .value(input), target: .state(from: .any, to: toState), effect: effect, keying: keying)
}

@Suite("The automaton agrees with a reference model on random synchronous tables (BRIEF §5)")
struct ReferenceModelTests {
    // MARK: The model against the contract's text

    /// Outside 0 starts E0, which emits 1 then 2. 1 (from E0) starts E1, which queues 3 behind 2.
    static let emittedInputRows = [
        row(0, to: 1, .values([1, 2])),
        row(1, to: 2, .values([3])),
        row(2, to: 3, .empty),
        row(3, to: 0, .empty),
    ]

    @Test(
        "under .latest, an emitted input that succeeds cancels its effect's previous child, whose queued inputs are dropped"
    )
    func latestEmittedInputDropsPreviousChildInputs() {
        let testCase = handCase(.synchronousLatest, rows: Self.emittedInputRows, inputs: outside(0))
        expectModelAndAutomaton(
            testCase,
            Outcome(
                replies: [.value(.success(0, 0, 1)), .value(.success(1, 1, 2)), .value(.success(2, 2, 3)), .completed],
                states: [1, 2, 3],
                finalState: 3,
                mappingCalls: 3
            ))
    }

    @Test("under .merge, the same inputs all run, in FIFO order")
    func mergeRunsEveryEmittedInput() {
        let testCase = handCase(.synchronousMerge, rows: Self.emittedInputRows, inputs: outside(0))
        expectModelAndAutomaton(
            testCase,
            Outcome(
                replies: [
                    .value(.success(0, 0, 1)), .value(.success(1, 1, 2)), .value(.success(2, 2, 3)),
                    .value(.success(3, 3, 0)), .completed,
                ],
                states: [1, 2, 3, 0],
                finalState: 0,
                mappingCalls: 4
            ))
    }

    @Test("under .latest, a failed emitted input cancels nothing")
    func latestFailedInputCancelsNothing() {
        let rows = Self.emittedInputRows.filter { $0.input != .value(2) }
        let testCase = handCase(.synchronousLatest, rows: rows, inputs: outside(0))
        expectModelAndAutomaton(
            testCase,
            Outcome(
                replies: [
                    .value(.success(0, 0, 1)), .value(.success(1, 1, 2)), .value(.failure(2, 2)),
                    .value(.success(3, 2, 0)), .completed,
                ],
                states: [1, 2, 0],
                finalState: 0,
                mappingCalls: 4
            ))
    }

    @Test("a closure effect that keeps no send ends when it returns: replies complete under either strategy")
    func closureEffectWithoutSendEnds() {
        let rows = [row(0, to: 1, .closure([])), row(1, to: 2, .empty)]
        let replies: [Event<Reply<Int, Int>, Never>] = [.value(.success(0, 0, 1)), .value(.success(1, 1, 2))]
        expectModelAndAutomaton(
            handCase(.synchronousLatest, rows: rows, inputs: outside(0, 1)),
            Outcome(replies: replies + [.completed], states: [1, 2], finalState: 2, mappingCalls: 2)
        )
        expectModelAndAutomaton(
            handCase(.synchronousMerge, rows: rows, inputs: outside(0, 1)),
            Outcome(replies: replies + [.completed], states: [1, 2], finalState: 2, mappingCalls: 2)
        )
    }

    /// Outside 0 starts E0, which emits 3; a replies observer sends 1 when it sees the first reply.
    static let observerRows = [row(0, to: 1, .values([3])), row(3, to: 2, .empty), row(1, to: 3, .empty)]

    @Test(
        "an input a replies observer sends with automaton.send is queued at once: under .latest it replaces E0 and drops its queued input"
    )
    func observerSendIsQueuedAtOnce() {
        let inputs = [OutsideInput(input: 0, time: 0, throughSignal: true)]
        let send = ObserverSend(after: 1, watchesState: false, input: 1, throughSignal: false)
        let testCase = handCase(.synchronousLatest, rows: Self.observerRows, inputs: inputs, observerSends: [send])
        expectModelAndAutomaton(
            testCase,
            Outcome(
                replies: [.value(.success(0, 0, 1)), .value(.success(1, 1, 3)), .completed],
                states: [1, 3],
                finalState: 3,
                mappingCalls: 2
            ))
    }

    @Test(
        "an input a replies observer sends into the input signal while it delivers waits for the signal: it comes after the inputs queued meanwhile"
    )
    func observerSendThroughDeliveringSignalWaits() {
        let inputs = [OutsideInput(input: 0, time: 0, throughSignal: true)]
        let send = ObserverSend(after: 1, watchesState: false, input: 1, throughSignal: true)
        let testCase = handCase(.synchronousLatest, rows: Self.observerRows, inputs: inputs, observerSends: [send])
        expectModelAndAutomaton(
            testCase,
            Outcome(
                replies: [.value(.success(0, 0, 1)), .value(.success(3, 1, 2)), .value(.success(1, 2, 3)), .completed],
                states: [1, 2, 3],
                finalState: 3,
                mappingCalls: 3
            ))
    }

    // MARK: Random cases

    @Test("under .merge, replies, states and the final state equal the model's on 1,200 random tables")
    func mergeAgreesWithModel() {
        let summary = ModelCheck.check(.synchronousMerge, count: ModelCheck.caseCount(default: 1_200))
        #expect(summary.disagreements.isEmpty)
        #expect(summary.failures > 0 && summary.failures < summary.replies)
    }

    @Test("under .latest, replies, states and the final state equal the model's on 1,200 random tables")
    func latestAgreesWithModel() {
        let summary = ModelCheck.check(.synchronousLatest, count: ModelCheck.caseCount(default: 1_200))
        #expect(summary.disagreements.isEmpty)
        // The generator must reach the interesting rule: queued inputs of a replaced effect dropped.
        #expect(summary.casesDroppingQueuedInputs * 10 >= summary.cases)
        #expect(summary.casesWithCancellation * 4 >= summary.cases)
        #expect(summary.casesReplacingRootWithQueuedInputs * 50 >= summary.cases)
    }
}
