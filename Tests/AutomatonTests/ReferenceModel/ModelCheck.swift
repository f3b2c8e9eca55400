import Foundation
import Testing

/// Runs many random cases of one kind through the model and the automaton, and records an issue (with
/// the seed and a shrunk, printable case) for each disagreement.
enum ModelCheck {
    /// What a batch of cases exercised.
    struct Summary: CustomStringConvertible {
        let kind: CaseKind
        var cases = 0
        var disagreements: [UInt64] = []
        var replies = 0
        var failures = 0
        var casesWithCancellation = 0
        var casesDroppingQueuedInputs = 0
        var casesDroppingTimedEmissions = 0
        var casesBlowingFuse = 0
        var casesReplacingRootWithQueuedInputs = 0
        var casesReplyingAfterInputCompleted = 0
        var casesDisposingEffectsAtEnd = 0
        var casesReplacingByKey = 0
        var casesCancellingByKey = 0
        var casesDroppingByKey = 0
        var casesQueueingByKey = 0
        var casesStartingAfterWaiting = 0
        var duration = Duration.zero

        var description: String {
            "\(kind): \(cases) cases, \(replies) replies (\(failures) failures) in \(duration); "
                + "cases with a cancellation: \(casesWithCancellation), dropping queued inputs: "
                + "\(casesDroppingQueuedInputs), dropping timed emissions: \(casesDroppingTimedEmissions), "
                + "replacing the root tree with inputs queued: \(casesReplacingRootWithQueuedInputs), "
                + "replying after the input completed: \(casesReplyingAfterInputCompleted), "
                + "disposing running effects at the end: \(casesDisposingEffectsAtEnd), "
                + "blowing the fuse: \(casesBlowingFuse)"
                + (kind.usesKeys
                    ? "; keyed: replacing \(casesReplacingByKey), cancelling \(casesCancellingByKey), dropping "
                        + "\(casesDroppingByKey), queueing \(casesQueueingByKey), starting after waiting \(casesStartingAfterWaiting)"
                    : "")
                + "; disagreements: \(disagreements.map { "0x" + String($0, radix: 16) })"
        }
    }

    /// How many cases to run: `defaultCount`, or `AUTOMATON_CASES` from the environment (for a longer
    /// soak run).
    static func caseCount(default defaultCount: Int) -> Int {
        ProcessInfo.processInfo.environment["AUTOMATON_CASES"].flatMap { Int($0) } ?? defaultCount
    }

    /// The seeds of a run: fixed, so that every CI run checks the same cases (and a failure there is a
    /// failure here). `AUTOMATON_SEED_BASE` picks another family of cases for a soak run.
    static func baseSeed(for kind: CaseKind) -> UInt64 {
        let base =
            ProcessInfo.processInfo.environment["AUTOMATON_SEED_BASE"].flatMap(parseSeed) ?? 0x5EED_A170_3A70_0000
        let tag: UInt64
        switch kind {
        case .synchronousMerge: tag = 1
        case .synchronousLatest: tag = 2
        case .virtualTimeLatest: tag = 3
        case .virtualTimeMerge: tag = 4
        case .synchronousKeyedMerge: tag = 5
        case .synchronousKeyedLatest: tag = 6
        case .virtualTimeKeyedLatest: tag = 7
        case .virtualTimeKeyedMerge: tag = 8
        }
        return base &+ tag &* 0x1_0000_0001
    }

