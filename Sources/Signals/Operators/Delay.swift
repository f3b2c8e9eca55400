extension Signal {
    /// A signal that forwards each value, and completion, `interval` after this signal sent it, through
    /// `scheduler`.
    ///
    /// As in ReactiveSwift, only values and completion are delayed. A failure or an interruption is
    /// forwarded **at once**, on the thread that sent it, and the values and completion still waiting
    /// are dropped: their scheduled actions are cancelled. Delayed events are delivered from the
    /// scheduler's actions, in the order they were sent, provided the scheduler runs the actions of
    /// equal delays in order (`QueueScheduler` and `TestScheduler` do).
    ///
    /// When the new signal terminates, it detaches from this signal and cancels whatever is still
    /// scheduled.
    ///
    /// - Precondition: `interval` is not negative.
    public func delay(_ interval: Duration, on scheduler: some TimeScheduler) -> Signal<Value, Error> {
        precondition(interval >= .zero, "delay(_:on:): the interval must not be negative, got \(interval)")
        return Signal { observer in
            let pending = DelayedEvents<Value, Error>()
            let upstream = self.observe { event in
                switch event {
                case .value, .completed:
                    pending.schedule(event, after: interval, on: scheduler, to: observer)
                case .failed, .interrupted:
                    pending.cancelAll()
                    observer.send(event)
                }
            }
            return AnyDisposable {
                upstream.dispose()
                pending.cancelAll()
            }
        }
    }
}

extension SignalProducer {
    /// A producer whose runs forward each value, and completion, of a run of this producer `interval`
    /// later, through `scheduler`; failure and interruption are forwarded at once. See
    /// `Signal.delay(_:on:)`.
    ///
    /// Disposing a run interrupts it at once and cancels the events still waiting in the scheduler.
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
    private struct State {
        var isCancelled = false
        var events: [Event<Value, Error>] = []
        var firstEvent = 0
        var nextID: UInt64 = 0
        /// The disposables of the actions scheduled and not run yet.
        var scheduled: [UInt64: Disposable] = [:]
        /// Actions that ran before `schedule(after:)` returned their disposable.
        var ranEarly: Set<UInt64> = []

        mutating func takeFirstEvent() -> Event<Value, Error>? {
            guard firstEvent < events.count else { return nil }
            let event = events[firstEvent]
            firstEvent += 1
            if firstEvent == events.count {
                events.removeAll(keepingCapacity: true)
                firstEvent = 0
            }
            return event
        }
    }

    private let state = Locked(State())

    func schedule(
        _ event: Event<Value, Error>,
        after interval: Duration,
        on scheduler: some TimeScheduler,
        to observer: Observer<Value, Error>
    ) {
        let id = state.withCriticalRegion { state -> UInt64? in
            guard !state.isCancelled else { return nil }
            state.events.append(event)
            defer { state.nextID += 1 }
            return state.nextID
        }
        guard let id else { return }
        let disposable = scheduler.schedule(after: interval) { [self] in
            self.release(id, to: observer)
        }
        let rejected = state.withCriticalRegion { state -> Disposable? in
            if state.isCancelled { return disposable }
            if state.ranEarly.remove(id) != nil { return nil }
            // A scheduler may return no disposable; a placeholder still marks the action as pending.
            state.scheduled[id] = disposable ?? AnyDisposable()
            return nil
        }
        rejected?.dispose()
    }

    /// Run by the scheduled action `id`: delivers the oldest waiting event.
    private func release(_ id: UInt64, to observer: Observer<Value, Error>) {
        let event = state.withCriticalRegion { state -> Event<Value, Error>? in
            guard !state.isCancelled else { return nil }
            if state.scheduled.removeValue(forKey: id) == nil {
                state.ranEarly.insert(id)
            }
            return state.takeFirstEvent()
        }
        if let event {
            observer.send(event)
        }
    }

    /// Drops every waiting event and cancels the scheduled actions. Later calls to `schedule` do nothing.
    func cancelAll() {
        let disposables = state.withCriticalRegion { state -> [Disposable] in
            guard !state.isCancelled else { return [] }
            state.isCancelled = true
            state.events = []
            state.ranEarly = []
            defer { state.scheduled = [:] }
            return Array(state.scheduled.values)
        }
        for disposable in disposables {
            disposable.dispose()
        }
    }
}
