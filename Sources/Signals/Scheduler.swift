/// Runs actions: now, later, or on another thread, depending on the scheduler.
///
/// An action never runs under a lock of this package, so it may schedule more work or send events.
public protocol Scheduler: Sendable {
    /// Enqueues `action` to run on this scheduler.
    ///
    /// - Returns: a disposable that cancels `action` if it has not started yet, or `nil` if the action
    ///   cannot be cancelled (for example because it has already run).
    @discardableResult
    func schedule(_ action: @escaping @Sendable () -> Void) -> Disposable?
}

/// A scheduler that knows the time and can run actions after a delay or repeatedly.
///
/// Time is a `Duration` measured from an origin the scheduler chooses (`TestScheduler` starts at
/// `.zero`), so no calendar or Foundation type is needed.
public protocol TimeScheduler: Scheduler {
    /// The current time on this scheduler's clock, measured from its origin.
    var now: Duration { get }

    /// Runs `action` once, `delay` from now (at once if `delay` is not positive).
    ///
    /// - Returns: a disposable that cancels the action if it has not started yet.
    @discardableResult
    func schedule(after delay: Duration, action: @escaping @Sendable () -> Void) -> Disposable?

    /// Runs `action` every `interval`, the first time `delay` from now, until the returned disposable is
    /// disposed. `leeway` is how late the scheduler may run each occurrence to save work.
    @discardableResult
    func schedule(
        after delay: Duration,
        interval: Duration,
        leeway: Duration,
        action: @escaping @Sendable () -> Void
    ) -> Disposable?
}

extension TimeScheduler {
    /// Runs `action` every `interval`, the first time `delay` from now, with no leeway.
    @discardableResult
    public func schedule(
        after delay: Duration,
        interval: Duration,
        action: @escaping @Sendable () -> Void
    ) -> Disposable? {
        schedule(after: delay, interval: interval, leeway: .zero, action: action)
    }
}
