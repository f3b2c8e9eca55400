extension Signal {
    /// A signal that sends one value when this signal completes: `initial` combined with every value
    /// through `next`, in order (`initial` itself if there was none), then completes, as in
    /// ReactiveSwift. A failure or interruption is forwarded at once, and nothing is sent for the
    /// values so far.
    ///
    /// `next` runs on the thread that delivers each value, serially, once per value, in order, with no
    /// lock held. The result terminates when this signal does. See `scan(_:_:)` for every partial
    /// result.
    public func reduce<Result: Sendable>(
        _ initial: Result,
        _ next: @escaping @Sendable (Result, Value) -> Result
    ) -> Signal<Result, Error> {
        reduce(into: initial) { accumulated, value in accumulated = next(accumulated, value) }
    }

    /// A signal that sends one value when this signal completes: `initial` updated in place by `next`
    /// with every value, in order, then completes, as in ReactiveSwift. See `reduce(_:_:)`.
    ///
    /// The accumulator is not copied between values, so appending to an array costs what it costs
    /// outside a signal.
    public func reduce<Result: Sendable>(
        into initial: Result,
        _ next: @escaping @Sendable (inout Result, Value) -> Void
    ) -> Signal<Result, Error> {
        let accumulator = Locked<Result?>(initial)
        return Signal<Result, Error>.relaying { output in
            observe(
                Observer { event in
                    switch event {
                    case let .value(value):
                        // Delivery is serial: nothing else touches the accumulator while it is out of the lock.
                        guard var accumulated = accumulator.withCriticalRegion({ $0.take() }) else { return }
                        next(&accumulated, value)
                        accumulator.withCriticalRegion { $0 = accumulated }
                    case .completed:
                        if let accumulated = accumulator.withCriticalRegion({ $0.take() }) {
                            output.send(value: accumulated)
                        }
                        output.sendCompleted()
                    case .failed, .interrupted:
                        // Taken out, and released after the lock (and the terminal event): it is the user's.
                        let dropped = accumulator.withCriticalRegion { $0.take() }
                        if let terminal = event.terminal(as: Result.self) { output.send(terminal) }
                        withExtendedLifetime(dropped) {}
                    }
                })
        }
    }
}

extension SignalProducer {
    /// A producer whose runs send, when a run of this producer completes, `initial` combined with every
    /// value through `next`, then complete. Each run starts again from `initial`. See
    /// `Signal.reduce(_:_:)`. Disposing a run disposes the underlying run and sends nothing.
    public func reduce<Result: Sendable>(
        _ initial: Result,
        _ next: @escaping @Sendable (Result, Value) -> Result
    ) -> SignalProducer<Result, Error> {
        lift { $0.reduce(initial, next) }
    }

    /// A producer whose runs send, when a run of this producer completes, `initial` updated in place by
    /// `next` with every value, then complete. Each run starts again from `initial`. See
    /// `Signal.reduce(into:_:)`. Disposing a run disposes the underlying run and sends nothing.
    public func reduce<Result: Sendable>(
        into initial: Result,
        _ next: @escaping @Sendable (inout Result, Value) -> Void
    ) -> SignalProducer<Result, Error> {
        lift { $0.reduce(into: initial, next) }
    }
}
