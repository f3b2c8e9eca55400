extension Signal {
    /// A signal that forwards every event of this signal, but fails with `error` if this signal has not
    /// terminated `interval` after the result was made, as ReactiveSwift's
    /// `timeout(after:raising:on:)`.
    ///
    /// The failure is sent from a scheduled action of `scheduler`, at `now + interval` (with a zero
    /// interval, on a `TestScheduler`'s next `advance()`). The values sent before it are forwarded as
    /// they come, on the thread that delivers them. When the result ends, whichever way, it detaches
    /// from this signal and cancels the scheduled failure, so nothing of it stays in the scheduler.
    ///
    /// - Precondition: `interval` is not negative.
    public func timeout(
        after interval: Duration,
        raising error: Error,
        on scheduler: some TimeScheduler
    ) -> Signal<Value, Error> {
        precondition(
            interval >= .zero, "timeout(after:raising:on:): the interval must not be negative, got \(interval)")
        return Signal.relaying { output in
            let deadline = ScheduledActions()
            deadline.schedule({ scheduler.schedule(after: interval, action: $0) }) {
                output.send(error: error)
            }
            let upstream = observe(output)
            return AnyDisposable {
                upstream.dispose()
                deadline.cancelAll()
            }
        }
    }
}

extension Signal where Error == Never {
    /// A signal that forwards every event of this signal, which cannot fail, but fails with `error` if
    /// this signal has not terminated `interval` after the result was made. See
    /// `timeout(after:raising:on:)`.
    ///
    /// - Precondition: `interval` is not negative.
    public func timeout<NewError: Swift.Error>(
        after interval: Duration,
        raising error: NewError,
        on scheduler: some TimeScheduler
    ) -> Signal<Value, NewError> {
        promoteError(NewError.self).timeout(after: interval, raising: error, on: scheduler)
    }
}

extension SignalProducer {
    /// A producer whose runs forward every event of a run of this producer, but fail with `error` if
    /// that run has not terminated `interval` after the run started. See
    /// `Signal.timeout(after:raising:on:)`.
    ///
    /// When the timeout fires, the underlying run is disposed (interrupted). Disposing a run cancels the
    /// scheduled failure, so a `TestScheduler` has none of its actions pending afterwards.
    ///
    /// - Precondition: `interval` is not negative.
    public func timeout(
        after interval: Duration,
        raising error: Error,
        on scheduler: some TimeScheduler
    ) -> SignalProducer<Value, Error> {
        precondition(
            interval >= .zero, "timeout(after:raising:on:): the interval must not be negative, got \(interval)")
        return lift { $0.timeout(after: interval, raising: error, on: scheduler) }
    }
}

extension SignalProducer where Error == Never {
    /// A producer whose runs forward every event of a run of this producer, which cannot fail, but fail
    /// with `error` if that run has not terminated `interval` after it started. See
    /// `Signal.timeout(after:raising:on:)`.
    ///
    /// - Precondition: `interval` is not negative.
    public func timeout<NewError: Swift.Error>(
        after interval: Duration,
        raising error: NewError,
        on scheduler: some TimeScheduler
    ) -> SignalProducer<Value, NewError> {
        precondition(
            interval >= .zero, "timeout(after:raising:on:): the interval must not be negative, got \(interval)")
        return lift { $0.timeout(after: interval, raising: error, on: scheduler) }
    }
}
