// attempt and attemptMap: a transform that may fail ends the stream with its error, as in ReactiveSwift.
// ReactiveSwift's throwing forms fail with `Swift.Error`; here the closure throws the stream's own error
// type (typed throws), and a stream that cannot fail takes a closure throwing any type, which becomes
// the result's error type (`any Error` for an untyped `throw`, as in ReactiveSwift).

extension Signal {
    /// A signal that forwards each value for which `action` returns, and fails with the error `action`
    /// throws, as in ReactiveSwift.
    ///
    /// `action` runs on the thread that delivers each value, serially, once per value, in order, with
    /// no lock held; never again after it has thrown. The failure detaches the result from this signal.
    /// This signal's terminal event is forwarded unchanged.
    public func attempt(_ action: @escaping @Sendable (Value) throws(Error) -> Void) -> Signal<Value, Error> {
        attemptMap { (value: Value) throws(Error) -> Value in
            try action(value)
            return value
        }
    }

    /// A signal that sends `transform(value)` for each value, and fails with the error `transform`
    /// throws, as in ReactiveSwift.
    ///
    /// `transform` runs on the thread that delivers each value, serially, once per value, in order,
    /// with no lock held; never again after it has thrown. The failure detaches the result from this
    /// signal. This signal's terminal event is forwarded unchanged.
    public func attemptMap<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) throws(Error) -> NewValue
    ) -> Signal<NewValue, Error> {
        attemptMap { (value: Value) -> Result<NewValue, Error> in
            do throws(Error) {
                return .success(try transform(value))
            } catch {
                return .failure(error)
            }
        }
    }

    /// A signal that forwards each value for which `action` returns `.success`, and fails with the
    /// error of the first `.failure`, as in ReactiveSwift. See `attempt(_:)` for threads and order.
    public func attempt(_ action: @escaping @Sendable (Value) -> Result<Void, Error>) -> Signal<Value, Error> {
        attemptMap { value in action(value).map { value } }
    }

    /// A signal that sends the value of each `.success` that `transform` returns, and fails with the
    /// error of the first `.failure`, as in ReactiveSwift.
    ///
    /// `transform` runs on the thread that delivers each value, serially, once per value, in order,
    /// with no lock held; never again after a `.failure`. The failure detaches the result from this
    /// signal. This signal's terminal event is forwarded unchanged.
    public func attemptMap<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> Result<NewValue, Error>
    ) -> Signal<NewValue, Error> {
        let hasFailed = Locked(false)
        return Signal<NewValue, Error>.relaying { output in
            observe(
                Observer { event in
                    guard case let .value(value) = event else {
                        if let terminal = event.terminal(as: NewValue.self) { output.send(terminal) }
                        return
                    }
                    // Delivery is serial: no other value is being transformed while this one is.
                    guard !hasFailed.withCriticalRegion({ $0 }) else { return }
                    switch transform(value) {
                    case let .success(newValue):
                        output.send(value: newValue)
                    case let .failure(error):
                        hasFailed.withCriticalRegion { $0 = true }
                        output.send(error: error)
                    }
                })
        }
    }
}

extension Signal where Error == Never {
    /// A signal that forwards each value for which `action` returns, and fails with the error it
    /// throws; the error type is the closure's (`any Error` for an untyped `throw`, which is
    /// ReactiveSwift's `Swift.Error`). See `attempt(_:)` for threads, order and termination.
    public func attempt<NewError: Swift.Error>(
        _ action: @escaping @Sendable (Value) throws(NewError) -> Void
    ) -> Signal<Value, NewError> {
        promoteError(NewError.self).attempt(action)
    }

    /// A signal that sends `transform(value)` for each value, and fails with the error it throws; the
    /// error type is the closure's (`any Error` for an untyped `throw`, as in ReactiveSwift). See
    /// `attemptMap(_:)` for threads, order and termination.
    public func attemptMap<NewValue: Sendable, NewError: Swift.Error>(
        _ transform: @escaping @Sendable (Value) throws(NewError) -> NewValue
    ) -> Signal<NewValue, NewError> {
        promoteError(NewError.self).attemptMap(transform)
    }

