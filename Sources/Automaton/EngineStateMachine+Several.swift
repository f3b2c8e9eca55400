import Signals

// The bookkeeping of an `.effects(...)` row (`SignalProducer.effects(_:)`): `commitSuccess` for
// several records, under the engine's lock, calling no user code (see `AutomatonEngine.commitSeveral`).
// Apart from `commitSuccess`, which stays as it was for the single effect's path: what is shared is
// the order of the steps, mirrored here step by step.

extension EngineStateMachine {
    /// `commitSuccess` for the records of an `.effects(...)` row, in row order (each made before the
    /// lock, holding its producer; at most one is un-keyed under `.latest`), with `cancelKeys`, the
    /// keys of its `.cancel` elements, and `exitKeys`, those of the state-scoped declarations it
    /// leaves (cancelled first, reported `exited`). `decisions` receives one decision per record, in order. The
    /// caller holds the records for the whole call; equal keys of the row are one storage (see
    /// `AutomatonEngine.commitSeveral`), so that no key of the row needs another's `==` here.
    ///
    /// A later record of a key that an earlier record of the row joined, under `.latest`, cancels that
    /// one into `cancelled`, as it would any running effect of its key: the caller finds its lifetime
    /// ended and does not start it.
    @inlinable
    mutating func commitSeveral(
        _ pending: PendingInput<State, Input>,
        records: [Record],
        cancelKeys: [EffectKey],
        exitKeys: [EffectKey],
        equalities: KeyEqualities?,
        mayHaveRootLatest: inout Bool,
        cancelled: inout CancelledEffects<State, Input>,
        decisions: inout [EffectDecision]
    ) -> CommitResult {
        if hasKeyGroups, phase != .terminated,
            needsComparison(records: records, cancelKeys: cancelKeys + exitKeys, equalities: equalities)
        {
            return .compareKeys
        }
        defer {
            if let origin = pending.origin { inputProcessed(from: origin) }
        }
        guard phase != .terminated else { return .aborted }

        if isLatest {
            let previous = pending.origin.map { $0.isTracked ? $0.latestChild : nil } ?? rootLatest
            if let previous {
                cancelChain(from: previous, into: &cancelled, cause: .replaced)
                if let origin = pending.origin { origin.latestChildLink = nil } else { rootLatestLink = nil }
            }
        }
        if !cancelKeys.isEmpty || !exitKeys.isEmpty, let parts = occasional?.parts {
            var none: [EffectKey] = []
            // The states left first: an effect both scoped and cancelled by the row is reported exited.
            for (keys, cause) in [(exitKeys, CancellationCause.exit), (cancelKeys, .cancelRow)] {
                for key in keys {
                    if let group = parts.pointee.groups.value(for: key, equalities: equalities, undecided: &none) {
                        group._withUnsafeGuaranteedRef { cancel($0, into: &cancelled, cause: cause) }
                    }
                }
            }
            sweepIdleGroupsIfMost(into: &cancelled)
        }

        var treeChild: Unmanaged<Record>?
        decisions.removeAll(keepingCapacity: true)
        for record in records {
            record.id = nextEffectID
            nextEffectID &+= 1
            if let policy = record.policy, record.key != nil {
                let decision = group(forKeyOf: record, equalities: equalities, into: &cancelled)
                    ._withUnsafeGuaranteedRef { group in
                        register(record, of: pending.input, in: group, policy: policy, cancelled: &cancelled)
                    }
                decisions.append(decision)
                sweepIdleGroupsIfMost(into: &cancelled)
            } else {
                precondition(
                    !isLatest || treeChild == nil,
                    "Internal inconsistency: two un-keyed effects of one row under .latest")
                if isLatest, let origin = pending.origin, origin.isTracked {
                    record.parent = origin
                }
                tracked.append(record)
                runningEffects += 1
                treeChild = .passUnretained(record)
                decisions.append(.start)
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
        guard !cancelled.isEmpty, !effectEventsReachNobody() else { return .committed }
        if claimEmitter() { return .committedSendingCancellations }
        for effect in cancelled {
            queue(.value(AutomatonEngine<State, Input>.cancellation(of: effect, by: pending.input)))
        }
        return .committed
    }

    /// Registers the keyed `record` in `group` under `policy`, as `commitSuccess` does.
    @inlinable
    mutating func register(
        _ record: Record, of input: Input, in group: KeyGroup<State, Input>, policy: EffectPolicy,
        cancelled: inout CancelledEffects<State, Input>
    ) -> EffectDecision {
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
            group.waiting.append(WaitingEffect(record: record, input: input))
            return .wait
        case .merge:
            return startKeyed(record, in: group)
        }
    }

    /// `needsComparison(prepared:cancelKeys:equalities:)` for the records of an `.effects(...)` row.
    @inlinable
    mutating func needsComparison(records: [Record], cancelKeys: [EffectKey], equalities: KeyEqualities?) -> Bool {
        var undecided: [EffectKey] = []
        let parts = madeOccasional()
        defer { parts.pointee.undecidedKeys = undecided }
        for key in cancelKeys {
            _ = parts.pointee.groups.value(for: key, equalities: equalities, undecided: &undecided)
        }
        for record in records {
            guard record.policy != nil, let key = record.key else { continue }
            _ = parts.pointee.groups.value(for: key, equalities: equalities, undecided: &undecided)
        }
        return !undecided.isEmpty
    }
}
