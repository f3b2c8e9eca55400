import Signals

// The state-scoped effects of the initial state (`.during`, `.after`), started as the automaton is
// made: the only effects the engine starts without an input. Every other scoped effect is an element of
// its entering input's `.effects(...)` row effect (see StateScope.swift).

extension AutomatonEngine {
    /// Starts `effects`, the keyed effects of the scopes the initial state is in, in table order, as
    /// the automaton is made, before it observes its input signal: no other thread can send to it yet
    /// and nothing observes it, so their `started` events reach nobody (their later events, an end or
    /// an `exited(by:)`, are heard as any effect's). Each starts, whatever its policy (nothing runs
    /// yet; two scopes of one key both run). A value their start handlers send at once is processed
    /// once they have all started, by this thread, as an effect's held value.
    @inlinable @inline(never)
    func startInitial(_ effects: [SignalProducer<Input, Never>]) {
        guard !effects.isEmpty else { return }
        let taken = gate.compareExchange(expected: 0, desired: ProcessingGate.processing)
        precondition(taken, "Internal inconsistency: an automaton's initial effects started while it processed")
        let records = effects.map { EffectRecord(engine: self, effect: $0) }
        // User code, with no lock held: the keys' `==`, so that no lookup under the lock is undecided.
        let keys = records.compactMap(\.key)
        let equalities = KeyEqualities(comparing: keys, with: keys)
        var cancelled = CancelledEffects<State, Input>()
        critical { machine in
            for record in records {
                machine.registerInitial(record, equalities: equalities, into: &cancelled)
            }
        }
        withExtendedLifetime(cancelled) {}  // what the key table let go of, released after the lock
        var holder: EffectRecord<State, Input>?
        for record in records {
            startCommitted(record)
            if holder == nil, heldValue != nil { holder = record }
        }
        if let value = heldValue.take(), let holder {
            held = HeldInput(input: value, origin: holder)
            if !isProcessingHeldInputs { processHeldInputs() }
        }
        if !gate.compareExchange(expected: ProcessingGate.processing, desired: 0) {
            drain()
        }
    }
}

extension EngineStateMachine {
    /// Registers `record`, a keyed effect of the initial state's scopes, as running in its key's
    /// group (see `AutomatonEngine.startInitial(_:)`). Under the lock; calls no user code.
    @inlinable
    mutating func registerInitial(
        _ record: Record, equalities: KeyEqualities, into cancelled: inout CancelledEffects<State, Input>
    ) {
        precondition(record.key != nil, "Internal inconsistency: an initial scoped effect without a key")
        record.id = nextEffectID
        nextEffectID &+= 1
        _ = group(forKeyOf: record, equalities: equalities, into: &cancelled)._withUnsafeGuaranteedRef {
            startKeyed(record, in: $0)
        }
    }
}
