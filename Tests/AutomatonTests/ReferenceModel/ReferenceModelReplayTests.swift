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
    ]

    @Test("regression seeds agree with the model", arguments: regressionSeeds.indices)
    func regressionSeed(index: Int) {
        let (seed, kind) = Self.regressionSeeds[index]
        var summary = ModelCheck.Summary(kind: kind)
        #expect(ModelCheck.check(seed: seed, kind: kind, summary: &summary))
    }
}
