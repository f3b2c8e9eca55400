import Automaton
import Signals
import Testing

#if DEBUG
    /// The engine's invariant checks (`checksInvariants`, debug builds) can fail: each case breaks one
    /// invariant on purpose, in a child process, and the check stops it with a message naming what
    /// broke. The randomized reference-model tests and the keyed stress tests run with the checks on,
    /// so a passing run of those proves the invariants held after every critical section they made.
    @Suite("The engine's invariants are checked after every critical section, and each check can fail")
    struct EngineInvariantTests {
        /// An automaton with the checks on, running an un-keyed effect and a keyed one, and a keyed
        /// `.queue` effect waiting for it, all of which never end by themselves; then `corruption`.
        static func corrupted(_ corruption: EngineCorruption) {
            let pending = SignalProducer<Int, Never> { _, _ in }
            let automaton = Automaton<Int, Int>(
                state: 0,
                mapping: { state, input in
                    switch input {
                    case 0: return (state + 1, pending)
                    default: return (state + 1, pending.keyed("key", .queue))
                    }
                })
            automaton.checksInvariants = true
            automaton.send(0)
            automaton.send(1)
            automaton.send(2)
            precondition(automaton.runningEffectCount == 2, "the setup runs two effects")
            automaton.corruptEngineForTesting(corruption)
        }

        @Test("a healthy engine passes every check, through starts, waits, cancellations and release")
        func healthyEnginePasses() {
            var automaton: Automaton<Int, Int>? = Automaton<Int, Int>(
                state: 0,
                mapping: { state, input in
                    switch input {
                    case 0: return (state + 1, SignalProducer { _, _ in })
                    case 3: return (state + 1, .cancel("key"))
                    default: return (state + 1, SignalProducer { _, _ in }.keyed("key", .queue))
                    }
                }, strategy: .latest)
            automaton?.checksInvariants = true
            #expect(automaton?.checksInvariants == true)
            for input in [0, 1, 2, 0, 3, 1] { automaton?.send(input) }
            // Each outside input replaces the tree's effect (.latest); 3 cancels the key's two; the last
            // input's keyed effect runs.
            #expect(automaton?.runningEffectCount == 1)
            automaton = nil
        }

        @Test("a wrong count of running effects is caught")
        func runningCount() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                EngineInvariantTests.corrupted(.runningCount)
            }
            expectMessage(result, contains: "effects running, 4 counted")
        }

        @Test("a wrong count of waiting effects is caught")
        func waitingCount() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                EngineInvariantTests.corrupted(.waitingCount)
            }
            expectMessage(result, contains: "1 effects waiting, 2 counted")
        }

        @Test("a wrong count of idle key groups is caught")
        func idleGroupCount() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                EngineInvariantTests.corrupted(.idleGroupCount)
            }
            expectMessage(result, contains: "0 idle groups, 1 counted")
        }

        @Test("a record in the tracked list that is not marked tracked is caught")
        func unmarkedRecord() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                EngineInvariantTests.corrupted(.unmarkedRecord)
            }
            expectMessage(result, contains: "is in the tracked list but not marked tracked")
        }

        @Test("a keyed effect with a .latest parent is caught")
        func keyedParent() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                EngineInvariantTests.corrupted(.keyedParent)
            }
            expectMessage(result, contains: "has a .latest parent")
        }

        @Test("a tracked running effect whose lifetime has ended is caught")
        func endedRecord() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                EngineInvariantTests.corrupted(.endedRecord)
            }
            expectMessage(result, contains: "but its lifetime has ended")
        }
    }

    /// Checks that the child process's standard error names the broken invariant.
    private func expectMessage(
        _ result: ExitTest.Result?, contains message: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let result else { return }
        let output = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(output.contains("Internal inconsistency (engine invariant)"), sourceLocation: sourceLocation)
        #expect(output.contains(message), "standard error was: \(output)", sourceLocation: sourceLocation)
    }
#endif
