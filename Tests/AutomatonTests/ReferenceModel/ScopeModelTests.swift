import Automaton
import Foundation
import Signals
import Testing

/// Compares random tables with state scopes (`.during`, `.after`) run by the real automaton with the
/// scope model (`ScopeModel`), step by step, and checks the scope invariants (`ScopeInvariants`) on
/// both after every step.
enum ScopeModelCheck {
    /// The seeds of a run: fixed, or from `AUTOMATON_SEED_BASE` for a soak run.
    static func seed(index: Int) -> UInt64 {
        let base =
            ProcessInfo.processInfo.environment["AUTOMATON_SEED_BASE"].flatMap(ModelCheck.parseSeed)
            ?? 0x5EED_5C0B_E000_0000
        return SeededGenerator.caseSeed(base: base ^ 0x5C0B_E5, index: index)
    }

    /// The first problem with the case of `seed`, in words, or `nil` if the automaton and the model
    /// agree at every step and no invariant breaks.
    static func problem(seed: UInt64) -> String? {
        let testCase = ScopeCase.generate(seed: seed)
        let expected = ScopeModel.run(testCase)
        let run = ScopeRun(testCase)
        var state = testCase.initialState
        var previous: [ScopeLogEntry] = []
        for (index, step) in testCase.steps.enumerated() {
            let log = run.perform(step)
            let modelLog = expected[index]
            if let last = log.last(where: { if case .state = $0 { true } else { false } }),
                case let .state(value) = last
            {
                state = value
            }
            if log != modelLog {
                let common = zip(log, modelLog).prefix { $0 == $1 }.count
                return """
                    step \(index) (\(step)): entry #\(common): model \(common < modelLog.count ? "\(modelLog[common])" : "nothing"), \
                    automaton \(common < log.count ? "\(log[common])" : "nothing")
                    before this step: \(previous.map(\.description))
                    model: \(modelLog.dropFirst(previous.count).map(\.description))
                    automaton: \(log.dropFirst(previous.count).map(\.description))
                    \(testCase.text)
                    """
            }
            if run.automaton.state.value != state {
                return
                    "step \(index): state.value \(run.automaton.state.value), last state sent \(state)\n\(testCase.text)"
            }
            let problems =
                ScopeInvariants.violations(of: testCase, log: log, state: state, running: run.runningPerScope)
            if !problems.isEmpty {
                return "step \(index) (\(step)): \(problems.joined(separator: "; "))\n\(testCase.text)"
            }
            previous = log
        }
        return nil
    }

    /// Checks `count` cases; the first failures, at most 3.
    static func failures(count: Int) -> [String] {
        var failures: [String] = []
        for index in 0..<count {
            let seed = seed(index: index)
            if let problem = problem(seed: seed) {
                failures.append("seed 0x\(String(seed, radix: 16)): \(problem)")
                if failures.count == 3 { break }
            }
        }
        return failures
    }
}

@Suite("Reference model: state scopes and delayed inputs")
struct ScopeModelTests {
    @Test("the model itself keeps the scope invariants, and its cases cover scopes entered, left and restarted")
    func modelInvariants() {
        var exits = 0
        var restarts = 0
        var delayedInputs = 0
        for index in 0..<400 {
            let testCase = ScopeCase.generate(seed: ScopeModelCheck.seed(index: index))
            let logs = ScopeModel.run(testCase)
            var state = testCase.initialState
            for log in logs {
                for case let .state(value) in log { state = value }
                let problems = ScopeInvariants.violations(of: testCase, log: log, state: state, running: nil)
                #expect(problems.isEmpty, "\(problems)\n\(testCase.text)")
            }
            let log = logs.last ?? []
            exits += log.filter { if case .exited = $0 { true } else { false } }.count
            for (position, entry) in log.enumerated() {
                guard case let .exited(_, key, input) = entry else { continue }
                let restarted = log[position...].contains {
                    if case .started(_, key, input) = $0 { true } else { false }
                }
                if restarted { restarts += 1 }
            }
            let afterInputs = Set(
                testCase.scopes.compactMap { if case let .after(_, input) = $0.kind { input } else { nil } })
            delayedInputs +=
                log.filter { if case let .reply(reply) = $0 { afterInputs.contains(reply.input) } else { false } }.count
        }
        #expect(exits > 200)
        #expect(restarts > 20)
        #expect(delayedInputs > 100)
    }

    @Test("replies, states and effect events equal the model's on 2,000 random tables with scopes")
    func randomTables() {
        let count = LongTests.isEnabled ? 100_000 : ModelCheck.caseCount(default: 2_000)
        let failures = ScopeModelCheck.failures(count: count)
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
    }

    @Test("a seed replays (AUTOMATON_SCOPE_SEED)")
    func replay() throws {
        let text = try #require(
            ProcessInfo.processInfo.environment["AUTOMATON_SCOPE_SEED"] ?? Optional("0x1"))
        let seed = try #require(ModelCheck.parseSeed(text))
        let problem = ScopeModelCheck.problem(seed: seed)
        #expect(problem == nil, "\(problem ?? "")")
    }
}
