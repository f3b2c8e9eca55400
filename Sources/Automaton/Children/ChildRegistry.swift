import Signals

// Where the running children of every automaton are found: by their parent's engine, then by key.
// Only `ChildAutomata` / `ChildAutomaton` effects register here; the `.child` effect does not.

/// The parent an effect runs for: the engine behind the effect's lifetime. The effect record
/// (`EffectRecord`) is the lifetime's storage, and conforms.
protocol ParentEngineContext: AnyObject {
    /// The engine of the automaton that runs the effect.
    var parentEngine: AnyObject { get }
}

extension EffectRecord: ParentEngineContext {
    var parentEngine: AnyObject { engine }
}

extension Lifetime {
    /// The engine of the automaton whose effect this lifetime belongs to; `nil` for a lifetime that is
    /// not an effect's (a producer started by `start()`, or by an operator wrapped around the effect).
    var parentEngine: AnyObject? {
        (storageObject as? ParentEngineContext)?.parentEngine
    }
}

/// One running child, registered under its parent's engine and its key while its effect runs.
@usableFromInline
final class RegisteredChild: @unchecked Sendable {
    // Safe: `key`, `parent` and `order` are set by `init` and never change; `automaton` is only read
    // and written under its lock.
    /// `EffectKey(ChildKey(name, id))`.
    let key: EffectKey
    /// The parent's engine. It stays valid while the child is registered: the child's effect record,
    /// which holds the engine, removes the child when its lifetime ends.
    let parent: ObjectIdentifier
    /// The order of its start among all children: `ids(in:)` lists them in that order.
    let order: UInt64
    private let held: Locked<AnyObject?>

    init(key: EffectKey, parent: ObjectIdentifier, order: UInt64, automaton: AnyObject) {
        self.key = key
        self.parent = parent
        self.order = order
        held = Locked(automaton)
    }

    /// The child, while its effect runs.
    @usableFromInline var automaton: AnyObject? { held.withCriticalRegion { $0 } }

    /// Lets go of the child: the caller releases what this returns with no lock held (the child's
    /// release is user code: its effects' disposal, its observers' completion).
    func take() -> AnyObject? {
        held.withCriticalRegion { held in
            defer { held = nil }
            return held
        }
    }
}

/// Told of each child that starts under one parent, before the child processes anything, and of each
/// input the parent's rows forwarded to a child that does not run (an `AutomatonTester` recording its
/// children's replies).
final class ChildWatcher: @unchecked Sendable {
    // Safe: every field is set by `init`; `action` and `undelivered` never change, and `parent` changes
    // only to `nil`, by the runtime, which reads and clears weak references atomically.
    /// The parent's engine, weakly: a watcher whose parent is gone is never called (its address may be
    /// another engine's by then).
    weak var parent: AnyObject?
    let action: @Sendable (RegisteredChild) -> Void
    /// Told of an input forwarded to the child of a key that does not run; returns whether it watches
    /// that key's kind (then no warning is printed).
    let undelivered: @Sendable (EffectKey, any Sendable) -> Bool

    init(
        parent: AnyObject, action: @escaping @Sendable (RegisteredChild) -> Void,
        undelivered: @escaping @Sendable (EffectKey, any Sendable) -> Bool
    ) {
        self.parent = parent
        self.action = action
        self.undelivered = undelivered
    }
}

