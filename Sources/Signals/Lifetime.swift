/// How long a piece of work lives: a producer's start handler receives one, and it ends exactly once,
/// when the started producer terminates (completes, fails, or is interrupted by disposal).
///
/// Register cleanup with `observeEnded(_:)` or `+=`: it runs once, on the thread that ends the
/// lifetime, with no lock held. Cleanup registered after the end runs at once.
public final class Lifetime: Sendable {
    private let disposables: CompositeDisposable

    private init(_ disposables: CompositeDisposable) {
        self.disposables = disposables
    }

    /// Creates a lifetime and the token that ends it: the lifetime ends when the token is disposed or
    /// released, whichever comes first.
    public static func make() -> (lifetime: Lifetime, token: Token) {
        let disposables = CompositeDisposable()
        return (Lifetime(disposables), Token(disposables))
    }

    /// A lifetime that has already ended.
    public static var empty: Lifetime {
        let (lifetime, token) = make()
        token.dispose()
        return lifetime
    }

    /// Whether the lifetime has ended.
    public var hasEnded: Bool { disposables.isDisposed }

    /// Runs `action` when the lifetime ends (at once if it already has).
    ///
    /// - Returns: a disposable that unregisters `action`, or `nil` if the lifetime had already ended.
    @discardableResult
    public func observeEnded(_ action: @escaping @Sendable () -> Void) -> Disposable? {
        disposables.add(action)
    }

    /// Disposes `disposable` when `lifetime` ends (at once if it already has).
    @discardableResult
    public static func += (lifetime: Lifetime, disposable: Disposable?) -> Disposable? {
        lifetime.disposables.add(disposable)
    }

    /// Ends a `Lifetime` when disposed or released.
    public final class Token: Disposable {
        private let disposables: CompositeDisposable

        fileprivate init(_ disposables: CompositeDisposable) {
            self.disposables = disposables
        }

        deinit {
            disposables.dispose()
        }

        /// Whether the lifetime has ended.
        public var isDisposed: Bool { disposables.isDisposed }

        /// Ends the lifetime. Idempotent and thread safe.
        public func dispose() {
            disposables.dispose()
        }
    }
}
