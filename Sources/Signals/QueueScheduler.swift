import Dispatch

/// A scheduler that runs actions on a serial `DispatchQueue`, one at a time, in the order they were
/// scheduled (delayed actions in the order their deadlines come due).
///
/// Time: `now` is measured with `ContinuousClock` from the moment the scheduler was created, so a new
/// scheduler's `now` starts near `.zero`. Delays are waited for with Dispatch timers on the queue.
///
/// Cancellation: disposing the disposable that a `schedule` call returns cancels the action if it
/// has not started yet; a delayed or repeating action's timer is cancelled and its closure released.
/// An action that has already started runs to its end. A `dispose()` made on another thread at the very
/// moment the queue starts the action may not stop it; a `dispose()` made on the scheduler's own queue
/// (from inside another of its actions) always does.
public final class QueueScheduler: TimeScheduler {
    /// The serial queue that runs this scheduler's actions.
    public let queue: DispatchQueue

    /// When the scheduler was created: the origin of `now`.
    private let origin: ContinuousClock.Instant

    /// A scheduler that runs its actions on the main queue.
    ///
    /// Actions only run while something services the main queue: an app's main run loop, a program
    /// that called `dispatchMain()`, or a Swift program with an `async` entry point (whose main actor
    /// drains the main queue). A command-line program whose main thread is busy or blocked, for example
    /// waiting on a semaphore for an action scheduled here, never runs them, on Linux as on macOS.
    /// Prefer a scheduler of your own (`QueueScheduler(label:)`) outside apps.
    public static let main = QueueScheduler(queue: .main)

    /// A scheduler on a new serial queue.
    ///
    /// - Parameters:
    ///   - label: the queue's label, shown in debuggers and crash reports.
    ///   - qos: the quality of service of the queue.
    ///   - target: a queue the new serial queue targets, if any; the scheduler stays serial whatever
    ///     the target is.
    public convenience init(
        label: String = "Signals.QueueScheduler",
        qos: DispatchQoS = .default,
        target: DispatchQueue? = nil
    ) {
        self.init(queue: DispatchQueue(label: label, qos: qos, target: target))
    }

    private init(queue: DispatchQueue) {
        self.queue = queue
        origin = ContinuousClock.now
    }

    /// The time elapsed since this scheduler was created, on the continuous clock. Readable from any
    /// thread; it never goes back.
    public var now: Duration {
        origin.duration(to: ContinuousClock.now)
    }

    /// Runs `action` on the queue, after every action already enqueued there.
    ///
    /// - Returns: a disposable that cancels `action` if it has not started yet. Disposing it releases
    ///   `action` at once (and everything it captured), though Dispatch keeps a small empty block on
    ///   the queue until its turn comes.
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> Disposable? {
        let queued = QueuedAction(action)
        queue.async { queued.run() }
        return queued
    }

    /// Runs `action` on the queue once, `delay` from now (as soon as possible if `delay` is not
    /// positive).
    ///
    /// - Returns: a disposable that cancels `action` if it has not started yet and releases it.
    @discardableResult
    public func schedule(after delay: Duration, action: @escaping @Sendable () -> Void) -> Disposable? {
        guard delay > .zero else {
            return schedule(action)
        }
        let timer = QueueTimer(queue: queue)
        timer.start(deadline: .now() + delay.dispatchInterval, repeating: nil, leeway: .nanoseconds(0)) {
            // A one-shot timer: cancel its source now, which also releases this closure.
            guard timer.claimOneShot() else { return }
            action()
        }
        return timer
    }

    /// Runs `action` on the queue every `interval`, the first time `delay` from now, until the returned
    /// disposable is disposed. Occurrences run serially; if an action overruns, Dispatch coalesces the
    /// missed occurrences rather than queueing them.
    ///
    /// The timer keeps itself alive while it runs: dropping the returned disposable without disposing
    /// it leaves the action running for as long as the process lives.
    ///
    /// - Precondition: `interval` is positive.
    @discardableResult
    public func schedule(
        after delay: Duration,
        interval: Duration,
        leeway: Duration,
        action: @escaping @Sendable () -> Void
    ) -> Disposable? {
        precondition(interval > .zero, "QueueScheduler: a repeating action needs a positive interval, got \(interval)")
        let timer = QueueTimer(queue: queue)
        let firstDeadline: DispatchTime = delay > .zero ? .now() + delay.dispatchInterval : .now()
        timer.start(
            deadline: firstDeadline,
            repeating: interval.dispatchInterval,
            leeway: Swift.max(leeway, .zero).dispatchInterval
        ) {
            guard !timer.isDisposed else { return }
            action()
        }
        return timer
    }
}

