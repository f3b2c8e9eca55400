import Signals
import Testing

// The behaviours of ReactiveSwift's SignalProducerLiftingSpec, written against our API: each signal
// operator, lifted onto producers. Each test names the spec case it follows.

/// A producer whose runs keep their observer and log "start" and "ended".
private final class Upstream: Sendable {
    let log = TestLog<String>()
    private let input = LockedTestValue<Observer<Int, TestError>?>(nil)

    var producer: SignalProducer<Int, TestError> {
        SignalProducer { [log, input] observer, lifetime in
            log.append("start")
            input.withValue { $0 = observer }
            lifetime.observeEnded { log.append("ended") }
        }
    }

    func send(_ values: Int...) {
        for value in values { input.value?.send(value: value) }
    }

    func send(_ event: Event<Int, TestError>) {
        input.value?.send(event)
    }
}

@Suite("Conformance: SignalProducerLiftingSpec")
struct SignalProducerLiftingConformanceTests {
    @Test("SignalProducerLiftingSpec: lift should invoke the transformation once per started signal")
    func liftOncePerStart() {
        let count = LockedTestValue(0)
        let producer = SignalProducer<Int, TestError>(values: 1, 2).lift { signal in
            count.withValue { $0 += 1 }
            return signal.map { $0 * 10 }
        }
        #expect(count.value == 0)
        let recorder = EventRecorder<Int, TestError>()
        producer.start(recorder.observer)
        producer.start(recorder.observer)
        #expect(count.value == 2)
        #expect(recorder.events == [.value(10), .value(20), .completed, .value(10), .value(20), .completed])
    }

    @Test("SignalProducerLiftingSpec: lift should not miss any events sent synchronously by the start handler")
    func liftMissesNothing() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(values: 1, 2, 3).lift { $0.filter { $0 != 2 } }.start(recorder.observer)
        #expect(recorder.events == [.value(1), .value(3), .completed])
    }

    @Test("SignalProducerLiftingSpec: disposing a lifted run interrupts it and disposes the upstream run")
    func liftDisposal() {
        let upstream = Upstream()
        let recorder = EventRecorder<Int, TestError>()
        let disposable = upstream.producer.map { $0 + 1 }.filter { $0 > 0 }.start(recorder.observer)
        upstream.send(1)
        disposable.dispose()
        upstream.send(2)
        #expect(recorder.events == [.value(2), .interrupted])
        #expect(upstream.log.entries == ["start", "ended"])
    }

    @Test("SignalProducerLiftingSpec: map should transform the values of the producer, per run")
    func map() {
        let recorder = EventRecorder<String, TestError>()
        SignalProducer<Int, TestError>(values: 1, 2).map { "\($0)" }.start(recorder.observer)
        #expect(recorder.events == [.value("1"), .value("2"), .completed])
    }

    @Test("SignalProducerLiftingSpec: mapError should transform the errors of the producer")
    func mapError() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(error: .boom).mapError { _ in TestError.other }.start(recorder.observer)
        #expect(recorder.events == [.failed(.other)])
    }

    @Test("SignalProducerLiftingSpec: filter should omit values from the producer")
    func filter() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(values: 1, 2, 3, 4).filter { $0.isMultiple(of: 2) }.start(recorder.observer)
        #expect(recorder.events == [.value(2), .value(4), .completed])
    }

    @Test("SignalProducerLiftingSpec: compactMap should forward only values that aren't nil")
    func compactMap() {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int?, TestError>(values: 1, nil, 3).compactMap { $0 }.start(recorder.observer)
        #expect(recorder.events == [.value(1), .value(3), .completed])
    }

    @Test("SignalProducerLiftingSpec: skipRepeats should skip duplicate values, afresh on each run")
    func skipRepeats() {
        let recorder = EventRecorder<Int, TestError>()
        let producer = SignalProducer<Int, TestError>(values: 1, 1, 2, 1).skipRepeats()
        producer.start(recorder.observer)
        producer.start(recorder.observer)
        #expect(recorder.values == [1, 2, 1, 1, 2, 1])
    }

    @Test("SignalProducerLiftingSpec: scan should incrementally accumulate a value, afresh on each run")
    func scan() {
        let recorder = EventRecorder<Int, TestError>()
        let producer = SignalProducer<Int, TestError>(values: 1, 2, 3).scan(0, +)
        producer.start(recorder.observer)
        producer.start(recorder.observer)
        #expect(recorder.values == [1, 3, 6, 1, 3, 6])
    }

    @Test("SignalProducerLiftingSpec: take should take initial values and complete immediately after taking them")
    func take() {
        let upstream = Upstream()
        let recorder = EventRecorder<Int, TestError>()
        upstream.producer.take(first: 2).start(recorder.observer)
        upstream.send(1)
        #expect(recorder.events == [.value(1)])
        upstream.send(2)
        #expect(recorder.events == [.value(1), .value(2), .completed])
        #expect(upstream.log.entries == ["start", "ended"], "the upstream run is disposed once taken")
    }

    @Test(
        "SignalProducerLiftingSpec: take should interrupt when 0 (difference: ours completes without starting upstream)"
    )
    func takeZero() {
        let upstream = Upstream()
        let recorder = EventRecorder<Int, TestError>()
        upstream.producer.take(first: 0).start(recorder.observer)
        #expect(recorder.events == [.completed])
        #expect(upstream.log.entries == [])
    }

    @Test("SignalProducerLiftingSpec: observeOn should send events on the given scheduler")
    func observeOn() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(values: 1, 2).observe(on: scheduler).start(recorder.observer)
        #expect(recorder.events == [])
        scheduler.run()
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test(
        "SignalProducerLiftingSpec: observeOn should interrupt at once when disposed, and ignore the events still scheduled"
    )
    func observeOnDisposal() {
        let scheduler = TestScheduler()
        let upstream = Upstream()
        let recorder = EventRecorder<Int, TestError>()
        let disposable = upstream.producer.observe(on: scheduler).start(recorder.observer)
        upstream.send(1)
        disposable.dispose()
        #expect(recorder.events == [.interrupted])
        scheduler.run()
        #expect(recorder.events == [.interrupted])
        #expect(upstream.log.entries == ["start", "ended"])
    }

    @Test("SignalProducerLiftingSpec: delay should send events on the given scheduler after the interval")
    func delay() {
        let scheduler = TestScheduler()
        let upstream = Upstream()
        let recorder = EventRecorder<Int, TestError>()
        upstream.producer.delay(.seconds(10), on: scheduler).start(recorder.observer)
        upstream.send(1)
        scheduler.advance(by: .seconds(5))
        upstream.send(2)
        upstream.send(.completed)
        scheduler.advance(by: .seconds(5))
        #expect(recorder.events == [.value(1)])
        scheduler.advance(by: .seconds(5))
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test("SignalProducerLiftingSpec: on(value:) and logEvents on a producer run their hooks per run")
    func onAndLogEvents() {
        let lines = TestLog<String>()
        let producer = SignalProducer<Int, TestError>(value: 1)
            .logEvents(identifier: "p", events: [.value, .completed], logger: lines.append)
        producer.start()
        producer.start()
        let suffixes = lines.entries.map { $0.split(separator: "] ", maxSplits: 1).last.map(String.init) ?? "" }
        #expect(suffixes == ["[p] value(1)", "[p] completed", "[p] value(1)", "[p] completed"])
    }
}
