import Signals

// The bookkeeping of a successful transition that starts, replaces or cancels effects, or whose input
// came from an effect: under the engine's lock, calling no user code (see `AutomatonEngine.commit`).

extension EngineStateMachine {
    /// Records a successful transition for `pending`. `prepared` is the record of the effect the mapping
    /// returned (made before the lock was taken, holding the producer), if it is one to run (not
    /// `.empty`, not a `.cancel(key)` row), unretained: the caller holds it for the whole call.
    /// `cancelKeys` are the keys a `.cancel` row cancels (`nil` for any other row). `mayHaveRootLatest` is the processing thread's lock-free hint that the root has
    /// a tracked latest child (under `.latest`), updated here: exact now; later it may stay true after
    /// that child is forgotten, never the other way round.
    ///
    /// Unless it returns `.aborted`, the caller then, outside the lock and in this order, ends the
    /// lifetimes of `cancelled` (sending their cancellations first if told to, then giving up the
    /// emitter role), emits state and reply, then acts on `decision`. (Out-parameters, not a returned
    /// enum: copying a generic enum with these payloads cost more than the bookkeeping itself.)
    @inlinable
    mutating func commitSuccess(
        _ pending: PendingInput<State, Input>,
        prepared: Unmanaged<Record>?,
        cancelKeys: [EffectKey]?,
        equalities: KeyEqualities?,
        mayHaveRootLatest: inout Bool,
        cancelled: inout CancelledEffects<State, Input>,
        decision: inout EffectDecision
    ) -> CommitResult {
        // Keys first, before anything changes: a key that only its `==` can find is compared outside
        // the lock, and the commit made again (see `KeyEqualities`).
        // The usual keyed effect, whose key is the very one in its home slot, settles it in one look.
        if hasKeyGroups, phase != .terminated, cancelKeys != nil || keyNeedsLookUp(prepared),
            needsComparison(prepared: prepared, cancelKeys: cancelKeys, equalities: equalities)
        {
            return .compareKeys
        }
        // Borrowed, not retained: the caller's `pending` keeps the origin alive for the whole call.
        defer {
            if let origin = pending.origin.map(Unmanaged.passUnretained) {
                origin._withUnsafeGuaranteedRef { inputProcessed(from: $0) }
            }
        }
        guard phase != .terminated else { return .aborted }

        if isLatest {
            let previous = pending.origin.map { $0.isTracked ? $0.latestChild : nil } ?? rootLatest
            if let previous {
                cancelChain(from: previous, into: &cancelled, cause: .replaced)
                // The link to the forgotten chain goes at once (it is set anew below): a cancel by key
                // below may walk the tree through the input's origin.
                if let origin = pending.origin { origin.latestChildLink = nil } else { rootLatestLink = nil }
            }
        }
        // A cancel row finds its keys' groups, if keyed effects ever made a table.
        if let cancelKeys, let parts = occasional?.parts {
            var none: [EffectKey] = []
            for key in cancelKeys {
                if let group = parts.pointee.groups.value(for: key, equalities: equalities, undecided: &none) {
                    group._withUnsafeGuaranteedRef { cancel($0, into: &cancelled, cause: .cancelRow) }
                }
            }
            sweepIdleGroupsIfMost(into: &cancelled)
        }

        // The effect that becomes the level's latest child: only an effect of the tree. Unretained
        // (the caller's frame holds it), as the tree's links are.
        var treeChild: Unmanaged<Record>?
        if let prepared {
            prepared._withUnsafeGuaranteedRef { record in
                record.id = nextEffectID
                nextEffectID &+= 1
                // The key is not bound (a binding copies it: a retain and a release); its group is found
                // from the hash and identity the record keeps of it.
                if let policy = record.policy, record.key != nil {
                    decision = group(forKeyOf: record, equalities: equalities, into: &cancelled)
                        ._withUnsafeGuaranteedRef { group in
                            switch policy.kind {
                            case .latest:
                                cancel(group, into: &cancelled, cause: .replaced)
                                return startKeyed(record, in: group)
                            case .first:
                                return group.isEmpty ? startKeyed(record, in: group) : .drop
                            case .queue:
                                guard !group.isEmpty else { return startKeyed(record, in: group) }
                                record.isWaiting = true
                                tracked.append(record)
                                runningEffects += 1
                                waitingEffects += 1
                                group.waiting.append(WaitingEffect(record: record, input: pending.input))
                                return .wait
                            case .merge:
                                return startKeyed(record, in: group)
                            }
                        }
                    // After the effect has joined its group (or found it busy and been dropped), so that the
                    // key in hand is never swept.
                    sweepIdleGroupsIfMost(into: &cancelled)
                } else {
                    if isLatest, let origin = pending.origin, origin.isTracked {
                        record.parent = origin
                    }
                    tracked.append(record)
                    runningEffects += 1
                    treeChild = .passUnretained(record)
                    decision = .start
                }
            }
        }
        if isLatest {
            if let origin = pending.origin {
                if origin.isTracked { origin.latestChildLink = treeChild }
            } else {
                rootLatestLink = treeChild
            }
        }
        mayHaveRootLatest = rootLatestLink != nil
        // The cancellations are decided here: the caller sends them itself if it takes the emitter
        // role now, else they are queued for the thread that holds it (see `EffectEventGate`).
        guard !cancelled.isEmpty, !effectEventsReachNobody() else { return .committed }
        if claimEmitter() { return .committedSendingCancellations }
        for effect in cancelled {
            queue(.value(AutomatonEngine<State, Input>.cancellation(of: effect, by: pending.input)))
        }
        return .committed
    }

    /// Registers the keyed effect of `record` as running in `group`.
    @inlinable
    mutating func startKeyed(_ record: Record, in group: KeyGroup<State, Input>) -> EffectDecision {
        if group.isEmpty { idleGroups -= 1 }
        tracked.append(record)
        runningEffects += 1
        group.appendRunning(record)
        return .start
    }
}
