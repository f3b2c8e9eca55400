extension Signal {
    /// A signal that forwards each value, and completion, `interval` after this signal sent it, through
    /// `scheduler`.
    ///
    /// As in ReactiveSwift, a failure or an interruption is not delayed: it is forwarded through
    /// `scheduler` at once (on the scheduler's thread, at the current instant of a `TestScheduler`:
    /// its next `advance()`), and the values and completion still waiting are dropped, their scheduled
    /// actions cancelled. Delayed events are delivered from the scheduler's actions, in the order they
    /// were sent, provided the scheduler runs the actions of equal delays in order (`QueueScheduler`
    /// and `TestScheduler` do).
    ///
    /// Each delayed event is one scheduled action: `SignalProducer(value: x).delay(d, on: scheduler)`
    /// leaves two pending on a `TestScheduler` (the value and the completion) until they run.
    ///
    /// When the new signal ends (its terminal event is delivered, or nobody holds or observes it any
    /// more), it detaches from this signal and cancels everything it still has scheduled.
    ///
    /// - Precondition: `interval` is not negative.
    public func delay(_ interval: Duration, on scheduler: some TimeScheduler) -> Signal<Value, Error> {
        precondition(interval >= .zero, "delay(_:on:): the interval must not be negative, got \(interval)")
        return Signal { observer in
            let delayed = DelayedEvents<Value, Error>()
            let upstream = self.observe { event in
                switch event {
                case .value, .completed:
                    delayed.schedule(event, after: interval, on: scheduler, to: observer)
                case .failed, .interrupted:
                    delayed.forwardAtOnce(event, on: scheduler, to: observer)
                }
            }
            return AnyDisposable {
                upstream.dispose()
                delayed.cancelAll()
            }
        }
    }
}

extension SignalProducer {
    /// A producer whose runs forward each value, and completion, of a run of this producer `interval`
    /// later, through `scheduler`; failure and interruption go through `scheduler` without delay. See
    /// `Signal.delay(_:on:)`.
    ///
    /// Disposing a run interrupts it at once and cancels everything it still has scheduled, whether or
    /// not the underlying run has ended: afterwards a `TestScheduler` has no action of it pending.
    ///
    /// - Precondition: `interval` is not negative.
    public func delay(_ interval: Duration, on scheduler: some TimeScheduler) -> SignalProducer<Value, Error> {
        precondition(interval >= .zero, "delay(_:on:): the interval must not be negative, got \(interval)")
        return lift { signal in signal.delay(interval, on: scheduler) }
    }
}

/// The events a `delay` holds back, and the scheduled actions that will release them.
///
/// Each scheduled action delivers the *oldest* waiting event rather than the one it was scheduled for:
/// every event waits the same interval, so this is the same event when the scheduler keeps order, and
/// it keeps the stream in order even if timers of (almost) equal deadlines fire out of order.
private final class DelayedEvents<Value: Sendable, Error: Swift.Error>: Sendable {
    private let waiting = Locked(FIFOQueue<Event<Value, Error>>())
    /// The actions that release waiting events.
    private let delayed = ScheduledActions()
    /// The action that forwards a failure or interruption.
    private let terminal = ScheduledActions()

    func schedule(
        _ event: Event<Value, Error>,
        after interval: Duration,
        on scheduler: some TimeScheduler,
        to observer: Observer<Value, Error>
    ) {
        waiting.withCriticalRegion { $0.append(event) }
        delayed.schedule({ scheduler.schedule(after: interval, action: $0) }) { [self] in
            if let event = waiting.withCriticalRegion({ $0.removeFirst() }) {
                observer.send(event)
            }
        }
    }

    /// A failure or interruption: the waiting events are dropped, and `event` goes through `scheduler`
    /// without delay.
    func forwardAtOnce(_ event: Event<Value, Error>, on scheduler: some Scheduler, to observer: Observer<Value, Error>)
    {
        dropWaiting()
        terminal.schedule({ scheduler.schedule($0) }) { observer.send(event) }
    }

    /// Drops the waiting events and cancels every scheduled action. Later calls to `schedule` do
    /// nothing.
    func cancelAll() {
        dropWaiting()
        terminal.cancelAll()
    }

    private func dropWaiting() {
        delayed.cancelAll()
        let dropped = waiting.withCriticalRegion { waiting -> FIFOQueue<Event<Value, Error>> in
            defer { waiting = FIFOQueue() }
            return waiting
        }
        withExtendedLifetime(dropped) {}
    }
}
