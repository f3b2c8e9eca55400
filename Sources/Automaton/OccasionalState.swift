import Signals

// The parts of the engine's state machine that most automata never use: keyed effects, the
// effect-event outbox, the processing observers, a termination left to another thread. They live in
// an object made on first use, so that an automaton that uses none of them carries one word for them,
// not 128 bytes: its state machine fits a 160-byte block instead of a 288-byte one ("bytes per idle
// automaton", `Benchmarks/run million`, at the commit that made this file).
//
// The machine reaches each part through an accessor of the same name (below): reading one that was
// never made gives its empty value, and changing one makes the object. Code that only empties a part
// (the termination, `finishTermination()`) checks `occasional` first, so that an automaton that never
// used the parts never makes them.
//
// A struct behind a pointer, not a class: a class's reference is retained around each access that
// the optimizer cannot prove safe, and keyed effects, which reach the key table several times per
// input, paid 550 instructions more per input for it ("W3 Automaton, keyed effects", callgrind).

/// What an `EngineStateMachine` uses only for keyed effects, observed effect events, processing
/// observers or a termination performed by another thread.
@usableFromInline
struct OccasionalState<State: Sendable, Input: Sendable> {
    @usableFromInline var pendingTermination: (Termination, CancelledEffects<State, Input>)?
    /// The released automaton's lifetime, ended once the termination has been performed, so
    /// that the automaton's `lifetime` ends last even when another thread performs the termination
    /// later (see `AutomatonEngine.release(endingAfterwards:)`).
    @usableFromInline var releasedLifetime: Lifetime?
    /// Keyed effects waiting (`.queue`) for their key.
    @usableFromInline var waitingEffects = 0
    /// The keyed effects, by key.
    ///
    /// The table holds one reference to each group, taken by hand in `insertGroup` and given back in
    /// `CancelledEffects.keepKeys` (sweeps and termination), so that looking a group up costs no
    /// reference counting.
    @usableFromInline var groups = EffectKeyTable<Unmanaged<KeyGroup<State, Input>>>()
    /// The keys of the table that only a key's `==` can tell from the key of the effect or cancel row
    /// being committed (see `CommitResult.compareKeys`): copies, for the processing thread to take and
    /// compare with no lock held. Empty but between those two critical sections.
    @usableFromInline var undecidedKeys: [EffectKey] = []
    /// How many of `groups` are empty (`KeyGroup.isEmpty`): kept in step wherever a group empties or
    /// fills, so that the engine knows when to sweep them without looking at each.
    @usableFromInline var idleGroups = 0
    /// The events of `effectEvents` decided while another thread held the emitter role, in the order
    /// they were decided; that thread sends them (see `EffectEventGate`).
    @usableFromInline var effectEventOutbox = FIFOQueue<Event<EffectEvent<Input>, Never>>()
    /// The processing observers (see `Automaton.observeProcessing(_:)`), counted by the engine's
    /// `processingObserversWord`, which changes with this list, under the engine's lock.
    @usableFromInline var processingObservers: [ProcessingObserver<State, Input>] = []

    @inlinable
    init() {}

    /// `groups.valueInHomeSlot(hash:identity:)`, for the keyed paths. Mutating, and so called through
    /// the pointer's mutable address: read through its plain address, the table was retained and
    /// released around the lookup, both its arrays, at each keyed effect (callgrind).
    @inlinable @inline(__always)
    mutating func group(inHomeSlotOf hash: Int, identity: ObjectIdentifier) -> Unmanaged<KeyGroup<State, Input>>? {
        groups.valueInHomeSlot(hash: hash, identity: identity)
    }
}

/// Where a machine's `OccasionalState` lives: memory of its own, made by the machine under the
/// engine's lock and freed by the engine's `deinit` (`AutomatonEngine.freeOccasional`).
@usableFromInline
struct OccasionalLink<State: Sendable, Input: Sendable>: @unchecked Sendable {
    // Safe: the memory is read and written only by the state machine that holds this link, so only
    // under the engine's lock (the machine lives in that lock's storage), and freed once, by the
    // engine's `deinit`, when no other thread can reach the engine. The address sanitizer job of
    // `.ci/run` reports a use after that, and, through its leak checker, a link never freed (no test
    // can see one by a weak reference: the termination has emptied the parts of every user value
    // before the engine's `deinit`; a review removed the free and only that job failed).
    @usableFromInline let parts: UnsafeMutablePointer<OccasionalState<State, Input>>