/// The children of every parent, in shards by the parent's address, each behind its lock. Nothing of
/// the user's runs under a shard's lock: keys are compared by their precomputed hash there, and by
/// their `==` after it; a removed child is released by the caller, after it.
@usableFromInline
package final class ChildRegistry: Sendable {
    @usableFromInline static let shared = ChildRegistry()

    /// A parent's children, by their keys' hashes, its watchers, and the watches of its children's ids
    /// (`ChildAutomata.liveIDs(in:)`), told of every change.
    private struct Parent {
        var children: [Int: [RegisteredChild]] = [:]
        var count = 0
        var watchers: [ChildWatcher] = []
        var idsWatches: [ChildIDsWatchBase] = []
        var isEmpty: Bool { count == 0 && watchers.isEmpty && idsWatches.isEmpty }
    }

    private static let shardCount = 16
    private let shards: [Locked<[ObjectIdentifier: Parent]>]
    private let orders = Locked<UInt64>(0)

    private init() {
        shards = (0..<Self.shardCount).map { _ in Locked([:]) }
    }

    private func shard(of parent: ObjectIdentifier) -> Locked<[ObjectIdentifier: Parent]> {
        shards[Int(truncatingIfNeeded: UInt(bitPattern: parent.hashValue) >> 4) % Self.shardCount]
    }

    /// A new entry's start order.
    func nextOrder() -> UInt64 {
        orders.withCriticalRegion { order in
            order &+= 1
            return order
        }
    }

    /// The watchers of `parent`'s children, to tell of a child about to be registered: the caller calls
    /// them with no lock held.
    func watchers(of parent: AnyObject) -> [ChildWatcher] {
        let id = ObjectIdentifier(parent)
        return shard(of: id).withCriticalRegion { parents in parents[id]?.watchers ?? [] }
    }

    /// Registers `child` under `parent`: from now on the parent's rows find it. Then tells the watches
    /// of the parent's ids, with no lock held.
    func add(_ child: RegisteredChild, to parent: AnyObject) {
        let id = ObjectIdentifier(parent)
        let hash = child.key.storage.hash
        let watches = shard(of: id).withCriticalRegion { parents -> [ChildIDsWatchBase] in
            parents[id, default: Parent()].children[hash, default: []].append(child)
            parents[id]!.count += 1
            return parents[id]!.idsWatches
        }
        for watch in watches {
            watch.childrenChanged(key: child.key)
        }
    }

    /// Removes `child` from its parent's children. The caller releases the child after it.
    ///
    /// In place: the parent's table is not copied (a copy made each removal quadratic in the number
    /// of children a parent runs at once).
    func remove(_ child: RegisteredChild) {
        let id = child.parent
        let hash = child.key.storage.hash
        // What leaves the table is released after the lock (our own objects, but the last reference to
        // an entry could be this one, and its child with it).
        var removed: RegisteredChild?
        var emptied: Parent?
        var watches: [ChildIDsWatchBase] = []
        shard(of: id).withCriticalRegion { parents in
            guard let index = parents[id]?.children[hash]?.firstIndex(where: { $0 === child }) else { return }
            removed = parents[id]!.children[hash]!.remove(at: index)
            if parents[id]!.children[hash]!.isEmpty { parents[id]!.children[hash] = nil }
            parents[id]!.count -= 1
            watches = parents[id]!.idsWatches
            if parents[id]!.isEmpty { emptied = parents.removeValue(forKey: id) }
        }
        withExtendedLifetime((removed, emptied)) {}
        for watch in watches {
            watch.childrenChanged(key: child.key)
        }
    }

    /// The children of `parent` with key `key`, in start order. Candidates are found by hash under the
    /// lock, then compared with `==` after it.
    @usableFromInline
    func children(of parent: AnyObject, key: EffectKey) -> [RegisteredChild] {
        let id = ObjectIdentifier(parent)
        let hash = key.storage.hash
        let candidates = shard(of: id).withCriticalRegion { parents in parents[id]?.children[hash] ?? [] }
        return candidates.filter { $0.key == key }
    }

    /// Every child of `parent`, in start order.
    func allChildren(of parent: AnyObject) -> [RegisteredChild] {
        let id = ObjectIdentifier(parent)
        let all = shard(of: id).withCriticalRegion { parents in
            parents[id].map { Array($0.children.values.joined()) } ?? []
        }
        return all.sorted { $0.order < $1.order }
    }

    /// Whether anything is registered for the parent `id`.
    func contains(_ id: ObjectIdentifier) -> Bool {
        shard(of: id).withCriticalRegion { $0[id] != nil }
    }

    /// The watch of the ids of `parent`'s children named `name` whose ids are of type `idType`, if one
    /// was added; else `watch`, added now. The caller releases what it does not keep after the lock.
    func idsWatch(_ watch: ChildIDsWatchBase, parent: AnyObject) -> ChildIDsWatchBase {
        let id = ObjectIdentifier(parent)
        return shard(of: id).withCriticalRegion { parents in
            if let existing = Self.idsWatch(named: watch.name, idType: watch.idType, in: parents[id]) {
                return existing
            }
            parents[id, default: Parent()].idsWatches.append(watch)
            return watch
        }
    }

    /// The parent's ids watch of the kind `name` with ids of type `idType`, if one was made.
    func idsWatch(named name: String, idType: ObjectIdentifier, parent: AnyObject) -> ChildIDsWatchBase? {
        let id = ObjectIdentifier(parent)
        return shard(of: id).withCriticalRegion { parents in
            Self.idsWatch(named: name, idType: idType, in: parents[id])
        }
    }

    private static func idsWatch(named name: String, idType: ObjectIdentifier, in parent: Parent?)
        -> ChildIDsWatchBase?
    {
        parent?.idsWatches.first { $0.name == name && $0.idType == idType }
    }

    /// Removes the ids watch `watch` of the parent `parent` (released by the caller, after the lock).
    func removeIDsWatch(_ watch: ChildIDsWatchBase, parent: ObjectIdentifier) {
        var removed: ChildIDsWatchBase?
        var emptied: Parent?
        shard(of: parent).withCriticalRegion { parents in
            guard let index = parents[parent]?.idsWatches.firstIndex(where: { $0 === watch }) else { return }
            removed = parents[parent]!.idsWatches.remove(at: index)
            if parents[parent]!.isEmpty { emptied = parents.removeValue(forKey: parent) }
        }
        withExtendedLifetime((removed, emptied)) {}
    }

    /// Tells `watcher` of every child that starts under its parent from now on, until `unwatch`.
    func watch(_ watcher: ChildWatcher, parent: AnyObject) {
        let id = ObjectIdentifier(parent)
        shard(of: id).withCriticalRegion { parents in
            parents[id, default: Parent()].watchers.append(watcher)
        }
    }

    /// Stops telling `watcher`.
    func unwatch(_ watcher: ChildWatcher, parent: ObjectIdentifier) {
        var removed: [ChildWatcher] = []
        var emptied: Parent?
        shard(of: parent).withCriticalRegion { parents in
            guard let index = parents[parent]?.watchers.firstIndex(where: { $0 === watcher }) else { return }
            removed.append(parents[parent]!.watchers.remove(at: index))
            if parents[parent]!.isEmpty { emptied = parents.removeValue(forKey: parent) }
        }
        withExtendedLifetime((removed, emptied)) {}
    }
}

