extension Signal {
    /// A signal that forwards every event of this signal, first running the matching side-effect hooks.
    ///
    /// For each event, in this order and before the event is forwarded:
    /// 1. `event`, with the event itself;
    /// 2. `value`, `failed`, `completed` or `interrupted`, whichever matches;
    /// 3. for a terminal event, `terminated`.
    ///
    /// `disposed` runs once, when the result is disposed of, as in ReactiveSwift: after its terminal
    /// event has been forwarded to its observers (it is the last thing to happen), or, if the result
    /// ends because nobody holds or observes it any more (see `Signal`'s lifetime rules), when it ends
    /// (`Signal.never.on(disposed:)` released unobserved runs `disposed` at once).
    ///
    /// Hooks run on the thread that delivers this signal's event, serially, with no lock held.
    public func on(
        event: (@Sendable (Event<Value, Error>) -> Void)? = nil,
        value: (@Sendable (Value) -> Void)? = nil,
        failed: (@Sendable (Error) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil,
        interrupted: (@Sendable () -> Void)? = nil,
        terminated: (@Sendable () -> Void)? = nil,
        disposed: (@Sendable () -> Void)? = nil
    ) -> Signal {
        // Which of the two ends runs `disposed`: the forwarded terminal event, or the result's end
        // without one (unreachable and unobserved). Claimed once, by whichever comes first.
        let disposal = DisposedOnce()
        return Signal.relaying { output in
            let observation = observe(
                Observer { received in
                    event?(received)
                    switch received {
                    case let .value(newValue):
                        value?(newValue)
                    case let .failed(error):
                        failed?(error)
                        terminated?()
                    case .completed:
                        completed?()
                        terminated?()
                    case .interrupted:
                        interrupted?()
                        terminated?()
                    }
                    if received.isTerminating {
                        let claimed = disposal.claim()
                        output.send(received)
                        if claimed { disposed?() }
                    } else {
                        output.send(received)
                    }
                })
            guard let disposed else { return observation }
            return AnyDisposable {
                observation.dispose()
                if disposal.claim() { disposed() }
            }
        }
    }
}

/// A flag that one caller claims, once, from any thread.
final class DisposedOnce: Sendable {
    private let claimed = Locked(false)

    /// Whether this call is the first.
    func claim() -> Bool {
        claimed.withCriticalRegion { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}

extension SignalProducer {
    /// A producer whose runs run a run of this producer with side-effect hooks.
    ///
    /// Each run calls, in this order:
    /// - `starting`, before the underlying start handler runs;
    /// - for each event, the event hooks of `Signal.on(event:value:failed:completed:interrupted:terminated:disposed:)`,
    ///   before the event is forwarded;
    /// - `started`, once the underlying start handler has returned (so after any events it sent
    ///   synchronously);
    /// - `disposed`, once, when the run ends, whether it completed, failed or was disposed
    ///   (interrupted); it runs after `terminated`.
    ///
    /// Disposing the run runs `interrupted`, `terminated` and `disposed` on the disposing thread, before
    /// the run's observers receive `.interrupted`. Hooks run with no lock held.
    public func on(
        starting: (@Sendable () -> Void)? = nil,
        started: (@Sendable () -> Void)? = nil,
        event: (@Sendable (Event<Value, Error>) -> Void)? = nil,
        value: (@Sendable (Value) -> Void)? = nil,
        failed: (@Sendable (Error) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil,
        interrupted: (@Sendable () -> Void)? = nil,
        terminated: (@Sendable () -> Void)? = nil,
        disposed: (@Sendable () -> Void)? = nil
    ) -> SignalProducer {
        SignalProducer { observer, lifetime in
            starting?()
            self.startWithSignal { signal, interrupter in
                lifetime += interrupter
                let hooked = signal.on(
                    event: event,
                    value: value,
                    failed: failed,
                    completed: completed,
                    interrupted: interrupted,
                    terminated: terminated,
                    disposed: disposed
                )
                lifetime += hooked.observe(observer)
            }
            started?()
        }
    }
}
