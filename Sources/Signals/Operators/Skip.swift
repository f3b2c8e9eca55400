extension Signal {
    /// A signal that drops the first `count` values of this signal and forwards the rest, and its
    /// terminal event, as in ReactiveSwift.
    ///
    /// Events are forwarded on the thread that delivers them, in order. The result terminates when
    /// this signal does.
    ///
    /// - Precondition: `count >= 0`.
    public func skip(first count: Int) -> Signal {
        precondition(count >= 0, "skip(first:) needs a count of at least 0, got \(count)")
        let skipped = Locked(0)
        return Signal.relaying { output in
            observe(
                Observer { event in
                    if case .value = event {
                        // Delivery is serial; the lock publishes the counter from one delivering thread to
                        // the next.
                        let skip = skipped.withCriticalRegion { skipped -> Bool in
                            guard skipped < count else { return false }
                            skipped += 1
                            return true
                        }
                        if skip { return }
                    }
                    output.send(event)
                })
        }
    }

    /// A signal that drops values while `shouldContinue` returns true, then forwards the first value
    /// for which it returns false and every value after it, as in ReactiveSwift. The terminal event is
    /// forwarded.
    ///
    /// `shouldContinue` runs on the thread that delivers the value, serially, with no lock held, once
    /// per value until it first returns false, and never again after that.
    public func skip(while shouldContinue: @escaping @Sendable (Value) -> Bool) -> Signal {
        let isSkipping = Locked(true)
        return Signal.relaying { output in
            observe(
                Observer { event in
                    if case let .value(value) = event, isSkipping.withCriticalRegion({ $0 }) {
                        if shouldContinue(value) { return }
                        isSkipping.withCriticalRegion { $0 = false }
                    }
                    output.send(event)
                })
        }
    }

    /// A signal that forwards a value only the first time its `identity` is seen, as in ReactiveSwift.
    /// The terminal event is forwarded.
    ///
    /// Every identity seen is kept until the result terminates, so memory grows with the number of
    /// distinct values. `identity` runs on the thread that delivers the value, serially, with no lock
    /// held.
    public func uniqueValues<Identity: Hashable & Sendable>(
        _ identity: @escaping @Sendable (Value) -> Identity
    ) -> Signal {
        // `nil` once the result has ended. The identities are the user's: their `hash(into:)` and `==`
        // run, and they are released, with no lock held.
        let seen = Locked<Set<Identity>?>([])
        return Signal.relaying { output in
            observe(
                Observer { event in
                    if case let .value(value) = event {
                        let key = identity(value)
                        // Delivery is serial: nothing else touches the set while it is out of the lock.
                        guard var identities = seen.withCriticalRegion({ $0.take() }) else { return }
                        let inserted = identities.insert(key).inserted
                        seen.withCriticalRegion { $0 = identities }
                        if inserted { output.send(event) }
                    } else {
                        let identities = seen.withCriticalRegion { $0.take() }
                        output.send(event)
                        withExtendedLifetime(identities) {}
                    }
                })
        }
    }

    /// A signal that drops the values of this signal that are `nil` and forwards the others unwrapped,
    /// with the terminal event, as in ReactiveSwift.
    public func skipNil<Wrapped: Sendable>() -> Signal<Wrapped, Error> where Value == Wrapped? {
        compactMap { $0 }
    }
}

extension Signal where Value: Hashable {
    /// A signal that forwards each distinct value the first time it is seen. See `uniqueValues(_:)`.
    public func uniqueValues() -> Signal {
        uniqueValues { $0 }
    }
}

extension SignalProducer {
    /// A producer whose runs drop the first `count` values of a run of this producer. See
    /// `Signal.skip(first:)`. Disposing a run disposes the underlying run.
    ///
    /// - Precondition: `count >= 0`.
    public func skip(first count: Int) -> SignalProducer {
        precondition(count >= 0, "skip(first:) needs a count of at least 0, got \(count)")
        return lift { $0.skip(first: count) }
    }

    /// A producer whose runs drop values while `shouldContinue` returns true. See
    /// `Signal.skip(while:)`. Disposing a run disposes the underlying run.
    public func skip(while shouldContinue: @escaping @Sendable (Value) -> Bool) -> SignalProducer {
        lift { $0.skip(while: shouldContinue) }
    }

    /// A producer whose runs forward each value whose `identity` was not seen before in that run. See
    /// `Signal.uniqueValues(_:)`. Disposing a run disposes the underlying run.
    public func uniqueValues<Identity: Hashable & Sendable>(
        _ identity: @escaping @Sendable (Value) -> Identity
    ) -> SignalProducer {
        lift { $0.uniqueValues(identity) }
    }

    /// A producer whose runs drop `nil` values and unwrap the others. See `Signal.skipNil()`.
    public func skipNil<Wrapped: Sendable>() -> SignalProducer<Wrapped, Error> where Value == Wrapped? {
        lift { $0.skipNil() }
    }
}

extension SignalProducer where Value: Hashable {
    /// A producer whose runs forward each distinct value the first time it is seen in that run. See
    /// `Signal.uniqueValues()`.
    public func uniqueValues() -> SignalProducer {
        lift { $0.uniqueValues() }
    }
}
