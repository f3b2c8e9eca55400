extension Signal {
    /// A signal that sends each event of this signal as a value, then ends: after a materialized
    /// `.failed` or `.completed` it completes, after a materialized `.interrupted` it is interrupted, as
    /// in ReactiveSwift. The result cannot fail.
    ///
    /// Events are forwarded on the thread that delivers them, in order.
    public func materialize() -> Signal<Event<Value, Error>, Never> {
        Signal<Event<Value, Error>, Never>.relaying { output in
            observe(
                Observer { event in
                    output.send(value: event)
                    switch event {
                    case .value: break
                    case .failed, .completed: output.sendCompleted()
                    case .interrupted: output.sendInterrupted()
                    }
                })
        }
    }
}

extension Signal where Error == Never {
    /// The inverse of `materialize()`: a signal that turns each `Event` value of this signal back into
    /// that event, as in ReactiveSwift. A materialized terminal event ends the result (and it detaches
    /// from this signal); this signal's own completion or interruption is forwarded.
    ///
    /// Events are forwarded on the thread that delivers them, in order.
    public func dematerialize<InnerValue, InnerError>() -> Signal<InnerValue, InnerError>
    where Value == Event<InnerValue, InnerError> {
        Signal<InnerValue, InnerError>.relaying { output in
            observe(
                Observer { event in
                    switch event {
                    case let .value(inner): output.send(inner)
                    case .completed: output.sendCompleted()
                    case .interrupted: output.sendInterrupted()
                    }
                })
        }
    }
}

extension SignalProducer {
    /// A producer whose runs send each event of a run of this producer as a value. See
    /// `Signal.materialize()`. Disposing a run disposes the underlying run.
    public func materialize() -> SignalProducer<Event<Value, Error>, Never> {
        lift { $0.materialize() }
    }
}

extension SignalProducer where Error == Never {
    /// A producer whose runs turn each `Event` value of a run of this producer back into that event.
    /// See `Signal.dematerialize()`. When a materialized terminal event ends a run, the underlying run
    /// is disposed.
    public func dematerialize<InnerValue, InnerError>() -> SignalProducer<InnerValue, InnerError>
    where Value == Event<InnerValue, InnerError> {
        lift { $0.dematerialize() }
    }
}
