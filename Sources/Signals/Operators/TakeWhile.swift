extension Signal {
    /// A signal that forwards values while `shouldContinue` returns true, and **completes** (without
    /// forwarding it) at the first value for which it returns false, as in ReactiveSwift. It then
    /// detaches from this signal. A terminal event of this signal that comes first is forwarded.
    ///
    /// `shouldContinue` runs on the thread that delivers the value, serially, with no lock held.
    public func take(while shouldContinue: @escaping @Sendable (Value) -> Bool) -> Signal {
        Signal.relaying { output in
            observe(
                Observer { event in
                    if case let .value(value) = event, !shouldContinue(value) {
                        output.sendCompleted()
                    } else {
                        output.send(event)
                    }
                })
        }
    }

    /// A signal that keeps the last `count` values of this signal and, when it completes, sends them
    /// in order and then completes, as in ReactiveSwift. A failure or interruption is forwarded at
    /// once and the kept values are dropped.
    ///
    /// The values are sent on the thread that delivers the completion. With `count == 0` the result
    /// only forwards the terminal event.
    ///
    /// - Precondition: `count >= 0`.
    public func take(last count: Int) -> Signal {
        precondition(count >= 0, "take(last:) needs a count of at least 0, got \(count)")
        let kept = Locked(FIFOQueue<Value>())
        return Signal.relaying { output in
            observe(
                Observer { event in
                    switch event {
                    case let .value(value):
                        guard count > 0 else { return }
                        let evicted = kept.withCriticalRegion { kept -> Value? in
                            let evicted = kept.count == count ? kept.removeFirst() : nil
                            kept.append(value)
                            return evicted
                        }
                        withExtendedLifetime(evicted) {}  // released with no lock held
                    case .completed:
                        var values = kept.withCriticalRegion { kept -> FIFOQueue<Value> in
                            defer { kept = FIFOQueue() }
                            return kept
                        }
                        while let value = values.removeFirst() {
                            output.send(value: value)
                        }
                        output.sendCompleted()
                    case .failed, .interrupted:
                        // Swapped out, and released after the lock (and the terminal event).
                        let dropped = kept.withCriticalRegion { kept -> FIFOQueue<Value> in
                            defer { kept = FIFOQueue() }
                            return kept
                        }
                        output.send(event)
                        withExtendedLifetime(dropped) {}
                    }
                })
        }
    }
}

extension SignalProducer {
    /// A producer whose runs forward values while `shouldContinue` returns true and complete at the
    /// first value for which it returns false. See `Signal.take(while:)`. When the run completes that
    /// way, the underlying run is disposed (interrupted).
    public func take(while shouldContinue: @escaping @Sendable (Value) -> Bool) -> SignalProducer {
        lift { $0.take(while: shouldContinue) }
    }

    /// A producer whose runs send the last `count` values of a run of this producer when it completes.
    /// See `Signal.take(last:)`. Disposing a run disposes the underlying run and drops the kept values.
    ///
    /// - Precondition: `count >= 0`.
    public func take(last count: Int) -> SignalProducer {
        precondition(count >= 0, "take(last:) needs a count of at least 0, got \(count)")
        return lift { $0.take(last: count) }
    }
}
