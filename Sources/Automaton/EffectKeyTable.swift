/// A hash table from `EffectKey` to a value, for the engine's groups of keyed effects.
///
/// A `Dictionary` would hash every key with `Hasher` on every lookup (SipHash: its seeding, combining
/// and finalizing cost more than the rest of a keyed effect's bookkeeping). This table reuses the hash
/// each key computed once when it was made (`EffectKey.Storage.hash`, itself a seeded `hashValue`, so
/// well spread). Open addressing with linear probing, at most half full. Entries are only inserted,
/// and removed all at once: by a sweep, which rebuilds the table without some of them, or by
/// `removeAll()`. So there are no tombstones, and lookups never slow down with churn.
///
/// Package-internal: the engine's bookkeeping, exposed to the package's tests only.
@usableFromInline
package struct EffectKeyTable<Value> {
    /// A key and its value.
    @usableFromInline
    package struct Entry {
        @usableFromInline package let key: EffectKey
        /// The key's storage, as an identity: a probe compares it first, which takes no reference. A
        /// mapping table's keyed effects carry the very key their row was made with, so this settles
        /// their comparison; a key made anew per input is compared by value.
        @usableFromInline let keyIdentity: ObjectIdentifier
        @usableFromInline package var value: Value

        @inlinable
        init(key: EffectKey, value: Value) {
            self.key = key
            self.keyIdentity = ObjectIdentifier(key.storage)
            self.value = value
        }
    }

    /// A power of two long (or empty), at most half full.
    @usableFromInline var slots: ContiguousArray<Entry?> = []
    /// For each slot, 0 if it is empty, else its key's hash with the top bit set (`tag(of:)`): a probe
    /// compares these, and reads a slot's key only when the tags are equal. (Reading an entry or its
    /// key out of `slots` copies it, and retains what it holds.)
    @usableFromInline var tags: ContiguousArray<Int> = []
    @usableFromInline package private(set) var count = 0

    @inlinable
    package init() {}

    @inlinable
    package var isEmpty: Bool { count == 0 }

    /// The number of slots: for the package's tests.
    package var capacity: Int { slots.count }

    /// The tag of a slot holding `hash`'s key: never 0, and the same low bits as `hash`.
    @inlinable @inline(__always)
    static func tag(of hash: Int) -> Int { hash | Int.min }

    /// The slot of `key`, or the empty slot where it would go, found without calling `key`'s `==`: the
    /// engine looks keys up under its lock, and a key's `==` is the user's code. The table must have
    /// slots.
    ///
    /// A slot holds `key` if it holds the very same storage, or the storage `equalities` says is equal
    /// to `key`'s. A slot with the same tag and another storage, which `equalities` does not decide,
    /// may hold a key equal to `key`: then its key is appended to `undecided` (copied, for the caller
    /// to compare outside the lock) and `found` is false. `equalities` decides a key either way once
    /// it has an entry for it, so with the entries made from `undecided` a second probe decides.
    @inlinable
    func probe(
        _ key: EffectKey, equalities: KeyEqualities?, undecided: inout [EffectKey]
    ) -> (index: Int, found: Bool) {
        let hash = key.storage.hash
        let tag = Self.tag(of: hash)
        let identity = ObjectIdentifier(key.storage)
        let decided = equalities?.decision(for: identity)
        let undecidedBefore = undecided.count
        return tags.withUnsafeBufferPointer { tags in
            slots.withUnsafeBufferPointer { slots in
                let mask = tags.count - 1
                var index = hash & mask
                while tags[index] != 0 {
                    if tags[index] == tag {
                        let slotIdentity = slots[index].unsafelyUnwrapped.keyIdentity
                        if slotIdentity == identity {
                            // Found by identity: the candidates met on the way need no comparison.
                            undecided.removeSubrange(undecidedBefore...)
                            return (index, true)
                        }
                        switch decided {
                        case let .equal(to: equal)? where equal == slotIdentity:
                            return (index, true)
                        case .some:
                            break  // decided: not this slot's key
                        case nil:
                            undecided.append(slots[index].unsafelyUnwrapped.key)
                        }
                    }
                    index = (index + 1) & mask
                }
                return (index, false)
            }
        }
    }

    /// Whether the key of `identity` and `hash` is in the table, by identity alone (no user code): the
    /// first slot that holds it, or the empty slot that ends its probe.
    @inlinable
    func slot(ofIdentity identity: ObjectIdentifier, hash: Int) -> (index: Int, found: Bool) {
        let tag = Self.tag(of: hash)
        let mask = tags.count - 1
        var index = hash & mask
        while tags[index] != 0 {
            if tags[index] == tag && slots[index].unsafelyUnwrapped.keyIdentity == identity { return (index, true) }
            index = (index + 1) & mask
        }
        return (index, false)
    }

    /// The value of the key whose storage is `identity` and whose hash is `hash`, if that very key is in
    /// its home slot (the usual case for a mapping table's keys); `nil` otherwise, which does not mean
    /// that the key is absent: then look it up with the subscript. Takes no reference to the key, so
    /// that a caller holding it borrowed (a record's key) need not retain it around the lookup. The
    /// slot's fields are read in place: binding its entry would copy it, retaining its key.
    @inlinable @inline(__always)
    package func valueInHomeSlot(hash: Int, identity: ObjectIdentifier) -> Value? {
        guard !slots.isEmpty else { return nil }
        let home = hash & (slots.count - 1)
        guard tags[home] == Self.tag(of: hash), slots[home]?.keyIdentity == identity else { return nil }
        return slots[home]?.value
    }

    /// The value of `key`, if any, found without calling `key`'s `==` (see `probe`): `nil` with keys
    /// appended to `undecided` if only a comparison of `key` with them can tell.
    @inlinable
    package func value(
        for key: EffectKey, equalities: KeyEqualities?, undecided: inout [EffectKey]
    ) -> Value? {
        guard !slots.isEmpty else { return nil }
        // The usual case first, inline: the key itself, in its home slot.
        if let value = valueInHomeSlot(hash: key.storage.hash, identity: ObjectIdentifier(key.storage)) {
            return value
        }
        let (index, found) = probe(key, equalities: equalities, undecided: &undecided)
        return found ? slots[index]?.value : nil
    }

    /// The value of `key`, if any, for the package's tests: compares `key` with the table's keys of
    /// the same hash by `==`, as the engine does outside its lock (see `value(for:equalities:undecided:)`).
    package subscript(_ key: EffectKey) -> Value? {
        var undecided: [EffectKey] = []
        if let value = value(for: key, equalities: nil, undecided: &undecided) { return value }
        guard !undecided.isEmpty else { return nil }
        let equalities = KeyEqualities(comparing: [key], with: undecided)
        var none: [EffectKey] = []
        return value(for: key, equalities: equalities, undecided: &none)
    }

    /// Inserts `value` for `key`, which must have none (its lookup found nothing, every candidate
    /// decided unequal). If the table is half full, it is first rebuilt without the entries whose value
    /// `isStale` (`sweep(dropping:)`): then returns the entries dropped (perhaps none); `nil` if it was
    /// not rebuilt. Calls no user code.
    @inlinable @discardableResult
    package mutating func insert(_ key: EffectKey, _ value: Value, sweeping isStale: (Value) -> Bool) -> [Entry]? {
        var dropped: [Entry]?
        if (count + 1) * 2 > slots.count { dropped = sweep(dropping: isStale) }
        let (index, found) = slot(ofIdentity: ObjectIdentifier(key.storage), hash: key.storage.hash)
        precondition(!found, "Internal inconsistency: a key inserted twice in the engine's key table")
        slots[index] = Entry(key: key, value: value)
        tags[index] = Self.tag(of: key.storage.hash)
        count += 1
        return dropped
    }

    /// Rebuilds the table without the entries whose value `isStale` (the engine's empty groups), in the
    /// fewest slots (at least 8) that are at most a quarter full with one more entry, and returns the
    /// entries dropped, in no particular order. So the table shrinks again after a burst of keys, and
    /// the inserts that fill it again before the next rebuild it needs number at least a quarter of
    /// its slots (a rebuild visits every slot once).
    @usableFromInline @discardableResult
    package mutating func sweep(dropping isStale: (Value) -> Bool) -> [Entry] {
        var kept: [Entry] = []
        var dropped: [Entry] = []
        for case let entry? in slots {
            if isStale(entry.value) { dropped.append(entry) } else { kept.append(entry) }
        }
        var size = 8
        while (kept.count + 1) * 4 > size { size *= 2 }
        rebuild(size: size, keeping: kept)
        return dropped
    }

    /// Removes every entry and returns them, in no particular order; the slots are kept.
    @inlinable
    package mutating func removeAll() -> [Entry] {
        // An empty table (every automaton without keys, at its termination) makes no array at all.
        guard count > 0 else { return [] }
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for index in slots.indices {
            if let entry = slots[index].take() { entries.append(entry) }
            tags[index] = 0
        }
        count = 0
        return entries
    }

    /// Puts `entries` in `size` slots, which must be a power of two and more than twice as many.
    @usableFromInline
    mutating func rebuild(size: Int, keeping entries: [Entry]) {
        slots = ContiguousArray(repeating: nil, count: size)
        tags = ContiguousArray(repeating: 0, count: size)
        count = entries.count
        let mask = size - 1
        for entry in entries {
            let hash = entry.key.storage.hash
            var index = hash & mask
            while tags[index] != 0 { index = (index + 1) & mask }
            slots[index] = entry
            tags[index] = Self.tag(of: hash)
        }
    }
}

