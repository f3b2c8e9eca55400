import Dispatch
import Foundation
import Testing

@testable import Automaton
@testable import Signals

// Adversarial tests of the memory pass (df3f568..e8ace2d): the occasional parts behind a pointer, the
// word group reached unowned, the effects' lifetimes sharing the state property's lock, the mapping's
// box. User code here (keys' `==` and `deinit`, cleanup, observers) takes the package's locks: the
// engine's (`runningEffectCount`, a send through an effect's observer) and the state property's,
// which the effects' lifetimes share (`state.value`, `lifetime.hasEnded`). Run under a lock it would
// wait for itself: the round hangs and the helper's timeout fails it.

enum AttackInput: Sendable, Equatable {
    case keyed(Int, policy: Int)
    case cancel(Int)
    case plain
    case noop
}

/// Touches the package's locks from user code.
final class LockProbe: Sendable {
    let automaton = WeakBox<Automaton<Int, AttackInput>>()
    let state = WeakBox<Property<Int>>()
    /// An effect kept by the test: its observer reaches the engine's lock, its lifetime the shared lock.
    let kept = Locked<(observer: Observer<AttackInput, Never>, lifetime: Lifetime)?>(nil)
    let touches = Locked<Int>(0)
    /// Run once, by the next key comparison.
    let onCompare = Locked<(@Sendable () -> Void)?>(nil)

    /// Lets go of the kept effect, outside `kept`'s lock (its release may free a key, which touches it).
    func dropKept() {
        let dropped = kept.withCriticalRegion { kept -> (observer: Observer<AttackInput, Never>, lifetime: Lifetime)? in
            defer { kept = nil }
            return kept
        }
        withExtendedLifetime(dropped) {}
    }

    func touch() {
        _ = automaton.object?.runningEffectCount  // the engine's lock
        _ = state.object?.value  // the state property's lock
        if let kept = kept.withCriticalRegion({ $0 }) {
            _ = kept.lifetime.hasEnded  // the same lock, through an effect's lifetime
            kept.observer.send(value: .noop)  // the engine's lock, through the effect's record
        }
        touches.withCriticalRegion { $0 += 1 }
    }
}

/// A key that every other key of its parity collides with, whose `==` and `deinit` take the package's
/// locks (through its probe), counted.
final class ProbeKey: Hashable, Sendable {
    static let live = Locked<Int>(0)
    let id: Int
    let probe: LockProbe

    init(_ id: Int, _ probe: LockProbe) {
        self.id = id
        self.probe = probe
        Self.live.withCriticalRegion { $0 += 1 }
    }

    deinit {
        probe.touch()
        Self.live.withCriticalRegion { $0 -= 1 }
    }

    static func == (lhs: ProbeKey, rhs: ProbeKey) -> Bool {
        lhs.probe.touch()
        let hook = lhs.probe.onCompare.withCriticalRegion { hook -> (@Sendable () -> Void)? in
            defer { hook = nil }
            return hook
        }
        hook?()
        return lhs.id == rhs.id
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(id & 1)  // collisions: only `==` tells most keys apart
    }
}

@Suite("Memory pass attacks", .serialized)
struct MemoryPassAttackTests {
    /// Lets go of the automaton in `holder`, here (not under the holder's lock).
    func releaseAutomaton(in holder: Locked<Automaton<Int, AttackInput>?>) {
        let released = holder.withCriticalRegion { held -> Automaton<Int, AttackInput>? in
            defer { held = nil }
            return held
        }
        withExtendedLifetime(released) {}
    }

    static let policies: [EffectPolicy] = [.latest, .first, .queue, .merge]

    /// A counter's table whose keys are `ProbeKey`s reporting to `probe`: `.keyed` starts `keyed` under
    /// its key and policy, `.cancel` cancels a key, `.plain` starts `plain`, `.noop` is unmapped.
    static func probeKeyMapping(
        keyed: SignalProducer<AttackInput, Never>, plain: SignalProducer<AttackInput, Never>, probe: LockProbe
    ) -> Automaton<Int, AttackInput>.EffectMapping {
        { state, input in
            switch input {
            case let .keyed(id, policy): return (state + 1, keyed.keyed(ProbeKey(id, probe), policies[policy]))
            case let .cancel(id): return (state + 1, .cancel(ProbeKey(id, probe)))
            case .plain: return (state + 1, plain)
            case .noop: return nil
            }
        }
    }

