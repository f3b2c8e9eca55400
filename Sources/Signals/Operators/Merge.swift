extension Signal {
    /// A signal that forwards the values of every signal in `signals` as they arrive.
    ///
    /// - Values are delivered serially, like any signal's: inputs that send from different threads at
    ///   once are queued, never delivered concurrently. Values of one input keep their order; values of
    ///   different inputs interleave in the order the merged signal accepted them.
    /// - The result completes when **every** input has ended by completing or being interrupted (at
    ///   once if `signals` is empty): an interrupted input counts as completed and interrupts nothing,
    ///   as in ReactiveSwift, where `merge` is `flatten(.merge)`.
    /// - A failure of **any** input is forwarded at once and ends the result; the result then detaches
    ///   from every input, whose later events are ignored.
    public static func merge<Signals: Sequence>(_ signals: Signals) -> Signal where Signals.Element == Signal {
        let inputs = Array(signals)
        let remaining = Locked(inputs.count)
        return Signal.relaying { output in
            if inputs.isEmpty {
                output.sendCompleted()
                return nil
            }
            let observations = CompositeDisposable()
            for input in inputs {
                observations += input.observe(
                    Observer { event in
                        // An interrupted input ends like a completed one (ReactiveSwift: merge is flatten(.merge)).
                        guard event.isCompletedOrInterrupted else {
                            output.send(event)
                            return
                        }
                        let isLast = remaining.withCriticalRegion { remaining -> Bool in
                            remaining -= 1
                            return remaining == 0
                        }
                        if isLast { output.sendCompleted() }
                    })
            }
            return observations
        }
    }

    /// A signal that forwards the values of every one of `signals`. See `merge(_:)` for a sequence.
    public static func merge(_ signals: Signal...) -> Signal {
        merge(signals)
    }

    /// A signal that forwards the values of this signal and of `other`, completing when both have
    /// completed (or been interrupted), failing as soon as either fails. See `merge(_:)`.
    public func merge(with other: Signal) -> Signal {
        Signal.merge([self, other])
    }
}

extension SignalProducer {
    /// A producer whose runs start every producer in `producers`, in order, and forward all their values
    /// as they arrive.
    ///
    /// - Values are delivered serially (see `Signal.merge(_:)`).
    /// - A run completes when **every** inner run has completed or been interrupted (at once if
    ///   `producers` is empty): an interrupted inner run counts as completed and interrupts nothing, as
    ///   in ReactiveSwift, where `merge` is `flatten(.merge)`.
    /// - A failure of **any** inner run is forwarded at once and ends the run; the other inner runs are
    ///   then disposed (interrupted). If that happens while the inner runs are being started, the
    ///   remaining producers are not started.
    /// - Disposing a run interrupts it and disposes every inner run.
    public static func merge<Producers: Sequence>(
        _ producers: Producers
    ) -> SignalProducer where Producers.Element == SignalProducer {
        let producers = Array(producers)
        return SignalProducer { observer, lifetime in
            guard !producers.isEmpty else {
                observer.sendCompleted()
                return
            }
            let remaining = Locked(producers.count)
            for producer in producers {
                if lifetime.hasEnded { return }
                producer.startWithSignal { signal, interrupter in
                    lifetime += interrupter
                    signal.observe(
                        Observer { event in
                            // An interrupted inner run ends like a completed one (ReactiveSwift: merge is
                            // flatten(.merge)).
                            guard event.isCompletedOrInterrupted else {
                                observer.send(event)
                                return
                            }
                            let isLast = remaining.withCriticalRegion { remaining -> Bool in
                                remaining -= 1
                                return remaining == 0
                            }
                            if isLast { observer.sendCompleted() }
                        })
                }
            }
        }
    }

    /// A producer whose runs merge runs of each of `producers`. See `merge(_:)` for a sequence.
    public static func merge(_ producers: SignalProducer...) -> SignalProducer {
        merge(producers)
    }

    /// A producer whose runs merge a run of this producer with a run of `other` (started in that order).
    /// See `merge(_:)`.
    public func merge(with other: SignalProducer) -> SignalProducer {
        SignalProducer.merge([self, other])
    }
}
