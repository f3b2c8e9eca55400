import Signals

/// One event a `TestRecorder` recorded, with the virtual time at which it arrived (`.zero` when the
/// recorder has no scheduler).
public struct RecordedEvent<Value: Sendable, Error: Swift.Error>: Sendable, CustomStringConvertible {
    /// The scheduler's `now` when the event arrived.
    public let time: Duration
    /// The event.
    public let event: Event<Value, Error>

    /// An event recorded at `time`.
    public init(_ event: Event<Value, Error>, at time: Duration = .zero) {
        self.time = time
        self.event = event
    }

    /// e.g. `value(3) @ 2.0 seconds`.
    public var description: String { "\(event) @ \(time)" }
}

extension RecordedEvent: Equatable where Value: Equatable, Error: Equatable {}

/// Records every event of a signal or of a producer run, in order, from any thread, like RxTest's
/// `TestableObserver`: assert the whole sequence afterwards.
///
/// ```swift
/// let scheduler = TestScheduler()
/// let recorder = TestRecorder(scheduler: scheduler)
/// producer.delay(.seconds(1), on: scheduler).start(recorder.observer)
/// scheduler.run()
/// #expect(recorder.timedEvents == [RecordedEvent(.value(1), at: .seconds(1)), RecordedEvent(.completed, at: .seconds(1))])
/// ```
///
/// With a `TestScheduler`, each event is stamped with the scheduler's `now` when it arrives. The
/// recorder is `Sendable`: its observer may be called on any thread, and reads are thread safe
/// snapshots.
public final class TestRecorder<Value: Sendable, Error: Swift.Error>: Sendable {
    private struct State {
        var recorded: [RecordedEvent<Value, Error>] = []
        var subscription: Disposable?
    }

    private let state = Locked(State())
    private let scheduler: TestScheduler?

    /// A recorder that stamps events with `scheduler`'s time, if given.
    public init(scheduler: TestScheduler? = nil) {
        self.scheduler = scheduler
    }

    /// A recorder observing `signal` from now on.
    public convenience init(_ signal: Signal<Value, Error>, scheduler: TestScheduler? = nil) {
        self.init(scheduler: scheduler)
        let subscription = signal.observe(observer)
        state.withCriticalRegion { $0.subscription = subscription }
    }

    /// A recorder of a new run of `producer`, started now.
    public convenience init(starting producer: SignalProducer<Value, Error>, scheduler: TestScheduler? = nil) {
        self.init(scheduler: scheduler)
        let subscription = producer.start(observer)
        state.withCriticalRegion { $0.subscription = subscription }
    }

    /// The observer that records into this recorder.
    public var observer: Observer<Value, Error> {
        Observer { [self] event in
            let time = scheduler?.now ?? .zero
            state.withCriticalRegion { $0.recorded.append(RecordedEvent(event, at: time)) }
        }
    }

    /// Every event recorded so far, in the order they arrived.
    public var events: [Event<Value, Error>] {
        state.withCriticalRegion { $0.recorded.map(\.event) }
    }

    /// Every event recorded so far, with the virtual time at which each arrived.
    public var timedEvents: [RecordedEvent<Value, Error>] {
        state.withCriticalRegion { $0.recorded }
    }

    /// The values among the recorded events, in order.
    public var values: [Value] {
        events.compactMap(\.value)
    }

    /// Whether a terminal event was recorded.
    public var isTerminated: Bool {
        state.withCriticalRegion { $0.recorded.last?.event.isTerminating ?? false }
    }

    /// Stops recording: detaches from the signal, or disposes (interrupts) the run, that the
    /// recorder was made with. Recording through `observer` elsewhere is not affected.
    public func dispose() {
        state.withCriticalRegion { $0.subscription }?.dispose()
    }
}
