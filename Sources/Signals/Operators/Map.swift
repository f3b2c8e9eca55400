// MARK: - The signal every operator returns

extension Signal {
    /// Creates the signal an operator returns, and attaches it to its upstream(s) through `attach`.
    ///
    /// `attach` receives the new signal's input and returns the disposable of the upstream
    /// observation(s), and of anything else the operator must cancel. That disposable is disposed as
    /// soon as the new signal ends: when the upstream ended, when the operator ended early
    /// (`take(first:)`, a failing `merge` input), or when nobody holds the new signal and its last
    /// observer is disposed. So no upstream keeps feeding, or keeps alive, a signal nobody can hear.
    /// If `attach` terminates the new signal at once (the upstream had already ended), the disposable
    /// is disposed as soon as it is returned.
    ///
    /// The upstream is detached before the new signal's own observers hear of the terminal event.
    static func relaying(_ attach: (_ output: Observer<Value, Error>) -> Disposable?) -> Signal {
        Signal(attach)
    }
}

extension Event {
    /// This event if it is terminal, carried over to a stream of another value type; `nil` for a value.
    func terminal<NewValue>(as _: NewValue.Type = NewValue.self) -> Event<NewValue, Error>? {
        switch self {
        case .value: return nil
        case let .failed(error): return .failed(error)
        case .completed: return .completed
        case .interrupted: return .interrupted
        }
    }
}

// MARK: - map

extension Signal {
    /// A signal that sends `transform(value)` for each value of this signal, and forwards its terminal
    /// event unchanged.
    ///
    /// `transform` runs on the thread that delivers this signal's event, serially, once per value, in
    /// order, with no lock held. The result terminates when this signal does.
    public func map<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> NewValue
    ) -> Signal<NewValue, Error> {
        Signal<NewValue, Error>.relaying { output in
            observe(
                Observer { event in
                    output.send(event.map(transform))
                })
        }
    }

    /// A signal that sends `value` for each value of this signal, and forwards its terminal event
    /// unchanged, as in ReactiveSwift. Each value is replaced on the thread that delivers it, in order.
    /// The result terminates when this signal does.
    public func map<NewValue: Sendable>(value: NewValue) -> Signal<NewValue, Error> {
        map { _ in value }
    }

    /// A signal that sends the property `keyPath` reads from each value of this signal
    /// (`signal.map(\.count)`), and forwards its terminal event unchanged, as in ReactiveSwift. The
    /// property is read on the thread that delivers each value, serially, in order, with no lock held.
    /// The result terminates when this signal does.
    public func map<NewValue: Sendable>(_ keyPath: KeyPath<Value, NewValue> & Sendable) -> Signal<NewValue, Error> {
        map { $0[keyPath: keyPath] }
    }

    /// A signal that fails with `transform(error)` when this signal fails, and forwards values,
    /// completion and interruption unchanged.
    ///
    /// `transform` runs at most once, on the thread that delivers the failure, with no lock held.
    public func mapError<NewError: Swift.Error>(
        _ transform: @escaping @Sendable (Error) -> NewError
    ) -> Signal<Value, NewError> {
        Signal<Value, NewError>.relaying { output in
            observe(
                Observer { event in
                    output.send(event.mapError(transform))
                })
        }
    }
}

extension SignalProducer {
    /// A producer whose runs send `transform(value)` for each value of a run of this producer, and
    /// forward its terminal event unchanged. See `Signal.map(_:)`.
    ///
    /// Disposing a run of the new producer disposes the underlying run.
    public func map<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> NewValue
    ) -> SignalProducer<NewValue, Error> {
        lift { $0.map(transform) }
    }

    /// A producer whose runs send `value` for each value of a run of this producer, and forward its
    /// terminal event unchanged. See `Signal.map(value:)`. Disposing a run disposes the underlying run.
    public func map<NewValue: Sendable>(value: NewValue) -> SignalProducer<NewValue, Error> {
        lift { $0.map(value: value) }
    }

    /// A producer whose runs send the property `keyPath` reads from each value of a run of this
    /// producer. See `Signal.map(_:)` with a key path. Disposing a run disposes the underlying run.
    public func map<NewValue: Sendable>(_ keyPath: KeyPath<Value, NewValue> & Sendable) -> SignalProducer<
        NewValue, Error
    > {
        lift { $0.map(keyPath) }
    }

    /// A producer whose runs fail with `transform(error)` when a run of this producer fails, and forward
    /// everything else unchanged. See `Signal.mapError(_:)`.
    ///
    /// Disposing a run of the new producer disposes the underlying run.
    public func mapError<NewError: Swift.Error>(
        _ transform: @escaping @Sendable (Error) -> NewError
    ) -> SignalProducer<Value, NewError> {
        lift { $0.mapError(transform) }
    }
}
