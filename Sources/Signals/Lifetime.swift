/// How long a piece of work lives: a producer's start handler receives one, and it ends exactly once,
/// when the started producer terminates (completes, fails, or is interrupted by disposal).
///
/// Register cleanup with `observeEnded(_:)` or `+=`: it runs once, on the thread that ends the
/// lifetime, with no lock held, in the order it was registered. Cleanup registered after the end runs
/// at once.
///
/// Get one from a start handler, from `Lifetime.make()`, or as `Lifetime.empty`. A `Lifetime` is a
/// reference: its copies are the same lifetime (and compare equal), and it lives as long as any of
/// them, or its token, does.
public struct Lifetime: Sendable, Hashable {
    /// The lifetime itself.
    @usableFromInline let storage: _LifetimeStorage

    /// The lifetime of `storage`.
    @inlinable
    package init(_ storage: _LifetimeStorage) {
        self.storage = storage
    }

    /// A lifetime that ends only when `end()` is called: for package code that owns the lifetime it
    /// hands out. Two allocations: the lifetime and its lock.
    @inlinable
    package init() {
        storage = _LifetimeStorage()
    }

    /// Creates a lifetime and the token that ends it: the lifetime ends when the token is disposed or
    /// released, whichever comes first.
    public static func make() -> (lifetime: Lifetime, token: Token) {
        let storage = _LifetimeStorage()
        return (Lifetime(storage), Token(storage))
    }

    /// A lifetime that has already ended.
    public static var empty: Lifetime {
        let lifetime = Lifetime()
        lifetime.end()
        return lifetime
    }

    /// Whether the lifetime has ended.
    @inlinable public var hasEnded: Bool { storage.hasEnded }

    /// Runs `action` when the lifetime ends (at once if it already has).
    ///
    /// - Returns: a disposable that unregisters `action`, or `nil` if the lifetime had already ended.
    @discardableResult
    public func observeEnded(_ action: @escaping @Sendable () -> Void) -> Disposable? {
        storage.add(.action(action))
    }

    /// Disposes `disposable` when `lifetime` ends (at once if it already has).
    ///
    /// - Returns: a disposable that unregisters `disposable` without disposing it, or `nil` if there was
    ///   nothing to register (`disposable` was `nil`, or the lifetime had already ended and `disposable`
    ///   has been disposed).
    @discardableResult
    public static func += (lifetime: Lifetime, disposable: Disposable?) -> Disposable? {
        guard let disposable else { return nil }
        return lifetime.storage.add(.disposable(disposable))
    }

    /// Ends the lifetime (see `_LifetimeStorage.end()`).
    @inlinable
    package func end() {
        storage.end()
    }

    /// The object the lifetime's lock lives in: for the package's tests, which check with a weak
    /// reference that a lifetime frees its own lock and never one it shares.
    package var lockObject: AnyObject { storage.lockObject }

    /// The object behind the lifetime: for the package's tests, which check with a weak reference
    /// when it is freed, and for the automaton's child effects, which find the parent's engine through
    /// it (an effect's lifetime is its engine's effect record: `ParentEngineContext`).
    package var storageObject: AnyObject { storage }

    /// Whether two values are the same lifetime.
    public static func == (lhs: Lifetime, rhs: Lifetime) -> Bool {
        lhs.storage === rhs.storage
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(storage))
    }

    /// Ends a `Lifetime` when disposed or released.
    public final class Token: Disposable {
        private let storage: _LifetimeStorage

        fileprivate init(_ storage: _LifetimeStorage) {
            self.storage = storage
        }

        deinit {
            storage.end()
        }

        /// Whether the lifetime has ended.
        public var isDisposed: Bool { storage.hasEnded }

        /// Ends the lifetime. Idempotent and thread safe.
        public func dispose() {
            storage.end()
        }
    }
}

