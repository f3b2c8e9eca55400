import Signals

// The key table of the keyed effects: finding, making, sweeping and cancelling a key's group. Under
// the engine's lock; a key's `==` (user code) is never called here (see `CommitResult.compareKeys`).

extension EngineStateMachine {
    /// The group of `key`, made (empty) and put in the table if it has none. A group left empty when
    /// its last effect ends stays in the table, so that the key's next effect finds it; the empty
    /// groups are swept out once they are most of the table (`mostAreIdle`): after a keyed effect
    /// joins its group or a cancel row (`sweepIdleGroupsIfMost`), or as the table grows. The keys
    /// swept out go to `cancelled`, to be released after the lock.
    @inlinable
    mutating func group(
        for key: EffectKey, equalities: KeyEqualities?, into cancelled: inout CancelledEffects<State, Input>
    ) -> Unmanaged<KeyGroup<State, Input>> {
        var undecided: [EffectKey] = []
        if let group = madeOccasional().pointee.groups.value(for: key, equalities: equalities, undecided: &undecided) {
            return group
        }
        precondition(undecided.isEmpty, "Internal inconsistency: a key looked up undecided after its comparison")
        return insertGroup(for: key, into: &cancelled)
    }

    /// Whether the effect of `prepared` is keyed and its key is not the very key in its home slot.
    @inlinable @inline(__always)
    func keyNeedsLookUp(_ prepared: Unmanaged<Record>?) -> Bool {
        guard let prepared else { return false }
        let (isKeyed, hash, identity) = prepared._withUnsafeGuaranteedRef {
            ($0.policy != nil, $0.keyHash, $0.keyIdentity)
        }
        guard isKeyed else { return false }
        return occasional?.parts.pointee.group(inHomeSlotOf: hash, identity: identity) == nil
    }

    /// Whether a key of `prepared`'s effect or of `cancelKeys` has, in the table, keys of the same hash
    /// and another storage that `equalities` does not decide: they go to `undecidedKeys`, for the
    /// caller to compare by `==` with no lock held. Calls no user code.
    @inlinable
    mutating func needsComparison(
        prepared: Unmanaged<Record>?, cancelKeys: [EffectKey]?, equalities: KeyEqualities?
    ) -> Bool {
        var undecided: [EffectKey] = []
        let parts = madeOccasional()
        defer { parts.pointee.undecidedKeys = undecided }
        if let cancelKeys {
            for key in cancelKeys {
                _ = parts.pointee.groups.value(for: key, equalities: equalities, undecided: &undecided)
            }
        }
        prepared?._withUnsafeGuaranteedRef { record in
            guard record.policy != nil, let key = record.key,
                parts.pointee.groups.valueInHomeSlot(hash: record.keyHash, identity: record.keyIdentity) == nil
            else { return }
            _ = parts.pointee.groups.value(for: key, equalities: equalities, undecided: &undecided)
        }
        return !undecided.isEmpty
    }

    /// `group(for:into:)` for the key of the keyed `record`. The usual case (the key's own storage in
    /// its home slot) reads only the hash and identity the record keeps of its key: passing the key
    /// itself to a lookup that is not inlined, or even binding its storage, retains and releases it.
    @inlinable
    mutating func group(
        forKeyOf record: Record, equalities: KeyEqualities?, into cancelled: inout CancelledEffects<State, Input>
    ) -> Unmanaged<KeyGroup<State, Input>> {
        if let group = madeOccasional().pointee.group(inHomeSlotOf: record.keyHash, identity: record.keyIdentity) {
            return group
        }
        return group(for: record.key.unsafelyUnwrapped, equalities: equalities, into: &cancelled)
    }

    /// `group(for:into:)` for a key that has no group: out of line, to keep the usual path short.
    @usableFromInline
    mutating func insertGroup(
        for key: EffectKey, into cancelled: inout CancelledEffects<State, Input>
    ) -> Unmanaged<KeyGroup<State, Input>> {
        let group = Unmanaged.passRetained(KeyGroup<State, Input>())
        // A full table grows, dropping its empty groups only if they are most of it (as below).
        let sweeps = mostAreIdle
        if let swept = groups.insert(key, group, sweeping: { sweeps && Self.isIdle($0) }), !swept.isEmpty {
            sweptOut(swept, into: &cancelled)
        }
        idleGroups += 1
        return group
    }

    /// Sweeps the empty groups out of the table once they are more than 8 and more than those in use,
    /// so that the keys of effects that have ended are let go of soon (at the next keyed effect or
    /// cancel row), and the table stays within a small multiple of the keys in use; a rotation of up
    /// to 9 keys never sweeps. A sweep visits every slot, and comes at most once per as many groups
    /// emptied as the table keeps: O(1) per effect, amortized.
    @inlinable
    mutating func sweepIdleGroupsIfMost(into cancelled: inout CancelledEffects<State, Input>) {
        guard mostAreIdle else { return }
        sweepIdleGroups(into: &cancelled)
    }

    /// The empty groups are more than 8 and more than those in use.
    @inlinable
    var mostAreIdle: Bool {
        guard let parts = occasional?.parts else { return false }
        return parts.pointee.idleGroups > 8 && parts.pointee.idleGroups * 2 > parts.pointee.groups.count
    }

    @usableFromInline
    mutating func sweepIdleGroups(into cancelled: inout CancelledEffects<State, Input>) {
        sweptOut(groups.sweep(dropping: Self.isIdle), into: &cancelled)
    }

    @inlinable
    static func isIdle(_ group: Unmanaged<KeyGroup<State, Input>>) -> Bool {
        group._withUnsafeGuaranteedRef { $0.isEmpty }
    }

    /// The table has just dropped `swept`: every empty group.
    @usableFromInline
    mutating func sweptOut(
        _ swept: [EffectKeyTable<Unmanaged<KeyGroup<State, Input>>>.Entry],
        into cancelled: inout CancelledEffects<State, Input>
    ) {
        precondition(
            swept.count == idleGroups, "Internal inconsistency: \(swept.count) groups swept, \(idleGroups) counted idle"
        )
        idleGroups = 0
        cancelled.keepKeys(of: swept)
    }

    /// Cancels every running and waiting effect of `group` (and what they started), collecting them.
    /// The group stays in the table, empty.
    @inlinable
    mutating func cancel(
        _ group: KeyGroup<State, Input>, into cancelled: inout CancelledEffects<State, Input>, cause: CancellationCause
    ) {
        if !group.isEmpty { idleGroups += 1 }
        var current = group.firstRunning
        group.firstRunning = nil
        group.lastRunning = nil
        while let link = current {
            let record = link.takeUnretainedValue()
            current = record.nextOfKey
            record.previousOfKey = nil
            record.nextOfKey = nil
            record.groupLink = nil
            cancelChain(from: record, into: &cancelled, cause: cause)
        }
        while let waiting = group.waiting.removeFirst() {
            let record = waiting.record
            if record.isTracked {
                tracked.remove(record)
                runningEffects -= 1
                waitingEffects -= 1
                cancelled.append(CancelledEffect(record, cause: cause))
            }
            // Released after the lock, whatever its record's state: it holds an input and a producer.
            cancelled.keep(waiting)
        }
    }
}
