import Signals

// Termination: the input signal's completion and interruption, and the automaton's release. The
// machine decides under its lock (and blocks the gate's fast path for good); the role holder
// performs it (ends the signals and the effects, in the order `Termination` prescribes), after the
// input in hand if another thread was processing. Checked by `Verification/ProcessingGate.pml`.

extension EngineStateMachine {
    /// The input signal completed. Returns whether the replies should complete now.
    @inlinable
    mutating func inputCompleted() -> Bool {
        guard phase == .active else { return false }
        phase = .inputCompleted
        blockFastPath()
        return shouldCompleteReplies
    }

    /// Sets `blocked`, so that outside inputs take the lock and see the phase.
    @inlinable
    func blockFastPath() {
        gate.setBits(ProcessingGate.blocked)
    }

    /// Stops everything: no input is processed any more and every tracked effect is forgotten.
    ///
    /// - Returns: every running or waiting effect, in the order of their numbers, if the caller now
    ///   holds the processing role and must perform `termination` itself (then give the role up with
    ///   `finishTermination()`); `nil` if already terminated, or if another thread holds the
    ///   role: that thread performs it when it finishes the input in hand (see `next()`).
    @inlinable
    mutating func terminate(_ termination: Termination) -> CancelledEffects<State, Input>? {
        guard phase != .terminated else { return nil }
        phase = .terminated
        terminationCause = termination
        blockFastPath()
        var effects = CancelledEffects<State, Input>()
        // The queued inputs go out with the effects, to be released unlocked: user values, which
        // hold the last references to the records of effects that have ended (and so to their keys).
        effects.keep(queue)
        queue = FIFOQueue()
        // Effects that have ended were reported so; only their queued inputs were left.
        while let record = tracked.first {
            if !record.hasFinished {
                effects.append(CancelledEffect(record, cause: .replaced))
            }
            record.previousOfKey = nil
            record.nextOfKey = nil
            record.groupLink = nil
            tracked.remove(record)
        }
        // The waiting effects' producers go out with them, to be released unlocked. Only if keyed
        // effects were ever used: the occasional parts are not made to be emptied.
        if let parts = occasional?.parts {
            let entries = parts.pointee.groups.removeAll()
            for entry in entries {
                entry.value._withUnsafeGuaranteedRef { group in
                    while let waiting = group.waiting.removeFirst() { effects.keep(waiting) }
                }
            }
            parts.pointee.idleGroups = 0
            parts.pointee.waitingEffects = 0
            effects.keepKeys(of: entries)
        }
        rootLatest = nil
        runningEffects = 0
        if gate.takeBit(ProcessingGate.processing, orSet: ProcessingGate.blocked) {
            return effects
        }
        pendingTermination = (termination, effects)
        return nil
    }

    /// Records that the termination has been performed, and gives up the processing role, leaving the
    /// fast path blocked for good. Returns the released automaton's lifetime, if it was given
    /// already, for the caller to end with the lock released.
    @inlinable
    mutating func finishTermination() -> Lifetime? {
        hasPerformedTermination = true
        gate.store(ProcessingGate.blocked)
        guard let parts = occasional?.parts else { return nil }
        defer { parts.pointee.releasedLifetime = nil }
        return parts.pointee.releasedLifetime
    }

    /// Keeps `lifetime` for the thread that performs the termination, or returns it to be ended now if
    /// the termination has been performed already (the input signal was interrupted before).
    @inlinable
    mutating func keepUntilTerminated(_ lifetime: Lifetime) -> Lifetime? {
        if hasPerformedTermination { return lifetime }
        releasedLifetime = lifetime
        return nil
    }
}

extension AutomatonEngine {
    /// The input signal completed: outside inputs stop; replies complete once every effect has ended.
    @usableFromInline
    func inputCompleted() {
        if critical({ $0.inputCompleted() }) {
            complete()
        }
    }

    /// The input signal was interrupted: effects are disposed, then replies are interrupted.
    @usableFromInline
    func inputInterrupted() {
        terminate(.interrupted)
    }

    /// The automaton was released: replies complete, then effects are disposed, then state completes,
    /// then `lifetime` (the automaton's, if it was made) is ended: here, or, if another thread is
    /// processing, by that thread once it has performed the termination.
    @inlinable
    func release(endingAfterwards lifetime: Lifetime?) {
        // Without a lifetime (nobody read it), nothing is to be kept: `terminate` finds out whether
        // the input's interruption has terminated the automaton already.
        if let lifetime, let kept = critical({ $0.keepUntilTerminated(lifetime) }) {
            kept.end()  // the input was interrupted, and that termination is done
            return
        }
        terminate(.released)
    }

    /// Stops the automaton. Performed here if no other thread is processing; otherwise by that thread,
    /// after the input it is processing (see `EngineStateMachine.terminate(_:)`).
    @inlinable
    func terminate(_ termination: Termination) {
        guard let effects = critical({ $0.terminate(termination) }) else { return }
        perform(termination, cancelling: effects)
        finishTermination()
    }

    /// Records that the termination has been performed and gives up the processing role; then ends
    /// the released automaton's lifetime, if it was released.
    @inlinable
    func finishTermination() {
        critical { $0.finishTermination() }?.end()
    }

    /// Ends the signals and disposes the effects, in the order `termination` prescribes. Run by the
    /// holder of the processing role.
    @inlinable
    func perform(_ termination: Termination, cancelling effects: CancelledEffects<State, Input>) {
        let released = mapping
        mapping = nil
        defer { released?.release() }
        switch termination {
        case .interrupted:
            cancel(effects, .interrupted)
            replies.send(.interrupted)
            endEffectEvents(with: .interrupted)
            // It can never change again; its observers are let go of now, not at the release (which
            // finds the automaton terminated and performs nothing).
            stateStorage.complete()
        case .released:
            replies.send(.completed)
            cancel(effects, .released)
            endEffectEvents(with: .completed)
            stateStorage.complete()
        }
        dropProcessingObservers()
        answerDropped(effects, by: termination)
    }

    /// Reports the cancellation of `effects`, then ends their lifetimes. Every effect event decided
    /// before (an end on another thread included) was queued before these. The events go first, as on
    /// every other path: a lifetime's cleanup is user code, and must not run while this thread holds
    /// the emitter role, nor hold up the events of other threads.
    @inlinable
    func cancel(_ effects: CancelledEffects<State, Input>, _ cause: EffectCancellation<Input>) {
        guard !effects.isEmpty else { return }
        defer {
            for effect in effects {
                effect.record.lifetime.end()
            }
        }
        let claimed = critical { machine -> Bool in
            if machine.claimEmitter() { return true }
            for effect in effects {
                machine.queue(
                    .value(EffectEvent(id: effect.record.id, key: effect.record.key, kind: .cancelled(cause))))
            }
            return false
        }
        if claimed {
            for effect in effects {
                effectEvents.send(
                    .value(EffectEvent(id: effect.record.id, key: effect.record.key, kind: .cancelled(cause))))
            }
            finishEmitting()
        }
    }

    /// Ends `effectEvents`, after every effect event decided before. The machine is terminated or has
    /// completed, so none can be decided after this one.
    @inlinable
    func endEffectEvents(with terminal: Event<EffectEvent<Input>, Never>) {
        sendInOrder(terminal)
    }
}
