import Dispatch
import Foundation
import Signals
import Testing

private enum TimeOperatorError: Swift.Error, Equatable {
    case boom
}

/// An event and the virtual time at which an observer heard it.
private struct Timed<Value: Equatable & Sendable>: Equatable, Sendable, CustomStringConvertible {
    let time: Duration
    let event: Event<Value, TimeOperatorError>

    init(_ time: Duration, _ event: Event<Value, TimeOperatorError>) {
        self.time = time
        self.event = event
    }

    var description: String { "\(event)@\(time)" }
}

@Suite("Time operators: delay, timer, observe(on:), start(on:)")
struct TimeOperatorTests {
    // MARK: delay

    @Test("delay sends each value and the completion interval later, in order")
    func delayShiftsValuesAndCompletion() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TimeOperatorError>.pipe()
        let log = TestLog<Timed<Int>>()
        signal.delay(.seconds(2), on: scheduler).observe { log.append(Timed(scheduler.now, $0)) }

        input.send(value: 1)
        scheduler.advance(by: .seconds(1))
        input.send(value: 2)
        input.send(value: 3)
        scheduler.advance(by: .milliseconds(500))
        input.sendCompleted()
        #expect(log.entries == [])

        scheduler.advance(by: .milliseconds(1000))
        #expect(log.entries == [Timed(.seconds(2), .value(1))])

