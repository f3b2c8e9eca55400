extension Signal {
    /// A signal that sends each value of this signal together with the one before it: the first value
    /// is paired with `initial`. The terminal event is forwarded. As in ReactiveSwift.
    ///
    /// Values are sent on the thread that delivers them, in order.
    public func combinePrevious(_ initial: Value) -> Signal<(previous: Value, current: Value), Error> {
        combinePrevious(previous: initial)
    }

    /// A signal that sends each value of this signal together with the one before it, starting with
    /// the second value (the first has nothing to be paired with). As in ReactiveSwift.
    public func combinePrevious() -> Signal<(previous: Value, current: Value), Error> {
        combinePrevious(previous: nil)
    }

    private func combinePrevious(previous initial: Value?) -> Signal<(previous: Value, current: Value), Error> {
        let previous = Locked<Value?>(initial)
        return Signal<(previous: Value, current: Value), Error>.relaying { output in
            observe(
                Observer { event in
                    guard case let .value(current) = event else {
                        if let terminal = event.terminal(as: (previous: Value, current: Value).self) {
                            output.send(terminal)
                        }
                        return
                    }
                    let last = previous.withCriticalRegion { previous -> Value? in
                        defer { previous = current }
                        return previous
                    }
                    if let last { output.send(value: (previous: last, current: current)) }
                })
        }
    }
}

extension SignalProducer {
    /// A producer whose runs pair each value with the one before it, the first with `initial`. Each
    /// run starts again from `initial`. See `Signal.combinePrevious(_:)`.
    public func combinePrevious(_ initial: Value) -> SignalProducer<(previous: Value, current: Value), Error> {
        lift { $0.combinePrevious(initial) }
    }

    /// A producer whose runs pair each value with the one before it, from the second value on. See
    /// `Signal.combinePrevious()`.
    public func combinePrevious() -> SignalProducer<(previous: Value, current: Value), Error> {
        lift { $0.combinePrevious() }
    }
}
