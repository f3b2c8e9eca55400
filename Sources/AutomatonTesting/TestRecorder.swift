import Signals
import Testing

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
/// Or assert it as `AutomatonTester` does, with the recorder's own assertions (when `Value` and
/// `Error` are `Equatable`): `expect(_:_:sourceLocation:)` checks exactly the events recorded since
/// the last assertion, `expect(timed:_:sourceLocation:)` the same with their times, and
/// `expectNothingMore(sourceLocation:)` that none came since. A failure is a Swift Testing issue at
/// the caller's line, with a line-by-line comparison; each assertion also returns a `Bool`.
///
/// With a `TestScheduler`, each event is stamped with the scheduler's `now` when it arrives. The
/// recorder is `Sendable`: its observer may be called on any thread, and reads are thread safe
/// snapshots.
public final class TestRecorder<Value: Sendable, Error: Swift.Error>: Sendable {
    private struct State {
        var recorded: [RecordedEvent<Value, Error>] = []
        /// How many of `recorded` an assertion has covered: the next one checks those after them.
        var asserted = 0
        var failures: [String] = []
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

    /// Every failure an assertion of this recorder reported so far, as text.
    public var failures: [String] {
        state.withCriticalRegion { $0.failures }
    }

    /// The events recorded since the last assertion, which the next one checks; from now on, none.
    private func takeUnasserted() -> [RecordedEvent<Value, Error>] {
        state.withCriticalRegion { state in
            defer { state.asserted = state.recorded.count }
            return Array(state.recorded[state.asserted...])
        }
    }

    /// Records `message` as a failure and as a Swift Testing issue at `sourceLocation`.
    private func fail(_ message: String, at sourceLocation: SourceLocation) {
        state.withCriticalRegion { $0.failures.append(message) }
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    }
}

extension TestRecorder where Value: Equatable, Error: Equatable {
    /// Asserts that exactly `expected` was recorded since the last assertion of this recorder (since
    /// it was made, for the first), in this order, and starts afresh; the times are not compared (see
    /// `expect(timed:_:sourceLocation:)`). `events` and `timedEvents` still list everything.
    ///
    /// Call it from one thread at a time, once the events it expects have arrived (with a
    /// `TestScheduler`, after advancing it): an event that arrives later is checked by the next
    /// assertion.
    ///
    /// ```swift
    /// recorder.expect([.value(1), .value(2)])
    /// scheduler.run()
    /// recorder.expect([.value(3), .completed])
    /// ```
    ///
    /// - Returns: whether it held. A failure is recorded as a Swift Testing issue at `sourceLocation`,
    ///   with a line-by-line comparison (`−` expected but missing, `+` recorded but not expected), and
    ///   added to `failures`.
    @discardableResult
    public func expect(
        _ expected: [Event<Value, Error>],
        _ comment: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        check(takeUnasserted().map(\.event), against: expected, comment, sourceLocation)
    }

    /// Asserts that exactly `expected` was recorded since the last assertion of this recorder, in this
    /// order and each at its virtual time, and starts afresh; otherwise as `expect(_:_:sourceLocation:)`.
    ///
    /// - Returns: whether it held. A failure is recorded as a Swift Testing issue at `sourceLocation`.
    @discardableResult
    public func expect(
        timed expected: [RecordedEvent<Value, Error>],
        _ comment: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        check(takeUnasserted(), against: expected, comment, sourceLocation)
    }

    /// Whether `actual` is `expected`; if not, records the line-by-line difference as a failure.
    private func check<Element: Equatable & CustomStringConvertible>(
        _ actual: [Element], against expected: [Element], _ comment: String?, _ sourceLocation: SourceLocation
    ) -> Bool {
        guard actual != expected else { return true }
        fail(
            lineDifference(
                expected: expected, actual: actual, header: comment ?? "the stream sent something else than expected",
                describe: \.description),
            at: sourceLocation)
        return false
    }

    /// Asserts that nothing was recorded since the last assertion of this recorder: `expect([])`,
    /// with a message that says so.
    ///
    /// - Returns: whether it held. A failure is recorded as a Swift Testing issue at `sourceLocation`.
    @discardableResult
    public func expectNothingMore(sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        expect([], "the stream sent events after the last expectation", sourceLocation: sourceLocation)
    }
}
