import Automaton
import Signals
import Testing

@Suite("The .latest effect tree agrees with a reference model in virtual time (BRIEF §5.5)")
struct LatestTreeModelTests {
    // MARK: The model against the contract's text

    @Test("a replaced effect's scheduled emission never happens; the new effect's does")
    func replacedEffectEmissionNeverHappens() {
        let rows = [row(0, to: 1, .scheduled([Emission(input: 1, delay: 5)], completion: 5)), row(1, to: 2, .empty)]
        let testCase = handCase(.virtualTimeLatest, rows: rows, inputs: outside(0, 0, at: [0, 2]))
        expectModelAndAutomaton(
            testCase,
            Outcome(
                replies: [.value(.success(0, 0, 1)), .value(.success(0, 1, 1)), .value(.success(1, 1, 2)), .completed],
                states: [1, 1, 2],
                finalState: 2,
                mappingCalls: 3,
                scheduledEffectsEnded: [true, true]
            ))
    }

    /// Outside 2 at 0 starts E0, which emits 3 at instant 3. Outside 0 and 1 also come at instant 3.
    static let sameInstantRows = [
        row(2, to: 0, .scheduled([Emission(input: 3, delay: 3)], completion: 3)),
        row(0, to: 1, .empty),
        row(1, to: 2, .empty),
        row(3, to: 3, .empty),
    ]

    @Test(
        "actions due at the same instant run in scheduling order: outside inputs scheduled first replace E0 before it emits"
    )
    func sameInstantScheduledUpFront() {
        let inputs = outside(2, 0, 1, at: [0, 3, 3])
        expectModelAndAutomaton(
            handCase(.virtualTimeLatest, rows: Self.sameInstantRows, inputs: inputs),
            Outcome(
                replies: [.value(.success(2, 0, 0)), .value(.success(0, 0, 1)), .value(.success(1, 1, 2)), .completed],
                states: [0, 1, 2],
                finalState: 2,
                mappingCalls: 3,
                scheduledEffectsEnded: [true]
            ))
        expectModelAndAutomaton(
            handCase(.virtualTimeMerge, rows: Self.sameInstantRows, inputs: inputs),
            Outcome(
                replies: [
                    .value(.success(2, 0, 0)), .value(.success(0, 0, 1)), .value(.success(1, 1, 2)),
                    .value(.success(3, 2, 3)), .completed,
                ],
                states: [0, 1, 2, 3],
                finalState: 3,
                mappingCalls: 4,
                scheduledEffectsEnded: [true]
            ))
    }

    @Test("advancing the clock to an outside input's instant first runs the effect actions due then")
    func sameInstantAdvanceThenSend() {
        let inputs = outside(2, 0, 1, at: [0, 3, 3])
        let testCase = handCase(
            .virtualTimeLatest, rows: Self.sameInstantRows, inputs: inputs, delivery: .advanceThenSend)
        expectModelAndAutomaton(
            testCase,
            Outcome(
                replies: [
                    .value(.success(2, 0, 0)), .value(.success(3, 0, 3)), .value(.success(0, 3, 1)),
                    .value(.success(1, 1, 2)), .completed,
                ],
                states: [0, 3, 1, 2],
                finalState: 2,
                mappingCalls: 4,
                scheduledEffectsEnded: [true]
            ))
    }

    /// Outside 0 at instant 0 starts E0, which emits 1 at instant 2 and completes at 4; the case ends
    /// at instant 1, and another outside 0 comes at 3.
    static func endingCase(_ ending: Ending) -> GeneratedCase {
        var testCase = handCase(
            .virtualTimeLatest,
            rows: [row(0, to: 1, .scheduled([Emission(input: 1, delay: 2)], completion: 4)), row(1, to: 2, .empty)],
            inputs: outside(0, 0, at: [0, 3])
        )
        testCase.ending = ending
        testCase.endingPoint = .atTime(1)
        return testCase
    }

    @Test(
        "after the input signal completes, outside inputs are ignored, effects go on, and replies complete when the last one ends"
    )
    func inputCompletionLetsEffectsFinish() {
        expectModelAndAutomaton(
            Self.endingCase(.completeInput),
            Outcome(
                replies: [.value(.success(0, 0, 1)), .value(.success(1, 1, 2)), .completed],
                states: [1, 2],
                finalState: 2,
                mappingCalls: 2,
                scheduledEffectsEnded: [true]
            ))
    }

    @Test("interrupting the input signal disposes the running effects and interrupts replies")
    func inputInterruptionDisposesEffects() {
        expectModelAndAutomaton(
            Self.endingCase(.interruptInput),
            Outcome(
                replies: [.value(.success(0, 0, 1)), .interrupted],
                states: [1],
                finalState: 1,
                mappingCalls: 1,
                scheduledEffectsEnded: [true]
            ))
    }

    @Test("releasing the automaton completes replies and disposes the running effects")
    func releaseDisposesEffects() {
        expectModelAndAutomaton(
            Self.endingCase(.release),
            Outcome(
                replies: [.value(.success(0, 0, 1)), .completed],
                states: [1],
                finalState: 1,
                mappingCalls: 1,
                scheduledEffectsEnded: [true]
            ))
    }

    // MARK: Random cases

    @Test("under .latest, replies, states and effect lifetimes equal the model's on 700 random timed tables")
    func latestAgreesWithModelInVirtualTime() {
        let summary = ModelCheck.check(.virtualTimeLatest, count: ModelCheck.caseCount(default: 700))
        #expect(summary.disagreements.isEmpty)
        #expect(summary.casesDroppingTimedEmissions * 5 >= summary.cases)
        #expect(summary.casesWithCancellation * 3 >= summary.cases)
    }

    @Test("under .merge, replies, states and effect lifetimes equal the model's on 300 random timed tables")
    func mergeAgreesWithModelInVirtualTime() {
        let summary = ModelCheck.check(.virtualTimeMerge, count: ModelCheck.caseCount(default: 300))
        #expect(summary.disagreements.isEmpty)
    }
}
