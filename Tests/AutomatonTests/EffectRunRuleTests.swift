import Automaton
import Dispatch
import Signals
import Testing

/// The inputs of the machines below.
private enum Screen: Sendable, Equatable, CustomStringConvertible {
    case show, next, hide

    var description: String {
        switch self {
        case .show: return "show"
        case .next: return "next"
        case .hide: return "hide"
        }
    }
}

/// An effect runs until it ends or is cancelled, as a ReactiveSwift run lives until it terminates or
/// is disposed: a start handler need not keep its observer (issue 29, §1). A `{ send in ... }` closure
/// effect still ends when its `send` is released.
@Suite("An effect's run lives until it ends or is cancelled (ReactiveSwift's run rule)")
struct EffectRunRuleTests {
    /// An effect that holds a resource while it runs and keeps nothing: `awake N` when it starts,
    /// `asleep N` when its lifetime ends.
    private static func keepAwake(_ log: Recording<String>, _ number: Int) -> SignalProducer<Screen, Never> {
        SignalProducer { _, lifetime in
            log.append("awake \(number)")
            lifetime.observeEnded { log.append("asleep \(number)") }
        }
    }

    @Test("under .latest, an effect that keeps nothing runs until the next input replaces it")
    func latestEffectRunsUntilReplaced() {
        let log = Recording<String>()
        let count = Locked(0)
        let automaton = Automaton<Int, Screen>(
            state: 0,
            mapping: { state, input in
                guard input != .hide else { return (state, .empty) }
                let number = count.withCriticalRegion { count in
                    defer { count += 1 }
                    return count
                }
                return (state + 1, Self.keepAwake(log, number))
            }, strategy: .latest)
        let events = Recording<String>()
        automaton.effectEvents.observeValues { events.append("\($0)") }

        automaton.send(.show)
        #expect(log.values == ["awake 0"])
        #expect(automaton.runningEffectCount == 1)

        automaton.send(.next)
        #expect(log.values == ["awake 0", "asleep 0", "awake 1"])
        #expect(automaton.runningEffectCount == 1)

        automaton.send(.hide)
        #expect(log.values == ["awake 0", "asleep 0", "awake 1", "asleep 1"])
        #expect(automaton.runningEffectCount == 0)
        #expect(
            events.values == [
                "effect 0 started by show", "effect 0 replaced by next", "effect 1 started by next",
                "effect 1 replaced by hide",
            ])
    }

    @Test(
        "under .merge, an effect that keeps nothing runs until the automaton is released, and holds up replies' completion"
    )
    func mergeEffectRunsUntilReleased() {
        let log = Recording<String>()
        let (input, inputObserver) = Signal<Screen, Never>.pipe()
        var automaton: Automaton<Int, Screen>? = Automaton(
            state: 0, input: input,
            mapping: { state, _ in (state + 1, Self.keepAwake(log, state)) })
        let replies = automaton!.replies.record()
        let events = Recording<String>()
        automaton!.effectEvents.observeValues { events.append("\($0)") }

        inputObserver.send(value: .show)
        inputObserver.send(value: .next)
        inputObserver.sendCompleted()
        #expect(log.values == ["awake 0", "awake 1"])
        #expect(automaton?.runningEffectCount == 2)
        #expect(replies.values == [.value(.success(.show, 0, 1)), .value(.success(.next, 1, 2))])

        automaton = nil
        #expect(log.values == ["awake 0", "awake 1", "asleep 0", "asleep 1"])
        #expect(
            replies.values == [.value(.success(.show, 0, 1)), .value(.success(.next, 1, 2)), .completed])
        #expect(
            events.values == [
                "effect 0 started by show", "effect 1 started by next", "effect 0 cancelled: automaton released",
                "effect 1 cancelled: automaton released",
            ])
    }

    @Test(
        "an effect that keeps nothing is freed once cancelled: its record keeps itself only until then",
        arguments: [0, 1, 2])
    func effectThatKeepsNothingIsFreed(ending: Int) {
        let lifetime = WeakBox<AnyObject>()
        let effect = SignalProducer<Screen, Never> { _, given in lifetime.object = given.storageObject }
        let (input, inputObserver) = Signal<Screen, Never>.pipe()
        var automaton: Automaton<Int, Screen>? = Automaton<Int, Screen>(
            state: 0, input: input,
            mapping: { state, input in input == .show ? (state + 1, effect) : (state + 1, .empty) },
            strategy: .latest)
        automaton?.send(.show)
        #expect(lifetime.object != nil, "running, kept by its record")
        switch ending {
        case 0: automaton?.send(.next)  // replaced
        case 1: automaton = nil  // released
        default: inputObserver.sendInterrupted()  // the input interrupted
        }
        #expect(lifetime.object == nil, "freed once cancelled")
        withExtendedLifetime(automaton) {}
    }

    @Test("a keyed .queue effect waits for a running effect of its key that keeps nothing until that one is cancelled")
    func queuedEffectWaitsForAnEffectThatKeepsNothing() {
        let log = Recording<String>()
        let automaton = Automaton<Int, Screen>(
            state: 0,
            mapping: { state, input in
                switch input {
                case .show, .next: return (state + 1, Self.keepAwake(log, state).keyed("screen", .queue))
                case .hide: return (state, .cancel("screen"))
                }
            })
        automaton.send(.show)
        automaton.send(.next)
        #expect(log.values == ["awake 0"])
        #expect(automaton.runningEffectCount == 1)
        automaton.send(.hide)
        #expect(log.values == ["awake 0", "asleep 0"])
        #expect(automaton.runningEffectCount == 0)
    }

    @Test("a closure effect that keeps no send has ended when it returns; one that keeps it, when it lets go")
    func closureEffectEndsWithItsSend() {
        let kept = Locked<(@Sendable (Screen) -> Void)?>(nil)
        let automaton = Automaton<Int, Screen>(
            state: 0,
            table: [
                .show | { $0 + 1 } | { send in send(.next) },
                .next | { $0 + 10 } | { send in kept.withCriticalRegion { $0 = send } },
                .hide | { $0 + 100 },
            ])
        let events = Recording<String>()
        automaton.effectEvents.observeValues { events.append("\($0)") }

        automaton.send(.show)
        #expect(automaton.state.value == 11)
        #expect(automaton.runningEffectCount == 1)
        #expect(events.values == ["effect 0 started by show", "effect 0 ended", "effect 1 started by next"])

        kept.withCriticalRegion { $0 }?(.hide)
        #expect(automaton.state.value == 111)
        let released = kept.withCriticalRegion { $0.take() }
        withExtendedLifetime(released) {}
        _ = consume released
        #expect(automaton.runningEffectCount == 0)
        #expect(
            events.values == [
                "effect 0 started by show", "effect 0 ended", "effect 1 started by next", "effect 1 ended",
            ])
    }

    @Test(
        "an effect that hands its observer to another thread, which lets go of it while the effect is replaced, ends once"
    )
    func observerReleasedWhileReplaced() async {
        await runOnThreads(1) { _ in
            for _ in 0..<2_000 {
                let ends = Locked(0)
                let handedOver = Locked<Observer<Screen, Never>?>(nil)
                let effect = SignalProducer<Screen, Never> { observer, lifetime in
                    handedOver.withCriticalRegion { $0 = observer }
                    lifetime.observeEnded { ends.withCriticalRegion { $0 += 1 } }
                }
                let automaton = Automaton<Int, Screen>(
                    state: 0,
                    mapping: { state, input in input == .show ? (state + 1, effect) : (state, .empty) },
                    strategy: .latest)
                let events = Recording<String>()
                automaton.effectEvents.observeValues { events.append("\($0)") }
                automaton.send(.show)
                let releasing = DispatchGroup()
                DispatchQueue.global().async(group: releasing) {
                    let observer = handedOver.withCriticalRegion { $0.take() }
                    withExtendedLifetime(observer) {}
                }
                automaton.send(.hide)
                releasing.wait()
                #expect(ends.withCriticalRegion { $0 } == 1)
                #expect(events.values == ["effect 0 started by show", "effect 0 replaced by hide"])
                #expect(automaton.runningEffectCount == 0)
            }
        }
    }
}
