/// Something that can be cancelled: an observation, a started producer, a scheduled action.
///
/// `dispose()` is idempotent and thread safe: only the first call has an effect, and it may be made
/// from any thread, including from inside an observer while an event is being delivered.
public protocol Disposable: AnyObject, Sendable {
    /// Whether `dispose()` has been called. Once true, it stays true.
    var isDisposed: Bool { get }

    /// Cancels what this disposable stands for. Calls after the first do nothing.
    func dispose()
}

/// A disposable that runs a closure the first time it is disposed.
public final class AnyDisposable: Disposable {
    private struct State {
        var isDisposed = false
        var action: (@Sendable () -> Void)?
    }

    private let state: Locked<State>

    /// A disposable that runs `action` once, on the thread of the first `dispose()` call, with no lock
    /// held. The closure is released after it has run.
    public init(_ action: @escaping @Sendable () -> Void) {
        state = Locked(State(action: action))
    }

    /// A disposable with nothing to do, that only records whether it was disposed.
    public init() {
        state = Locked(State())
    }

    /// Wraps another disposable: disposing this one disposes `disposable`.
    public convenience init(_ disposable: Disposable) {
        self.init { disposable.dispose() }
    }

    /// A new, already-disposed disposable, for operations that had nothing to cancel.
    public static var disposed: AnyDisposable {
        let disposable = AnyDisposable()
        disposable.dispose()
        return disposable
    }

    /// Whether `dispose()` has been called. Thread safe.
    public var isDisposed: Bool {
        state.withCriticalRegion { $0.isDisposed }
    }

    /// Disposes, once; later calls do nothing. Thread safe; runs inner disposals with no lock held.
    public func dispose() {
        let action = state.withCriticalRegion { state -> (@Sendable () -> Void)? in
            guard !state.isDisposed else { return nil }
            state.isDisposed = true
            defer { state.action = nil }
            return state.action
        }
        action?()
    }
}

/// A disposable that disposes every disposable added to it, in the order they were added.
///
/// Adding to a composite that is already disposed disposes the new disposable at once. `dispose()`
/// runs the inner disposals on the calling thread with no lock held.
public final class CompositeDisposable: Disposable {
    /// What the composite disposes: a disposable, or a closure (kept as is, to save an allocation).
    fileprivate enum Entry: Sendable {
        case disposable(Disposable)
        case action(@Sendable () -> Void)

        func dispose() {
            switch self {
            case let .disposable(disposable): disposable.dispose()
            case let .action(action): action()
            }
        }
    }

    fileprivate struct State: Sendable {
        var isDisposed = false
        var nextToken: UInt64 = 0
        var entries: [(token: UInt64, entry: Entry)] = []
    }

    private let state = Locked(State())

    /// A composite that starts with `disposables`.
    public init(_ disposables: [Disposable] = []) {
        state.withCriticalRegion { state in
            for disposable in disposables {
                state.entries.append((state.nextToken, .disposable(disposable)))
                state.nextToken += 1
            }
        }
    }

    /// Whether `dispose()` has been called. Thread safe.
    public var isDisposed: Bool {
        state.withCriticalRegion { $0.isDisposed }
    }

    /// Adds `disposable`, to be disposed with this composite.
    ///
    /// - Returns: a handle that removes `disposable` from the composite without disposing it, or `nil`
    ///   if there was nothing to add (`disposable` was `nil`, or the composite was already disposed, in
    ///   which case `disposable` has been disposed).
    @discardableResult
    public func add(_ disposable: Disposable?) -> Disposable? {
        guard let disposable else { return nil }
        return add(.disposable(disposable))
    }

    /// Adds a closure to run when this composite is disposed (at once if it already is). See
    /// `add(_:)`.
    @discardableResult
    public func add(_ action: @escaping @Sendable () -> Void) -> Disposable? {
        add(.action(action))
    }

    private func add(_ entry: Entry) -> Disposable? {
        let token: UInt64? = state.withCriticalRegion { state in
            guard !state.isDisposed else { return nil }
            let token = state.nextToken
            state.nextToken += 1
            state.entries.append((token, entry))
            return token
        }
        guard let token else {
            entry.dispose()
            return nil
        }
        return RemovalHandle(state: state, token: token)
    }

    /// Disposes every added disposable and runs every added closure, in the order they were added,
    /// once; later calls do nothing. Thread safe; runs them with no lock held.
    public func dispose() {
        let entries = state.withCriticalRegion { state -> [(token: UInt64, entry: Entry)] in
            guard !state.isDisposed else { return [] }
            state.isDisposed = true
            defer { state.entries = [] }
            return state.entries
        }
        for (_, entry) in entries {
            entry.dispose()
        }
    }

    /// Adds `disposable` to `composite`. See `add(_:)`.
    @discardableResult
    public static func += (composite: CompositeDisposable, disposable: Disposable?) -> Disposable? {
        composite.add(disposable)
    }

    /// Adds `action` to `composite`. See `add(_:)`.
    @discardableResult
    public static func += (composite: CompositeDisposable, action: @escaping @Sendable () -> Void) -> Disposable? {
        composite.add(action)
    }

    /// Removes one entry from its composite, without disposing it, when disposed. It counts as disposed
    /// once its entry is gone, whether it removed it or the composite was disposed.
    private final class RemovalHandle: Disposable {
        private let state: Locked<State>
        private let token: UInt64

        init(state: Locked<State>, token: UInt64) {
            self.state = state
            self.token = token
        }

        var isDisposed: Bool {
            state.withCriticalRegion { state in !state.entries.contains { $0.token == token } }
        }

        func dispose() {
            let removed = state.withCriticalRegion { state -> Entry? in
                guard let index = state.entries.firstIndex(where: { $0.token == token }) else { return nil }
                return state.entries.remove(at: index).entry
            }
            // Released with no lock held: the entry may own an input observer or a lifetime token,
            // whose release sends an event or runs cleanup.
            withExtendedLifetime(removed) {}
        }
    }
}

/// A disposable that holds at most one inner disposable: setting a new one disposes the previous one.
///
/// Once the serial disposable is disposed, its current inner is disposed, and any inner set later is
/// disposed at once. Inner disposals run on the calling thread with no lock held.
public final class SerialDisposable: Disposable {
    private struct State {
        var isDisposed = false
        var inner: Disposable?
    }

    private let state = Locked(State())

    /// A serial disposable that starts with `inner`.
    public init(_ inner: Disposable? = nil) {
        state.withCriticalRegion { $0.inner = inner }
    }

    /// Whether `dispose()` has been called. Thread safe.
    public var isDisposed: Bool {
        state.withCriticalRegion { $0.isDisposed }
    }

    /// The current inner disposable. Setting it disposes the previous one (after the new one is
    /// stored); if this serial disposable is disposed, the new one is disposed at once.
    public var inner: Disposable? {
        get { state.withCriticalRegion { $0.inner } }
        set {
            let (previous, rejected) = state.withCriticalRegion { state -> (Disposable?, Disposable?) in
                if state.isDisposed { return (nil, newValue) }
                defer { state.inner = newValue }
                return (state.inner, nil)
            }
            if previous !== newValue { previous?.dispose() }
            rejected?.dispose()
        }
    }

    /// Disposes, once; later calls do nothing. Thread safe; runs inner disposals with no lock held.
    public func dispose() {
        let inner = state.withCriticalRegion { state -> Disposable? in
            guard !state.isDisposed else { return nil }
            state.isDisposed = true
            defer { state.inner = nil }
            return state.inner
        }
        inner?.dispose()
    }
}
