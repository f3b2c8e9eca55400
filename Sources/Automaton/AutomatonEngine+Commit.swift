import Signals

// Step 3 of a transition that changes the machine's bookkeeping, performed by the processing role:
// the record is made before the lock, the machine commits under it, and the cancellations, the state,
// the reply and the new effect's start follow with no lock held.

extension AutomatonEngine {
    /// Step 3 of `process(_:)` for a transition that changes the machine's bookkeeping: it starts,
    /// replaces or cancels effects, or its input came from an effect. Not inlined into `process`, so
    /// that an effect-free input's path keeps a small stack frame.
    @inlinable @inline(never)
    func commit(
        _ pending: PendingInput<State, Input>, from: State, to toState: State,
        effect: consuming SignalProducer<Input, Never>?, observedSince start: UInt64
    ) {
        // A constant, not a variable: the critical section below captures it, and a captured variable
        // is retained and released around the call that reads it. A keyed effect's key and policy are
        // read by its record, straight from the producer (a local copy here retained the key once more).
        if !isLatest, start == 0, pending.origin == nil, let producer = effect, !producer.hasDirective,
            let value = producer.knownValue, gate.load() == ProcessingGate.processing,
            EffectEventGate.reachesNobody(gate: eventGate, events: effectEvents)
        {
            commitKnownValue(pending, from: from, to: toState, value: value)
            return
        }
        let cancelKeys = effect?.directiveBox?.cancelKeys
        if let cancelKeys {
            // Out of line: a `.cancel` row, or a forwarding row, starts no effect; an `.effects(...)`
            // row is told apart there.
            commitStartingNothing(
                pending, from: from, to: toState, cancelKeys: cancelKeys, directive: effect?.directiveBox,
                observedSince: start)
            return
        }
        // The producer moves into the record (the caller gives it up): no reference counting for it.
        // The record goes into the critical section unretained (this frame holds `prepared`): captured
        // as a reference, it was retained and released around it.
        let prepared: EffectRecord<State, Input>?
        let preparedLink: Unmanaged<EffectRecord<State, Input>>?
        if cancelKeys == nil, let producer = effect.take() {
            let record = EffectRecord(engine: self, effect: producer)
            prepared = record
            preparedLink = .passUnretained(record)
        } else {
            (prepared, preparedLink) = (nil, nil)
        }
        var cancelled = CancelledEffects<State, Input>()
        var decision = EffectDecision.none
        var result = critical {
            $0.commitSuccess(
                pending, prepared: preparedLink, cancelKeys: cancelKeys, equalities: nil,
                mayHaveRootLatest: &mayHaveRootLatest, cancelled: &cancelled, decision: &decision
            )
        }
        if case .compareKeys = result {
            result = commitComparingKeys(
                pending, prepared: preparedLink, cancelKeys: cancelKeys, cancelled: &cancelled, decision: &decision)
        }
        if case .aborted = result {
            prepared?.lifetime.end()
            answerAborted(pending)
            return
        }
        if case .committedSendingCancellations = result {
            // Sent before the lifetimes end: their cleanup is user code, and must not run while this
            // thread holds the emitter role, or other threads' effect events would wait for it.
            for effect in cancelled {
                effectEvents.sendValue { Self.cancellation(of: effect, by: pending.input) }
            }
            finishEmitting()
        }
        if !cancelled.isEmpty {  // the usual case skips making an iterator (it retains the effects)
            for effect in cancelled {
                effect.record.lifetime.end()
            }
        }
        state = toState
        stateStorage.set(toState)
        replies.sendIfMade { .success(pending.input, from, toState) }
        if start != 0 {
            // Before the effect starts: an observer learns of the effect before any of its inputs.
            announceProcessing(
                .success(pending.input, from, toState), sentBy: pending.origin?.id,
                effect: decision == .none ? nil : prepared?.id, since: start)
        }
        answer(pending, with: .success(pending.input, from, toState))
        guard let record = consume prepared else { return }
        switch decision {
        case .none, .wait:
            break
        case .start:
            // Decided here, after the reply: nothing can end this effect's lifetime before it starts
            // (this thread holds the processing role). A termination asked for meanwhile, by an
            // observer of the reply or of this event, is performed after this input: it untracks the
            // effect at once, then ends its lifetime and reports it cancelled once it has started.
            emit(record, .started(by: pending.input))
            startCommitted(record)
            if let value = heldValue.take() {
                // This frame's reference to the record moves into the held input.
                held = HeldInput(input: value, origin: consume record)
                if !isProcessingHeldInputs { processHeldInputs() }
            }
        case .drop:
            record.lifetime.end()
            emit(record, .cancelled(.dropped(by: pending.input)))
        }
    }