extension EffectKeyTable: Sendable where Value: Sendable {}

/// What comparing keys by `==` outside the engine's lock decided: for each key compared, the storage
/// of the table's key equal to it, or that none of the table's candidates is. Keys' `==` is the user's
/// code, so the engine never calls it under its lock: a lookup that meets a key of the same hash and
/// another storage stops and hands the candidates out; the caller compares them with no lock held, and
/// looks up again with the equalities found (the role holder alone adds or sweeps keys, so the table
/// has not changed meanwhile, unless a termination emptied it).
@usableFromInline
package struct KeyEqualities: Sendable {
    @usableFromInline
    enum Decision: Sendable, Equatable {
        case equal(to: ObjectIdentifier)
        case noneEqual
    }

    @usableFromInline var decisions: [(key: ObjectIdentifier, decision: Decision)] = []

    /// Compares each of `keys` with each of `candidates` by `==`: user code, so call it with no lock
    /// held. Not generic: called, not inlined, from the engine's specialized code.
    @usableFromInline
    package init(comparing keys: [EffectKey], with candidates: [EffectKey]) {
        for key in keys {
            let equal = candidates.first { $0 == key }
            decisions.append(
                (ObjectIdentifier(key.storage), equal.map { .equal(to: ObjectIdentifier($0.storage)) } ?? .noneEqual))
        }
    }

    @inlinable
    func decision(for key: ObjectIdentifier) -> Decision? {
        decisions.last { $0.key == key }?.decision
    }
}
extension EffectKeyTable.Entry: Sendable where Value: Sendable {}
