import Automaton
import AutomatonTesting
import Foundation
import Signals
import Testing

/// The child automata's edges: policies other than `.latest`, a forwarding effect wrapped in an
/// operator, a child started off the processing thread, many children of one parent.
@Suite struct ChildReviewTests {
    typealias CReply = Reply<Int, CounterInput>

    /// A parent of counters whose starts use `policy`.
    static func makeCounting(
        _ counters: ChildAutomata<Int, Int, CounterInput>, _ policy: EffectPolicy
    ) -> Automaton<Int, CountingInput> {
        Automaton(state: 0) { state, input in
            switch input {
            case let .open(id):
                return (state, counters.start(id, policy) { reply in reply.toState.map { .counted(id, $0) } })
            case let .bump(id): return (state, counters.send(.inc, to: id))
            case .counted: return (state + 1, .empty)
            }
        }
    }

    @Test func underMergeTwoChildrenOfOneIdEachGetTheForwardedInputInStartOrder() {
        let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
        let tester = AutomatonTester(Self.makeCounting(counters, .merge))
        tester.recordReplies(of: counters)
        tester.send(.open(1))
        let first = WeakBox(counters.child(1, in: tester.automaton))
        tester.send(.open(1))
        tester.send(.bump(1))
        tester.expect([
            .success(.open(1), 0, 0),
            .started(by: .open(1), key: counters.key(1)),
            .success(.open(1), 0, 0),
            .started(by: .open(1), key: counters.key(1)),
            .success(.bump(1), 0, 0),
            .child(counters.key(1), CReply.success(.inc, 0, 1)),
            .child(counters.key(1), CReply.success(.inc, 0, 1)),
            .success(.counted(1, 1), 0, 1),
            .success(.counted(1, 1), 1, 2),
        ])
        #expect(counters.ids(in: tester.automaton) == [1, 1], "one id per running child")
        #expect(counters.child(1, in: tester.automaton) === first.object, "the first started")
        tester.finish(skipRunningEffects: true)
    }

    @Test func underFirstASecondStartIsDroppedAndTheRunningChildKeepsItsState() {
        let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
        let tester = AutomatonTester(Self.makeCounting(counters, .first))
        tester.recordReplies(of: counters)
        tester.send(.open(1))
        tester.send(.bump(1))
        tester.send(.open(1))
        tester.send(.bump(1))
        tester.expect([
            .success(.open(1), 0, 0),
            .started(by: .open(1), key: counters.key(1)),
            .success(.bump(1), 0, 0),
            .child(counters.key(1), CReply.success(.inc, 0, 1)),
            .success(.counted(1, 1), 0, 1),
            .success(.open(1), 1, 1),
            .cancelled(.dropped(by: .open(1)), key: counters.key(1)),
            .success(.bump(1), 1, 1),
            .child(counters.key(1), CReply.success(.inc, 1, 2)),
            .success(.counted(1, 2), 1, 2),
        ])
        #expect(counters.ids(in: tester.automaton) == [1])
        tester.finish(skipRunningEffects: true)
    }