        scheduler.run()
        #expect(
            log.entries == [
                Timed(.seconds(2), .value(1)),
                Timed(.seconds(3), .value(2)),
                Timed(.seconds(3), .value(3)),
                Timed(.milliseconds(3500), .completed),
            ])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("delay forwards a failure through the scheduler without delay and drops the values still waiting")
    func delayForwardsFailureWithoutDelay() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TimeOperatorError>.pipe()
        let log = TestLog<Timed<Int>>()
        signal.delay(.seconds(2), on: scheduler).observe { log.append(Timed(scheduler.now, $0)) }

        input.send(value: 1)
        scheduler.advance(by: .seconds(1))
        input.send(value: 2)
        input.send(error: .boom)

        // Through the scheduler, as in ReactiveSwift: not on the sending thread, and not delayed.
        #expect(log.entries == [])
        #expect(scheduler.pendingActionCount == 1)
        scheduler.advance()
        #expect(log.entries == [Timed(.seconds(1), .failed(.boom))])
        #expect(scheduler.pendingActionCount == 0)
        scheduler.run()
        #expect(log.entries == [Timed(.seconds(1), .failed(.boom))])
    }

    @Test("delay forwards an interruption through the scheduler without delay")
    func delayForwardsInterruptionWithoutDelay() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TimeOperatorError>.pipe()
        let log = TestLog<Timed<Int>>()
        signal.delay(.seconds(2), on: scheduler).observe { log.append(Timed(scheduler.now, $0)) }

        input.send(value: 1)
        input.sendInterrupted()
        #expect(log.entries == [])
        scheduler.advance(by: .seconds(5))
        #expect(log.entries == [Timed(.zero, .interrupted)])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("disposing a delayed run cancels its scheduled work even when the upstream has already ended")
    func delayedRunDisposalCancelsAfterUpstreamEnded() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        let run = SignalProducer<Int, Never>(value: 1).delay(.seconds(3), on: scheduler).start(recorder.observer)
        #expect(scheduler.pendingActionCount == 2)
        run.dispose()
        #expect(scheduler.pendingActionCount == 0)
        scheduler.run()
        #expect(recorder.events == [.interrupted])
    }

    @Test("disposing an observe(on:) run cancels the events still waiting even when the upstream has already ended")
    func observeOnRunDisposalCancelsAfterUpstreamEnded() {
        let scheduler = TestScheduler()
        let recorder = EventRecorder<Int, Never>()
        let run = SignalProducer<Int, Never>(values: 1, 2).observe(on: scheduler).start(recorder.observer)
        #expect(scheduler.pendingActionCount == 3)
        run.dispose()
        #expect(scheduler.pendingActionCount == 0)
        scheduler.run()
        #expect(recorder.events == [.interrupted])
    }

    @Test("a derived delay signal that nobody holds or observes any more cancels what it scheduled")
    func unheardDelaySignalCancels() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, Never>.pipe()
        let disposable = signal.delay(.seconds(1), on: scheduler).observeValues { _ in }
        input.send(value: 1)
        input.send(value: 2)
        #expect(scheduler.pendingActionCount == 2)
        disposable.dispose()
        #expect(scheduler.pendingActionCount == 0)
        #expect(signal.observerCount == 0)
    }

    @Test("a cancelled delay on a queue scheduler no longer holds the delayed value or the work")
    func queueSchedulerDelayReleasesOnDisposal() {
        final class Payload: Sendable {}
        let scheduler = QueueScheduler(label: "test.delay.release")
        weak var weakPayload: Payload?
        let run: Disposable
        do {
            let payload = Payload()
            weakPayload = payload
            run = SignalProducer<Payload, Never>(value: payload).delay(.seconds(300), on: scheduler).start()
        }
        #expect(weakPayload != nil)
        run.dispose()
        #expect(weakPayload == nil)
    }

    @Test("a cancelled action on a queue scheduler releases what it captured at once")
    func queueSchedulerActionReleasedOnDisposal() {
        final class Payload: Sendable {}
        let scheduler = QueueScheduler(label: "test.schedule.release")
        let gate = DispatchSemaphore(value: 0)
        scheduler.schedule { gate.wait() }  // keeps the queue busy so the next action waits
        weak var weakPayload: Payload?
        let disposable: Disposable?
        do {
            let payload = Payload()
            weakPayload = payload
            disposable = scheduler.schedule { withExtendedLifetime(payload) {} }
        }
        #expect(weakPayload != nil)
        disposable?.dispose()
        #expect(weakPayload == nil)
        gate.signal()
    }

    @Test("a delayed producer sends its values later, and disposing it interrupts at once and cancels the rest")
    func delayedProducer() {
        let scheduler = TestScheduler()
        let producer = SignalProducer<Int, TimeOperatorError>(values: 1, 2, 3).delay(.seconds(1), on: scheduler)

        let completeRun = TestLog<Timed<Int>>()
        producer.start { completeRun.append(Timed(scheduler.now, $0)) }
        scheduler.run()
        #expect(
            completeRun.entries == [
                Timed(.seconds(1), .value(1)), Timed(.seconds(1), .value(2)), Timed(.seconds(1), .value(3)),
                Timed(.seconds(1), .completed),
            ])

        let disposedRun = TestLog<Timed<Int>>()
        let (signal, input) = Signal<Int, TimeOperatorError>.pipe()
        let disposable = SignalProducer(signal).delay(.seconds(1), on: scheduler)
            .start { disposedRun.append(Timed(scheduler.now, $0)) }
        input.send(value: 10)
        scheduler.advance(by: .seconds(1))
        input.send(value: 11)
        scheduler.advance(by: .milliseconds(500))
        disposable.dispose()
        #expect(scheduler.pendingActionCount == 0)
        scheduler.advance(by: .seconds(5))
        #expect(disposedRun.entries == [Timed(.seconds(2), .value(10)), Timed(.milliseconds(2500), .interrupted)])
    }

    @Test("delay on a queue scheduler keeps the order of many values")
    func delayOnQueueSchedulerKeepsOrder() {
        let scheduler = QueueScheduler(label: "test.delay.order")
        let (signal, input) = Signal<Int, TimeOperatorError>.pipe()
        let log = TestLog<Event<Int, TimeOperatorError>>()
        let done = DispatchSemaphore(value: 0)
        signal.delay(.milliseconds(10), on: scheduler).observe { event in
            log.append(event)
            if event.isTerminating { done.signal() }
        }

        for value in 0..<200 { input.send(value: value) }
        input.sendCompleted()

        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(log.entries == (0..<200).map { .value($0) } + [.completed])
    }

    // MARK: timer

    @Test("timer sends the scheduler's time every interval until disposed, and never completes")
    func timerTicks() {
        let scheduler = TestScheduler()
        scheduler.advance(to: .seconds(10))
        let log = TestLog<Timed<Duration>>()
        let timer = SignalProducer.timer(interval: .seconds(1), on: scheduler)
            .start { event in log.append(Timed(scheduler.now, event.mapError { never -> TimeOperatorError in })) }

        scheduler.advance(by: .milliseconds(3500))
        #expect(
            log.entries == [
                Timed(.seconds(11), .value(.seconds(11))),
                Timed(.seconds(12), .value(.seconds(12))),
                Timed(.seconds(13), .value(.seconds(13))),
            ])

        timer.dispose()
        #expect(scheduler.pendingActionCount == 0)
        scheduler.advance(by: .seconds(10))
        #expect(
            log.entries == [
                Timed(.seconds(11), .value(.seconds(11))),
                Timed(.seconds(12), .value(.seconds(12))),
                Timed(.seconds(13), .value(.seconds(13))),
                Timed(.milliseconds(13500), .interrupted),
            ])
    }

    @Test("each start of a timer runs its own clock from its start")
    func timerRunsAreIndependent() {
        let scheduler = TestScheduler()
        let timer = SignalProducer.timer(interval: .seconds(2), on: scheduler)
        let first = TestLog<Duration>()
        let second = TestLog<Duration>()
        let firstRun = timer.startWithValues { first.append($0) }
        scheduler.advance(by: .seconds(1))
        let secondRun = timer.startWithValues { second.append($0) }

        scheduler.advance(by: .seconds(5))
        firstRun.dispose()
        secondRun.dispose()

        #expect(first.entries == [.seconds(2), .seconds(4), .seconds(6)])
        #expect(second.entries == [.seconds(3), .seconds(5)])
        #expect(scheduler.pendingActionCount == 0)
    }

    // MARK: observe(on:)

    @Test("observe(on:) delivers every event through the scheduler, in order")
    func observeOnKeepsOrder() {
        let scheduler = TestScheduler()
        let (signal, input) = Signal<Int, TimeOperatorError>.pipe()
        let log = TestLog<Timed<Int>>()
        signal.observe(on: scheduler).observe { log.append(Timed(scheduler.now, $0)) }

        input.send(value: 1)
        input.send(value: 2)
        #expect(log.entries == [])
        scheduler.advance(by: .seconds(1))
        input.send(value: 3)
        input.send(error: .boom)
        #expect(log.entries == [Timed(.zero, .value(1)), Timed(.zero, .value(2))])

        scheduler.advance()
        #expect(
            log.entries == [
                Timed(.zero, .value(1)), Timed(.zero, .value(2)),
                Timed(.seconds(1), .value(3)), Timed(.seconds(1), .failed(.boom)),
            ])
    }

    @Test("observe(on:) with a queue scheduler delivers on the queue, in order, sends from many threads included")
    func observeOnQueue() {
        let scheduler = QueueScheduler(label: "test.observeOn")
        let key = DispatchSpecificKey<Bool>()
        scheduler.queue.setSpecific(key: key, value: true)
        let (signal, input) = Signal<Int, Never>.pipe()
        let values = TestLog<Int>()
        let onQueue = TestLog<Bool>()
        let done = DispatchSemaphore(value: 0)
        signal.observe(on: scheduler).observe { event in
            onQueue.append(DispatchQueue.getSpecific(key: key) == true)
            if let value = event.value { values.append(value) }
            if event.isTerminating { done.signal() }
        }

        let threads = 4
        let perThread = 500
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread { input.send(value: thread * perThread + index) }
        }
        input.sendCompleted()

        #expect(done.wait(timeout: .now() + 10) == .success)
        let received = values.entries
        #expect(received.count == threads * perThread)
        for thread in 0..<threads {
            let range = (thread * perThread)..<((thread + 1) * perThread)
            #expect(received.filter { range.contains($0) } == Array(range))
        }
        #expect(onQueue.entries == Array(repeating: true, count: threads * perThread + 1))
    }

    @Test("a producer's observe(on:) delivers through the scheduler; disposing interrupts at once")
    func producerObserveOn() {
        let scheduler = TestScheduler()
        let log = TestLog<Timed<Int>>()
        SignalProducer<Int, TimeOperatorError>(values: 1, 2).observe(on: scheduler)
            .start { log.append(Timed(scheduler.now, $0)) }
        #expect(log.entries == [])
        scheduler.advance(by: .seconds(1))
        #expect(log.entries == [Timed(.zero, .value(1)), Timed(.zero, .value(2)), Timed(.zero, .completed)])

        let disposedLog = TestLog<Timed<Int>>()
        let disposable = SignalProducer<Int, TimeOperatorError>(values: 3, 4).observe(on: scheduler)
            .start { disposedLog.append(Timed(scheduler.now, $0)) }
        disposable.dispose()
        scheduler.run()
        #expect(disposedLog.entries == [Timed(.seconds(1), .interrupted)])
    }

    @Test("observe(on: ImmediateScheduler()) delivers synchronously on the sending thread")
    func observeOnImmediate() {
        let (signal, input) = Signal<Int, TimeOperatorError>.pipe()
        let log = TestLog<Event<Int, TimeOperatorError>>()
        signal.observe(on: ImmediateScheduler()).observe { log.append($0) }

        input.send(value: 1)
        #expect(log.entries == [.value(1)])
        input.sendCompleted()
        #expect(log.entries == [.value(1), .completed])
        #expect(ImmediateScheduler().schedule {} == nil)
    }

    // MARK: start(on:)

    @Test("start(on:) runs the start handler from the scheduler, not on start")
    func startOnRunsHandlerOnScheduler() {
        let scheduler = TestScheduler()
        let starts = TestLog<Duration>()
        let log = TestLog<Timed<Int>>()
        let producer = SignalProducer<Int, TimeOperatorError> { observer, _ in
            starts.append(scheduler.now)
            observer.send(value: 1)
            observer.sendCompleted()
        }

        scheduler.advance(to: .seconds(1))
        producer.start(on: scheduler).start { log.append(Timed(scheduler.now, $0)) }
        #expect(starts.entries == [])
        #expect(log.entries == [])

        scheduler.advance(by: .seconds(1))
        #expect(starts.entries == [.seconds(1)])
        #expect(log.entries == [Timed(.seconds(1), .value(1)), Timed(.seconds(1), .completed)])
    }

    @Test("disposing a start(on:) run before the scheduler runs it cancels the start and interrupts at once")
    func startOnIsCancellable() {
        let scheduler = TestScheduler()
        let starts = TestLog<Duration>()
        let log = TestLog<Timed<Int>>()
        let producer = SignalProducer<Int, TimeOperatorError> { observer, _ in
            starts.append(scheduler.now)
            observer.send(value: 1)
        }

        let disposable = producer.start(on: scheduler).start { log.append(Timed(scheduler.now, $0)) }
        #expect(scheduler.pendingActionCount == 1)
        disposable.dispose()
        #expect(scheduler.pendingActionCount == 0)
        scheduler.run()

        #expect(starts.entries == [])
        #expect(log.entries == [Timed(.zero, .interrupted)])
    }

    @Test("disposing a started start(on:) run interrupts the inner run and ends its lifetime")
    func startOnDisposalAfterStart() {
        let scheduler = TestScheduler()
        let ended = TestLog<Duration>()
        let log = TestLog<Timed<Int>>()
        let producer = SignalProducer<Int, TimeOperatorError> { observer, lifetime in
            observer.send(value: 1)
            // Keeps its observer until it ends, as a long-running start handler would.
            lifetime.observeEnded {
                ended.append(scheduler.now)
                withExtendedLifetime(observer) {}
            }
        }

        let disposable = producer.start(on: scheduler).start { log.append(Timed(scheduler.now, $0)) }
        scheduler.advance(by: .seconds(1))
        scheduler.advance(by: .seconds(1))
        disposable.dispose()

        #expect(log.entries == [Timed(.zero, .value(1)), Timed(.seconds(2), .interrupted)])
        #expect(ended.entries == [.seconds(2)])
    }

    @Test("start(on:) with a queue scheduler runs the start handler on the queue")
    func startOnQueue() {
        let scheduler = QueueScheduler(label: "test.startOn")
        let key = DispatchSpecificKey<Bool>()
        scheduler.queue.setSpecific(key: key, value: true)
        let handlerOnQueue = TestLog<Bool>()
        let log = TestLog<Event<Int, TimeOperatorError>>()
        let done = DispatchSemaphore(value: 0)
        let producer = SignalProducer<Int, TimeOperatorError> { observer, _ in
            handlerOnQueue.append(DispatchQueue.getSpecific(key: key) == true)
            observer.send(value: 7)
            observer.sendCompleted()
        }

        producer.start(on: scheduler).start { event in
            log.append(event)
            if event.isTerminating { done.signal() }
        }

        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(handlerOnQueue.entries == [true])
        #expect(log.entries == [.value(7), .completed])
    }
}
