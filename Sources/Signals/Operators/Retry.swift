extension SignalProducer {
    /// A producer whose runs start this producer and, each time that inner run fails, start it again,
    /// up to `count` more times; the failure of the last attempt is forwarded. Values of every attempt
    /// are forwarded; completion or interruption of an attempt ends the run.
    ///
    /// As in ReactiveSwift, except that attempts that fail synchronously are restarted in a loop, not
    /// recursively, so any `count` runs in constant stack. A restart happens on the thread that
    /// delivered the failure. Disposing the run interrupts the current attempt and starts no other.
    ///
    /// - Precondition: `count >= 0`. With 0, this producer is returned unchanged.
    public func retry(upTo count: Int) -> SignalProducer {
        precondition(count >= 0, "retry(upTo:) needs a count of at least 0, got \(count)")
        if count == 0 { return self }
        return SignalProducer { observer, lifetime in
            RetryRun(producer: self, retries: count, delay: nil, observer: observer, lifetime: lifetime).start()
        }
    }

    /// A producer whose runs retry a failed attempt, as `retry(upTo:)` does, but start each new attempt
    /// `interval` after the failure, through `scheduler`. The failure of the last attempt is forwarded
    /// at once, not delayed.
    ///
    /// Each run counts its own retries. (ReactiveSwift 7.2 counts them per producer: its second and
    /// later runs get fewer retries, or none.) A delayed attempt starts on the scheduler's thread.
    /// Disposing the run interrupts the current attempt and cancels a pending restart, so nothing is
    /// left scheduled.
    ///
    /// - Precondition: `count >= 0` and `interval` is not negative. With `count == 0`, this producer is
    ///   returned unchanged.
    public func retry(
        upTo count: Int,
        interval: Duration,
        on scheduler: some TimeScheduler
    ) -> SignalProducer {
        precondition(count >= 0, "retry(upTo:interval:on:) needs a count of at least 0, got \(count)")
        precondition(interval >= .zero, "retry(upTo:interval:on:): the interval must not be negative, got \(interval)")
        if count == 0 { return self }
        return SignalProducer { observer, lifetime in
            RetryRun(
                producer: self,
                retries: count,
                delay: RetryDelay(interval: interval, scheduler: scheduler),
                observer: observer,
                lifetime: lifetime
            ).start()
        }
    }
}

/// Where and how long a retry waits before the next attempt.
private struct RetryDelay: Sendable {
    let interval: Duration
    let scheduler: any TimeScheduler
}

/// The bookkeeping of one retrying run: retries left, and the starter role that keeps synchronous
/// failures from recursing. Pure; `RetryRun` performs what it returns.
struct RetryStateMachine: Sendable {
    /// What to do after an attempt failed.
    enum FailureAction: Equatable {
        /// No retry left: forward the failure.
        case forward
        /// Start the next attempt now: the caller must call `requestStart()`.
        case restart
        /// Start the next attempt after the delay.
        case restartLater
    }

    private var retriesLeft: Int
    private let isDelayed: Bool
    /// Whether a thread is in the start loop.
    private var isStarting = false
    /// Whether an attempt is to be started by the thread in the start loop.
    private var isStartRequested = false

    init(retries: Int, isDelayed: Bool) {
        retriesLeft = retries
        self.isDelayed = isDelayed
    }

    mutating func attemptFailed() -> FailureAction {
        guard retriesLeft > 0 else { return .forward }
        retriesLeft -= 1
        return isDelayed ? .restartLater : .restart
    }

    /// Asks for an attempt to start. Returns true if the caller now holds the starter role and must
    /// run the start loop; otherwise the thread in the loop will start it.
    mutating func requestStart() -> Bool {
        isStartRequested = true
        guard !isStarting else { return false }
        isStarting = true
        return true
    }

    /// Called by the starter in a loop: true if an attempt must be started now; false, in which case
    /// the caller has given up the starter role.
    mutating func takeStartRequest() -> Bool {
        precondition(isStarting, "Internal inconsistency: takeStartRequest called without the starter role")
        if isStartRequested {
            isStartRequested = false
            return true
        }
        isStarting = false
        return false
    }
}

/// One run of `retry`: starts the attempts and forwards their events.
private final class RetryRun<Value: Sendable, Error: Swift.Error>: Sendable {
    private let producer: SignalProducer<Value, Error>
    private let delay: RetryDelay?
    private let observer: Observer<Value, Error>
    private let lifetime: Lifetime
    private let state: Locked<RetryStateMachine>
    /// The interrupter of the current attempt.
    private let attempt = SerialDisposable()
    /// The pending delayed restart.
    private let timer = SerialDisposable()

    init(
        producer: SignalProducer<Value, Error>,
        retries: Int,
        delay: RetryDelay?,
        observer: Observer<Value, Error>,
        lifetime: Lifetime
    ) {
        self.producer = producer
        self.delay = delay
        self.observer = observer
        self.lifetime = lifetime
        state = Locked(RetryStateMachine(retries: retries, isDelayed: delay != nil))
        lifetime += attempt
        lifetime += timer
    }

    /// Starts an attempt, or hands it to the thread already starting one.
    func start() {
        guard state.withCriticalRegion({ $0.requestStart() }) else { return }
        while state.withCriticalRegion({ $0.takeStartRequest() }) {
            if lifetime.hasEnded { continue }
            producer.startWithSignal { signal, interrupter in
                attempt.inner = interrupter
                signal.observe(Observer { [self] event in self.attemptEvent(event) })
            }
        }
    }

    private func attemptEvent(_ event: Event<Value, Error>) {
        guard case let .failed(error) = event else {
            observer.send(event)
            return
        }
        if lifetime.hasEnded { return }
        switch state.withCriticalRegion({ $0.attemptFailed() }) {
        case .forward:
            observer.send(error: error)
        case .restart:
            start()
        case .restartLater:
            guard let delay else { preconditionFailure("Internal inconsistency: a delayed retry without a delay") }
            timer.inner = delay.scheduler.schedule(after: delay.interval) { [self] in self.start() }
        }
    }
}
