extension SignalProducer {
    /// A producer whose runs run each of `producers` in turn: the next one starts when the previous one
    /// completes, and the run completes after the last one (at once if `producers` is empty).
    ///
    /// - Values are forwarded in order, one producer's values after the previous producer's.
    /// - An interrupted inner run ends like a completed one: the next producer starts (as in
    ///   ReactiveSwift, where `concat` is `flatten(.concat)`).
    /// - A failure of the current inner run is forwarded at once and ends the run; the remaining
    ///   producers are not started.
    /// - Disposing the run interrupts it, disposes the inner run in progress and starts no other.
    /// - Each next producer starts on the thread that delivered the previous one's completion. Producers
    ///   that complete synchronously are started in a loop, not recursively, so a long chain of them
    ///   runs in constant stack.
    public static func concat<Producers: Sequence>(
        _ producers: Producers
    ) -> SignalProducer where Producers.Element == SignalProducer {
        let producers = Array(producers)
        return SignalProducer { observer, lifetime in
            ConcatRun(producers: producers, observer: observer, lifetime: lifetime).advance()
        }
    }

    /// A producer whose runs run each of `producers` in turn. See `concat(_:)` for a sequence.
    public static func concat(_ producers: SignalProducer...) -> SignalProducer {
        concat(producers)
    }

    /// A producer whose runs run this producer, then, once it has completed (or been interrupted),
    /// `next`.
    ///
    /// A failure of this producer's run is forwarded and `next` is not started. Disposing the run
    /// disposes whichever of the two is running. See `concat(_:)` for a sequence.
    public func concat(_ next: SignalProducer) -> SignalProducer {
        SignalProducer.concat([self, next])
    }

    /// A producer whose runs run this producer, ignoring its values, and once it has completed run
    /// `replacement` and forward all of its events (ReactiveSwift's `then`).
    ///
    /// A failure or interruption of this producer's run is forwarded and `replacement` is not started
    /// (unlike `concat`, where an interrupted producer lets the next one start, as in ReactiveSwift).
    /// Disposing the run disposes whichever of the two is running. `replacement` starts on the thread
    /// that delivered this producer's completion.
    public func then<Replacement: Sendable>(
        _ replacement: SignalProducer<Replacement, Error>
    ) -> SignalProducer<Replacement, Error> {
        SignalProducer<Replacement, Error> { observer, lifetime in
            self.startWithSignal { signal, interrupter in
                lifetime += interrupter
                signal.observe(
                    Observer { event in
                        switch event {
                        case .value:
                            break
                        case let .failed(error):
                            observer.send(error: error)
                        case .interrupted:
                            observer.sendInterrupted()
                        case .completed:
                            guard !lifetime.hasEnded else { return }
                            replacement.startWithSignal { replacementSignal, replacementInterrupter in
                                lifetime += replacementInterrupter
                                replacementSignal.observe(observer)
                            }
                        }
                    })
            }
        }
    }
}

/// One run of a concatenation: starts the producers one after the other.
private final class ConcatRun<Value: Sendable, Error: Swift.Error>: Sendable {
    private struct State {
        var nextIndex = 0
        /// True while a thread is in the starting loop of `advance()`.
        var isAdvancing = false
        /// Set when an inner run completed while a thread was in the loop: the loop starts the next one.
        var isAdvanceRequested = false
    }

    private let producers: [SignalProducer<Value, Error>]
    private let observer: Observer<Value, Error>
    private let lifetime: Lifetime
    /// The interrupter of the inner run in progress.
    private let current = SerialDisposable()
    private let state = Locked(State())

    init(producers: [SignalProducer<Value, Error>], observer: Observer<Value, Error>, lifetime: Lifetime) {
        self.producers = producers
        self.observer = observer
        self.lifetime = lifetime
        lifetime += current
    }

    /// Starts the next producer, or completes if there is none. Called once to begin, then each time an
    /// inner run completes. Only one thread runs the loop at a time; a completion that arrives while
    /// it runs (synchronously, from the producer being started) is handed to that loop.
    func advance() {
        let isLoopOwner = state.withCriticalRegion { state -> Bool in
            if state.isAdvancing {
                state.isAdvanceRequested = true
                return false
            }
            state.isAdvancing = true
            return true
        }
        guard isLoopOwner else { return }
        while true {
            let index = state.withCriticalRegion { state -> Int in
                defer { state.nextIndex += 1 }
                return state.nextIndex
            }
            if lifetime.hasEnded { return }
            guard index < producers.count else {
                observer.sendCompleted()
                return
            }
            producers[index].startWithSignal { signal, interrupter in
                current.inner = interrupter
                signal.observe(
                    Observer { [self] event in
                        if event.isCompletedOrInterrupted {
                            advance()
                        } else {
                            observer.send(event)
                        }
                    })
            }
            let again = state.withCriticalRegion { state -> Bool in
                if state.isAdvanceRequested {
                    state.isAdvanceRequested = false
                    return true
                }
                state.isAdvancing = false
                return false
            }
            if !again { return }
        }
    }
}
