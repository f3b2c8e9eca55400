extension Signal {
    /// A signal that sends a running accumulation: for each value, `next(accumulated, value)`, where
    /// `accumulated` starts as `initial` and then is the previous result. The terminal event is
    /// forwarded unchanged; `initial` itself is not sent.
    ///
    /// `next` runs on the thread that delivers this signal's event, serially, once per value, in order,
    /// with no lock held.
    public func scan<Result: Sendable>(
        _ initial: Result,
        _ next: @escaping @Sendable (Result, Value) -> Result
    ) -> Signal<Result, Error> {
        let accumulated = Locked(initial)
        return Signal<Result, Error>.relaying { output in
            observe(
                Observer { event in
                    guard case let .value(value) = event else {
                        if let terminal = event.terminal(as: Result.self) { output.send(terminal) }
                        return
                    }
                    // Delivery is serial: nothing else changes the accumulator between the read and the write.
                    let result = next(accumulated.withCriticalRegion { $0 }, value)
                    // Swapped, not overwritten: the previous result is the user's, released after the
                    // lock (and the send).
                    var replaced = result
                    accumulated.withCriticalRegion { swap(&$0, &replaced) }
                    output.send(value: result)
                    withExtendedLifetime(replaced) {}
                })
        }
    }

    /// A signal that sends a running accumulation, updated in place by `next`. See `scan(_:_:)`.
    ///
    /// `next` receives a copy of the accumulator to mutate; the copy is stored and sent.
    public func scan<Result: Sendable>(
        into initial: Result,
        _ next: @escaping @Sendable (inout Result, Value) -> Void
    ) -> Signal<Result, Error> {
        scan(initial) { accumulated, value in
            var result = accumulated
            next(&result, value)
            return result
        }
    }
}

extension SignalProducer {
    /// A producer whose runs send a running accumulation over the values of a run of this producer.
    /// Each run starts again from `initial`. See `Signal.scan(_:_:)`.
    ///
    /// Disposing a run of the new producer disposes the underlying run.
    public func scan<Result: Sendable>(
        _ initial: Result,
        _ next: @escaping @Sendable (Result, Value) -> Result
    ) -> SignalProducer<Result, Error> {
        lift { $0.scan(initial, next) }
    }

    /// A producer whose runs send a running accumulation, updated in place by `next`. Each run starts
    /// again from `initial`. See `Signal.scan(into:_:)`.
    public func scan<Result: Sendable>(
        into initial: Result,
        _ next: @escaping @Sendable (inout Result, Value) -> Void
    ) -> SignalProducer<Result, Error> {
        lift { $0.scan(into: initial, next) }
    }
}
