extension Signal {
    /// A signal that forwards the first `count` values of this signal, then completes.
    ///
    /// - If `count` is 0, the result completes at once, without observing this signal.
    /// - After the `count`th value has been forwarded, the result completes and detaches from this
    ///   signal; later events of this signal are ignored.
    /// - If this signal terminates first, its terminal event (failed, completed or interrupted) is
    ///   forwarded.
    ///
    /// Events are forwarded on the thread that delivers them, in order.
    ///
    /// - Precondition: `count >= 0`.
    public func take(first count: Int) -> Signal {
        precondition(count >= 0, "take(first:) needs a count of at least 0, got \(count)")
        if count == 0 {
            let (signal, input) = Signal.pipe()
            input.sendCompleted()
            return signal
        }
        let taken = Locked(0)
        return Signal.relaying { output in
            observe(
                Observer { event in
                    guard case let .value(value) = event else {
                        output.send(event)
                        return
                    }
                    // Delivery is serial, so the counter is only ever touched by one thread at a time; the
                    // lock publishes it from one delivering thread to the next.
                    let (forward, isLast) = taken.withCriticalRegion { taken -> (Bool, Bool) in
                        guard taken < count else { return (false, false) }
                        taken += 1
                        return (true, taken == count)
                    }
                    guard forward else { return }
                    output.send(value: value)
                    if isLast { output.sendCompleted() }
                })
        }
    }
}

extension SignalProducer {
    /// A producer whose runs forward the first `count` values of a run of this producer, then complete.
    /// See `Signal.take(first:)`.
    ///
    /// When the `count`th value has been forwarded, this run completes and the underlying run is
    /// disposed: it is interrupted and its `Lifetime` has ended by the time the underlying `send` of
    /// that value returns, so a start handler that checks `lifetime.hasEnded` stops sending. With
    /// `count == 0` the run completes at once and the underlying start handler does not run.
    ///
    /// - Precondition: `count >= 0`.
    public func take(first count: Int) -> SignalProducer {
        precondition(count >= 0, "take(first:) needs a count of at least 0, got \(count)")
        return lift { $0.take(first: count) }
    }
}