    @inlinable
    init(parts: UnsafeMutablePointer<OccasionalState<State, Input>>) {
        self.parts = parts
    }
}

extension EngineStateMachine {
    /// The occasional parts, made now if they were not.
    @inlinable
    mutating func madeOccasional() -> UnsafeMutablePointer<OccasionalState<State, Input>> {
        if let occasional { return occasional.parts }
        return makeOccasional()
    }

    /// Makes the occasional parts: an allocation, under the engine's lock (no user code).
    @inlinable @inline(never)
    mutating func makeOccasional() -> UnsafeMutablePointer<OccasionalState<State, Input>> {
        let parts = UnsafeMutablePointer<OccasionalState<State, Input>>.allocate(capacity: 1)
        parts.initialize(to: OccasionalState())
        occasional = OccasionalLink(parts: parts)
        return parts
    }

    /// See `OccasionalState.pendingTermination`.
    @inlinable
    var pendingTermination: (Termination, CancelledEffects<State, Input>)? {
        get { occasional?.parts.pointee.pendingTermination }
        _modify { yield &madeOccasional().pointee.pendingTermination }
    }

    /// See `OccasionalState.releasedLifetime`.
    @inlinable
    var releasedLifetime: Lifetime? {
        get { occasional?.parts.pointee.releasedLifetime }
        _modify { yield &madeOccasional().pointee.releasedLifetime }
    }

    /// See `OccasionalState.waitingEffects`.
    @inlinable
    var waitingEffects: Int {
        get { occasional?.parts.pointee.waitingEffects ?? 0 }
        _modify { yield &madeOccasional().pointee.waitingEffects }
    }

    /// See `OccasionalState.groups`. Reading it copies the table (a retain of each of its arrays):
    /// the keyed paths reach it in place instead, through `madeOccasional().pointee.groups`.
    @inlinable
    var groups: EffectKeyTable<Unmanaged<KeyGroup<State, Input>>> {
        get { occasional?.parts.pointee.groups ?? EffectKeyTable() }
        _modify { yield &madeOccasional().pointee.groups }
    }

    /// Whether the key table holds any key, without making the occasional parts.
    @inlinable
    var hasKeyGroups: Bool {
        guard let occasional else { return false }
        return !occasional.parts.pointee.groups.isEmpty
    }

    /// See `OccasionalState.undecidedKeys`.
    @inlinable
    var undecidedKeys: [EffectKey] {
        get { occasional?.parts.pointee.undecidedKeys ?? [] }
        _modify { yield &madeOccasional().pointee.undecidedKeys }
    }

    /// See `OccasionalState.idleGroups`.
    @inlinable
    var idleGroups: Int {
        get { occasional?.parts.pointee.idleGroups ?? 0 }
        _modify { yield &madeOccasional().pointee.idleGroups }
    }

    /// See `OccasionalState.effectEventOutbox`.
    @inlinable
    var effectEventOutbox: FIFOQueue<Event<EffectEvent<Input>, Never>> {
        _read {
            if let occasional {
                yield occasional.parts.pointee.effectEventOutbox
            } else {
                yield FIFOQueue()
            }
        }
        _modify { yield &madeOccasional().pointee.effectEventOutbox }
    }

    /// See `OccasionalState.processingObservers`.
    @inlinable
    var processingObservers: [ProcessingObserver<State, Input>] {
        get { occasional?.parts.pointee.processingObservers ?? [] }
        _modify { yield &madeOccasional().pointee.processingObservers }
    }
}

extension AutomatonEngine {
    /// Frees the machine's occasional parts, if it made them: from `deinit`, after the lock, since the
    /// parts hold users' values (keys, observers, events, a lifetime).
    @inlinable
    func freeOccasional() {
        let occasional = critical { machine in
            defer { machine.occasional = nil }
            return machine.occasional
        }
        guard let parts = occasional?.parts else { return }
        parts.deinitialize(count: 1)
        parts.deallocate()
    }
}