    @Test func underQueueAWaitingChildGetsNoInputAndStartsAfreshWhenTheRunningOneIsRemoved() {
        let inputs = Locked<[Observer<CounterInput, Never>]>([])
        let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in
            let (signal, observer) = Signal<CounterInput, Never>.pipe()
            inputs.withCriticalRegion { $0.append(observer) }
            return Automaton(state: 0, input: signal) { count, _ in count + 1 }
        }
        let tester = AutomatonTester(Self.makeCounting(counters, .queue))
        tester.recordReplies(of: counters)
        tester.send(.open(1))
        tester.send(.bump(1))
        tester.send(.open(1))
        tester.send(.bump(1))
        tester.expect([
            .success(.open(1), 0, 0),
            .started(by: .open(1), key: counters.key(1)),
            .success(.bump(1), 0, 0),
            .child(counters.key(1), CReply.success(.inc, 0, 1)),
            .success(.counted(1, 1), 0, 1),
            .success(.open(1), 1, 1),
            .success(.bump(1), 1, 1),
            .child(counters.key(1), CReply.success(.inc, 1, 2)),
            .success(.counted(1, 2), 1, 2),
        ])
        #expect(counters.ids(in: tester.automaton) == [1], "a waiting child is not running")
        // The running child's input completes: it ends, and the waiting one starts, here.
        inputs.withCriticalRegion { $0[0] }.sendCompleted()
        tester.send(.bump(1))
        tester.expect([
            .ended(key: counters.key(1)),
            .started(by: .open(1), key: counters.key(1)),
            .success(.bump(1), 2, 2),
            .child(counters.key(1), CReply.success(.inc, 0, 1)),
            .success(.counted(1, 1), 2, 3),
        ])
        tester.finish(skipRunningEffects: true)
    }

    @Test func aChildThatSendsToItsParentWhileItIsMadeIsQueuedBehindTheStartingInput() {
        let parent = Locked<Automaton<Int, CountingInput>?>(nil)
        let counters = ChildAutomata<Int, Int, CounterInput>("counters") { id in
            parent.withCriticalRegion { $0 }?.send(.counted(id, -1))
            return makeCounter()
        }
        let tester = AutomatonTester(Self.makeCounting(counters, .latest))
        parent.withCriticalRegion { $0 = tester.automaton }
        tester.send(.open(4))
        tester.expect([
            .success(.open(4), 0, 0),
            .started(by: .open(4), key: counters.key(4)),
            .success(.counted(4, -1), 0, 1),
        ])
        parent.withCriticalRegion { $0 = nil }
        tester.finish(skipRunningEffects: true)
    }

    #if DEBUG  // a release build's precondition failure prints no message
        /// `send(_:to:)` needs the engine to see its directive: wrapped in an operator, it would start
        /// as a plain effect and drop its input in silence. It stops the process with a message instead.
        @Test func aForwardingEffectWrappedInAnOperatorStopsTheProcessSayingWhatToDo() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
                let parent = Automaton<Int, CountingInput>(state: 0) { state, input in
                    switch input {
                    case let .open(id): return (state, counters.start(id))
                    case let .bump(id): return (state, counters.send(.inc, to: id).map { $0 })
                    case .counted: return (state, .empty)
                    }
                }
                parent.send(.open(0))
                parent.send(.bump(0))
            }
            let output = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
            #expect(output.contains("return it from the row unchanged"), "standard error was: \(output)")
        }

        /// A named child's start wrapped in an operator would run a child that nothing can address or
        /// replace (its key and parent hidden): it stops the process with a message instead.
        @Test func aChildsStartWrappedInAnOperatorStopsTheProcessSayingWhatToDo() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
                let parent = Automaton<Int, CountingInput>(state: 0) { state, input in
                    (state, counters.start(0).map { $0 })
                }
                parent.send(.open(0))
            }
            let output = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
            #expect(output.contains("return it from the row unchanged"), "standard error was: \(output)")
        }
    #endif

    /// A `.queue` child starts on the thread where its predecessor ended, not the parent's processing
    /// thread: while another thread forwards inputs to it, every input it processes is one whose
    /// reply reaches the parent (it is not found before the parent observes it).
    @Test func aChildStartedOffTheProcessingThreadIsNotReachedBeforeTheParentHearsIt() async {
        for _ in 0..<300 {
            let inputs = Locked<[Observer<CounterInput, Never>]>([])
            let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in
                let (signal, observer) = Signal<CounterInput, Never>.pipe()
                inputs.withCriticalRegion { $0.append(observer) }
                return Automaton(state: 0, input: signal) { count, _ in count + 1 }
            }
            let parent = Self.makeCounting(counters, .queue)
            let heard = Locked(0)
            let watch = counters.watchReplies(of: parent) { _, _ in heard.withCriticalRegion { $0 += 1 } }
            parent.send(.open(0))
            parent.send(.open(0))  // waits for the first
            let first = counters.child(0, in: parent)!
            let started = Locked(false)
            await runOnThreads(2) { index in
                if index == 0 {
                    inputs.withCriticalRegion { $0[0] }.sendCompleted()
                    started.withCriticalRegion { $0 = true }
                } else {
                    var after = 0
                    while after < 20 {
                        parent.send(.bump(0))
                        if started.withCriticalRegion({ $0 }) { after += 1 }
                    }
                }
            }
            let second = counters.child(0, in: parent)
            #expect(second !== first)
            let processed = first.state.value + (second?.state.value ?? 0)
            #expect(parent.state.value == processed, "every count the children made reached the parent")
            #expect(heard.withCriticalRegion { $0 } == processed, "and the watch")
            withExtendedLifetime(watch) {}
        }
    }

    /// A parent with many children at once: removing them one by one costs each removal a constant
    /// time (it copied the parent's whole table of children before: quadratic).
    @Test func tenThousandChildrenOfOneParentAreStartedAndRemovedInLinearTime() async {
        let result = await onDedicatedThread { () -> [Int]? in
            let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
            let parent = Automaton<Int, Int>(state: 0) { state, id in
                id >= 0 ? (state + 1, counters.start(id)) : (state - 1, counters.remove(-id - 1))
            }
            let count = 10_000
            for id in 0..<count { parent.send(id) }
            guard counters.ids(in: parent) == Array(0..<count) else { return nil }
            for id in 0..<count { parent.send(-id - 1) }
            return counters.ids(in: parent) + [parent.state.value, parent.hasRegisteredChildren ? 1 : 0]
        }
        #expect(result == [0, 0])
    }
}
