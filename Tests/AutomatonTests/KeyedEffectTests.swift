import Automaton
import AutomatonTesting
import Dispatch
import Foundation
import Signals
import Testing

/// A connection manager: connecting is a keyed effect that a disconnect cancels, and unrelated inputs
/// (`.foregrounded`) succeed without touching it.
private enum Conn: Sendable, Hashable {
    case disconnected, connecting, connected
}

private enum ConnInput: Sendable, Hashable, CustomStringConvertible {
    case connect, connected, disconnect, foregrounded, ping(Int)

    var description: String {
        switch self {
        case .connect: return "connect"
        case .connected: return "connected"
        case .disconnect: return "disconnect"
        case .foregrounded: return "foregrounded"
        case let .ping(number): return "ping(\(number))"
        }
    }
}

private enum Key: Hashable, Sendable {
    case connection, pings
}

/// Records everything an automaton publishes, in one order.
private final class Activity: Sendable {
    enum Entry: Sendable, Equatable {
        case reply(Reply<Conn, ConnInput>)
        case effect(EffectEvent<ConnInput>)
        case repliesEnded
    }

    private let entries = Locked<[Entry]>([])

    init(_ automaton: Automaton<Conn, ConnInput>) {
        automaton.replies.observe { [entries] event in
            entries.withCriticalRegion { entries in
                if case let .value(reply) = event {
                    entries.append(.reply(reply))
                } else {
                    entries.append(.repliesEnded)
                }
            }
        }
        automaton.effectEvents.observeValues { [entries] event in
            entries.withCriticalRegion { $0.append(.effect(event)) }
        }
    }

    /// Everything recorded since the last call.
    func take() -> [Entry] {
        entries.withCriticalRegion { entries in
            defer { entries = [] }
            return entries
        }
    }
}

@Suite("Keyed effects (BRIEF §5.9)")
struct KeyedEffectTests {
    /// `.connect` starts a keyed connect effect that sends `.connected` after `delay`, under `policy`.
    private static func connectionManager(
        scheduler: TestScheduler,
        policy: EffectPolicy = .latest,
        strategy: AutomatonStrategy = .latest,
        lifetimes: Locked<[Lifetime]> = Locked([])
    ) -> Automaton<Conn, ConnInput> {
        let connect = SignalProducer<ConnInput, Never> { observer, lifetime in
            lifetimes.withCriticalRegion { $0.append(lifetime) }
            lifetime += scheduler.schedule(after: .seconds(5)) {
                observer.send(value: .connected)
                observer.sendCompleted()
            }
        }
        return Automaton(
            state: Conn.disconnected,
            mapping: { (state: Conn, input: ConnInput) in
                switch (state, input) {
                case (_, .connect): return (.connecting, connect.keyed(Key.connection, policy))
                case (.connecting, .connected): return (.connected, .empty)
                case (_, .disconnect): return (.disconnected, .cancel(Key.connection))
                case (_, .foregrounded): return (state, .empty)
                default: return nil
                }
            }, strategy: strategy)
    }

