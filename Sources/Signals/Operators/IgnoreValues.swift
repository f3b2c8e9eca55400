extension Signal {
    /// A signal that sends no value and forwards this signal's terminal event: for waiting until work
    /// has ended (`producer.ignoreValues().then(next)`). Its value type is `Never`; `promoteValue(_:)`
    /// retypes it to combine it with streams of values. (RxSwift's `ignoreElements()`, Combine's
    /// `ignoreOutput()`; ReactiveSwift has no such operator.)
    ///
    /// The terminal event is forwarded on the thread that delivers it. The result terminates when this
    /// signal does.
    public func ignoreValues() -> Signal<Never, Error> {
        terminalEvent(as: Never.self)
    }

    /// This signal's terminal event alone, retyped for values of `NewValue`: what `ignoreValues()` and
    /// `promoteValue(_:)` both are.
    fileprivate func terminalEvent<NewValue: Sendable>(as _: NewValue.Type) -> Signal<NewValue, Error> {
        Signal<NewValue, Error>.relaying { output in
            observe(
                Observer { event in
                    if let terminal = event.terminal(as: NewValue.self) { output.send(terminal) }
                })
        }
    }
}

extension Signal where Value == Never {
    /// This signal, typed as sending values of `NewValue` (it never does), so that it can be merged or
    /// concatenated with streams that do, as in ReactiveSwift. The terminal event is forwarded
    /// unchanged, on the thread that delivers it.
    public func promoteValue<NewValue: Sendable>(_: NewValue.Type = NewValue.self) -> Signal<NewValue, Error> {
        terminalEvent(as: NewValue.self)
    }
}

extension SignalProducer {
    /// A producer whose runs send no value and forward the terminal event of a run of this producer.
    /// See `Signal.ignoreValues()`. Disposing a run disposes the underlying run.
    public func ignoreValues() -> SignalProducer<Never, Error> {
        lift { $0.ignoreValues() }
    }
}

extension SignalProducer where Value == Never {
    /// This producer, typed as sending values of `NewValue` (it never does), as in ReactiveSwift. See
    /// `Signal.promoteValue(_:)`. Disposing a run disposes the underlying run.
    public func promoteValue<NewValue: Sendable>(_: NewValue.Type = NewValue.self) -> SignalProducer<NewValue, Error> {
        lift { $0.promoteValue(NewValue.self) }
    }
}
