import Signals

// The running children of one kind of one parent as a property (`ChildAutomata.liveIDs(in:)`): the
// registry tells the parent's watches of every child it adds or removes, after its lock; the watch of
// the child's kind reads the ids again (`ids(in:)`) and stores them if they changed. One thread at a
// time reads and stores (the deliverer); a change told meanwhile makes it read again, so the last value
// stored is read after the last change, and no older list is stored after a newer one.

/// A watch of the ids of one kind of a parent's children, as the registry holds it.
class ChildIDsWatchBase: @unchecked Sendable {
    // Safe: `name` and `idType` are set by `init` and never change.
    /// The kind's name.
    let name: String
    /// The type of the kind's ids: two kinds of one name and different id types have a watch each.
    let idType: ObjectIdentifier

    init(name: String, idType: ObjectIdentifier) {
        self.name = name
        self.idType = idType
    }

    /// A child of key `key` was added to or removed from the parent's registered children. Called with
    /// no lock held, by the thread that changed them.
    func childrenChanged(key: EffectKey) {}
}

/// The watch of the ids of a parent's children of one kind, `ChildKey<ID>` named `name`, stored in a
/// property until the parent is released.
final class ChildIDsWatch<ID: Hashable & Sendable>: ChildIDsWatchBase, @unchecked Sendable {
    // Safe: `storage` is thread safe, and set only by the deliverer (one thread at a time, see
    // `phase`); `read` never changes; `phase` is a lock.
    /// The ids, in start order; completed when the parent is released.
    let storage: PropertyStorage<[ID]>
    /// The parent's ids of this kind now, or `nil` once the parent is gone. Holds the parent weakly.
    private let read: @Sendable () -> [ID]?
    private let phase = Locked(Phase())

    private struct Phase {
        /// A change was told since the deliverer last read.
        var isDirty = false
        /// A thread is reading and storing.
        var isDelivering = false
        /// The parent is released: store no more reads; empty the ids and complete.
        var isEnding = false
        /// Completed: nothing more happens.
        var hasEnded = false
    }

    private enum Step {
        case read, end, done
    }

    init(name: String, initial: [ID], read: @escaping @Sendable () -> [ID]?) {
        storage = PropertyStorage.holding(initial)
        self.read = read
        super.init(name: name, idType: ObjectIdentifier(ID.self))
    }

    override func childrenChanged(key: EffectKey) {
        guard let key = key.value.base as? ChildKey<ID>, key.name == name else { return }
        request(ending: false)
    }

    /// Reads the ids again, in case they changed since the first read.
    func refresh() {
        request(ending: false)
    }

    /// The parent was released (every child of it has been removed before): the ids become empty and
    /// the property completes.
    func end() {
        request(ending: true)
    }

    private func request(ending: Bool) {
        let deliver = phase.withCriticalRegion { phase -> Bool in
            guard !phase.hasEnded else { return false }
            phase.isDirty = true
            if ending { phase.isEnding = true }
            guard !phase.isDelivering else { return false }
            phase.isDelivering = true
            return true
        }
        guard deliver else { return }
        while true {
            let step = phase.withCriticalRegion { phase -> Step in
                if phase.isEnding {
                    phase.hasEnded = true
                    phase.isDelivering = false
                    return .end
                }
                guard phase.isDirty else {
                    phase.isDelivering = false
                    return .done
                }
                phase.isDirty = false
                return .read
            }
            switch step {
            case .read:
                // With no lock held: the read takes the registry's lock, and the ids' `==` is user code,
                // and so are the property's observers.
                let ids = read() ?? []
                if ids != storage.value { storage.set(ids) }
            case .end:
                if !storage.value.isEmpty { storage.set([]) }
                storage.complete()
                return
            case .done:
                return
            }
        }
    }
}

extension ChildAutomata {
    /// The ids of `parent`'s running children of this kind, as a property: ``ids(in:)`` kept up to
    /// date, for a view that lists them (the downloads of a download manager) without polling.
    ///
    /// ```swift
    /// let ids = transfers.liveIDs(in: manager)
    /// ids.producer.startWithValues { ids in render(ids) }  // now, then after each start and removal
    /// ```
    ///
    /// - Value and order: the ids in start order, an id once per running child, as ``ids(in:)``. It
    ///   changes after a child is registered (when its effect starts, after the parent's reply to the
    ///   input that started it; a child waiting under `.queue` is not listed until it starts) and after
    ///   it is unregistered (when its effect ends or is cancelled: for a removal or a `.latest`
    ///   replacement, before the parent's new state and reply). A replacement under `.latest` is a
    ///   removal then an addition: the id leaves the list and comes back at its end. Only changes are
    ///   sent: an equal list is not sent again.
    /// - Threads: the change is stored and sent on the thread that started or ended the child (the
    ///   parent's processing thread, or the thread where a `.queue`d predecessor or the child itself
    ///   ended), with no lock held. Changes made at once on several threads are sent one at a time,
    ///   never an older list after a newer one, and may be sent as one; the last list sent is the
    ///   current one.
    /// - Termination: when `parent` is released (after its children were released, each a change), the
    ///   value becomes `[]` and the property completes. An interrupted parent's property stays, empty,
    ///   until its release.
    /// - Memory: it holds neither `parent` nor its children. Each parent has one such watch per kind,
    ///   made at the first call and kept, with its property, until the parent is released: later
    ///   calls return the same values and changes (so a view may call it at each update).
    public func liveIDs<ParentState, ParentInput>(in parent: Automaton<ParentState, ParentInput>) -> Property<[ID]> {
        let engine = parent.engine
        if let existing = ChildRegistry.shared.idsWatch(
            named: name, idType: ObjectIdentifier(ID.self), parent: engine) as? ChildIDsWatch<ID>
        {
            return Property(storage: existing.storage)  // a later call: no watch made, no read
        }
        let made = ChildIDsWatch<ID>(name: name, initial: ids(in: parent)) { [weak parent, self] in
            parent.map { ids(in: $0) }
        }
        let watch = ChildRegistry.shared.idsWatch(made, parent: engine)
        guard let kept = watch as? ChildIDsWatch<ID> else {
            preconditionFailure("Internal inconsistency: a watch of ids of another type under the same name")
        }
        if kept === made {
            let id = ObjectIdentifier(engine)
            // The lifetime ends last in the parent's release, after its children were removed.
            parent.lifetime.observeEnded {
                ChildRegistry.shared.removeIDsWatch(made, parent: id)
                made.end()
            }
            made.refresh()  // a change between the first read and the registration
        }
        return Property(storage: kept.storage)
    }
}

extension ChildAutomaton {
    /// Whether the child runs in `parent`, as a property that changes when it starts and when it ends
    /// or is stopped (a `.latest` replacement is a `false` then a `true`): ``current(in:)`` kept up to
    /// date, for a view that shows the child while it runs. See ``ChildAutomata/liveIDs(in:)`` for the
    /// order and threads; it completes when `parent` is released, and holds neither `parent` nor the
    /// child. It is derived from the parent's one watch of this kind (``ChildAutomata/liveIDs(in:)``),
    /// and stores and observes nothing until it is observed, so a view may call it at each update.
    public func liveIsRunning<ParentState, ParentInput>(in parent: Automaton<ParentState, ParentInput>)
        -> Property<Bool>
    {
        kind.liveIDs(in: parent).map { !$0.isEmpty }.skipRepeats()
    }
}
