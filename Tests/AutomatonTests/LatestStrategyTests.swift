import Automaton
import AutomatonTesting
import Signals
import Testing

/// Inputs for a machine whose effects form a tree: `start` (outside) starts `outer`, whose `child`
/// inputs start `inner`, whose `grandchild` inputs start `leaf`.
enum TreeInput: String, Sendable, Equatable, CustomStringConvertible {
    case start, child, grandchild, reset, unmapped
    var description: String { rawValue }
}

struct TreeMachine {
    let log = Recording<String>()
    let outer: ControlledEffect<TreeInput>
    let inner: ControlledEffect<TreeInput>
    let leaf: ControlledEffect<TreeInput>
    let automaton: Automaton<Int, TreeInput>

    init(strategy: AutomatonStrategy) {
        outer = ControlledEffect("outer", log: log)
        inner = ControlledEffect("inner", log: log)
        leaf = ControlledEffect("leaf", log: log)
        let (outer, inner, leaf) = (outer.producer, inner.producer, leaf.producer)
        automaton = Automaton(
            state: 0,
            mapping: { state, input in
                switch input {
                case .start: return (state + 1, outer)
                case .child: return (state + 1, inner)
                case .grandchild: return (state + 1, leaf)
                case .reset: return (0, .empty)
                case .unmapped: return nil
                }
            }, strategy: strategy)
        let log = self.log
        automaton.replies.observeValues { log.append("reply \($0)") }
    }
}

@Suite("The .latest effect tree (BRIEF §5.5)")
struct LatestStrategyTests {
    @Test(
        "a successful outside input disposes the previous outside effect and its descendants before its reply, even with an empty effect"
    )
    func outsideInputDisposesPreviousTree() {
        let machine = TreeMachine(strategy: .latest)
        let tester = AutomatonTester(machine.automaton)
        tester.send(.start)
        machine.outer.runs[0].observer.send(value: .child)
        machine.inner.runs[0].observer.send(value: .grandchild)
        #expect(machine.outer.liveRuns == [0])
        #expect(machine.inner.liveRuns == [0])
        #expect(machine.leaf.liveRuns == [0])

        tester.send(.reset)

        tester.expect([
            .success(.start, 0, 1), .started(by: .start),
            .success(.child, 1, 2), .started(by: .child),
            .success(.grandchild, 2, 3), .started(by: .grandchild),
            // outer, inner, leaf: the whole tree, before the reply.
            .cancelled(.replaced(by: .reset)), .cancelled(.replaced(by: .reset)), .cancelled(.replaced(by: .reset)),
            .success(.reset, 3, 0),
        ])
        #expect(machine.outer.liveRuns == [])
        #expect(machine.inner.liveRuns == [])
        #expect(machine.leaf.liveRuns == [])
        tester.finish()
    }

    @Test("an input emitted by effect E disposes only what E's previous inputs started, never E")
    func effectInputDisposesOnlyItsPreviousChild() {
        let machine = TreeMachine(strategy: .latest)
        let tester = AutomatonTester(machine.automaton)
        tester.send(.start)
        let outer = machine.outer.runs[0].observer
        outer.send(value: .child)
        machine.inner.runs[0].observer.send(value: .grandchild)

        outer.send(value: .child)

        tester.expect([
            .success(.start, 0, 1), .started(by: .start),
            .success(.child, 1, 2), .started(by: .child),
            .success(.grandchild, 2, 3), .started(by: .grandchild),
            // inner#0 and its leaf; outer goes on.
            .cancelled(.replaced(by: .child)), .cancelled(.replaced(by: .child)),
            .success(.child, 3, 4), .started(by: .child),
        ])
        #expect(machine.outer.liveRuns == [0])
        #expect(machine.inner.liveRuns == [1])
        #expect(machine.leaf.liveRuns == [])
        tester.finish(skipRunningEffects: true)
        #expect(machine.automaton.runningEffectCount == 2)
    }

    @Test("inputs a replaced effect sends later are ignored")
    func lateInputsOfReplacedEffectAreIgnored() {
        let machine = TreeMachine(strategy: .latest)
        let tester = AutomatonTester(machine.automaton)
        tester.send(.start)
        let firstOuter = machine.outer.runs[0].observer
        tester.send(.start)

        firstOuter.send(value: .child)

        tester.expect([
            .success(.start, 0, 1), .started(by: .start),
            .cancelled(.replaced(by: .start)),
            .success(.start, 1, 2), .started(by: .start),
        ])
        #expect(machine.outer.liveRuns == [1])
        #expect(machine.automaton.state.value == 2)
        tester.finish(skipRunningEffects: true)
    }

    @Test("a failed input cancels nothing")
    func failedInputCancelsNothing() {
        let machine = TreeMachine(strategy: .latest)
        let tester = AutomatonTester(machine.automaton)
        tester.send(.start)
        machine.outer.runs[0].observer.send(value: .child)

        tester.send(.unmapped)
        machine.outer.runs[0].observer.send(value: .unmapped)

        tester.expect([
            .success(.start, 0, 1), .started(by: .start),
            .success(.child, 1, 2), .started(by: .child),
            .failure(.unmapped, 2),
            .failure(.unmapped, 2),
        ])
        #expect(machine.outer.liveRuns == [0])
        #expect(machine.inner.liveRuns == [0])
        tester.finish(skipRunningEffects: true)
        #expect(machine.automaton.runningEffectCount == 2)
    }

    @Test("under .merge nothing is disposed")
    func mergeDisposesNothing() {
        let machine = TreeMachine(strategy: .merge)
        machine.automaton.send(.start)
        machine.outer.runs[0].observer.send(value: .child)
        machine.outer.runs[0].observer.send(value: .child)
        machine.automaton.send(.start)
        machine.automaton.send(.reset)

        #expect(machine.outer.liveRuns == [0, 1])
        #expect(machine.inner.liveRuns == [0, 1])
        #expect(!machine.log.values.contains { $0.hasPrefix("end") })
    }

    @Test("an effect that completes keeps its child effects under .latest until a new outside input replaces them")
    func completedEffectKeepsChildren() {
        let machine = TreeMachine(strategy: .latest)
        machine.automaton.send(.start)
        let outer = machine.outer.runs[0].observer
        outer.send(value: .child)
        outer.sendCompleted()
        #expect(machine.inner.liveRuns == [0])

        machine.automaton.send(.start)

        #expect(machine.inner.liveRuns == [])
        #expect(machine.outer.liveRuns == [1])
    }
}
