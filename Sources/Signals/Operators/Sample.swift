extension Signal {
    /// A signal that sends, each time `sampler` sends a value, the latest value of this signal paired
    /// with the sampler's value, as ReactiveSwift's `sample(with:)`. A sampler value that comes before
    /// this signal's first value sends nothing; the latest value is kept, so two sampler values in a row
    /// send it twice.
    ///
    /// - Completes once **both** this signal and `sampler` have completed (the latest value keeps
    ///   being sampled after this signal completed).
    /// - Fails or is interrupted as soon as this signal does; is interrupted as soon as `sampler` is.
    /// - The decisions are made under a lock and sent in the order they were made, one thread at a
    ///   time, with no lock held: an event may be delivered on the thread of the other input.
    ///
    /// When the result ends it detaches from both.
    public func sample<Sample: Sendable>(with sampler: Signal<Sample, Never>) -> Signal<(Value, Sample), Error> {
        Signal<(Value, Sample), Error>.relaying { output in
            let storage = SampleStorage<Value, Sample, Error>(output: output)
            let source = observe(Observer { event in storage.send { $0.sourceEvent(event) } })
            let samples = sampler.observe(Observer { event in storage.send { ($0.samplerEvent(event), nil) } })
            return CompositeDisposable([source, samples])
        }
    }

    /// A signal that sends the latest value of this signal each time `sampler` sends, as ReactiveSwift's
    /// `sample(on:)`. See `sample(with:)` for termination and threads.
    public func sample(on sampler: Signal<Void, Never>) -> Signal<Value, Error> {
        sample(with: sampler).map { value, _ in value }
    }
}

extension SignalProducer {
    /// A producer whose runs sample a run of this producer with a run of `sampler`. See
    /// `Signal.sample(with:)`. As in ReactiveSwift, this producer's start handler runs first, so its
    /// synchronous values are there to be sampled by the sampler's synchronous values. Disposing a run
    /// interrupts both inner runs.
    public func sample<Sample: Sendable>(with sampler: SignalProducer<Sample, Never>) -> SignalProducer<
        (Value, Sample), Error
    > {
        lift(startingBefore: sampler) { signal, samplerSignal in signal.sample(with: samplerSignal) }
    }

    /// A producer whose runs sample a run of this producer each time `sampler` sends. See
    /// `Signal.sample(on:)`.
    public func sample(on sampler: SignalProducer<Void, Never>) -> SignalProducer<Value, Error> {
        lift(startingBefore: sampler) { signal, samplerSignal in signal.sample(on: samplerSignal) }
    }

    /// A producer whose runs sample a run of this producer with `sampler`. See `Signal.sample(with:)`.
    public func sample<Sample: Sendable>(with sampler: Signal<Sample, Never>) -> SignalProducer<(Value, Sample), Error>
    {
        lift { $0.sample(with: sampler) }
    }

    /// A producer whose runs sample a run of this producer each time `sampler` sends. See
    /// `Signal.sample(on:)`.
    public func sample(on sampler: Signal<Void, Never>) -> SignalProducer<Value, Error> {
        lift { $0.sample(on: sampler) }
    }
}

/// The bookkeeping of one sampling. Pure: `SampleStorage` keeps it under a lock and sends what its
/// methods return.
struct SampleStateMachine<Value: Sendable, Sample: Sendable, Error: Swift.Error>: Sendable {
    /// What to send, if anything, and the latest value that a new one replaced, if any: the caller must
    /// release it after the lock (it is the user's).
    typealias Decision = (send: Event<(Value, Sample), Error>?, replaced: Value?)

    private var latest: Value?
    private var isSourceCompleted = false
    private var isSamplerCompleted = false
    private(set) var isTerminated = false

    init() {}

    /// An event of the sampled signal: what to send, and what to release after the lock.
    mutating func sourceEvent(_ event: Event<Value, Error>) -> Decision {
        guard !isTerminated else { return (nil, nil) }
        switch event {
        case let .value(value):
            var replaced: Value? = value
            swap(&latest, &replaced)
            return (nil, replaced)
        case .completed:
            isSourceCompleted = true
            return (completeIfBothCompleted(), nil)
        case let .failed(error):
            isTerminated = true
            return (.failed(error), nil)
        case .interrupted:
            isTerminated = true
            return (.interrupted, nil)
        }
    }

    /// An event of the sampler: what to send, if anything.
    mutating func samplerEvent(_ event: Event<Sample, Never>) -> Event<(Value, Sample), Error>? {
        guard !isTerminated else { return nil }
        switch event {
        case let .value(sample):
            return latest.map { .value(($0, sample)) }
        case .completed:
            isSamplerCompleted = true
            return completeIfBothCompleted()
        case .interrupted:
            isTerminated = true
            return .interrupted
        }
    }

    private mutating func completeIfBothCompleted() -> Event<(Value, Sample), Error>? {
        guard isSourceCompleted, isSamplerCompleted else { return nil }
        isTerminated = true
        return .completed
    }
}

/// One sampling: the machine decides under the lock; the decisions are sent in order, by one thread
/// at a time, with no lock held (the thread that finds nobody sending sends until the outbox is empty).
private final class SampleStorage<Value: Sendable, Sample: Sendable, Error: Swift.Error>: Sendable {
    typealias Machine = SampleStateMachine<Value, Sample, Error>

    private struct State: Sendable {
        var machine = Machine()
        var outbox = FIFOQueue<Event<(Value, Sample), Error>>()
        var isSending = false
    }

    private let state = Locked(State())
    private let output: Observer<(Value, Sample), Error>

    init(output: Observer<(Value, Sample), Error>) {
        self.output = output
    }

    /// Lets the machine decide with `decide`, then sends what is decided, unless another thread is, then
    /// releases the value the machine let go of, if any.
    func send(_ decide: (inout Machine) -> Machine.Decision) {
        let (mustSend, replaced) = state.withCriticalRegion { state -> (Bool, Value?) in
            let (event, replaced) = decide(&state.machine)
            guard let event else { return (false, replaced) }
            state.outbox.append(event)
            guard !state.isSending else { return (false, replaced) }
            state.isSending = true
            return (true, replaced)
        }
        defer { withExtendedLifetime(replaced) {} }  // released with no lock held, after the sends
        guard mustSend else { return }
        while let event = state.withCriticalRegion({ state -> Event<(Value, Sample), Error>? in
            if let event = state.outbox.removeFirst() { return event }
            state.isSending = false
            return nil
        }) {
            output.send(event)
        }
    }
}