    /// A signal that forwards each value for which `action` returns `.success`, and fails with the
    /// error of the first `.failure`, as in ReactiveSwift. See `attempt(_:)`.
    public func attempt<NewError: Swift.Error>(
        _ action: @escaping @Sendable (Value) -> Result<Void, NewError>
    ) -> Signal<Value, NewError> {
        promoteError(NewError.self).attempt(action)
    }

    /// A signal that sends the value of each `.success` that `transform` returns, and fails with the
    /// error of the first `.failure`, as in ReactiveSwift. See `attemptMap(_:)`.
    public func attemptMap<NewValue: Sendable, NewError: Swift.Error>(
        _ transform: @escaping @Sendable (Value) -> Result<NewValue, NewError>
    ) -> Signal<NewValue, NewError> {
        promoteError(NewError.self).attemptMap(transform)
    }
}

extension SignalProducer {
    /// A producer whose runs forward each value of a run of this producer for which `action` returns,
    /// and fail with the error it throws. See `Signal.attempt(_:)`. Disposing a run disposes the
    /// underlying run; a failure ends it.
    public func attempt(_ action: @escaping @Sendable (Value) throws(Error) -> Void) -> SignalProducer<Value, Error> {
        lift { $0.attempt(action) }
    }

    /// A producer whose runs send `transform(value)` for each value of a run of this producer, and fail
    /// with the error it throws. See `Signal.attemptMap(_:)`. Disposing a run disposes the underlying
    /// run; a failure ends it.
    public func attemptMap<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) throws(Error) -> NewValue
    ) -> SignalProducer<NewValue, Error> {
        lift { $0.attemptMap(transform) }
    }

    /// A producer whose runs forward each value for which `action` returns `.success`, and fail with
    /// the first `.failure`'s error. See `Signal.attempt(_:)`.
    public func attempt(_ action: @escaping @Sendable (Value) -> Result<Void, Error>) -> SignalProducer<Value, Error> {
        lift { $0.attempt(action) }
    }

    /// A producer whose runs send the value of each `.success` that `transform` returns, and fail with
    /// the first `.failure`'s error. See `Signal.attemptMap(_:)`.
    public func attemptMap<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> Result<NewValue, Error>
    ) -> SignalProducer<NewValue, Error> {
        lift { $0.attemptMap(transform) }
    }
}

extension SignalProducer where Error == Never {
    /// A producer whose runs forward each value for which `action` returns, and fail with the error it
    /// throws, typed as the closure's error. See `Signal.attempt(_:)` on signals that cannot fail.
    public func attempt<NewError: Swift.Error>(
        _ action: @escaping @Sendable (Value) throws(NewError) -> Void
    ) -> SignalProducer<Value, NewError> {
        lift { $0.attempt(action) }
    }

    /// A producer whose runs send `transform(value)` for each value, and fail with the error it throws,
    /// typed as the closure's error. See `Signal.attemptMap(_:)` on signals that cannot fail.
    public func attemptMap<NewValue: Sendable, NewError: Swift.Error>(
        _ transform: @escaping @Sendable (Value) throws(NewError) -> NewValue
    ) -> SignalProducer<NewValue, NewError> {
        lift { $0.attemptMap(transform) }
    }

    /// A producer whose runs forward each value for which `action` returns `.success`, and fail with
    /// the first `.failure`'s error. See `Signal.attempt(_:)`.
    public func attempt<NewError: Swift.Error>(
        _ action: @escaping @Sendable (Value) -> Result<Void, NewError>
    ) -> SignalProducer<Value, NewError> {
        lift { $0.attempt(action) }
    }

    /// A producer whose runs send the value of each `.success` that `transform` returns, and fail with
    /// the first `.failure`'s error. See `Signal.attemptMap(_:)`.
    public func attemptMap<NewValue: Sendable, NewError: Swift.Error>(
        _ transform: @escaping @Sendable (Value) -> Result<NewValue, NewError>
    ) -> SignalProducer<NewValue, NewError> {
        lift { $0.attemptMap(transform) }
    }
}
