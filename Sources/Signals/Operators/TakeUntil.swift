extension Signal {
    /// A signal that forwards the events of this signal until `trigger` sends a value or completes, and
    /// then completes, as ReactiveSwift's `take(until:)`. A trigger that is interrupted stops nothing:
    /// the result goes on until this signal ends. A terminal event of this signal that comes first is
    /// forwarded.
    ///
    /// Events are forwarded on the thread that delivers them; the completion on the trigger's. When the
    /// result ends it detaches from both.
    public func take(until trigger: Signal<Void, Never>) -> Signal<Value, Error> {
        Signal.relaying { output in
            let upstream = observe(output)
            let stopper = trigger.observe(
                Observer { event in
                    switch event {
                    case .value, .completed: output.sendCompleted()
                    case .interrupted: break
                    }
                })
            return CompositeDisposable([upstream, stopper])
        }
    }

    /// A signal that forwards the events of this signal until `lifetime` ends, and then completes, as
    /// ReactiveSwift's `take(during:)`. If `lifetime` has already ended, the result completes at once.
    ///
    /// The completion is sent on the thread that ends the lifetime. When the result ends, it detaches
    /// from this signal and unregisters from `lifetime`, which it does not keep alive past that point.
    public func take(during lifetime: Lifetime) -> Signal<Value, Error> {
        Signal.relaying { output in
            let upstream = observe(output)
            let ended = lifetime.observeEnded { output.sendCompleted() }
            return CompositeDisposable([upstream] + (ended.map { [$0] } ?? []))
        }
    }

    /// A signal that drops the values of this signal until `trigger` sends a value or completes, then
    /// forwards every value, as ReactiveSwift's `skip(until:)`. A trigger that is interrupted never
    /// opens the gate.
    ///
    /// Unlike ReactiveSwift, which observes this signal only once the trigger has fired, the result
    /// observes this signal at once and **forwards its terminal event even before the trigger fires**
    /// (ReactiveSwift leaves the result waiting for the trigger, and then interrupts it).
    ///
    /// Events are forwarded on the thread that delivers them. When the result ends it detaches from both.
    public func skip(until trigger: Signal<Void, Never>) -> Signal<Value, Error> {
        Signal.relaying { output in
            let isOpen = Locked(false)
            let gate = SerialDisposable()
            gate.inner = trigger.observe(
                Observer { event in
                    switch event {
                    case .value, .completed:
                        isOpen.withCriticalRegion { $0 = true }
                        gate.dispose()
                    case .interrupted:
                        break
                    }
                })
            let upstream = observe(
                Observer { event in
                    if case .value = event, !isOpen.withCriticalRegion({ $0 }) { return }
                    output.send(event)
                })
            return CompositeDisposable([upstream, gate])
        }
    }
}

extension SignalProducer {
    /// A producer whose runs forward a run of this producer until a run of `trigger` sends a value or
    /// completes, then complete. See `Signal.take(until:)`. As in ReactiveSwift, the trigger's start
    /// handler runs first, so a trigger that fires synchronously ends the run before this producer's
    /// start handler runs (it then does not run). Disposing a run interrupts both inner runs.
    public func take(until trigger: SignalProducer<Void, Never>) -> SignalProducer<Value, Error> {
        lift(startingAfter: trigger) { signal, triggerSignal in signal.take(until: triggerSignal) }
    }

    /// A producer whose runs forward a run of this producer until `trigger` sends a value or
    /// completes, then complete. See `Signal.take(until:)`.
    public func take(until trigger: Signal<Void, Never>) -> SignalProducer<Value, Error> {
        lift { $0.take(until: trigger) }
    }

    /// A producer whose runs forward a run of this producer until `lifetime` ends, then complete (at
    /// once, if it already has: the underlying run is then interrupted as soon as it starts). See
    /// `Signal.take(during:)`.
    public func take(during lifetime: Lifetime) -> SignalProducer<Value, Error> {
        lift { $0.take(during: lifetime) }
    }

    /// A producer whose runs drop the values of a run of this producer until a run of `trigger` sends a
    /// value or completes. See `Signal.skip(until:)`. As in ReactiveSwift, the trigger's start handler
    /// runs first. Disposing a run interrupts both inner runs.
    public func skip(until trigger: SignalProducer<Void, Never>) -> SignalProducer<Value, Error> {
        lift(startingAfter: trigger) { signal, triggerSignal in signal.skip(until: triggerSignal) }
    }

    /// A producer whose runs drop the values of a run of this producer until `trigger` sends a value or
    /// completes. See `Signal.skip(until:)`.
    public func skip(until trigger: Signal<Void, Never>) -> SignalProducer<Value, Error> {
        lift { $0.skip(until: trigger) }
    }
}
