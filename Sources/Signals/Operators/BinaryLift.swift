extension SignalProducer {
    /// A producer whose runs start this producer and `other`, and pass both signals through `transform`;
    /// **this producer's start handler runs first** (ReactiveSwift's `liftLeft`). Both signals exist,
    /// and `transform` has observed them, before either start handler runs. Ending the new run
    /// interrupts both runs; a run that has ended before `other`'s start handler would run skips it.
    func lift<OtherValue, OtherError, NewValue, NewError>(
        startingBefore other: SignalProducer<OtherValue, OtherError>,
        _ transform:
            @escaping @Sendable (Signal<Value, Error>, Signal<OtherValue, OtherError>) -> Signal<NewValue, NewError>
    ) -> SignalProducer<NewValue, NewError> {
        SignalProducer<NewValue, NewError> { observer, lifetime in
            // The inner `startWithSignal` runs its start handler first, when its setup returns.
            other.startWithSignal { otherSignal, otherInterrupter in
                lifetime += otherInterrupter
                self.startWithSignal { signal, interrupter in
                    lifetime += interrupter
                    lifetime += transform(signal, otherSignal).observe(observer)
                }
            }
        }
    }

    /// Like `lift(startingBefore:_:)`, but **`other`'s start handler runs first** (ReactiveSwift's
    /// `liftRight`).
    func lift<OtherValue, OtherError, NewValue, NewError>(
        startingAfter other: SignalProducer<OtherValue, OtherError>,
        _ transform:
            @escaping @Sendable (Signal<Value, Error>, Signal<OtherValue, OtherError>) -> Signal<NewValue, NewError>
    ) -> SignalProducer<NewValue, NewError> {
        SignalProducer<NewValue, NewError> { observer, lifetime in
            self.startWithSignal { signal, interrupter in
                lifetime += interrupter
                other.startWithSignal { otherSignal, otherInterrupter in
                    lifetime += otherInterrupter
                    lifetime += transform(signal, otherSignal).observe(observer)
                }
            }
        }
    }
}