/// An action waiting on a scheduler's queue. Disposing it releases the action, so a cancelled action
/// holds nothing while its block waits for its turn.
private final class QueuedAction: Disposable {
    private struct State {
        var isDisposed = false
        var action: (@Sendable () -> Void)?
    }

    private let state: Locked<State>

    init(_ action: @escaping @Sendable () -> Void) {
        state = Locked(State(action: action))
    }

    /// On the queue: runs the action unless it was disposed.
    func run() {
        let action = state.withCriticalRegion { state -> (@Sendable () -> Void)? in
            defer { state.action = nil }
            return state.action
        }
        action?()
    }

    var isDisposed: Bool {
        state.withCriticalRegion { $0.isDisposed }
    }

    func dispose() {
        let action = state.withCriticalRegion { state -> (@Sendable () -> Void)? in
            state.isDisposed = true
            defer { state.action = nil }
            return state.action
        }
        withExtendedLifetime(action) {}  // released with no lock held
    }
}

/// A Dispatch timer source on a scheduler's queue, disposed by cancelling the source.
///
/// The source's event handler captures this object, so the timer stays alive (and keeps firing) until
/// it is cancelled, whether or not anyone keeps the disposable; cancelling makes Dispatch release the
/// handler, which breaks that cycle.
private final class QueueTimer: Disposable, @unchecked Sendable {
    // Safe: `source` is assigned once in `init` and only used through Dispatch's source API, which is
    // thread safe (`cancel()` may be called from any thread); the flags live in a `Locked` value.

    private struct State {
        var isDisposed = false
        var hasFired = false
    }

    private let source: DispatchSourceTimer
    private let state = Locked(State())

    init(queue: DispatchQueue) {
        source = DispatchSource.makeTimerSource(queue: queue)
    }

    /// Installs `handler` and starts the timer. Called once, right after `init`.
    func start(
        deadline: DispatchTime,
        repeating interval: DispatchTimeInterval?,
        leeway: DispatchTimeInterval,
        handler: @escaping @Sendable () -> Void
    ) {
        source.setEventHandler(handler: handler)
        if let interval {
            source.schedule(deadline: deadline, repeating: interval, leeway: leeway)
        } else {
            source.schedule(deadline: deadline, leeway: leeway)
        }
        source.resume()
    }

    /// For a one-shot timer, on the queue: whether the action may run (it was not disposed and has not
    /// fired yet). Cancels the source either way, so that it is released.
    func claimOneShot() -> Bool {
        let mayRun = state.withCriticalRegion { state -> Bool in
            guard !state.isDisposed, !state.hasFired else { return false }
            state.hasFired = true
            return true
        }
        source.cancel()
        return mayRun
    }

    var isDisposed: Bool {
        state.withCriticalRegion { $0.isDisposed }
    }

    func dispose() {
        let isFirst = state.withCriticalRegion { state -> Bool in
            guard !state.isDisposed else { return false }
            state.isDisposed = true
            return true
        }
        if isFirst {
            source.cancel()
        }
    }
}

extension Duration {
    /// This duration as a `DispatchTimeInterval`, in the finest unit that holds it on this platform
    /// (`Int` is 32 bits on some watches); negative durations become zero, enormous ones `.never`.
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return .nanoseconds(0) }
        let (wholeNanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (nanoseconds, sumOverflow) = wholeNanoseconds.addingReportingOverflow(attoseconds / 1_000_000_000)
        if !overflow, !sumOverflow {
            if let value = Int(exactly: nanoseconds) { return .nanoseconds(value) }
            if let value = Int(exactly: nanoseconds / 1_000) { return .microseconds(value) }
            if let value = Int(exactly: nanoseconds / 1_000_000) { return .milliseconds(value) }
        }
        if let value = Int(exactly: seconds) { return .seconds(value) }
        return .never
    }
}
