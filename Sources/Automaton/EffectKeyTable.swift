/// A hash table from `EffectKey` to a value, for the engine's groups of keyed effects.
///
/// A `Dictionary` would hash every key with `Hasher` on every lookup (SipHash: its seeding, combining
/// and finalizing cost more than the rest of a keyed effect's bookkeeping), and moves a group out and
/// back in to change it. This table reuses the hash each key computed once when it was made
/// (`EffectKey.Storage.hash`, itself a seeded `hashValue`, so well spread), and changes a value in
/// place. Open addressing with linear probing, at most half full; a removal shifts the entries after
/// it back (no tombstones), so lookups never slow down with churn.
///
/// Package-internal: the engine's bookkeeping, exposed to the package's tests only.
@usableFromInline
package struct EffectKeyTable<Value> {
    @usableFromInline
    struct Entry {
        @usableFromInline let key: EffectKey
        @usableFromInline var value: Value

        @inlinable
        init(key: EffectKey, value: Value) {
            self.key = key
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

    /// The tag of a slot holding `hash`'s key: never 0, and the same low bits as `hash`.
    @inlinable @inline(__always)
    static func tag(of hash: Int) -> Int { hash | Int.min }

    /// The slot of `key`, or the empty slot where it would go. The table must have slots.
    @inlinable
    func probe(_ key: EffectKey) -> (index: Int, found: Bool) {
        let hash = key.storage.hash
        let tag = Self.tag(of: hash)
        return tags.withUnsafeBufferPointer { tags in
            let mask = tags.count - 1
            var index = hash & mask
            while tags[index] != 0 {
                if tags[index] == tag && slots[index]!.key == key { return (index, true) }
                index = (index + 1) & mask
            }
            return (index, false)
        }
    }

    /// Whether `key` has a value.
    @inlinable
    package func contains(_ key: EffectKey) -> Bool {
        !slots.isEmpty && probe(key).found
    }

    /// The value of `key`, if any.
    @inlinable
    package subscript(_ key: EffectKey) -> Value? {
        guard !slots.isEmpty else { return nil }
        let (index, found) = probe(key)
        return found ? slots[index]?.value : nil
    }

    /// Changes the value of `key` in place, inserting `makeValue()` first if there is none.
    @inlinable
    package mutating func update<Result>(
        _ key: EffectKey, default makeValue: () -> Value, _ body: (inout Value) -> Result
    ) -> Result {
        if (count + 1) * 2 > slots.count { grow() }
        let (index, found) = probe(key)
        if !found {
            slots[index] = Entry(key: key, value: makeValue())
            tags[index] = Self.tag(of: key.storage.hash)
            count += 1
        }
        return body(&slots[index]!.value)
    }

    /// Changes the value of `key` in place if there is one; `body` returns whether to keep it (false
    /// removes it). Returns `body`'s result, or `nil` if `key` has no value.
    @inlinable
    package mutating func updateOrRemove<Result>(
        _ key: EffectKey, _ body: (inout Value) -> (keep: Bool, result: Result)
    ) -> Result? {
        guard !slots.isEmpty else { return nil }
        let (index, found) = probe(key)
        guard found else { return nil }
        let (keep, result) = body(&slots[index]!.value)
        if !keep { remove(at: index) }
        return result
    }

    /// Removes the value of `key` and returns it, if any.
    @inlinable
    package mutating func removeValue(forKey key: EffectKey) -> Value? {
        guard !slots.isEmpty else { return nil }
        let (index, found) = probe(key)
        guard found else { return nil }
        let value = slots[index]!.value
        remove(at: index)
        return value
    }

    /// Removes every value and returns them, in no particular order; the slots are kept.
    @inlinable
    package mutating func removeAll() -> [Value] {
        var values: [Value] = []
        values.reserveCapacity(count)
        for index in slots.indices {
            if let entry = slots[index].take() { values.append(entry.value) }
            tags[index] = 0
        }
        count = 0
        return values
    }

    /// Empties the slot at `index`, then moves back each entry of the cluster after it that could
    /// live at or before the hole (its home slot is not cyclically within the hole and itself).
    @inlinable
    mutating func remove(at index: Int) {
        let mask = slots.count - 1
        var hole = index
        slots[hole] = nil
        tags[hole] = 0
        count -= 1
        var next = (hole + 1) & mask
        while tags[next] != 0 {
            let home = tags[next] & mask
            let staysPut = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
            if !staysPut {
                slots[hole] = slots[next].take()
                tags[hole] = tags[next]
                tags[next] = 0
                hole = next
            }
            next = (next + 1) & mask
        }
    }

    /// Doubles the slots (8 at first) and re-inserts every entry.
    @usableFromInline
    mutating func grow() {
        let old = slots
        let size = Swift.max(8, old.count * 2)
        slots = ContiguousArray(repeating: nil, count: size)
        tags = ContiguousArray(repeating: 0, count: size)
        let mask = size - 1
        for case let entry? in old {
            let hash = entry.key.storage.hash
            var index = hash & mask
            while tags[index] != 0 { index = (index + 1) & mask }
            slots[index] = entry
            tags[index] = Self.tag(of: hash)
        }
    }
}

extension EffectKeyTable: Sendable where Value: Sendable {}
extension EffectKeyTable.Entry: Sendable where Value: Sendable {}
