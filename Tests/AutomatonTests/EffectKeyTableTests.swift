import Automaton
import Signals
import Testing

/// The engine's table of keyed-effect groups, checked against a `Dictionary` doing the same work.
@Suite("EffectKeyTable: the keyed groups' hash table")
struct EffectKeyTableTests {
    /// Random inserts (sweeping stale entries when the table is half full), sweeps and clears. The
    /// keys' table hashes are drawn from the seed among 0..<12, so that the case replays exactly: keys
    /// collide in every table size, and clusters wrap past the last slot. After each step every key
    /// reads as in the model, and the count agrees.
    @Test("agrees with a Dictionary through random changes", arguments: [1, 2, 3, 4, 5] as [UInt64])
    func randomChanges(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        var table = EffectKeyTable<Int>()
        var model: [Int: Int] = [:]
        let keys = (0..<40).map { EffectKey($0, tableHash: random.int(in: 0..<12)) }
        for step in 0..<4_000 {
            let raw = random.int(in: 0..<keys.count)
            let key = keys[raw]
            switch random.int(in: 0..<100) {
            case 0..<70:
                // A new key, sweeping out the entries whose value is 1 if the table is half full.
                guard model[raw] == nil else { continue }
                let value = random.int(in: 1...3)
                let dropped = table.insert(key, value, sweeping: { $0 == 1 }) ?? []
                let swept = model.filter { table[keys[$0.key]] == nil }
                #expect(swept.values.allSatisfy { $0 == 1 }, "step \(step): only stale entries are swept")
                #expect(
                    dropped.map(\.value) == Array(repeating: 1, count: swept.count), "step \(step): the swept values")
                for index in swept.keys { model[index] = nil }
                model[raw] = value
                #expect(table.capacity >= 8 && table.count * 2 <= table.capacity, "step \(step): at most half full")
            case 70..<95:
                // A sweep of the entries whose value is `stale`.
                let stale = random.int(in: 1...3)
                let dropped = table.sweep(dropping: { $0 == stale })
                #expect(
                    dropped.map(\.value) == Array(repeating: stale, count: model.values.filter { $0 == stale }.count),
                    "step \(step): the swept values")
                model = model.filter { $0.value != stale }
            default:
                #expect(table.removeAll().map(\.value).sorted() == model.values.sorted(), "step \(step): removeAll")
                model.removeAll()
            }
            #expect(table.count == model.count, "step \(step): count")
            for (index, each) in keys.enumerated() {
                #expect(table[each] == model[index], "step \(step): value of \(index)")
            }
        }
    }

    /// A lookup never calls a key's `==` (the engine looks keys up under its lock): a key of another
    /// storage with the same table hash is handed out as undecided, whether or not it is equal, and the
    /// equalities made from it (outside the lock) decide a second lookup either way.
    @Test("a lookup calls no key's ==: colliding keys are handed out, and the equalities decide")
    func lookupsCallNoEquality() {
        let comparisons = Locked(0)
        func key(_ id: Int) -> EffectKey {
            EffectKey(CountingKey(id: id, comparisons: comparisons), tableHash: 5)
        }
        var table = EffectKeyTable<Int>()
        let (first, second) = (key(1), key(2))
        table.insert(first, 10, sweeping: { _ in false })
        table.insert(second, 20, sweeping: { _ in false })
        #expect(comparisons.withCriticalRegion { $0 } == 0, "inserts compare nothing")

        var undecided: [EffectKey] = []
        #expect(table.value(for: first, equalities: nil, undecided: &undecided) == 10, "the very key: by identity")
        #expect(undecided.isEmpty)

        let equalToSecond = key(2)
        #expect(table.value(for: equalToSecond, equalities: nil, undecided: &undecided) == nil)
        #expect(undecided.map { $0 == first || $0 == second } == [true, true], "both colliding keys handed out")
        #expect(undecided.count == 2)
        comparisons.withCriticalRegion { $0 = 0 }

        let equalities = KeyEqualities(comparing: [equalToSecond], with: undecided)
        #expect(comparisons.withCriticalRegion { $0 } >= 1, "the comparison happens here, outside any lock")
        comparisons.withCriticalRegion { $0 = 0 }
        var none: [EffectKey] = []
        #expect(table.value(for: equalToSecond, equalities: equalities, undecided: &none) == 20)
        let unequal = key(3)
        let unequalities = KeyEqualities(comparing: [unequal], with: undecided)
        comparisons.withCriticalRegion { $0 = 0 }
        #expect(table.value(for: unequal, equalities: unequalities, undecided: &none) == nil)
        #expect(none.isEmpty, "decided: none of the candidates is equal")
        #expect(comparisons.withCriticalRegion { $0 } == 0, "the second lookups compare nothing")
    }

    /// Keys that come and go, each left stale once used, as an engine's groups are left empty: the
    /// table sweeps them out instead of growing, so it stays as small as what is live; a live key is
    /// never swept.
    @Test("a sweep keeps the table as small as its live keys")
    func sweepBoundsTheTable() {
        var table = EffectKeyTable<Int>()
        let live = (0..<10).map { EffectKey("live \($0)") }
        for key in live { table.insert(key, 0, sweeping: { $0 == 1 }) }
        var swept = 0
        for index in 0..<10_000 {
            swept += table.insert(EffectKey(index), 1, sweeping: { $0 == 1 })?.count ?? 0
            #expect(table.capacity <= 64, "after \(index + 1) keys: \(table.capacity) slots")
        }
        #expect(swept + table.count == 10_010)
        #expect(live.allSatisfy { table[$0] == 0 })
    }

    /// After a burst of keys, a sweep that drops them gives the slots back; the live keys stay.
    @Test("a sweep after a burst shrinks the table")
    func sweepShrinks() {
        var table = EffectKeyTable<Int>()
        for index in 0..<1_000 { table.insert(EffectKey(index), index, sweeping: { _ in false }) }
        #expect(table.count == 1_000 && table.capacity == 2_048)
        let dropped = table.sweep(dropping: { $0 >= 3 })
        #expect(dropped.map(\.value).sorted() == Array(3..<1_000))
        #expect(table.count == 3 && table.capacity == 16)
        #expect((0..<3).allSatisfy { table[EffectKey($0)] == $0 } && table[EffectKey(3)] == nil)
    }

    /// A cluster that wraps past the last slot: three keys whose home is the last of 8 slots, and
    /// one whose home is slot 0, found in slot 2. Every key is found across the wrap; a sweep that
    /// drops the head of the cluster keeps the others findable.
    @Test("a wrapped cluster is found, and kept through a sweep")
    func wrappedCluster() {
        var table = EffectKeyTable<String>()
        let last = [EffectKey("a", tableHash: 7), EffectKey("b", tableHash: 7), EffectKey("c", tableHash: 7)]
        let first = EffectKey("d", tableHash: 0)
        for key in last + [first] {
            #expect(table.insert(key, key.description, sweeping: { _ in false }).map(\.isEmpty) ?? true)
        }
        #expect(table.count == 4 && table.capacity == 8)
        #expect(last.map { table[$0] } == ["a", "b", "c"] && table[first] == "d")
        #expect(table.sweep(dropping: { $0 == "a" }).map(\.value) == ["a"])
        #expect(table[last[0]] == nil && table[last[1]] == "b" && table[last[2]] == "c" && table[first] == "d")
        #expect(table.count == 3)
    }

    /// A slot's tag is its key's hash with the top bit set, so two keys whose hashes differ only in
    /// that bit have equal tags: the table must still tell them apart by comparing the keys.
    @Test("keys whose hashes differ only in the top bit are told apart")
    func topBitHashes() {
        var table = EffectKeyTable<String>()
        let low = EffectKey("low", tableHash: 5)
        let high = EffectKey("high", tableHash: 5 | Int.min)
        table.insert(low, "low", sweeping: { _ in false })
        #expect(table[high] == nil)
        table.insert(high, "high", sweeping: { _ in false })
        #expect(table.count == 2)
        #expect(table[low] == "low")
        #expect(table[high] == "high")
        #expect(table.sweep(dropping: { $0 == "low" }).map(\.value) == ["low"])
        #expect(table[high] == "high")
        #expect(table[low] == nil)
        #expect(table.count == 1)
    }

    /// A type whose hashes differ only above their low four bits, as an object's aligned address
    /// does (`NSObject` on Darwin): the table indexes by low bits, so the key must spread its hash.
    @Test("a key's table hash is spread even when its value's hash is not")
    func spreadHash() {
        let keys = (0..<64).map { EffectKey(AlignedHash(raw: $0 * 16)) }
        #expect(keys.allSatisfy { $0.value.hashValue & 15 == 0 }, "the values' own hashes are unspread")
        let slots = Set(keys.map { $0.tableHash & 63 })
        #expect(slots.count >= 32, "64 keys in 64 slots land in \(slots.count) distinct slots")
    }

    @Test("keys of different types never match, equal keys made apart do")
    func keyIdentity() {
        var table = EffectKeyTable<String>()
        table.insert(EffectKey(1), "int", sweeping: { _ in false })
        table.insert(EffectKey("1"), "string", sweeping: { _ in false })
        #expect(table.count == 2)
        #expect(table[EffectKey(1)] == "int")
        #expect(table[EffectKey("1")] == "string")
        #expect(table[EffectKey(UInt(1))] == nil)
        #expect(EffectKey(1) != EffectKey(UInt(1)), "AnyHashable bridges numbers; keys must not")
        #expect(EffectKey(1) == EffectKey(EffectKey(1)))
        // Keys made apart: compared by `Int`'s `==` (the same static key type), or, for values passed
        // as different static types, as `AnyHashable`s.
        #expect(EffectKey(1) == EffectKey(1) && EffectKey(1) != EffectKey(2))
        #expect(EffectKey(KeyDog(name: "rex") as KeyAnimal) != EffectKey(KeyDog(name: "max")))
        // With equal table hashes (as colliding keys have), the values themselves decide, on both paths.
        #expect(EffectKey(1, tableHash: 5) != EffectKey(2, tableHash: 5))
        #expect(EffectKey(1, tableHash: 5) == EffectKey(1, tableHash: 5))
        let rex = KeyDog(name: "rex")
        #expect(EffectKey(rex as KeyAnimal, tableHash: 5) != EffectKey(KeyDog(name: "max"), tableHash: 5))
        #expect(EffectKey(KeyDog(name: "max"), tableHash: 5) != EffectKey(rex as KeyAnimal, tableHash: 5))
        #expect(EffectKey(rex as KeyAnimal, tableHash: 5) == EffectKey(KeyDog(name: "rex"), tableHash: 5))
        let dog = KeyDog(name: "rex")
        #expect(EffectKey(dog as KeyAnimal) == EffectKey(dog), "a key's type is its value's own type")
        #expect(EffectKey(dog as KeyAnimal).hashValue == EffectKey(dog).hashValue)
        #expect(table.sweep(dropping: { $0 == "int" }).map(\.value) == ["int"])
        #expect(table[EffectKey("1")] == "string")
        #expect(table.count == 1)
    }

    @Test("an empty table answers every question without slots")
    func empty() {
        var table = EffectKeyTable<Int>()
        #expect(table.isEmpty)
        #expect(table[EffectKey(0)] == nil)
        #expect(table.removeAll().isEmpty)
    }
}

/// A key type with a subclass, for "a key's type is its value's own type".
private class KeyAnimal: Hashable, @unchecked Sendable {
    // Safe: immutable.
    let name: String

    init(name: String) {
        self.name = name
    }

    static func == (lhs: KeyAnimal, rhs: KeyAnimal) -> Bool { lhs.name == rhs.name }

    func hash(into hasher: inout Hasher) {
        hasher.combine(name)
    }
}

private final class KeyDog: KeyAnimal, @unchecked Sendable {}

/// A key whose hash is its raw number, unmixed (as `NSObject`'s is its address).
private struct AlignedHash: Hashable, Sendable {
    let raw: Int

    func hash(into hasher: inout Hasher) {
        hasher.combine(raw)
    }

    func _rawHashValue(seed: Int) -> Int { raw }
}

/// A key whose `==` counts its calls.
private struct CountingKey: Hashable, Sendable {
    let id: Int
    let comparisons: Locked<Int>

    static func == (lhs: CountingKey, rhs: CountingKey) -> Bool {
        lhs.comparisons.withCriticalRegion { $0 += 1 }
        return lhs.id == rhs.id
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }
}
