extension Signal {
    /// A signal that forwards a value only if `isEquivalent(previous, value)` returns false, where
    /// `previous` is the last value forwarded; the first value is always forwarded. The terminal event
    /// is forwarded unchanged.
    ///
    /// `isEquivalent` runs on the thread that delivers this signal's event, serially, once per value
    /// after the first, with no lock held.
    public func skipRepeats(_ isEquivalent: @escaping @Sendable (Value, Value) -> Bool) -> Signal {
        let previous = Locked<Value?>(nil)
        return Signal.relaying { output in
            observe(
                Observer { event in
                    guard case let .value(value) = event else {
                        output.send(event)
                        return
                    }
                    // Delivery is serial: nothing else changes `previous` between the read and the write.
                    if let last = previous.withCriticalRegion({ $0 }), isEquivalent(last, value) {
                        return
                    }
                    // Swapped, not overwritten: the value it replaces is the user's, released after the
                    // lock (and the send).
                    var replaced: Value? = value
                    previous.withCriticalRegion { swap(&$0, &replaced) }
                    output.send(value: value)
                    withExtendedLifetime(replaced) {}
                })
        }
    }
}

extension Signal where Value: Equatable {
    /// A signal that forwards a value only if it differs (`!=`) from the last value forwarded; the first
    /// value is always forwarded. See `skipRepeats(_:)`.
    public func skipRepeats() -> Signal {
        skipRepeats(==)
    }
}

extension SignalProducer {
    /// A producer whose runs forward a value only if `isEquivalent(previous, value)` returns false. Each
    /// run starts afresh: its first value is always forwarded. See `Signal.skipRepeats(_:)`.
    ///
    /// Disposing a run of the new producer disposes the underlying run.
    public func skipRepeats(_ isEquivalent: @escaping @Sendable (Value, Value) -> Bool) -> SignalProducer {
        lift { $0.skipRepeats(isEquivalent) }
    }
}

extension SignalProducer where Value: Equatable {
    /// A producer whose runs forward a value only if it differs from the last value forwarded in that
    /// run. See `Signal.skipRepeats()`.
    public func skipRepeats() -> SignalProducer {
        lift { $0.skipRepeats() }
    }
}
