import Signals
import Testing

// The behaviours of ReactiveSwift's FlattenSpec, written against our API. Each test names the spec case
// it follows.

private let strategies: [FlattenStrategy] = [.merge, .concat, .latest]

/// An outer stream of inner producers, each inner backed by a pipe whose input the test keeps.
private struct FlattenFixture: Sendable {
    let outer: Signal<SignalProducer<Int, TestError>, TestError>
    let outerInput: Observer<SignalProducer<Int, TestError>, TestError>

    init() {
        (outer, outerInput) = Signal<SignalProducer<Int, TestError>, TestError>.pipe()
    }

    /// A new inner producer that forwards what is sent into the returned input while it is started.
    static func inner() -> (producer: SignalProducer<Int, TestError>, input: Observer<Int, TestError>) {
        let (signal, input) = Signal<Int, TestError>.pipe()
        return (SignalProducer(signal), input)
    }
}

@Suite("Conformance: FlattenSpec")
struct FlattenConformanceTests {
    // MARK: Interruption

    @Test("FlattenSpec: should drop interrupted from an inner producer (producer)", arguments: strategies)
    func innerInterruptionIsDroppedFromProducer(strategy: FlattenStrategy) {
        let fixture = FlattenFixture()
        let (inner, innerInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer(fixture.outer).flatten(strategy).start(recorder.observer)
        fixture.outerInput.send(value: inner)
        innerInput.send(value: 1)
        innerInput.sendInterrupted()
        #expect(recorder.events == [.value(1)])

        fixture.outerInput.sendCompleted()
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test("FlattenSpec: should drop interrupted from an inner producer (signal)", arguments: strategies)
    func innerInterruptionIsDroppedFromSignal(strategy: FlattenStrategy) {
        let fixture = FlattenFixture()
        let (inner, innerInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        fixture.outer.flatMap(strategy) { $0 }.observe(recorder.observer)
        fixture.outerInput.send(value: inner)
        innerInput.sendInterrupted()
        #expect(recorder.events == [])

        fixture.outerInput.sendCompleted()
        #expect(recorder.events == [.completed])
    }

    @Test("FlattenSpec: should forward interrupted from the outer producer", arguments: strategies)
    func outerInterruptionIsForwarded(strategy: FlattenStrategy) {
        let fixture = FlattenFixture()
        let (inner, innerInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer(fixture.outer).flatten(strategy).start(recorder.observer)
        fixture.outerInput.send(value: inner)
        fixture.outerInput.sendInterrupted()
        innerInput.send(value: 1)
        #expect(recorder.events == [.interrupted])
    }

    @Test("FlattenSpec: an interrupted inner of a merge counts as ended; the result completes with the others")
    func mergeCountsInterruptedInnerAsEnded() {
        let fixture = FlattenFixture()
        let (first, firstInput) = FlattenFixture.inner()
        let (second, secondInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        fixture.outer.flatten(.merge).observe(recorder.observer)
        fixture.outerInput.send(value: first)
        fixture.outerInput.send(value: second)
        firstInput.sendInterrupted()
        secondInput.send(value: 2)
        fixture.outerInput.sendCompleted()
        #expect(recorder.events == [.value(2)])

        secondInput.sendCompleted()
        #expect(recorder.events == [.value(2), .completed])
    }

    @Test("FlattenSpec: an interrupted inner of a concat lets the next queued inner start, as a completion would")
    func concatStartsNextAfterInterruptedInner() {
        let fixture = FlattenFixture()
        let (first, firstInput) = FlattenFixture.inner()
        let (second, secondInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        fixture.outer.flatten(.concat).observe(recorder.observer)
        fixture.outerInput.send(value: first)
        fixture.outerInput.send(value: second)
        secondInput.send(value: 20)  // not started yet: missed
        firstInput.send(value: 1)
        firstInput.sendInterrupted()
        secondInput.send(value: 2)
        fixture.outerInput.sendCompleted()
        secondInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test("FlattenSpec: an interrupted inner of latest is dropped; the next inner is still taken")
    func latestTakesNextAfterInterruptedInner() {
        let fixture = FlattenFixture()
        let (first, firstInput) = FlattenFixture.inner()
        let (second, secondInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        fixture.outer.flatten(.latest).observe(recorder.observer)
        fixture.outerInput.send(value: first)
        firstInput.sendInterrupted()
        fixture.outerInput.send(value: second)
        secondInput.send(value: 2)
        secondInput.sendCompleted()
        fixture.outerInput.sendCompleted()
        #expect(recorder.events == [.value(2), .completed])
    }

    @Test(
        "FlattenSpec: an inner producer interrupted by disposal of its own run ends quietly, and the result goes on",
        arguments: strategies)
    func innerWhoseRunIsDisposedEndsQuietly(strategy: FlattenStrategy) {
        let fixture = FlattenFixture()
        let recorder = EventRecorder<Int, TestError>()
        // The inner producer disposes its own run: it is interrupted, which is not the result's concern.
        let selfDisposing = SignalProducer<Int, TestError> { observer, _ in
            observer.send(value: 1)
            observer.sendInterrupted()
        }
        fixture.outer.flatten(strategy).observe(recorder.observer)
        fixture.outerInput.send(value: selfDisposing)
        fixture.outerInput.send(value: SignalProducer(value: 2))
        fixture.outerInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    // MARK: merge and concat are flatten(.merge) and flatten(.concat) in ReactiveSwift

    @Test("FlattenSpec: Signal.merge should drop interrupted from an input, which counts as completed")
    func signalMergeDropsInterruption() {
        let (first, firstInput) = Signal<Int, TestError>.pipe()
        let (second, secondInput) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        Signal.merge(first, second).observe(recorder.observer)
        firstInput.send(value: 1)
        firstInput.sendInterrupted()
        secondInput.send(value: 2)
        #expect(recorder.events == [.value(1), .value(2)])
        secondInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test("FlattenSpec: SignalProducer.merge should drop interrupted from an inner producer, which counts as completed")
    func producerMergeDropsInterruption() {
        let (first, firstInput) = FlattenFixture.inner()
        let (second, secondInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer.merge(first, second).start(recorder.observer)
        firstInput.sendInterrupted()
        secondInput.send(value: 2)
        #expect(recorder.events == [.value(2)])
        secondInput.sendCompleted()
        #expect(recorder.events == [.value(2), .completed])
    }

    @Test("FlattenSpec: concat should drop interrupted from an inner producer and start the next one")
    func concatDropsInterruption() {
        let (first, firstInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        first.concat(SignalProducer(values: 2, 3)).start(recorder.observer)
        firstInput.send(value: 1)
        firstInput.sendInterrupted()
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])
    }

    @Test(
        "SignalProducerSpec: then should forward interrupted from the original producer and not start the replacement")
    func thenForwardsInterruption() {
        let (first, firstInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        first.then(SignalProducer(value: 2)).start(recorder.observer)
        firstInput.sendInterrupted()
        #expect(recorder.events == [.interrupted])
    }

    @Test("FlattenSpec: disposing a merge or concat run still interrupts it")
    func disposalInterrupts() {
        // The inputs are kept: a released input would interrupt its inner, which ends it like a completion.
        let (first, firstInput) = FlattenFixture.inner()
        let (second, secondInput) = FlattenFixture.inner()
        let merged = EventRecorder<Int, TestError>()
        let concatenated = EventRecorder<Int, TestError>()
        SignalProducer.merge(first, second).start(merged.observer).dispose()
        first.concat(second).start(concatenated.observer).dispose()
        #expect(merged.events == [.interrupted])
        #expect(concatenated.events == [.interrupted])
        withExtendedLifetime((firstInput, secondInput)) {}
    }

    // MARK: Each strategy's basics

    @Test("FlattenSpec: merge should forward values from any inner signal and complete when all have completed")
    func mergeBasics() {
        let fixture = FlattenFixture()
        let (first, firstInput) = FlattenFixture.inner()
        let (second, secondInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        fixture.outer.flatten(.merge).observe(recorder.observer)
        fixture.outerInput.send(value: first)
        fixture.outerInput.send(value: second)
        firstInput.send(value: 1)
        secondInput.send(value: 2)
        firstInput.send(value: 3)
        fixture.outerInput.sendCompleted()
        firstInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .value(3)])
        secondInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .value(3), .completed])
    }

    @Test(
        "FlattenSpec: concat should forward values in the order of the inners, starting each when the previous completes"
    )
    func concatBasics() {
        let fixture = FlattenFixture()
        let started = TestLog<Int>()
        let (first, firstInput) = FlattenFixture.inner()
        let (second, secondInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        fixture.outer.flatten(.concat).observe(recorder.observer)
        fixture.outerInput.send(value: first.on(starting: { started.append(1) }))
        fixture.outerInput.send(value: second.on(starting: { started.append(2) }))
        #expect(started.entries == [1])
        firstInput.send(value: 1)
        firstInput.sendCompleted()
        #expect(started.entries == [1, 2])
        secondInput.send(value: 2)
        secondInput.sendCompleted()
        fixture.outerInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .completed])
    }

    @Test("FlattenSpec: latest should forward values from the latest inner only, disposing the previous one first")
    func latestBasics() {
        let fixture = FlattenFixture()
        let log = TestLog<String>()
        let (first, firstInput) = FlattenFixture.inner()
        let (second, secondInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        fixture.outer.flatten(.latest).observe(recorder.observer)
        fixture.outerInput.send(value: first.on(starting: { log.append("start 1") }, disposed: { log.append("end 1") }))
        firstInput.send(value: 1)
        fixture.outerInput.send(value: second.on(starting: { log.append("start 2") }))
        firstInput.send(value: 10)
        secondInput.send(value: 2)
        fixture.outerInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2)])
        secondInput.sendCompleted()
        #expect(recorder.events == [.value(1), .value(2), .completed])
        #expect(log.entries == ["start 1", "end 1", "start 2"])
    }

    @Test("FlattenSpec: should forward an error from an inner producer or from the outer stream", arguments: strategies)
    func failures(strategy: FlattenStrategy) {
        let fixture = FlattenFixture()
        let (inner, innerInput) = FlattenFixture.inner()
        let recorder = EventRecorder<Int, TestError>()
        fixture.outer.flatten(strategy).observe(recorder.observer)
        fixture.outerInput.send(value: inner)
        innerInput.send(error: .boom)
        fixture.outerInput.send(error: .other)
        #expect(recorder.events == [.failed(.boom)])

        let outerFixture = FlattenFixture()
        let outerRecorder = EventRecorder<Int, TestError>()
        outerFixture.outer.flatten(strategy).observe(outerRecorder.observer)
        outerFixture.outerInput.send(error: .other)
        #expect(outerRecorder.events == [.failed(.other)])
    }

    @Test(
        "FlattenSpec: flatMap should transform each value into an inner producer, and flatten synchronous inners in order",
        arguments: strategies)
    func flatMapSynchronous(strategy: FlattenStrategy) {
        let recorder = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(values: 1, 2, 3)
            .flatMap(strategy) { SignalProducer(values: $0 * 10, $0 * 10 + 1) }
            .start(recorder.observer)
        #expect(
            recorder.events == [.value(10), .value(11), .value(20), .value(21), .value(30), .value(31), .completed])
    }
}
