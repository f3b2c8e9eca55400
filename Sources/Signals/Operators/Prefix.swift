extension SignalProducer {
    /// A producer whose runs run `producer` first and, once it has completed, this producer, as in
    /// ReactiveSwift. A failure or interruption of `producer` ends the run and this producer is not
    /// started. Disposing the run disposes whichever is running. See `concat(_:)`.
    public func prefix(_ producer: SignalProducer) -> SignalProducer {
        producer.concat(self)
    }

    /// A producer whose runs send `value`, then run this producer, as in ReactiveSwift.
    public func prefix(value: Value) -> SignalProducer {
        prefix(SignalProducer(value: value))
    }
}