    /// `commit(...)` for an outside input whose effect is a `SignalProducer(value:)`, unkeyed, under
    /// `.merge`, while nobody observes effect events or processing, nothing is queued and no
    /// termination or completion has been asked for (the gate holds only `processing`): the effect is
    /// run as the transition is made, with no record, no lock and no allocation. Its start and its end
    /// are decided here, before the reply, and reach nobody; its value is then held, with no origin,
    /// and processed next, as an effect's synchronous value always is, or queued behind the inputs
    /// sent during the reply (`EngineStateMachine.queueKnownValue`), as a start handler's would be.
    ///
    /// What else could tell it from the usual path: under `.merge` an unkeyed effect has no place in
    /// any tree, nothing can cancel it between its start and its end (both happen here), and the value
    /// of an ended effect is processed like an outside one (the usual path only counts it in its
    /// record). What can: an effect-event observer added while the reply is delivered does not hear
    /// this effect (it started and ended before), a processing observer added meanwhile (by a reply
    /// observer or another thread) announces its value as sent by no effect, and the effect takes no
    /// number. Documented
    /// in APIContracts.md ("Keyed effects and effect events"); measured in BENCHMARKS.md ("known
    /// values": W3 2,160 -> see there).
    @inlinable @inline(never)
    func commitKnownValue(_ pending: PendingInput<State, Input>, from: State, to toState: State, value: Input) {
        state = toState
        stateStorage.set(toState)
        replies.sendIfMade { .success(pending.input, from, toState) }
        answer(pending, with: .success(pending.input, from, toState))
        // Here, after the reply, is where the usual path's start handler sends the value: held if
        // nothing was queued meanwhile (`hold`), else queued behind what was (an observer of the reply,
        // or another thread, sent an input during it), in the order the inputs came.
        guard gate.load() == ProcessingGate.processing else {
            let dropped = critical { $0.queueKnownValue(PendingInput(input: value, origin: nil)) }
            withExtendedLifetime(dropped) {}  // a user value, released after the lock
            return
        }
        assert(held == nil, "Internal inconsistency: an effect's value held while another waits")
        held = HeldInput(input: value, origin: nil)
        if !isProcessingHeldInputs { processHeldInputs() }
    }

    /// `commit(...)` for a row whose directive has cancel keys (see `EffectDirectiveBox.cancelKeys`):
    /// a `.cancel(keys)` row or one that forwards an input to a child automaton, which start no
    /// effect (`commitCancelling`), or an `.effects(...)` row (`commitSeveral`). Apart from
    /// `commit(...)`, so that adding these rows left the effect path's code as it was (the forwarding
    /// rows cost W3 12 instructions per input inside it).
    @inlinable @inline(never)
    func commitStartingNothing(
        _ pending: PendingInput<State, Input>, from: State, to toState: State, cancelKeys: [EffectKey],
        directive: EffectDirectiveBox?, observedSince start: UInt64
    ) {
        if let several = directive?.several {
            commitSeveral(pending, from: from, to: toState, effects: several, observedSince: start)
            return
        }
        commitCancelling(
            pending, from: from, to: toState, cancelKeys: cancelKeys, afterReply: directive?.afterReply,
            observedSince: start)
    }

    /// `commit(...)` for a row that starts no effect: a `.cancel(keys)` row, or one that forwards an
    /// input to a child automaton (`EffectDirective.afterReply`: `afterReply` runs after the reply, on
    /// this thread, with no lock held).
    @inlinable @inline(never)
    func commitCancelling(
        _ pending: PendingInput<State, Input>, from: State, to toState: State, cancelKeys: [EffectKey],
        afterReply: (@Sendable (AnyObject) -> Void)?, observedSince start: UInt64
    ) {
        var cancelled = CancelledEffects<State, Input>()
        var decision = EffectDecision.none
        var result = critical {
            $0.commitSuccess(
                pending, prepared: nil, cancelKeys: cancelKeys, equalities: nil,
                mayHaveRootLatest: &mayHaveRootLatest, cancelled: &cancelled, decision: &decision
            )
        }
        if case .compareKeys = result {
            result = commitComparingKeys(
                pending, prepared: nil, cancelKeys: cancelKeys, cancelled: &cancelled, decision: &decision)
        }
        if case .aborted = result {
            answerAborted(pending)
            return
        }
        if case .committedSendingCancellations = result {
            for effect in cancelled {
                effectEvents.sendValue { Self.cancellation(of: effect, by: pending.input) }
            }
            finishEmitting()
        }
        if !cancelled.isEmpty {
            for effect in cancelled {
                effect.record.lifetime.end()
            }
        }
        state = toState
        stateStorage.set(toState)
        replies.sendIfMade { .success(pending.input, from, toState) }
        if start != 0 {
            announceProcessing(
                .success(pending.input, from, toState), sentBy: pending.origin?.id, effect: nil, since: start)
        }
        answer(pending, with: .success(pending.input, from, toState))
        afterReply?(self)
    }

    /// Commits again after a commit found keys that only their `==` can tell apart (see
    /// `KeyEqualities`): takes the candidates, compares them here, with no lock held, then commits with
    /// what it found. The candidates are released here too, after the lock.
    @inlinable @inline(never)
    func commitComparingKeys(
        _ pending: PendingInput<State, Input>,
        prepared: Unmanaged<EffectRecord<State, Input>>?,
        cancelKeys: [EffectKey]?,
        cancelled: inout CancelledEffects<State, Input>,
        decision: inout EffectDecision
    ) -> CommitResult {
        let candidates = critical { machine in
            defer { machine.occasional?.parts.pointee.undecidedKeys = [] }  // a copy goes out: nothing is freed here
            return machine.undecidedKeys
        }
        var keys = cancelKeys ?? []
        if let key = prepared?.takeUnretainedValue().key { keys.append(key) }
        // User code: each key's `==`.
        let equalities = KeyEqualities(comparing: keys, with: candidates)
        let result = critical {
            $0.commitSuccess(
                pending, prepared: prepared, cancelKeys: cancelKeys, equalities: equalities,
                mayHaveRootLatest: &mayHaveRootLatest, cancelled: &cancelled, decision: &decision
            )
        }
        precondition(
            result != .compareKeys,
            "Internal inconsistency: the engine's key table changed while the processing thread compared keys")
        return result
    }

    /// The event of `effect`'s cancellation by the successful input `input`.
    @inlinable
    static func cancellation(of effect: CancelledEffect<State, Input>, by input: Input) -> EffectEvent<Input> {
        let cause: EffectCancellation<Input>
        switch effect.cause {
        case .replaced: cause = .replaced(by: input)
        case .cancelRow: cause = .cancelled(by: input)
        case .exit: cause = .exited(by: input)
        }
        return EffectEvent(id: effect.record.id, key: effect.record.key, kind: .cancelled(cause))
    }
}
