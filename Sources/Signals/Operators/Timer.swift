extension SignalProducer where Value == Duration, Error == Never {
    /// A producer that, on each start, sends the scheduler's `now` every `interval`, the first time
    /// `interval` after the start. It never completes: disposing the run stops the timer and
    /// interrupts the run.
    ///
    /// Values are sent from the scheduler's actions (on the queue of a `QueueScheduler`, from the
    /// advancing thread of a `TestScheduler`). `leeway` is how late the scheduler may be, to save work.
    ///
    /// - Precondition: `interval` is positive.
    public static func timer(
        interval: Duration,
        on scheduler: some TimeScheduler,
        leeway: Duration = .zero
    ) -> SignalProducer<Duration, Never> {
        precondition(interval > .zero, "timer(interval:on:): the interval must be positive, got \(interval)")
        return SignalProducer { observer, lifetime in
            // The repeating action reads the clock without keeping the scheduler (see `SchedulerClock`),
            // so a `TestScheduler` dropped with the timer still scheduled is freed, and the run is
            // interrupted (its input goes with the action).
            let clock = SchedulerClock(scheduler, otherwise: .zero)
            lifetime += scheduler.schedule(after: interval, interval: interval, leeway: leeway) {
                observer.send(value: clock.now())
            }
        }
    }
}
