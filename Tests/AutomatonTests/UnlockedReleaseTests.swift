import Automaton
import Signals
import Testing

/// Inputs and keys are a user's values, so releasing one may run user code (a `deinit`). The engine
/// drops none under its lock: each test drops the last reference to an input whose `deinit` sends to
/// the automaton, which would wait forever for the engine's lock if it were held (the test would hang).
@Suite("User values the engine drops are released after its lock")
struct UnlockedReleaseTests {
    /// The input is interrupted while two inputs are queued (sent by a reply observer while the first
    /// input is processed): the termination drops them, and their `deinit`s send to the automaton,
    /// which ignores those inputs, being terminated.
    @Test("inputs a termination drops are released after the lock")
    func inputsDroppedByTermination() {
        let (input, inputObserver) = Signal<ParcelInput, Never>.pipe()
        let owner = WeakBox<Automaton<Int, ParcelInput>>()
        let deinits = Locked<[Int]>([])
        let automaton = Automaton<Int, ParcelInput>(state: 0, input: input, mapping: { state, _ in state + 1 })
        owner.object = automaton
        let replies = automaton.replies.record()
        automaton.replies.observeValues { reply in
            guard reply.input == .go else { return }
            for id in 1...2 {
                owner.object?.send(
                    .parcel(
                        DeinitSpy(id: id) {
                            deinits.withCriticalRegion { $0.append(id) }
                            owner.object?.send(.go)
                        }))
            }
            inputObserver.sendInterrupted()
        }

        automaton.send(.go)  // not through `input`: its interruption would wait for this delivery

        #expect(replies.values == [.value(.success(.go, 0, 1)), .interrupted])
        #expect(deinits.withCriticalRegion { $0 } == [1, 2])
        #expect(automaton.state.value == 1)
    }

    /// An effect queues an outside input, then an input of its own, as it starts. The outside input
    /// replaces the effect (`.latest`), so its input is discarded when its turn comes: the queue holds
    /// the last reference to it.
    @Test("the input of a cancelled effect, discarded from the queue, is released after the lock")
    func inputOfCancelledEffectDiscarded() {
        let owner = WeakBox<Automaton<Int, ParcelInput>>()
        let deinits = Locked<[Int]>([])
        let effect = SignalProducer<ParcelInput, Never> { observer, _ in
            owner.object?.send(.replace)
            observer.send(
                value: .parcel(
                    DeinitSpy(id: 7) {
                        deinits.withCriticalRegion { $0.append(7) }
                        owner.object?.send(.replace)
                    }))
        }
        let automaton = Automaton<Int, ParcelInput>(
            state: 0,
            mapping: { state, input in
                switch input {
                case .go: return (state + 1, effect)
                case .replace: return (state + 10, .empty)
                case .parcel: return (state + 100, .empty)
                }
            }, strategy: .latest)
        owner.object = automaton
        let replies = automaton.replies.record()

        automaton.send(.go)

        #expect(deinits.withCriticalRegion { $0 } == [7])
        #expect(
            replies.values == [
                .value(.success(.go, 0, 1)),
                .value(.success(.replace, 1, 11)),
                .value(.success(.replace, 11, 21)),  // the parcel's deinit, after the lock
            ])
        #expect(automaton.runningEffectCount == 0)
    }
}

private enum ParcelInput: Sendable, Equatable {
    case go, replace
    case parcel(DeinitSpy)
}