/// A watch of the replies of one parent's children of one kind, for `AutomatonTester`: it ends when
/// cancelled or released. Children that started before it are not watched.
package final class ChildReplyWatch: Sendable {
    private let watcher: ChildWatcher
    private let parent: ObjectIdentifier

    init(_ watcher: ChildWatcher, parent: AnyObject) {
        self.watcher = watcher
        self.parent = ObjectIdentifier(parent)
        ChildRegistry.shared.watch(watcher, parent: parent)
    }

    /// Stops watching children that start from now on (those already watched stay so, until they end).
    package func cancel() {
        ChildRegistry.shared.unwatch(watcher, parent: parent)
    }

    deinit {
        cancel()
    }
}

extension ChildAutomata {
    /// Calls `action` with each reply of each child of this kind that `parent` starts from now on,
    /// before the parent hears of it, and `undelivered` with each input the parent's rows forward
    /// (`send(_:to:)`) to a child of this kind that does not run: for `AutomatonTester`. With a watch,
    /// such an input prints no warning, whether `undelivered` is given or not.
    package func watchReplies<ParentState, ParentInput>(
        of parent: Automaton<ParentState, ParentInput>,
        undelivered: (@Sendable (ChildKey<ID>, Input) -> Void)? = nil,
        _ action: @escaping @Sendable (ChildKey<ID>, Reply<State, Input>) -> Void
    ) -> ChildReplyWatch {
        let name = name
        let watcher = ChildWatcher(
            parent: parent.engine,
            action: { registered in
                guard let key = registered.key.value.base as? ChildKey<ID>, key.name == name,
                    let child = registered.automaton as? Automaton<State, Input>
                else { return }
                child.replies.observeValues { reply in action(key, reply) }
            },
            undelivered: { key, input in
                guard let key = key.value.base as? ChildKey<ID>, key.name == name, let input = input as? Input else {
                    return false
                }
                undelivered?(key, input)
                return true
            })
        return ChildReplyWatch(watcher, parent: parent.engine)
    }
}

extension ChildAutomaton {
    /// See `ChildAutomata.watchReplies(of:undelivered:_:)`.
    package func watchReplies<ParentState, ParentInput>(
        of parent: Automaton<ParentState, ParentInput>,
        undelivered: (@Sendable (ChildKey<ChildAutomatonID>, Input) -> Void)? = nil,
        _ action: @escaping @Sendable (ChildKey<ChildAutomatonID>, Reply<State, Input>) -> Void
    ) -> ChildReplyWatch {
        kind.watchReplies(of: parent, undelivered: undelivered, action)
    }
}

extension Automaton {
    /// Whether the registry of named children holds anything for this automaton (children, a tester's
    /// watch, or a `liveIDs(in:)` watch): for the package's tests, which check that released children
    /// leave nothing.
    package var hasRegisteredChildren: Bool {
        let id = ObjectIdentifier(engine)
        return ChildRegistry.shared.contains(id)
    }
}
