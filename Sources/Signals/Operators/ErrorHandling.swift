// MARK: promoteError

extension Signal where Error == Never {
    /// This signal, typed as able to fail with `NewError` (it never does), so that it can be combined
    /// with streams that can, as in ReactiveSwift. Values, completion and interruption are forwarded
    /// unchanged, on the thread that delivers them.
    public func promoteError<NewError: Swift.Error>(_: NewError.Type = NewError.self) -> Signal<Value, NewError> {
        mapError { (never: Never) -> NewError in }
    }
}

extension SignalProducer where Error == Never {
    /// This producer, typed as able to fail with `NewError` (it never does). See
    /// `Signal.promoteError(_:)`. Disposing a run of the new producer disposes the underlying run.
    public func promoteError<NewError: Swift.Error>(_: NewError.Type = NewError.self) -> SignalProducer<Value, NewError>
    {
        mapError { (never: Never) -> NewError in }
    }
}

// MARK: flatMapError

extension Signal {
    /// A signal that forwards this signal's values, completion and interruption, and, if this signal
    /// fails, starts the producer `transform(error)` and forwards all of its events instead of the
    /// failure, as in ReactiveSwift.
    ///
    /// `transform` runs at most once, on the thread that delivers the failure, with no lock held; the
    /// replacement starts on that thread. When the result terminates (by the replacement's terminal
    /// event, or this signal's completion or interruption), it detaches from this signal and
    /// interrupts the replacement if it is still running.
    public func flatMapError<NewError: Swift.Error>(
        _ transform: @escaping @Sendable (Error) -> SignalProducer<Value, NewError>
    ) -> Signal<Value, NewError> {
        Signal<Value, NewError>.relaying { output in
            let replacement = SerialDisposable()
            let upstream = observe(
                Observer { event in
                    switch event {
                    case let .value(value): output.send(value: value)
                    case .completed: output.sendCompleted()
                    case .interrupted: output.sendInterrupted()
                    case let .failed(error):
                        transform(error).startWithSignal { signal, interrupter in
                            replacement.inner = interrupter
                            signal.observe(output)
                        }
                    }
                })
            return CompositeDisposable([upstream, replacement])
        }
    }
}

extension SignalProducer {
    /// A producer whose runs forward the values and completion of a run of this producer, and, if that
    /// run fails, start `transform(error)` and forward all of its events instead of the failure, as in
    /// ReactiveSwift.
    ///
    /// `transform` runs at most once per run, on the thread that delivers the failure, with no lock
    /// held. Disposing the run interrupts whichever of the two is running: the run of this producer, or
    /// the replacement's.
    public func flatMapError<NewError: Swift.Error>(
        _ transform: @escaping @Sendable (Error) -> SignalProducer<Value, NewError>
    ) -> SignalProducer<Value, NewError> {
        SignalProducer<Value, NewError> { observer, lifetime in
            let current = SerialDisposable()
            lifetime += current
            self.startWithSignal { signal, interrupter in
                current.inner = interrupter
                signal.observe(
                    Observer { event in
                        switch event {
                        case let .value(value): observer.send(value: value)
                        case .completed: observer.sendCompleted()
                        case .interrupted: observer.sendInterrupted()
                        case let .failed(error):
                            if lifetime.hasEnded { return }
                            transform(error).startWithSignal { signal, interrupter in
                                current.inner = interrupter
                                signal.observe(observer)
                            }
                        }
                    })
            }
        }
    }
}

// MARK: An async operation whose error becomes a value

extension SignalProducer where Error == Never {
    /// A producer that runs `operation` in a new `Task` on each start and sends its result, or, if it
    /// throws, the value `handler` makes of the error; then completes. It cannot fail.
    ///
    /// Disposing the run cancels the task; a result that arrives after that is ignored, and `handler`
    /// is not called for the error a cancelled operation throws. The value is sent from the task, on a
    /// thread of Swift's concurrency pool. (ReactiveSwift has no async bridge of this shape.)
    public init(
        operation: @escaping @Sendable () async throws -> Value,
        catch handler: @escaping @Sendable (any Swift.Error) -> Value
    ) {
        self.init { observer, lifetime in
            let task = Task {
                let value: Value
                do {
                    value = try await operation()
                } catch {
                    if Task.isCancelled { return }
                    value = handler(error)
                }
                observer.send(value: value)
                observer.sendCompleted()
            }
            lifetime.observeEnded { task.cancel() }
        }
    }
}

// MARK: replaceError

extension Signal {
    /// A signal that forwards this signal's values, completion and interruption, and replaces a failure
    /// with `value` followed by completion, so the result cannot fail.
    ///
    /// This is Combine's `replaceError(with:)`; ReactiveSwift has no such operator (write
    /// `flatMapError { _ in SignalProducer(value: value) }` there). Events are forwarded on the thread
    /// that delivers them. The result terminates when this signal does.
    public func replaceError(with value: Value) -> Signal<Value, Never> {
        Signal<Value, Never>.relaying { output in
            observe(
                Observer { event in
                    switch event {
                    case let .value(value): output.send(value: value)
                    case .completed: output.sendCompleted()
                    case .interrupted: output.sendInterrupted()
                    case .failed:
                        output.send(value: value)
                        output.sendCompleted()
                    }
                })
        }
    }
}

extension SignalProducer {
    /// A producer whose runs replace a failure of a run of this producer with `value` followed by
    /// completion. See `Signal.replaceError(with:)`. Disposing a run disposes the underlying run.
    public func replaceError(with value: Value) -> SignalProducer<Value, Never> {
        lift { $0.replaceError(with: value) }
    }
}
