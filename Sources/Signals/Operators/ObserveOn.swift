extension Signal {
    /// A signal that forwards every event of this one through `scheduler`, in the order they were sent.
    ///
    /// Each event, terminal events included, is handed to `scheduler.schedule(_:)` as it arrives, so
    /// observers of the new signal hear it wherever and whenever the scheduler runs the action: on the
    /// queue of a `QueueScheduler`, at the next advance of a `TestScheduler`, at once with
    /// `ImmediateScheduler`. Order is kept as long as the scheduler runs actions in the order they were
    /// scheduled (all three do); a scheduler that runs actions concurrently may reorder them.
    ///
    /// The new signal terminates when the scheduled terminal event is delivered; until then it stays
    /// attached to this signal. When it ends otherwise (nobody holds or observes it any more), it
    /// detaches and cancels every event still waiting in the scheduler.
    public func observe(on scheduler: some Scheduler) -> Signal<Value, Error> {
        Signal { observer in
            let scheduled = ScheduledActions()
            let upstream = self.observe { event in
                scheduled.schedule({ scheduler.schedule($0) }) { observer.send(event) }
            }
            return AnyDisposable {
                upstream.dispose()
                scheduled.cancelAll()
            }
        }
    }
}

extension SignalProducer {
    /// A producer whose runs deliver every event of a run of this producer through `scheduler`, in
    /// order. See `Signal.observe(on:)`.
    ///
    /// The start handler still runs on the thread that starts the producer (use `start(on:)` to move
    /// it). Disposing a run interrupts it at once, on the disposing thread, and cancels the events of
    /// the run still waiting in the scheduler, whether or not the underlying run has ended.
    public func observe(on scheduler: some Scheduler) -> SignalProducer<Value, Error> {
        lift { signal in signal.observe(on: scheduler) }
    }
}