/// The object behind a `Lifetime`: an implementation detail, not API (hence the underscore). Use
/// `Lifetime`.
///
/// It is `open`, and visible, only because this package's automaton makes an effect's lifetime and its
/// bookkeeping one object (`EffectRecord` is a subclass, in another module of the package: one
/// allocation less per effect), and the engine's code that uses it is inlinable (specialized in the
/// caller's module), which SPI does not allow. Its initializers are package-only, so no other module
/// can create one, and every member is `final`.
open class _LifetimeStorage: @unchecked Sendable {
    // Safe: `list` is only read or written with the lock of `lockLink` held (`withList`), and what
    // it holds is `Sendable`.

    /// Guards `list`: the lifetime's own, or one shared with other lifetimes (`init(sharing:)`). It is
    /// never held while cleanup or any other code outside this file runs, so sharing it cannot
    /// deadlock. Unretained: the lifetime's own lock is released by `deinit`, and a shared one is kept
    /// alive by its owner for as long as the lifetime can be used (see `init(sharing:)`), so starting
    /// and freeing an effect's lifetime costs no reference counting for it. `deinit` never touches a
    /// shared lock: a subclass may release the lock's owner before it runs.
    @usableFromInline final let lockLink: Unmanaged<LockStorage<UInt>>
    /// Whether `lockLink` is the lifetime's own lock, released with it.
    @usableFromInline final let ownsLock: Bool
    /// Whether the lifetime has ended, and the cleanup to run when it does.
    @usableFromInline @exclusivity(unchecked) final var list = CleanupList()

    /// A lifetime with a lock of its own: two allocations.
    @inlinable
    package init() {
        lockLink = .passRetained(Lock().storage)
        ownsLock = true
    }

    /// A lifetime guarded by `lock`, which other lifetimes share: one allocation. The automaton's
    /// engine gives all its effects' lifetimes one lock (held only to read or change a list, so they
    /// hardly ever wait for each other). The caller must keep `lock` alive for as long as this lifetime
    /// can be used (the lifetime does not retain it, and does not touch it once it is being freed):
    /// the engine owns the lock, and each effect's lifetime keeps the engine.
    @inlinable
    package init(sharing lock: UnretainedLock) {
        lockLink = lock.storage
        ownsLock = false
    }

    deinit {
        if ownsLock { lockLink.release() }
    }

    /// See `Lifetime.lockObject`.
    package final var lockObject: AnyObject { lockLink.takeUnretainedValue() }

    /// Runs `body` on `list` with the lock held. `body` must call no code outside this file.
    @inlinable @inline(__always)
    final func withList<Result>(_ body: (inout CleanupList) -> Result) -> Result {
        lockLink._withUnsafeGuaranteedRef { lock in
            lock.lock()
            defer { lock.unlock() }
            return body(&list)
        }
    }

    /// Whether the lifetime has ended.
    @inlinable package final var hasEnded: Bool { withList { $0.hasEnded } }

    /// Registers `cleanup`, or runs it at once if the lifetime has ended.
    final func add(_ cleanup: Cleanup) -> Disposable? {
        guard let token = withList({ $0.add(cleanup) }) else {
            cleanup.run()
            return nil
        }
        return Registration(lifetime: self, token: token)
    }

    /// Ends the lifetime: runs its cleanup on the calling thread, with no lock held, in the order it
    /// was registered. Idempotent and thread safe: only the first call runs anything. If the lifetime
    /// kept itself alive (`keepAliveUntilEnded()`), it lets go of itself last, after its cleanup.
    @inlinable
    package final func end() {
        guard let cleanup = withList({ $0.end() }) else { return }
        cleanup.runAll()
        if cleanup.keepsItselfAlive { Unmanaged.passUnretained(self).release() }
    }

