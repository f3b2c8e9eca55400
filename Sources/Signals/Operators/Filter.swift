extension Signal {
    /// A signal that forwards only the values for which `isIncluded` returns true, and this signal's
    /// terminal event.
    ///
    /// `isIncluded` runs on the thread that delivers this signal's event, serially, once per value, in
    /// order, with no lock held. The result terminates when this signal does.
    public func filter(_ isIncluded: @escaping @Sendable (Value) -> Bool) -> Signal {
        Signal.relaying { output in
            observe(
                Observer { event in
                    if case let .value(value) = event, !isIncluded(value) { return }
                    output.send(event)
                })
        }
    }

    /// A signal that sends the non-`nil` results of `transform`, one per value of this signal that
    /// `transform` does not map to `nil`, and forwards this signal's terminal event.
    ///
    /// `transform` runs on the thread that delivers this signal's event, serially, once per value, in
    /// order, with no lock held. The result terminates when this signal does.
    public func compactMap<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> NewValue?
    ) -> Signal<NewValue, Error> {
        Signal<NewValue, Error>.relaying { output in
            observe(
                Observer { event in
                    if case let .value(value) = event {
                        if let newValue = transform(value) { output.send(value: newValue) }
                    } else if let terminal = event.terminal(as: NewValue.self) {
                        output.send(terminal)
                    }
                })
        }
    }
}

extension SignalProducer {
    /// A producer whose runs forward only the values of a run of this producer for which `isIncluded`
    /// returns true, and its terminal event. See `Signal.filter(_:)`.
    ///
    /// Disposing a run of the new producer disposes the underlying run.
    public func filter(_ isIncluded: @escaping @Sendable (Value) -> Bool) -> SignalProducer {
        lift { $0.filter(isIncluded) }
    }

    /// A producer whose runs send the non-`nil` results of `transform` over the values of a run of this
    /// producer, and forward its terminal event. See `Signal.compactMap(_:)`.
    ///
    /// Disposing a run of the new producer disposes the underlying run.
    public func compactMap<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> NewValue?
    ) -> SignalProducer<NewValue, Error> {
        lift { $0.compactMap(transform) }
    }
}
