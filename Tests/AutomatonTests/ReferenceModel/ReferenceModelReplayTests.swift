import Foundation
import Testing

@Suite("Replaying reference-model cases by seed")
struct ReferenceModelReplayTests {
    /// Set `AUTOMATON_SEED` (and optionally `AUTOMATON_KIND`: sync-merge, sync-latest, time-latest,
    /// time-merge, or the keyed kinds sync-keyed-merge, sync-keyed-latest, time-keyed-latest, time-keyed-merge; all kinds when absent) to replay one case from a failure message.
    @Test(
        "the case of AUTOMATON_SEED agrees with the model",
        .enabled(if: ProcessInfo.processInfo.environment["AUTOMATON_SEED"] != nil)
    )
    func replaySeedFromEnvironment() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = try #require(
            environment["AUTOMATON_SEED"].flatMap(ModelCheck.parseSeed), "AUTOMATON_SEED is not a number")
        let kinds =
            try environment["AUTOMATON_KIND"].map { [try #require(CaseKind(rawValue: $0), "unknown AUTOMATON_KIND")] }
            ?? CaseKind.allCases
        for kind in kinds {
            let testCase = GeneratedCase.generate(seed: seed, kind: kind)
            print(testCase.replayText)
            print("Model:\n\(ReferenceModel.run(testCase).outcome)")
            var summary = ModelCheck.Summary(kind: kind)
            #expect(ModelCheck.check(seed: seed, kind: kind, summary: &summary))
        }
    }

    /// Seeds kept because their cases exercise a rule in a small case, or once failed. A seed stands
    /// for a case of the current generator: when `GeneratedCase.generate` changes, pick them again.
    static let regressionSeeds: [(UInt64, CaseKind)] = [
        // An emitted input replaces its effect's child, dropping the child's queued input; an
        // observer's outside input replaces the root tree while its inputs are queued.
        (0xda3a_0b03_1814_cb34, .synchronousLatest),
        // A state observer's input under .latest.
        (0xa2c6_f552_57e4_af3c, .synchronousLatest),
        // The input signal is interrupted while effects run.
        (0x21d1_b428_173f_15de, .synchronousLatest),
        // A closure effect that keeps no `send` ends when it returns (it kept replies open before the
        // second edition's lifetime rules).
        (0x19c3_dd2f_3d6b_0ced, .synchronousMerge),
        // A Mapping table (no effects) with the state-function form.
        (0x6cf2_dbd8_11a0_e879, .synchronousMerge),
        // A replaced effect's scheduled emission never reaches the automaton.
        (0x5fd8_d772_f6c9_be77, .virtualTimeLatest),
        // Effects go on replying after the input signal completed.
        (0x129f_c122_e2c9_bc40, .virtualTimeLatest),
        // An effect that ended before its last scheduled emission.
        (0x66a5_1b84_ae84_394b, .virtualTimeMerge),
        // Releasing the automaton disposes running effects.
        (0x32d5_44ee_8ab8_b55d, .virtualTimeMerge),
        // An effect that ended with inputs queued, whose chain a later input replaces: it was reported
        // ended, then replaced (two terminal events for one effect) before the fix.
        (0xa0c0_d733_6a22_3370, .synchronousKeyedLatest),
    ]

    @Test("regression seeds agree with the model", arguments: regressionSeeds.indices)
    func regressionSeed(index: Int) {
        let (seed, kind) = Self.regressionSeeds[index]
        var summary = ModelCheck.Summary(kind: kind)
        #expect(ModelCheck.check(seed: seed, kind: kind, summary: &summary))
    }
}