    /// Parses `0x1f`, `1F` (hexadecimal) or `31` (decimal, when it has no hexadecimal letter).
    static func parseSeed(_ text: String) -> UInt64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        if trimmed.hasPrefix("0x") { return UInt64(trimmed.dropFirst(2), radix: 16) }
        return UInt64(trimmed) ?? UInt64(trimmed, radix: 16)
    }

    /// Checks `count` cases of `kind`; stops recording details after three disagreements.
    @discardableResult
    static func check(
        _ kind: CaseKind,
        count: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Summary {
        var summary = Summary(kind: kind)
        let clock = ContinuousClock()
        let start = clock.now
        let base = baseSeed(for: kind)
        for index in 0..<count {
            let seed = SeededGenerator.caseSeed(base: base, index: index)
            let passed = check(seed: seed, kind: kind, summary: &summary, sourceLocation: sourceLocation)
            if !passed, summary.disagreements.count >= 3 { break }
        }
        summary.duration = clock.now - start
        print("ModelCheck \(summary)")
        return summary
    }

    /// Checks the case `seed` stands for; records an issue if the automaton disagrees with the model.
    @discardableResult
    static func check(
        seed: UInt64,
        kind: CaseKind,
        summary: inout Summary,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let testCase = GeneratedCase.generate(seed: seed, kind: kind)
        let (expected, coverage) = ReferenceModel.run(testCase)
        let actual = runAutomaton(testCase)
        summary.cases += 1
        summary.replies += expected.mappingCalls
        summary.failures += coverage.failures
        if coverage.cancelledEffects > 0 { summary.casesWithCancellation += 1 }
        if coverage.droppedQueuedInputs > 0 { summary.casesDroppingQueuedInputs += 1 }
        if coverage.droppedTimedEmissions > 0 { summary.casesDroppingTimedEmissions += 1 }
        if coverage.fuseBlew { summary.casesBlowingFuse += 1 }
        if coverage.outsideReplacementsWithQueuedInputs > 0 { summary.casesReplacingRootWithQueuedInputs += 1 }
        if coverage.repliesAfterInputCompleted > 0 { summary.casesReplyingAfterInputCompleted += 1 }
        if coverage.effectsDisposedByEnding > 0 { summary.casesDisposingEffectsAtEnd += 1 }
        if coverage.keyedReplacements > 0 { summary.casesReplacingByKey += 1 }
        if coverage.keyedCancellations > 0 { summary.casesCancellingByKey += 1 }
        if coverage.keyedDrops > 0 { summary.casesDroppingByKey += 1 }
        if coverage.keyedWaits > 0 { summary.casesQueueingByKey += 1 }
        if coverage.keyedStartsAfterWaiting > 0 { summary.casesStartingAfterWaiting += 1 }
        guard actual != expected else { return true }

        summary.disagreements.append(seed)
        let shrunk = shrink(testCase)
        let shrunkExpected = ReferenceModel.run(shrunk).outcome
        let shrunkActual = runAutomaton(shrunk)
        Issue.record(
            """
            The automaton disagrees with the reference model: seed 0x\(String(seed, radix: 16)), kind \(kind).
            Replay: AUTOMATON_SEED=0x\(String(seed, radix: 16)) AUTOMATON_KIND=\(kind) swift test --filter ReferenceModelReplayTests
            Shrunk case (\(shrunk.rows.count) rows, \(shrunk.inputs.count) inputs); first difference at \(shrunkExpected.firstDifference(from: shrunkActual)):
            \(shrunk.replayText)
            Model:
            \(shrunkExpected)
            Automaton:
            \(shrunkActual)
            """,
            sourceLocation: sourceLocation
        )
        return false
    }

    /// Whether the automaton disagrees with the model on `testCase`.
    static func disagrees(_ testCase: GeneratedCase) -> Bool {
        ReferenceModel.run(testCase).outcome != runAutomaton(testCase)
    }

    /// A smaller case that still disagrees: removes outside inputs, rows and effect emissions, and
    /// replaces effects with `.empty`, one at a time, for as long as the disagreement remains.
    static func shrink(_ failing: GeneratedCase) -> GeneratedCase {
        var current = failing
        var attempts = 0
        func keep(_ candidate: GeneratedCase) -> Bool {
            attempts += 1
            guard disagrees(candidate) else { return false }
            current = candidate
            return true
        }
        var progressed = true
        while progressed, attempts < 5_000 {
            progressed = false
            var index = 0
            while index < current.inputs.count, current.inputs.count > 1 {
                if keep(current.removingInput(at: index)) { progressed = true } else { index += 1 }
            }
            index = 0
            while index < current.rows.count, current.rows.count > 1 {
                var candidate = current
                candidate.rows.remove(at: index)
                if keep(candidate) { progressed = true } else { index += 1 }
            }
            for rowIndex in current.rows.indices {
                guard let effect = current.rows[rowIndex].effect else { continue }
                if effect != .empty {
                    var candidate = current
                    candidate.rows[rowIndex].effect = .empty
                    if keep(candidate) {
                        progressed = true
                        continue
                    }
                }
                var emission = 0
                while let smaller = current.rows[rowIndex].effect?.removingEmission(at: emission) {
                    var candidate = current
                    candidate.rows[rowIndex].effect = smaller
                    if keep(candidate) { progressed = true } else { emission += 1 }
                }
            }
            for rowIndex in current.rows.indices where current.rows[rowIndex].keying != nil {
                var candidate = current
                candidate.rows[rowIndex].keying = nil
                if keep(candidate) { progressed = true }
            }
            index = 0
            while index < current.observerSends.count {
                var candidate = current
                candidate.observerSends.remove(at: index)
                if keep(candidate) { progressed = true } else { index += 1 }
            }
            if current.endingPoint != .afterEverything {
                var candidate = current
                candidate.endingPoint = .afterEverything
                if keep(candidate) { progressed = true }
            }
            if current.ending != .completeInput {
                var candidate = current
                candidate.ending = .completeInput
                if keep(candidate) { progressed = true }
            }
            for inputIndex in current.inputs.indices where current.inputs[inputIndex].throughSignal {
                var candidate = current
                let outside = current.inputs[inputIndex]
                candidate.inputs[inputIndex] = OutsideInput(
                    input: outside.input, time: outside.time, throughSignal: false)
                if keep(candidate) { progressed = true }
            }
        }
        return current
    }
}