    /// Keyed effects (colliding keys, every policy, cancel rows), effects that complete, keep their
    /// observer and lifetime, register cleanup or let go of their observer, effect-event and processing
    /// observers that take the locks, the automaton's lifetime with such cleanup; three threads send
    /// while a fourth releases the automaton. Afterwards the kept effects are touched (the shared lock
    /// must still be alive), then dropped: the engine, every key and every observer must be freed.
    @Test(
        "release on another thread while keyed effects, observers and kept effects are live", arguments: [false, true])
    func releaseWhileEverythingIsAttached(latest: Bool) async {
        let rounds = 60
        let sends = 40
        for round in 0..<rounds {
            let probe = LockProbe()
            let keptAll = Locked<[(observer: Observer<AttackInput, Never>, lifetime: Lifetime)]>([])
            let registrations = Locked<[Disposable]>([])
            let counter = Locked<Int>(0)
            let spies = Locked<Int>(0)
            let spiesMade = Locked<Int>(2)  // spy and spy2
            let engine = WeakBox<AnyObject>()
            let storage = WeakBox<AnyObject>()
            let automatonEnded = Locked<Int>(0)

            let effect = SignalProducer<AttackInput, Never> { observer, lifetime in
                let n = counter.withCriticalRegion { n -> Int in
                    n += 1
                    return n
                }
                switch n % 5 {
                case 0:
                    observer.send(value: .noop)
                    observer.sendCompleted()
                case 1:
                    keptAll.withCriticalRegion { $0.append((observer, lifetime)) }
                    if probe.kept.withCriticalRegion({ $0 == nil }) {
                        probe.kept.withCriticalRegion { $0 = (observer, lifetime) }
                    }
                case 2:
                    if let registration = lifetime.observeEnded({ probe.touch() }) {
                        registrations.withCriticalRegion { $0.append(registration) }
                    }
                case 3:
                    lifetime.observeEnded { probe.touch() }
                    observer.send(value: .plain)
                default:
                    break  // lets go of its observer, runs until cancelled
                }
            }
            let holder = Locked<Automaton<Int, AttackInput>?>(nil)
            let sender: @Sendable (AttackInput) -> Void
            do {
                let automaton = Automaton<Int, AttackInput>(
                    state: 0,
                    mapping: Self.probeKeyMapping(keyed: effect, plain: effect, probe: probe),
                    strategy: latest ? .latest : .merge)
                probe.automaton.object = automaton
                probe.state.object = automaton.state
                engine.object = automaton.engine
                storage.object = automaton.engine.stateStorage.buffer
                sender = automaton.sender
                let spy = DeinitSpy(id: 1) { spies.withCriticalRegion { $0 += 1 } }
                automaton.effectEvents.observeValues { _ in
                    withExtendedLifetime(spy) {}
                    probe.touch()
                }
                let spy2 = DeinitSpy(id: 2) { spies.withCriticalRegion { $0 += 1 } }
                automaton.observeProcessing { _ in
                    withExtendedLifetime(spy2) {}
                    probe.touch()
                }
                holder.withCriticalRegion { $0 = automaton }
            }
            await runOnThreads(4, timeout: 120) { index in
                if index == 3 {
                    // The releaser: reads the lifetime (so that a termination left to another thread
                    // keeps it in the occasional parts), adds and disposes processing observers, then
                    // lets the automaton go.
                    for step in 0..<sends {
                        guard let automaton = holder.withCriticalRegion({ $0 }) else { return }
                        if step == 0 {
                            automaton.lifetime.observeEnded {
                                probe.touch()
                                automatonEnded.withCriticalRegion { $0 += 1 }
                            }
                        }
                        spiesMade.withCriticalRegion { $0 += 1 }
                        let spy = DeinitSpy(id: 3) { spies.withCriticalRegion { $0 += 1 } }
                        let disposable = automaton.observeProcessing { _ in
                            withExtendedLifetime(spy) {}
                            probe.touch()
                        }
                        if step % 2 == 0 { disposable.dispose() }
                        if step == sends / 2 {
                            releaseAutomaton(in: holder)
                            return
                        }
                    }
                    return
                }
                for step in 0..<sends {
                    switch (step + index) % 4 {
                    case 0, 1: sender(.keyed(step % 6, policy: (step / 2 + index) % 4))
                    case 2: sender(.cancel(step % 6))
                    default: sender(.plain)
                    }
                }
            }
            touchKeptEffects(keptAll, registrations, round: round)
            #expect(holder.withCriticalRegion { $0 == nil })
            #expect(
                automatonEnded.withCriticalRegion { $0 } == 1, "round \(round): the automaton's lifetime ended once")
            probe.dropKept()
            keptAll.withCriticalRegion { $0 = [] }
            registrations.withCriticalRegion { $0 = [] }
            #expect(engine.object == nil, "round \(round): the engine was freed once the kept effects were")
            #expect(storage.object == nil, "round \(round): the state's storage (the lifetimes' lock) was freed")
            #expect(
                spies.withCriticalRegion { $0 } == spiesMade.withCriticalRegion { $0 },
                "round \(round): every observer was let go of")
        }
        #expect(ProbeKey.live.withCriticalRegion { $0 } == 0, "every key was let go of")
    }

    func touchKeptEffects(
        _ keptAll: Locked<[(observer: Observer<AttackInput, Never>, lifetime: Lifetime)]>,
        _ registrations: Locked<[Disposable]>, round: Int
    ) {
        let kept = keptAll.withCriticalRegion { $0 }
        // The automaton is gone; its effects' lifetimes share a lock that lives in the state
        // property's storage: touching them must not reach freed memory (the address sanitizer job).
        for (observer, lifetime) in kept {
            #expect(lifetime.hasEnded, "round \(round): the release ended every effect")
            let ran = Locked(false)
            #expect(lifetime.observeEnded { ran.withCriticalRegion { $0 = true } } == nil)
            #expect(ran.withCriticalRegion { $0 })
            #expect((lifetime += AnyDisposable {}) == nil)
            observer.send(value: .plain)
            observer.sendCompleted()
        }
        for registration in registrations.withCriticalRegion({ $0 }) {
            #expect(registration.isDisposed)
            registration.dispose()
        }
    }

    /// The emitter role is held by a thread whose effect-event observer blocks, so the events decided
    /// meanwhile (keyed effects' ends, the release's cancellations, the end) wait in the outbox, which
    /// lives in the occasional parts. The ended effects' records are gone, so the outbox holds the last
    /// reference to their keys, whose `deinit`s take the locks. The blocked thread then drains it.
    @Test("the effect-event outbox holds the last reference to keys; drained after the release")
    func outboxHoldsLastKeys() async {
        for round in 0..<30 {
            let probe = LockProbe()
            let observers = Locked<[Observer<AttackInput, Never>]>([])
            let effect = SignalProducer<AttackInput, Never> { observer, _ in
                observers.withCriticalRegion { $0.append(observer) }
            }
            let keptEffect = SignalProducer<AttackInput, Never> { observer, lifetime in
                probe.kept.withCriticalRegion { $0 = (observer, lifetime) }
            }
            let engine = WeakBox<AnyObject>()
            let events = Recording<String>()
            let blocked = DispatchSemaphore(value: 0)
            let unblock = DispatchSemaphore(value: 0)
            let holder = Locked<Automaton<Int, AttackInput>?>(nil)
            do {
                let automaton = Automaton<Int, AttackInput>(
                    state: 0,
                    mapping: { state, input in
                        switch input {
                        case let .keyed(id, _): return (state + 1, effect.keyed(ProbeKey(id, probe), .merge))
                        case .plain: return (state + 1, keptEffect)
                        case .cancel, .noop: return nil
                        }
                    })
                probe.automaton.object = automaton
                probe.state.object = automaton.state
                engine.object = automaton.engine
                automaton.send(.plain)
                for id in 0..<6 { automaton.send(.keyed(id, policy: 0)) }
                let first = Locked(true)
                automaton.effectEvents.observe { event in
                    events.append("\(event)")
                    if first.withCriticalRegion({ flag -> Bool in
                        defer { flag = false }
                        return flag
                    }) {
                        blocked.signal()
                        unblock.wait()
                    }
                }
                holder.withCriticalRegion { $0 = automaton }
            }
            let emitterDone = DispatchGroup()
            emitterDone.enter()
            Thread {
                // Holds the emitter role: the first effect's end is delivered here, and blocks.
                do {
                    let first = observers.withCriticalRegion { $0[0] }
                    first.sendCompleted()
                }
                emitterDone.leave()
            }.start()
            blocked.wait()
            // Ends the other keyed effects: their events go to the outbox; then lets go of their
            // observers, so that the records, and with them the keys, are freed but for the events.
            for observer in observers.withCriticalRegion({ $0 }).dropFirst() {
                observer.sendCompleted()
            }
            observers.withCriticalRegion { $0 = [] }
            releaseAutomaton(in: holder)  // the release: the kept effect's cancellation, the end
            #expect(ProbeKey.live.withCriticalRegion { $0 } >= 5, "round \(round): the outbox holds keys")
            unblock.signal()
            await waitOrFail(emitterDone, timeout: 60)
            let recorded = events.values
            #expect(recorded.count == 8, "round \(round): \(recorded)")
            #expect(recorded.last?.contains("completed") == true, "round \(round): \(recorded)")
            probe.dropKept()
            #expect(engine.object == nil, "round \(round): the engine was freed")
            #expect(ProbeKey.live.withCriticalRegion { $0 } == 0, "round \(round): every key let go of")
        }
    }

    /// An effect keeps its observer, its lifetime and a registration on it; the automaton is released
    /// (with its state property: the test holds neither). The lifetimes' lock lives in the property's
    /// storage: it must outlive every use of the kept lifetime, and be freed once it is let go of.
    @Test("an effect's kept lifetime uses the shared lock after the automaton, its state and the engine's termination")
    func keptLifetimeOutlivesTheAutomaton() async {
        await runOnThreads(2, timeout: 60) { index in
            for _ in 0..<200 {
                let kept = Locked<
                    (observer: Observer<AttackInput, Never>, lifetime: Lifetime, registration: Disposable?)?
                >(
                    nil)
                let effect = SignalProducer<AttackInput, Never> { observer, lifetime in
                    let registration = lifetime.observeEnded {}
                    kept.withCriticalRegion { $0 = (observer, lifetime, registration) }
                }
                let engine = WeakBox<AnyObject>()
                let storage = WeakBox<AnyObject>()
                let lock = WeakBox<AnyObject>()
                do {
                    let automaton = Automaton<Int, AttackInput>(
                        state: 0, mapping: { state, input in input == .plain ? (state + 1, effect) : nil })
                    engine.object = automaton.engine
                    storage.object = automaton.engine.stateStorage.buffer
                    automaton.send(.plain)
                    lock.object = kept.withCriticalRegion { $0!.lifetime.lockObject }
                    #expect(lock.object === storage.object, "the effect's lifetime uses the state's lock")
                }
                do {
                    let (observer, lifetime, registration) = kept.withCriticalRegion { $0! }
                    #expect(lifetime.hasEnded)
                    #expect(registration?.isDisposed == true)
                    registration?.dispose()
                    #expect(lifetime.observeEnded {} == nil)
                    observer.send(value: .plain)
                    observer.sendCompleted()
                    #expect(storage.object != nil, "the kept effect keeps the lock's storage")
                    kept.withCriticalRegion { $0 = nil }
                    _ = lifetime.hasEnded  // the last user of the shared lock
                    withExtendedLifetime((observer, lifetime, registration)) {}
                }
                #expect(engine.object == nil && storage.object == nil && lock.object == nil)
                _ = index
            }
        }
    }

    /// The release is left to the thread processing (blocked in a reply observer): the automaton's
    /// lifetime waits in the occasional parts. Its cleanup takes the locks and sends through a kept
    /// effect; it must run after the termination, outside every lock, once.
    @Test("a termination left to another thread ends the automaton's lifetime after it, outside the locks")
    func pendingTerminationEndsLifetime() async {
        for _ in 0..<50 {
            let probe = LockProbe()
            let keptEffect = SignalProducer<AttackInput, Never> { observer, lifetime in
                probe.kept.withCriticalRegion { $0 = (observer, lifetime) }
            }
            let order = Recording<String>()
            let inReply = DispatchSemaphore(value: 0)
            let proceed = DispatchSemaphore(value: 0)
            let engine = WeakBox<AnyObject>()
            let holder = Locked<Automaton<Int, AttackInput>?>(nil)
            do {
                let automaton = Automaton<Int, AttackInput>(
                    state: 0,
                    mapping: { state, input in
                        switch input {
                        case .plain: return (state + 1, keptEffect)
                        case .noop: return (state + 1, .empty)
                        default: return nil
                        }
                    })
                probe.automaton.object = automaton
                probe.state.object = automaton.state
                engine.object = automaton.engine
                automaton.send(.plain)
                automaton.replies.observe { event in
                    switch event {
                    case let .value(reply) where reply.input == .noop && order.count == 0:
                        order.append("reply")
                        inReply.signal()
                        proceed.wait()
                    case .completed: order.append("replies completed")
                    default: break
                    }
                }
                automaton.lifetime.observeEnded {
                    probe.touch()
                    order.append("lifetime ended")
                }
                holder.withCriticalRegion { $0 = automaton }
            }
            let sender = holder.withCriticalRegion { $0!.sender }
            let done = DispatchGroup()
            done.enter()
            Thread {
                sender(.noop)
                done.leave()
            }.start()
            inReply.wait()
            releaseAutomaton(in: holder)
            #expect(order.values == ["reply"], "the termination waits for the input in hand")
            proceed.signal()
            await waitOrFail(done, timeout: 60)
            #expect(order.values == ["reply", "replies completed", "lifetime ended"])
            #expect(probe.kept.withCriticalRegion { $0!.lifetime.hasEnded })
            probe.dropKept()
            #expect(engine.object == nil)
        }
    }

    /// Processing observers added and disposed on several threads while inputs flow, then the input
    /// completes (no effect: `complete()` drops the observers) while more are added: the count word and
    /// the list agree at every quiet point, and nothing is kept after `replies` ended.
    @Test("the processing observers' word matches the list, through disposal and completion")
    func processingObserverWord() async {
        for _ in 0..<100 {
            let (input, inputObserver) = Signal<AttackInput, Never>.pipe()
            let automaton = Automaton<Int, AttackInput>(state: 0, input: input, mapping: { state, _ in state + 1 })
            let engine = automaton.engine
            let spies = Locked<Int>(0)
            let made = Locked<Int>(0)
            await runOnThreads(3, timeout: 60) { index in
                for step in 0..<30 {
                    if index == 2 {
                        if step == 15 { inputObserver.sendCompleted() } else { inputObserver.send(value: .plain) }
                        continue
                    }
                    made.withCriticalRegion { $0 += 1 }
                    let spy = DeinitSpy(id: step) { spies.withCriticalRegion { $0 += 1 } }
                    let disposable = automaton.observeProcessing { _ in withExtendedLifetime(spy) {} }
                    if step % 3 == 0 { disposable.dispose() }
                }
            }
            let (count, word) = engine.critical { machine in
                (machine.processingObservers.count, engine.processingObserversWord.load())
            }
            #expect(count == 0 && word == 0, "replies completed: \(count) observers kept, word \(word)")
            #expect(spies.withCriticalRegion { $0 } == made.withCriticalRegion { $0 }, "every observer let go of")
        }
    }
    /// A key's `==` (called by the processing thread between its two critical sections, with the
    /// candidates copied out of the occasional parts) lets go of the automaton: the termination is
    /// left to that same thread, which must abort the commit, perform it after the input, end the
    /// automaton's lifetime and free everything.
    @Test("a key's == releases the automaton between the two commits of a keyed effect", arguments: [0, 1, 2, 3])
    func keyComparisonReleasesTheAutomaton(policy: Int) {
        for _ in 0..<20 {
            let probe = LockProbe()
            let effect = SignalProducer<AttackInput, Never> { _, lifetime in
                lifetime.observeEnded { probe.touch() }
            }
            let keptEffect = SignalProducer<AttackInput, Never> { observer, lifetime in
                probe.kept.withCriticalRegion { $0 = (observer, lifetime) }
            }
            let engine = WeakBox<AnyObject>()
            let holder = Locked<Automaton<Int, AttackInput>?>(nil)
            let order = Recording<String>()
            do {
                let automaton = Automaton<Int, AttackInput>(
                    state: 0,
                    mapping: Self.probeKeyMapping(keyed: effect, plain: keptEffect, probe: probe))
                probe.automaton.object = automaton
                engine.object = automaton.engine
                automaton.replies.observe { event in
                    if case .completed = event { order.append("replies completed") }
                }
                automaton.lifetime.observeEnded {
                    probe.touch()
                    order.append("lifetime ended")
                }
                automaton.send(.plain)
                automaton.send(.keyed(0, policy: policy))
                holder.withCriticalRegion { $0 = automaton }
            }
            probe.onCompare.withCriticalRegion {
                $0 = {
                    order.append("compared")
                    releaseAutomaton(in: holder)
                }
            }
            let sender = holder.withCriticalRegion { $0!.sender }
            sender(.keyed(2, policy: policy))  // same parity as 0: only == tells them apart
            #expect(order.values == ["compared", "replies completed", "lifetime ended"])
            #expect(probe.kept.withCriticalRegion { $0!.lifetime.hasEnded })
            probe.dropKept()
            #expect(engine.object == nil)
            #expect(ProbeKey.live.withCriticalRegion { $0 } == 0)
        }
    }
    /// The input is interrupted while the automaton is held only by one of its own observers (of
    /// `replies`, `effectEvents` or processing), so the termination, letting go of that observer,
    /// releases the automaton while it is being performed: the release must find it under way, keep
    /// the automaton's lifetime in the occasional parts for the interrupting thread to end after it,
    /// and everything must be freed.
    @Test("an observer holding the automaton releases it during the interruption's termination", arguments: [0, 1, 2])
    func observerHoldingTheAutomaton(holder: Int) {
        for _ in 0..<20 {
            let (input, inputObserver) = Signal<AttackInput, Never>.pipe()
            let engine = WeakBox<AnyObject>()
            let ended = Recording<String>()
            let probe = LockProbe()
            let effect = SignalProducer<AttackInput, Never> { observer, lifetime in
                probe.kept.withCriticalRegion { $0 = (observer, lifetime) }
                lifetime.observeEnded {
                    probe.touch()
                    ended.append("effect")
                }
            }
            do {
                let automaton = Automaton<Int, AttackInput>(
                    state: 0, input: input,
                    mapping: { state, input in
                        input == .plain ? (state + 1, effect.keyed(ProbeKey(1, probe), .latest)) : (state + 1, .empty)
                    })
                engine.object = automaton.engine
                probe.state.object = automaton.state
                switch holder {
                case 0: automaton.replies.observe { _ in withExtendedLifetime(automaton) {} }
                case 1: automaton.effectEvents.observe { _ in withExtendedLifetime(automaton) {} }
                default: automaton.observeProcessing { _ in withExtendedLifetime(automaton) {} }
                }
                automaton.lifetime.observeEnded {
                    probe.touch()
                    ended.append("automaton")
                }
                automaton.send(.plain)
            }
            #expect(engine.object != nil, "its observer holds the automaton")
            inputObserver.sendInterrupted()
            #expect(ended.values == ["effect", "automaton"])
            probe.dropKept()
            #expect(engine.object == nil)
            #expect(ProbeKey.live.withCriticalRegion { $0 } == 0)
            withExtendedLifetime(input) {}
        }
    }
    /// Effects made of the automaton's own state producer: each start observes the state's change
    /// signal (the property's lock) and registers that observation on the effect's lifetime (the same
    /// lock), often after the effect has ended (`take(first:)`), so the observation is disposed at once,
    /// under no lock. Three threads send while a fourth releases the automaton.
    @Test("effects observing the automaton's own state, on the lock their lifetimes share")
    func effectsObservingTheirOwnState() async {
        for round in 0..<60 {
            let holder = Locked<Automaton<Int, AttackInput>?>(nil)
            let state = WeakBox<Property<Int>>()
            let engine = WeakBox<AnyObject>()
            let sender: @Sendable (AttackInput) -> Void
            do {
                let effect = SignalProducer<AttackInput, Never> { observer, lifetime in
                    guard let property = state.object else { return observer.sendCompleted() }
                    lifetime += property.producer.take(first: 2).map { $0 % 3 == 0 ? .noop : .noop }
                        .start(observer)
                }
                let automaton = Automaton<Int, AttackInput>(
                    state: 0,
                    mapping: { state, input in
                        switch input {
                        case .plain: return (state + 1, effect)
                        case let .keyed(id, policy): return (state + 1, effect.keyed(id, Self.policies[policy]))
                        case .noop: return (state, .empty)
                        case .cancel: return nil
                        }
                    }, strategy: round % 2 == 0 ? .latest : .merge)
                state.object = automaton.state
                engine.object = automaton.engine
                sender = automaton.sender
                holder.withCriticalRegion { $0 = automaton }
            }
            await runOnThreads(4, timeout: 120) { index in
                for step in 0..<40 {
                    if index == 3 {
                        if step == 20 { releaseAutomaton(in: holder) }
                        continue
                    }
                    sender(step % 2 == 0 ? .plain : .keyed(step % 3, policy: (step + index) % 4))
                }
            }
            #expect(engine.object == nil, "round \(round): the engine was freed")
        }
    }
}