    /// Keeps this lifetime (this object) alive until it ends, if it has not ended yet: for package code
    /// whose object is owned by what can still act for it, and that must outlive the last of those
    /// (the automaton's effect record, once its effect has let go of its observer without ending).
    /// Returns false, having done nothing, if the lifetime has ended or already keeps itself alive.
    ///
    /// Whoever ends it (`end()`) releases it then: a lifetime kept so and never ended is never freed.
    @inlinable
    package final func keepAliveUntilEnded() -> Bool {
        withList { list -> Bool in
            guard !list.hasEnded, !list.keepsItselfAlive else { return false }
            // Retained before the lock is released, so that an `end()` on another thread, which
            // releases it, always comes after. A retain runs no code and frees nothing.
            _ = Unmanaged.passUnretained(self).retain()
            list.keepsItselfAlive = true
            return true
        }
    }

    /// Unregisters one cleanup when disposed, without running it. It counts as disposed once its
    /// cleanup is gone, whether it removed it or the lifetime ended.
    private final class Registration: Disposable {
        private let lifetime: _LifetimeStorage
        private let token: UInt64

        init(lifetime: _LifetimeStorage, token: UInt64) {
            self.lifetime = lifetime
            self.token = token
        }

        var isDisposed: Bool {
            lifetime.withList { !$0.contains(token) }
        }

        func dispose() {
            let removed = lifetime.withList { $0.remove(token) }
            // Released with no lock held: the cleanup may own an input observer or a lifetime token,
            // whose release sends an event or runs cleanup.
            withExtendedLifetime(removed) {}
        }
    }
}

/// One piece of a lifetime's cleanup: a disposable, or a closure (kept as is, to save an allocation).
@usableFromInline
enum Cleanup: Sendable {
    case disposable(Disposable)
    case action(@Sendable () -> Void)

    @usableFromInline
    func run() {
        switch self {
        case let .disposable(disposable): disposable.dispose()
        case let .action(action): action()
        }
    }
}

/// A lifetime's state: whether it has ended, and its cleanup in registration order. The first cleanup
/// is kept inline, so a lifetime with at most one costs no array.
@usableFromInline
struct CleanupList: Sendable {
    @usableFromInline var hasEnded = false
    /// Whether the lifetime holds a reference to itself, released when it ends (see
    /// `Lifetime.keepAliveUntilEnded()`).
    @usableFromInline var keepsItselfAlive = false
    @usableFromInline var nextToken: UInt64 = 0
    @usableFromInline var first: (token: UInt64, cleanup: Cleanup)?
    @usableFromInline var rest: [(token: UInt64, cleanup: Cleanup)] = []

    @inlinable
    init() {}

    /// Registers `cleanup`; returns its token, or `nil` if the lifetime has ended (the caller runs it).
    @usableFromInline
    mutating func add(_ cleanup: Cleanup) -> UInt64? {
        guard !hasEnded else { return nil }
        let token = nextToken
        nextToken += 1
        if first == nil && rest.isEmpty {
            first = (token, cleanup)
        } else {
            rest.append((token, cleanup))
        }
        return token
    }

    /// Marks the lifetime ended; returns the cleanup to run (with `keepsItselfAlive` telling whether
    /// the lifetime must let go of itself afterwards), or `nil` if there is nothing to do (nothing was
    /// registered and the lifetime did not keep itself, or the lifetime had already ended).
    @inlinable
    mutating func end() -> CleanupList? {
        guard !hasEnded else { return nil }
        hasEnded = true
        guard first != nil || !rest.isEmpty || keepsItselfAlive else { return nil }
        let cleanup = self
        first = nil
        rest = []
        keepsItselfAlive = false
        return cleanup
    }

    /// Runs every cleanup, in registration order.
    @usableFromInline
    func runAll() {
        if let first { first.cleanup.run() }
        for (_, cleanup) in rest { cleanup.run() }
    }

    @usableFromInline
    func contains(_ token: UInt64) -> Bool {
        first?.token == token || rest.contains { $0.token == token }
    }

    /// Removes the cleanup registered as `token`, returning it (to be released with no lock held).
    @usableFromInline
    mutating func remove(_ token: UInt64) -> Cleanup? {
        if let first, first.token == token {
            self.first = nil
            return first.cleanup
        }
        guard let index = rest.firstIndex(where: { $0.token == token }) else { return nil }
        return rest.remove(at: index).cleanup
    }
}
