extension SignalProducer {
    /// A producer whose runs start this producer from an action on `scheduler`, so that its start
    /// handler runs where and when the scheduler runs actions.
    ///
    /// Events are not moved: they are delivered on whatever thread the start handler (or the work it
    /// starts) sends them (use `observe(on:)` for that). Disposing a run before the scheduler has run
    /// the start cancels it: the start handler never runs and the run is interrupted at once. Disposing
    /// it later interrupts the started run as usual.
    public func start(on scheduler: some Scheduler) -> SignalProducer<Value, Error> {
        SignalProducer { observer, lifetime in
            lifetime += scheduler.schedule {
                guard !lifetime.hasEnded else { return }
                self.startWithSignal { signal, interrupter in
                    lifetime += interrupter
                    lifetime += signal.observe(observer)
                }
            }
        }
    }
}