    @Test("an unrelated successful input does not cancel a keyed effect, even under .latest")
    func unrelatedInputDoesNotCancel() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(Self.connectionManager(scheduler: scheduler), scheduler: scheduler)
        tester.send(.connect)
        tester.send(.foregrounded)
        tester.advance(by: .seconds(5))
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: Key.connection),
            .success(.foregrounded, .connecting, .connecting),
            .success(.connected, .connecting, .connected),
            .ended(key: Key.connection),
        ])
        #expect(tester.automaton.state.value == .connected)
        tester.finish()
    }

    @Test("a cancel row disposes the in-flight keyed effect and its scheduled work (TCA #977)")
    func cancelDisposesInFlight() {
        let scheduler = TestScheduler()
        let lifetimes = Locked<[Lifetime]>([])
        let tester = AutomatonTester(
            Self.connectionManager(scheduler: scheduler, lifetimes: lifetimes), scheduler: scheduler)
        tester.send(.connect)
        #expect(tester.automaton.runningEffectCount == 1)
        tester.send(.disconnect)
        #expect(tester.automaton.runningEffectCount == 0)
        #expect(scheduler.pendingActionCount == 0)
        #expect(lifetimes.withCriticalRegion { $0.map(\.hasEnded) } == [true])
        tester.advance(by: .seconds(10))
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: Key.connection),
            .cancelled(.cancelled(by: .disconnect), key: Key.connection),
            .success(.disconnect, .connecting, .disconnected),
        ])
        tester.finish()
    }

    @Test("a { send in } effect keyed with .keyed(key) { send in }: its key governs it as a producer's")
    func keyedClosureEffect() {
        let kept = Locked<[@Sendable (ConnInput) -> Void]>([])  // the sends the effects keep
        let ran = Recording<String>()
        let tester = AutomatonTester(
            Automaton<Conn, ConnInput>(
                state: .disconnected, strategy: .latest,
                table: [
                    .connect | any => .connecting
                        | .keyed(Key.connection) { send in
                            ran.append("connect")
                            kept.withCriticalRegion { $0.append(send) }
                        },
                    .connected | .connecting => .connected,
                    .foregrounded | { $0 },
                    .disconnect | any => .disconnected | .cancel(Key.connection),
                ]))
        tester.send(.connect)
        tester.send(.foregrounded)  // unrelated: a keyed effect stays, even under .latest
        tester.send(.connect)  // the key's .latest policy replaces the first
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: Key.connection),
            .success(.foregrounded, .connecting, .connecting),
            .cancelled(.replaced(by: .connect), key: Key.connection),
            .success(.connect, .connecting, .connecting),
            .started(by: .connect, key: Key.connection),
        ])
        let sends = kept.withCriticalRegion { $0 }
        sends[0](.connected)  // the replaced effect's send does nothing
        #expect(tester.pending == [])
        sends[1](.connected)
        tester.send(.disconnect)
        tester.expect([
            .success(.connected, .connecting, .connected),
            .cancelled(.cancelled(by: .disconnect), key: Key.connection),
            .success(.disconnect, .connected, .disconnected),
        ])
        sends[1](.connect)  // cancelled: nothing
        #expect(ran.values == ["connect", "connect"])
        tester.finish()
    }

    @Test("a keyed { send in } effect lives as long as its send: under .queue, the next starts when it is released")
    func keyedClosureEffectQueue() {
        let kept = Locked<[@Sendable (ConnInput) -> Void]>([])
        let ran = Recording<Int>()
        let tester = AutomatonTester(
            Automaton<Conn, ConnInput>(
                state: .connected,
                table: [
                    .ping(1) | any => .connected
                        | .keyed(Key.pings, .queue) { send in
                            ran.append(1)
                            kept.withCriticalRegion { $0.append(send) }  // runs until this send is released
                        },
                    .ping(2) | any => .connected | .keyed(Key.pings, .queue) { _ in ran.append(2) },  // ends at once
                ]))
        tester.send(.ping(1))
        tester.send(.ping(2))  // waits for ping 1's effect
        tester.expect([
            .success(.ping(1), .connected, .connected),
            .started(by: .ping(1), key: Key.pings),
            .success(.ping(2), .connected, .connected),
        ])
        #expect(ran.values == [1])
        var sends = kept.withCriticalRegion { sends in
            defer { sends = [] }
            return sends
        }
        #expect(sends.count == 1)
        sends = []  // the last send of ping 1's effect: it ends, and ping 2's starts
        tester.expect([
            .ended(key: Key.pings),
            .started(by: .ping(2), key: Key.pings),
            .ended(key: Key.pings),
        ])
        #expect(ran.values == [1, 2])
        tester.finish()
    }

    @Test("policy .latest: a new effect of the key replaces the running one")
    func latestPolicyReplaces() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(
            Self.connectionManager(scheduler: scheduler, policy: .latest, strategy: .merge), scheduler: scheduler
        )
        tester.send(.connect)
        tester.send(.connect)
        #expect(tester.automaton.runningEffectCount == 1)
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: Key.connection),
            .cancelled(.replaced(by: .connect), key: Key.connection),
            .success(.connect, .connecting, .connecting),
            .started(by: .connect, key: Key.connection),
        ])
        tester.advance(by: .seconds(5))
        tester.expect([
            .success(.connected, .connecting, .connected),
            .ended(key: Key.connection),
        ])
        tester.finish()
    }

    @Test("policy .first: a new effect is dropped while one of its key runs, and starts once it has ended")
    func firstPolicyDrops() {
        let scheduler = TestScheduler()
        let automaton = Self.connectionManager(scheduler: scheduler, policy: .first)
        let activity = Activity(automaton)
        automaton.send(.connect)
        automaton.send(.connect)
        #expect(automaton.runningEffectCount == 1)
        scheduler.advance(by: .seconds(5))
        automaton.send(.connect)
        #expect(
            activity.take() == [
                .reply(.success(.connect, .disconnected, .connecting)),
                .effect(EffectEvent(id: 0, key: EffectKey(Key.connection), kind: .started(by: .connect))),
                .reply(.success(.connect, .connecting, .connecting)),
                .effect(EffectEvent(id: 1, key: EffectKey(Key.connection), kind: .cancelled(.dropped(by: .connect)))),
                .reply(.success(.connected, .connecting, .connected)),
                .effect(EffectEvent(id: 0, key: EffectKey(Key.connection), kind: .ended)),
                .reply(.success(.connect, .connected, .connecting)),
                .effect(EffectEvent(id: 2, key: EffectKey(Key.connection), kind: .started(by: .connect))),
            ])
    }

    @Test(
        "policy .queue: new effects wait, FIFO, and start one after the other; a cancel drops the waiting ones (TCA #1848)"
    )
    func queuePolicyWaits() {
        let scheduler = TestScheduler()
        let lifetimes = Locked<[Lifetime]>([])
        let automaton = Self.connectionManager(scheduler: scheduler, policy: .queue, lifetimes: lifetimes)
        let activity = Activity(automaton)
        automaton.send(.connect)
        automaton.send(.connect)
        automaton.send(.connect)
        #expect(automaton.runningEffectCount == 1)
        #expect(lifetimes.withCriticalRegion { $0.count } == 1)
        scheduler.advance(by: .seconds(5))
        #expect(lifetimes.withCriticalRegion { $0.count } == 2)
        // The third is cancelled before it ever started.
        automaton.send(.disconnect)
        #expect(automaton.runningEffectCount == 0)
        scheduler.advance(by: .seconds(20))
        #expect(lifetimes.withCriticalRegion { $0.map(\.hasEnded) } == [true, true])
        let key = EffectKey(Key.connection)
        #expect(
            activity.take() == [
                .reply(.success(.connect, .disconnected, .connecting)),
                .effect(EffectEvent(id: 0, key: key, kind: .started(by: .connect))),
                .reply(.success(.connect, .connecting, .connecting)),
                .reply(.success(.connect, .connecting, .connecting)),
                .reply(.success(.connected, .connecting, .connected)),
                .effect(EffectEvent(id: 0, key: key, kind: .ended)),
                .effect(EffectEvent(id: 1, key: key, kind: .started(by: .connect))),
                .effect(EffectEvent(id: 1, key: key, kind: .cancelled(.cancelled(by: .disconnect)))),
                .effect(EffectEvent(id: 2, key: key, kind: .cancelled(.cancelled(by: .disconnect)))),
                .reply(.success(.disconnect, .connected, .disconnected)),
            ])
    }

    @Test("policy .merge: effects of a key run side by side and are cancelled together")
    func mergePolicyGroups() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(Self.connectionManager(scheduler: scheduler, policy: .merge), scheduler: scheduler)
        tester.send(.connect)
        tester.send(.connect)
        tester.send(.connect)
        #expect(tester.automaton.runningEffectCount == 3)
        tester.send(.disconnect)
        #expect(tester.automaton.runningEffectCount == 0)
        #expect(scheduler.pendingActionCount == 0)
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: Key.connection),
            .success(.connect, .connecting, .connecting),
            .started(by: .connect, key: Key.connection),
            .success(.connect, .connecting, .connecting),
            .started(by: .connect, key: Key.connection),
            .cancelled(.cancelled(by: .disconnect), key: Key.connection),
            .cancelled(.cancelled(by: .disconnect), key: Key.connection),
            .cancelled(.cancelled(by: .disconnect), key: Key.connection),
            .success(.disconnect, .connecting, .disconnected),
        ])
        tester.finish()
    }

    @Test("an effect that cancels its own key as it starts is cancelled, and nothing stays running (TCA #3563)")
    func cancelSentDuringStart() {
        let ended = Locked(0)
        let automaton = Automaton(
            state: 0,
            mapping: { (state: Int, input: Int) in
                switch input {
                case 0:
                    let effect = SignalProducer<Int, Never> { observer, lifetime in
                        // Keeps its observer, so it runs until cancelled.
                        lifetime.observeEnded {
                            ended.withCriticalRegion { $0 += 1 }
                            withExtendedLifetime(observer) {}
                        }
                        observer.send(value: 1)  // queued: processed once this start returns
                    }
                    return (state + 1, effect.keyed("job"))
                default:
                    return (state + 1, .cancel("job"))
                }
            })
        let tester = AutomatonTester(automaton)
        tester.send(0)
        tester.expect([
            .success(0, 0, 1),
            .started(by: 0, key: "job"),
            .cancelled(.cancelled(by: 1), key: "job"),
            .success(1, 1, 2),
        ])
        #expect(ended.withCriticalRegion { $0 } == 1)
        tester.finish()
    }

    @Test("a cancel processed while a .queue effect waits keeps its start handler from ever running (TCA #3563)")
    func cancelBeforeStart() {
        // `cancelSentDuringStart` cancels an effect whose start handler has run. Here the cancel is
        // processed before the waiting effect's turn comes: input 1's effect waits behind input 0's,
        // and a `replies` observer sends the cancel while input 1 is being processed (so it is queued
        // and processed right after it).
        let scheduler = TestScheduler()
        let startHandlers = Locked<[Int]>([])
        let automaton = Automaton(
            state: 0,
            mapping: { (state: Int, input: Int) in
                guard input >= 0 else { return (state, .cancel("job")) }
                let effect = SignalProducer<Int, Never> { observer, lifetime in
                    startHandlers.withCriticalRegion { $0.append(input) }
                    lifetime += scheduler.schedule(after: .seconds(5)) { observer.sendCompleted() }
                }
                return (state + 1, effect.keyed("job", .queue))
            })
        let send = automaton.sender
        automaton.replies.observeValues { reply in
            if reply.input == 1 { send(-1) }
        }
        let tester = AutomatonTester(automaton, scheduler: scheduler)
        tester.send(0)
        tester.send(1)
        #expect(startHandlers.withCriticalRegion { $0 } == [0])
        #expect(automaton.runningEffectCount == 0)
        #expect(scheduler.pendingActionCount == 0)
        tester.advance(by: .seconds(20))
        #expect(startHandlers.withCriticalRegion { $0 } == [0], "the waiting effect never starts")
        tester.expect([
            .success(0, 0, 1),
            .started(by: 0, key: "job"),
            .success(1, 1, 2),
            .cancelled(.cancelled(by: -1), key: "job"),
            .cancelled(.cancelled(by: -1), key: "job"),
            .success(-1, 2, 2),
        ])
        tester.finish()
    }

    @Test(
        "a cancel from another thread between a .queue effect's predecessor ending and its start keeps it from starting"
    )
    func cancelBeforeQueuedSuccessorStarts() async {
        let startHandlers = Locked<[Int]>([])
        let observers = Locked<[Observer<Int, Never>]>([])
        let lifetimes = Locked<[Lifetime]>([])
        let automaton = Automaton(
            state: 0,
            mapping: { (state: Int, input: Int) in
                guard input >= 0 else { return (state, .cancel("job")) }
                let effect = SignalProducer<Int, Never> { observer, lifetime in
                    startHandlers.withCriticalRegion { $0.append(input) }
                    observers.withCriticalRegion { $0.append(observer) }
                    lifetimes.withCriticalRegion { $0.append(lifetime) }
                }
                return (state + 1, effect.keyed("job", .queue))
            })
        let tester = AutomatonTester(automaton)
        tester.send(0)  // effect A runs
        tester.send(1)  // effect B waits behind it
        tester.expect([.success(0, 0, 1), .started(by: 0, key: "job"), .success(1, 1, 2)])
        guard let lifetimeOfA = lifetimes.withCriticalRegion({ $0.first }) else {
            Issue.record("effect A did not start")
            return
        }
        // A's lifetime ends after the engine has given B its turn and before it starts B: the cancel
        // lands there, sent from another thread, and is processed before A's ending thread goes on.
        let cancelProcessed = Locked(false)
        lifetimeOfA.observeEnded {
            let cancelled = DispatchSemaphore(value: 0)
            Thread {
                automaton.send(-1)
                cancelled.signal()
            }.start()
            let processed = cancelled.wait(timeout: .now() + 60) == .success
            cancelProcessed.withCriticalRegion { $0 = processed }
        }
        // A ends, on a thread of its own, so that a hang fails the test instead of blocking it.
        await onDedicatedThread(timeout: 120) { observers.withCriticalRegion { $0[0] }.sendCompleted() }
        #expect(cancelProcessed.withCriticalRegion { $0 }, "the cancel was processed while A's lifetime ended")
        #expect(startHandlers.withCriticalRegion { $0 } == [0], "B's start handler never runs")
        #expect(automaton.runningEffectCount == 0)
        // B's turn was announced (`started`, decided with A's end), then the cancel stopped it before
        // its start handler could run.
        tester.expect([
            .ended(key: "job"),
            .started(by: 1, key: "job"),
            .cancelled(.cancelled(by: -1), key: "job"),
            .success(-1, 2, 2),
        ])
        tester.finish()
    }

    /// The effect events of one round of `cancelRacingStart`: effects 0 and 1 are started by the two
    /// `0`s (a start row of key "job" under `policy`), and the `1` (`.cancel("job")`) was processed
    /// after `startsBeforeCancel` of them.
    private static func raceEvents(policy: EffectPolicy, startsBeforeCancel: Int) -> [EffectEvent<Int>] {
        let key = EffectKey("job")
        func started(_ id: UInt64) -> EffectEvent<Int> { EffectEvent(id: id, key: key, kind: .started(by: 0)) }
        func cancelled(_ id: UInt64) -> EffectEvent<Int> {
            EffectEvent(id: id, key: key, kind: .cancelled(.cancelled(by: 1)))
        }
        func replaced(_ id: UInt64) -> EffectEvent<Int> {
            EffectEvent(id: id, key: key, kind: .cancelled(.replaced(by: 0)))
        }
        func dropped(_ id: UInt64) -> EffectEvent<Int> {
            EffectEvent(id: id, key: key, kind: .cancelled(.dropped(by: 0)))
        }
        switch (startsBeforeCancel, policy) {
        case (0, .latest): return [started(0), replaced(0), started(1)]
        case (0, .first): return [started(0), dropped(1)]
        case (0, .queue): return [started(0)]  // effect 1 waits behind effect 0
        case (0, _): return [started(0), started(1)]
        case (1, _): return [started(0), cancelled(0), started(1)]
        case (_, .latest): return [started(0), replaced(0), started(1), cancelled(1)]
        case (_, .first): return [started(0), dropped(1), cancelled(0)]
        case (_, .queue): return [started(0), cancelled(0), cancelled(1)]
        default: return [started(0), started(1), cancelled(0), cancelled(1)]
        }
    }

    @Test(
        "a start row and a cancel row racing on two threads: once the cancel is processed, nothing of its key runs (TCA #3663)",
        arguments: [EffectPolicy.latest, .first, .queue, .merge]
    )
    func cancelRacingStart(policy: EffectPolicy) async {
        /// One round's automaton, and what its effects and observers saw.
        struct Round: Sendable {
            let automaton: Automaton<Int, Int>
            /// How many times an effect's start handler ran.
            let startHandlerCalls = Locked(0)
            /// Lifetimes handed to a start handler that have not ended.
            let openLifetimes = Locked(0)
            /// The inputs, in the order their replies came.
            let processed = Locked<[Int]>([])
            let effectEvents = Locked<[EffectEvent<Int>]>([])

            init(policy: EffectPolicy) {
                let (calls, open) = (startHandlerCalls, openLifetimes)
                // Never ends by itself: it keeps its observer until its lifetime ends.
                let effect = SignalProducer<Int, Never> { observer, lifetime in
                    calls.withCriticalRegion { $0 += 1 }
                    open.withCriticalRegion { $0 += 1 }
                    lifetime.observeEnded {
                        open.withCriticalRegion { $0 -= 1 }
                        withExtendedLifetime(observer) {}
                    }
                }
                automaton = Automaton(
                    state: 0,
                    mapping: { (state: Int, input: Int) in
                        (state + 1, input == 0 ? effect.keyed("job", policy) : .cancel("job"))
                    })
                automaton.replies.observeValues { [processed] reply in
                    processed.withCriticalRegion { $0.append(reply.input) }
                }
                automaton.effectEvents.observeValues { [effectEvents] event in
                    effectEvents.withCriticalRegion { $0.append(event) }
                }
            }
        }

        let rounds = (0..<500).map { _ in Round(policy: policy) }
        let rendezvous = Rendezvous(parties: 2)
        // Thread 0 sends two start rows, thread 1 a cancel row, each round beginning together.
        await runOnThreads(2) { thread in
            for round in rounds {
                guard rendezvous.arrive() else { return }
                if thread == 0 {
                    round.automaton.send(0)
                    round.automaton.send(0)
                } else {
                    round.automaton.send(1)
                }
            }
        }
        for round in rounds {
            // Effects never end by themselves: what each round left is still there to check.
            let processed = round.processed.withCriticalRegion { $0 }
            guard let cancelPosition = processed.firstIndex(of: 1), processed.count == 3 else {
                Issue.record("replies: \(processed)")
                continue
            }
            let startsAfterCancel = 2 - cancelPosition
            let running = policy == .merge ? startsAfterCancel : min(startsAfterCancel, 1)
            let events = Self.raceEvents(policy: policy, startsBeforeCancel: cancelPosition)
            let startedEvents = events.filter { if case .started = $0.kind { return true } else { return false } }
            #expect(round.effectEvents.withCriticalRegion { $0 } == events, "replies: \(processed)")
            #expect(round.automaton.runningEffectCount == running, "replies: \(processed)")
            #expect(round.openLifetimes.withCriticalRegion { $0 } == running, "replies: \(processed)")
            #expect(round.startHandlerCalls.withCriticalRegion { $0 } == startedEvents.count, "replies: \(processed)")
        }
    }

    @Test("equal keys in two automata, or equal values of two key types, never cancel each other (TCA #2888)")
    func keysDoNotLeak() {
        enum FeatureA: Hashable, Sendable { case id }
        enum FeatureB: Hashable, Sendable { case id }
        let scheduler = TestScheduler()
        func machine(_ key: some Hashable & Sendable, cancels other: some Hashable & Sendable) -> Automaton<Int, Int> {
            Automaton(
                state: 0,
                mapping: { (state: Int, input: Int) in
                    let effect = SignalProducer<Int, Never> { observer, lifetime in
                        lifetime += scheduler.schedule(after: .seconds(1)) { observer.sendCompleted() }
                    }
                    switch input {
                    case 0: return (state, effect.keyed(key))
                    case 1: return (state, .cancel(other))
                    default: return (state, .cancel(key))
                    }
                })
        }
        let first = machine(FeatureA.id, cancels: FeatureB.id)
        let second = machine(FeatureA.id, cancels: FeatureB.id)
        first.send(0)
        second.send(0)
        first.send(2)  // cancels FeatureA.id in `first` only
        #expect(first.runningEffectCount == 0)
        #expect(second.runningEffectCount == 1)
        second.send(1)  // FeatureB.id is another key, though it reads the same
        #expect(second.runningEffectCount == 1)
        let strings = machine("1", cancels: 1)
        strings.send(0)
        strings.send(1)
        #expect(strings.runningEffectCount == 1)
    }

    @Test("un-keyed effects keep the .latest tree; keyed ones are only ended by key, interruption or release")
    func releaseAndInterruptionCancelKeyedEffects() {
        let scheduler = TestScheduler()
        let (input, inputObserver) = Signal<ConnInput, Never>.pipe()
        let lifetimes = Locked<[Lifetime]>([])
        let connect = SignalProducer<ConnInput, Never> { observer, lifetime in
            lifetimes.withCriticalRegion { $0.append(lifetime) }
            lifetime += scheduler.schedule(after: .seconds(5)) { observer.send(value: .connected) }
        }
        let automaton = Automaton(
            state: Conn.disconnected, input: input,
            mapping: { (state: Conn, input: ConnInput) in
                switch input {
                case .connect: return (.connecting, connect.keyed(Key.connection, .queue))
                case let .ping(number):
                    return (
                        state,
                        SignalProducer(value: .ping(number + 1)).delay(.seconds(1), on: scheduler).keyed(
                            Key.pings, .merge)
                    )
                default: return nil
                }
            }, strategy: .latest)
        let activity = Activity(automaton)
        inputObserver.send(value: .connect)
        inputObserver.send(value: .connect)  // waits
        inputObserver.send(value: .ping(0))
        #expect(automaton.runningEffectCount == 2)
        inputObserver.sendInterrupted()
        #expect(automaton.runningEffectCount == 0)
        #expect(scheduler.pendingActionCount == 0)
        #expect(lifetimes.withCriticalRegion { $0.map(\.hasEnded) } == [true])
        let entries = activity.take()
        #expect(
            entries.suffix(4) == [
                .effect(EffectEvent(id: 0, key: EffectKey(Key.connection), kind: .cancelled(.interrupted))),
                .effect(EffectEvent(id: 1, key: EffectKey(Key.connection), kind: .cancelled(.interrupted))),
                .effect(EffectEvent(id: 2, key: EffectKey(Key.pings), kind: .cancelled(.interrupted))),
                .repliesEnded,
            ])
    }

    @Test("releasing the automaton cancels keyed and waiting effects, after replies complete")
    func releaseCancelsKeyedEffects() {
        let scheduler = TestScheduler()
        let lifetimes = Locked<[Lifetime]>([])
        let events = Locked<[String]>([])
        do {
            let automaton = Self.connectionManager(scheduler: scheduler, policy: .queue, lifetimes: lifetimes)
            automaton.replies.observeCompleted { events.withCriticalRegion { $0.append("replies completed") } }
            automaton.effectEvents.observe { event in
                events.withCriticalRegion { $0.append(event.value.map(\.description) ?? "effect events \(event)") }
            }
            automaton.send(.connect)
            automaton.send(.connect)
        }
        #expect(lifetimes.withCriticalRegion { $0.map(\.hasEnded) } == [true])
        #expect(scheduler.pendingActionCount == 0)
        #expect(
            events.withCriticalRegion { $0 } == [
                "effect 0 [connection] started by connect",
                "replies completed",
                "effect 0 [connection] cancelled: automaton released",
                "effect 1 [connection] cancelled: automaton released",
                "effect events completed",
            ])
    }

    /// A key per request: 10,000 one-off keys, each effect ending at once, beside 5 long-running keyed
    /// effects. The engine lets idle keys go once they are more than 8 and outnumber the keys in use
    /// (APIContracts: at most twice the keys in use, plus 9), so the table stays as small as what runs;
    /// a key with a running effect is never swept with the idle ones: a cancel row still finds it, and
    /// the others still end by their timers.
    @Test("one-off keys are swept out: the key table stays as small as what runs (10,000 keys)")
    func oneOffKeysAreSweptOut() {
        let scheduler = TestScheduler()
        let automaton = Automaton<Int, SweepInput>(
            state: 0,
            mapping: { (state: Int, input: SweepInput) in
                switch input {
                case let .request(id):
                    return (state, SignalProducer(value: .done(id)).keyed(id))
                case let .watch(id):
                    let watch = SignalProducer<SweepInput, Never>(value: .done(-id)).delay(.seconds(5), on: scheduler)
                    return (state, watch.keyed("watch \(id)"))
                case .done:
                    return (state + 1, .empty)
                case let .stop(id):
                    return (state, .cancel("watch \(id)"))
                }
            })
        let watchEvents = Locked<[String]>([])
        automaton.effectEvents.observeValues { event in
            if event.key?.description.hasPrefix("watch") == true {
                watchEvents.withCriticalRegion { $0.append(event.description) }
            }
        }
        for id in 0..<5 { automaton.send(.watch(id)) }
        var largest = (keys: 0, slots: 0)
        for id in 0..<10_000 {
            automaton.send(.request(id))
            let size = automaton.keyTableSize
            largest = (max(largest.keys, size.keys), max(largest.slots, size.slots))
        }
        #expect(automaton.state.value == 10_000)
        #expect(largest.keys <= 15 && largest.slots <= 64, "the key table grew to \(largest)")
        #expect(automaton.runningEffectCount == 5)
        automaton.send(.stop(1))
        automaton.send(.stop(3))
        #expect(automaton.runningEffectCount == 3)
        scheduler.advance(by: .seconds(5))
        #expect(automaton.state.value == 10_003)
        #expect(automaton.runningEffectCount == 0)
        #expect(
            watchEvents.withCriticalRegion { $0 } == [
                "effect 0 [watch 0] started by watch(0)", "effect 1 [watch 1] started by watch(1)",
                "effect 2 [watch 2] started by watch(2)", "effect 3 [watch 3] started by watch(3)",
                "effect 4 [watch 4] started by watch(4)",
                "effect 1 [watch 1] cancelled by stop(1)", "effect 3 [watch 3] cancelled by stop(3)",
                "effect 0 [watch 0] ended", "effect 2 [watch 2] ended", "effect 4 [watch 4] ended",
            ])
    }

    /// Keys used in turn, each effect ending before the next starts: up to 9 keys keep their groups
    /// (each effect finds its key's group, nothing is swept or made again: the key objects of the
    /// first round, which the groups hold, stay alive through later rounds, whose equal keys are new
    /// objects); with 10, the idle ones outnumber the one in use by more than 8, and are swept as the
    /// 10th key's effect starts.
    @Test("a rotation of up to 9 keys keeps its groups; a 10th key sweeps the idle ones")
    func rotatingKeys() {
        let keys = Locked<[WeakObjectKey]>([])
        let automaton = Automaton<Int, Int>(
            state: 0,
            mapping: { (state: Int, input: Int) in
                let key = DeinitSpy(id: input % 1_000)
                keys.withCriticalRegion { $0.append(WeakObjectKey(key: key)) }
                return (state + 1, SignalProducer<Int, Never>.empty.keyed(key))
            })
        let firstRoundAlive = { keys.withCriticalRegion { $0.prefix(9).filter { $0.key != nil }.map(\.id) } }
        var sizes: [Int] = []
        for round in 0..<3 {
            for key in 0..<9 { automaton.send(round * 1_000 + key) }
            sizes.append(automaton.keyTableSize.keys)
            #expect(firstRoundAlive() == Array(0..<9), "round \(round): a group was made again")
        }
        #expect(sizes == [9, 9, 9])
        automaton.send(9)
        #expect(automaton.keyTableSize.keys == 1, "only the key in use is left")
        #expect(firstRoundAlive() == [], "the swept keys are let go of")
        #expect(automaton.state.value == 28)
    }

    /// A key that holds an object: once its effect has ended, the automaton lets the key go when its
    /// table sweeps (a few other keys later), or when the automaton is released.
    @Test("an idle key is let go when the key table sweeps, and when the automaton is released")
    func idleKeysAreReleased() {
        let keys = Locked<[WeakObjectKey]>([])
        let make = {
            Automaton<Int, Int>(
                state: 0,
                mapping: { (state: Int, input: Int) in
                    let key = DeinitSpy(id: input)
                    keys.withCriticalRegion { $0.append(WeakObjectKey(key: key)) }
                    return (state + 1, SignalProducer<Int, Never>.empty.keyed(key))
                })
        }
        let alive = { keys.withCriticalRegion { $0.filter { $0.key != nil }.map { $0.id } } }
        do {
            let automaton = make()
            automaton.send(0)
            #expect(automaton.runningEffectCount == 0)
            for input in 1...100 { automaton.send(input) }
            #expect(automaton.state.value == 101)
            #expect(!alive().contains(0), "the first key outlived 100 other keys")
            #expect(alive().count <= 8, "idle keys kept: \(alive())")
        }
        #expect(alive() == [], "keys kept after the automaton's release: \(alive())")
    }

    /// A key is a user's value, so its release is user code: the engine lets go of a key after its
    /// lock, so a key whose `deinit` sends to the automaton is sent, not deadlocked (under the lock,
    /// this send would wait for that lock forever).
    @Test("a key is released after the engine's lock: its deinit may send to the automaton")
    func keyReleasedAfterTheLock() {
        let owner = WeakBox<Automaton<Int, Int>>()
        let automaton = Automaton<Int, Int>(
            state: 0,
            mapping: { (state: Int, input: Int) in
                guard input >= 0 else { return (state + 1_000, .empty) }
                let key = DeinitSpy(id: input) { owner.object?.send(-1) }
                return (state + 1, SignalProducer<Int, Never>.empty.keyed(key))
            })
        owner.object = automaton
        let replies = Locked<[Int]>([])
        automaton.replies.observeValues { reply in
            replies.withCriticalRegion { $0.append(reply.isSuccess ? reply.input : -2) }
        }
        for input in 0..<100 { automaton.send(input) }
        let kept = automaton.keyTableSize.keys
        let released = 100 - kept
        #expect(released >= 90, "only \(released) of 100 idle keys were let go")
        #expect(automaton.state.value == 100 + 1_000 * released)
        let recorded = replies.withCriticalRegion { $0 }
        #expect(recorded.filter { $0 >= 0 } == Array(0..<100))
        #expect(recorded.filter { $0 < 0 } == Array(repeating: -1, count: released))
    }

    /// A key's `==` is a user's code, so the engine never calls it under its lock: a key made anew
    /// per input, equal to a running one's, is compared after the lock (under the lock, an `==` that
    /// reads `runningEffectCount` would wait for that lock forever). Run on a thread of its own, so
    /// that a deadlock fails the test instead of hanging it.
    @Test("a key's == reads the automaton: keys are compared with no lock held", arguments: [false, true])
    func keyEqualityReadsTheAutomaton(cancelRow: Bool) async {
        let outcome = await onDedicatedThread(timeout: 60) { () -> ([Int], [String], Int) in
            let owner = WeakBox<Automaton<Int, Int>>()
            let comparisons = Locked<[Int]>([])
            let pending = SignalProducer<Int, Never> { _, _ in }
            let automaton = Automaton<Int, Int>(
                state: 0,
                mapping: { (state: Int, input: Int) in
                    let key = ReadingKey(id: input % 2) {
                        comparisons.withCriticalRegion { $0.append(owner.object?.runningEffectCount ?? -1) }
                    }
                    if cancelRow && input == 9 { return (state + 1, .cancel(key)) }
                    return (state + 1, pending.keyed(key, .latest))
                })
            owner.object = automaton
            let events = Recording<String>()
            automaton.effectEvents.observeValues { events.append("\($0)") }
            for input in [0, 1, 2, 9] { automaton.send(input) }
            return (comparisons.withCriticalRegion { $0 }, events.values, automaton.runningEffectCount)
        }
        guard let (comparisons, events, running) = outcome else { return }
        #expect(comparisons.allSatisfy { $0 == 2 }, "== ran while the automaton could be read: \(comparisons)")
        #expect(!comparisons.isEmpty)
        let last =
            cancelRow
            ? ["effect 1 [1] cancelled by 9"]
            : ["effect 1 [1] replaced by 9", "effect 3 [1] started by 9"]
        #expect(
            events
                == [
                    "effect 0 [0] started by 0", "effect 1 [1] started by 1", "effect 0 [0] replaced by 2",
                    "effect 2 [0] started by 2",
                ] + last)
        #expect(running == (cancelRow ? 1 : 2))
    }
}

/// A key equal to another of the same `id`, whose `==` runs `onCompare` (user code that may read the
/// automaton).
private struct ReadingKey: Hashable, Sendable, CustomStringConvertible {
    let id: Int
    let onCompare: @Sendable () -> Void

    static func == (lhs: ReadingKey, rhs: ReadingKey) -> Bool {
        lhs.onCompare()
        return lhs.id == rhs.id
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }

    var description: String { "\(id)" }
}

private enum SweepInput: Hashable, Sendable, CustomStringConvertible {
    case request(Int), watch(Int), done(Int), stop(Int)

    var description: String {
        switch self {
        case let .request(id): return "request(\(id))"
        case let .watch(id): return "watch(\(id))"
        case let .done(id): return "done(\(id))"
        case let .stop(id): return "stop(\(id))"
        }
    }
}

/// A key, weakly, with its identifier: to see which keys the automaton still holds.
private struct WeakObjectKey: Sendable {
    weak var key: DeinitSpy?
    let id: Int

    init(key: DeinitSpy) {
        self.key = key
        self.id = key.id
    }
}
