import Foundation
import Testing

@Suite("Replaying reference-model cases by seed")
struct ReferenceModelReplayTests {
    /// Set `AUTOMATON_SEED` (and optionally `AUTOMATON_KIND`: sync-merge, sync-latest, time-latest or
    /// time-merge; all kinds when absent) to replay one case from a failure message.
    @Test(
        "the case of AUTOMATON_SEED agrees with the model",
        .enabled(if: ProcessInfo.processInfo.environment["AUTOMATON_SEED"] != nil)
    )
    func replaySeedFromEnvironment() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = try #require(environment["AUTOMATON_SEED"].flatMap(ModelCheck.parseSeed), "AUTOMATON_SEED is not a number")
        let kinds = try environment["AUTOMATON_KIND"].map { [try #require(CaseKind(rawValue: $0), "unknown AUTOMATON_KIND")] }
            ?? CaseKind.allCases
        for kind in kinds {
            let testCase = GeneratedCase.generate(seed: seed, kind: kind)
            print(testCase.replayText)
            print("Model:\n\(ReferenceModel.run(testCase).outcome)")
            var summary = ModelCheck.Summary(kind: kind)
            #expect(ModelCheck.check(seed: seed, kind: kind, summary: &summary))
        }
    }

    /// Seeds kept because their cases exercise a rule in a small case, or once failed.
    static let regressionSeeds: [(UInt64, CaseKind)] = [
        // An emitted input replaces its effect's child, dropping the child's queued input; a replies
        // observer's outside input replaces the root tree while its inputs are queued.
        (0x90ae_f1b0_8556_56e3, .synchronousLatest),
        // A state observer's input under .latest.
        (0xf1f6_363f_0339_a79a, .synchronousLatest),
        // A closure effect keeps replies open under .merge.
        (0x19c3_dd2f_3d6b_0ced, .synchronousMerge),
        // A Mapping table (no effects) with the state-function form.
        (0x244a_8e1b_c704_6aee, .synchronousMerge),
        // A replaced effect's scheduled emission never reaches the automaton.
        (0xd80c_7faa_b744_2650, .virtualTimeLatest),
        // An effect that ended before its last scheduled emission.
        (0xca3f_0bb7_419a_52ee, .virtualTimeMerge),
    ]

    @Test("regression seeds agree with the model", arguments: regressionSeeds.indices)
    func regressionSeed(index: Int) {
        let (seed, kind) = Self.regressionSeeds[index]
        var summary = ModelCheck.Summary(kind: kind)
        #expect(ModelCheck.check(seed: seed, kind: kind, summary: &summary))
    }
}
