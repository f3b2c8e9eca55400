import Dispatch
import Foundation
import Signals
import Testing

/// A producer that counts its starts and, on each, sends the start's number and then fails, until
/// start `succeedingAt` (if any), which sends its number and completes.
private func countingFailures(_ starts: LockedTestValue<Int>, succeedingAt: Int? = nil) -> SignalProducer<
    Int, TestError
> {
    SignalProducer { observer, _ in
        let start = starts.withValue { count -> Int in
            count += 1
            return count
        }
        observer.send(value: start)
        if start == succeedingAt {
            observer.sendCompleted()
        } else {
            observer.send(error: .boom)
        }
    }
}

@Suite("promoteError, flatMapError, replaceError, materialize, retry and the catching async bridge")
struct ErrorOperatorTests {
    // MARK: promoteError, replaceError

    @Test("promoteError changes only the error type; values and terminal events pass through")
    func promoteError() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.promoteError(TestError.self).observe(recorder.observer)
        input.send(value: 1)
        input.sendInterrupted()
        #expect(recorder.events == [.value(1), .interrupted])

        let produced = EventRecorder<Int, TestError>()
        SignalProducer<Int, Never>(values: 1, 2).promoteError().start(produced.observer)
        #expect(produced.events == [.value(1), .value(2), .completed])
    }

    @Test("replaceError sends the value and completes instead of failing; other terminals pass through")
    func replaceError() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.replaceError(with: 0).observe(recorder.observer)
        input.send(value: 1)
        input.send(error: .boom)
        #expect(recorder.events == [.value(1), .value(0), .completed])

        let interrupted = EventRecorder<Int, Never>()
        let source = OperatorTestControlledProducer<Int>()
        let run = source.producer.replaceError(with: 0).start(interrupted.observer)
        run.dispose()
        #expect(interrupted.events == [.interrupted])
        #expect(source.hasEnded())
    }

    // MARK: flatMapError

    @Test("Signal.flatMapError forwards values, then the replacement's events instead of the failure")
    func signalFlatMapError() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.flatMapError { _ in SignalProducer<Int, Never>(values: 8, 9) }.observe(recorder.observer)
        input.send(value: 1)
        input.send(error: .boom)
        input.send(value: 2)
        #expect(recorder.events == [.value(1), .value(8), .value(9), .completed])

        for terminal in [Event<Int, TestError>.completed, .interrupted] {
            let (other, otherInput) = Signal<Int, TestError>.pipe()
            let forwarded = EventRecorder<Int, TestError>()
            other.flatMapError { _ in SignalProducer<Int, TestError>(value: 0) }.observe(forwarded.observer)
            otherInput.send(terminal)
            #expect(forwarded.events == [terminal])
        }
    }

    @Test("Producer flatMapError: the replacement's failure is forwarded; disposal interrupts the replacement")
    func producerFlatMapError() {
        let failed = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError>(error: .boom)
            .flatMapError { error in SignalProducer(error: error == .boom ? .other : .boom) }
            .start(failed.observer)
        #expect(failed.events == [.failed(.other)])

        let replacement = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        let run = SignalProducer<Int, TestError>(error: .boom)
            .flatMapError { _ in replacement.producer }
            .start(recorder.observer)
        replacement.input().send(value: 5)
        #expect(!replacement.hasEnded())
        run.dispose()
        #expect(replacement.hasEnded(), "disposing the run interrupts the running replacement")
        replacement.input().send(value: 6)
        #expect(recorder.events == [.value(5), .interrupted])

        let source = OperatorTestControlledProducer<Int>()
        let beforeFailure = source.producer.flatMapError { _ in SignalProducer<Int, TestError>(value: 0) }.start()
        beforeFailure.dispose()
        #expect(source.hasEnded())
    }

    @Test("An observer of flatMapError's result that sends into the source is queued, in order")
    func flatMapErrorReentrancy() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let probe = InFlightProbe()
        let recorder = EventRecorder<Int, Never>()
        let result = signal.flatMapError { _ in SignalProducer<Int, Never>(value: 100) }
        result.observeValues { value in
            probe.run {
                if value < 3 { input.send(value: value + 1) }
                if value == 3 { input.send(error: .boom) }
            }
        }
        result.observe(recorder.observer)
        input.send(value: 1)
        #expect(recorder.events == [.value(1), .value(2), .value(3), .value(100), .completed])
        #expect(probe.maximum == 1)
    }

    @Test(
        "An observer of replaceError's or promoteError's result that sends into the source is queued, never recursive")
    func replaceAndPromoteErrorReentrancy() {
        let failing: [Event<Int, TestError>] = [.value(1), .value(2), .failed(.boom)]
        let replaced = eventsWithReentrantSends(failing) { $0.replaceError(with: 0) }
        #expect(replaced == [.value(1), .value(2), .value(0), .completed])
        let completing: [Event<Int, Never>] = [.value(1), .value(2), .completed]
        let promoted = eventsWithReentrantSends(completing) { $0.promoteError(TestError.self) }
        #expect(promoted == [.value(1), .value(2), .completed])
    }

    @Test(
        "replaceError and flatMapError under four sending threads: every value delivered before the failure, then the replacement"
    )
    func replaceAndFlatMapErrorThreads() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let delivered = EventRecorder<Int, TestError>()
        let replaced = EventRecorder<Int, Never>()
        let flatMapped = EventRecorder<Int, Never>()
        signal.observe(delivered.observer)
        signal.replaceError(with: -1).observe(replaced.observer)
        signal.flatMapError { _ in SignalProducer<Int, Never>(values: -1, -2) }.observe(flatMapped.observer)
        // Thread 2 fails the source once it has sent its values; the others are still sending.
        sendFromFourThreads(
            perThread: 10_000, { input.send(value: $0) },
            afterValues: { thread in
                if thread == 2 { input.send(error: .boom) }
            })
        let order = delivered.values
        #expect(delivered.events == order.map { .value($0) } + [.failed(.boom)])
        #expect(order.count >= 10_000 && Set(order).count == order.count)
        #expect(replaced.events == order.map { .value($0) } + [.value(-1), .completed])
        #expect(flatMapped.events == order.map { .value($0) } + [.value(-1), .value(-2), .completed])
    }

    @Test("promoteError under four sending threads: every value once, in delivery order, then the terminal event")
    func promoteErrorThreads() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let delivered = EventRecorder<Int, Never>()
        let promoted = EventRecorder<Int, TestError>()
        signal.observe(delivered.observer)
        signal.promoteError(TestError.self).observe(promoted.observer)
        sendFromFourThreads(perThread: 10_000, { input.send(value: $0) })
        input.sendInterrupted()
        #expect(delivered.values.sorted() == Array(0..<40_000))
        #expect(promoted.events == delivered.values.map { .value($0) } + [.interrupted])
    }

    // MARK: materialize, dematerialize

    @Test("materialize sends each event as a value, then completes, or is interrupted after .interrupted")
    func materialize() {
        for terminal in [Event<Int, TestError>.failed(.boom), .completed, .interrupted] {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let recorder = EventRecorder<Event<Int, TestError>, Never>()
            signal.materialize().observe(recorder.observer)
            input.send(value: 1)
            input.send(terminal)
            let end: Event<Event<Int, TestError>, Never> = terminal == .interrupted ? .interrupted : .completed
            #expect(recorder.events == [.value(.value(1)), .value(terminal), end])
        }
    }

    @Test("dematerialize turns materialized events back into events, and a producer round-trips")
    func dematerialize() {
        let (signal, input) = Signal<Event<Int, TestError>, Never>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.dematerialize().observe(recorder.observer)
        input.send(value: .value(1))
        input.send(value: .failed(.boom))
        input.send(value: .value(2))
        #expect(recorder.events == [.value(1), .failed(.boom)])

        let roundTrip = EventRecorder<Int, TestError>()
        SignalProducer<Int, TestError> { observer, _ in
            observer.send(value: 1)
            observer.send(error: .other)
        }.materialize().dematerialize().start(roundTrip.observer)
        #expect(roundTrip.events == [.value(1), .failed(.other)])

        let source = OperatorTestControlledProducer<Int>()
        let disposed = EventRecorder<Int, TestError>()
        source.producer.materialize().dematerialize().start(disposed.observer).dispose()
        #expect(source.hasEnded())
        #expect(disposed.events == [.interrupted])
    }

    @Test(
        "An observer of materialize's or dematerialize's result that sends into the source is queued, never recursive")
    func materializeReentrancy() {
        let failing: [Event<Int, TestError>] = [.value(1), .value(2), .failed(.boom)]
        let materialized = eventsWithReentrantSends(failing) { $0.materialize() }
        #expect(materialized == [.value(.value(1)), .value(.value(2)), .value(.failed(.boom)), .completed])
        let script: [Event<Event<Int, TestError>, Never>] = [
            .value(.value(1)), .value(.value(2)), .value(.completed), .value(.value(3)),
        ]
        let dematerialized = eventsWithReentrantSends(script) { $0.dematerialize() }
        #expect(dematerialized == [.value(1), .value(2), .completed])
    }

    @Test(
        "dematerialize under four sending threads: every value once, in delivery order, then the materialized failure")
    func dematerializeThreads() {
        let (signal, input) = Signal<Event<Int, TestError>, Never>.pipe()
        let delivered = EventRecorder<Event<Int, TestError>, Never>()
        let dematerialized = EventRecorder<Int, TestError>()
        signal.observe(delivered.observer)
        signal.dematerialize().observe(dematerialized.observer)
        sendFromFourThreads(
            perThread: 10_000, { input.send(value: .value($0)) },
            afterValues: { thread in
                if thread == 1 { input.send(value: .failed(.boom)) }
            })
        let order = delivered.values.prefix { $0 != .failed(.boom) }.compactMap(\.value)
        #expect(order.count >= 10_000 && Set(order).count == order.count)
        #expect(dematerialized.events == order.map { .value($0) } + [.failed(.boom)])
    }

    @Test("materialize under four sending threads: every value once, one terminal event, last")
    func materializeThreads() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Event<Int, TestError>, Never>()
        signal.materialize().observe(recorder.observer)
        Watchdog.runOnThreads(4) { thread in
            for value in 0..<10_000 { input.send(value: thread * 10_000 + value) }
        }
        input.sendCompleted()
        let values = recorder.values.compactMap(\.value)
        #expect(values.sorted() == Array(0..<40_000))
        #expect(recorder.events.suffix(2) == [.value(.completed), .completed])
    }

    // MARK: retry

    @Test("retry(upTo:) restarts a failed run up to the count, forwarding every attempt's values")
    func retryCounts() {
        let starts = LockedTestValue(0)
        let exhausted = EventRecorder<Int, TestError>()
        countingFailures(starts).retry(upTo: 2).start(exhausted.observer)
        #expect(exhausted.events == [.value(1), .value(2), .value(3), .failed(.boom)])

        let again = LockedTestValue(0)
        let recovered = EventRecorder<Int, TestError>()
        countingFailures(again, succeedingAt: 2).retry(upTo: 5).start(recovered.observer)
        #expect(recovered.events == [.value(1), .value(2), .completed])
        #expect(again.value == 2)

        let none = LockedTestValue(0)
        let zero = EventRecorder<Int, TestError>()
        countingFailures(none).retry(upTo: 0).start(zero.observer)
        #expect(zero.events == [.value(1), .failed(.boom)])
    }

    @Test("retry(upTo:) of 20,000 synchronous failures runs in constant stack")
    func retryManySynchronousFailures() {
        let starts = LockedTestValue(0)
        let recorder = EventRecorder<Int, TestError>()
        countingFailures(starts).retry(upTo: 20_000).start(recorder.observer)
        #expect(starts.value == 20_001)
        #expect(recorder.events.last == .failed(.boom))
    }

    @Test("Disposing a retrying run interrupts the current attempt and starts no other")
    func retryDisposal() {
        let source = OperatorTestControlledProducer<Int>()
        let recorder = EventRecorder<Int, TestError>()
        let run = source.producer.retry(upTo: 3).start(recorder.observer)
        source.input(0).send(error: .boom)
        #expect(source.startCount == 2)
        run.dispose()
        #expect(source.hasEnded(1))
        source.input(1).send(error: .boom)
        #expect(source.startCount == 2)
        #expect(recorder.events == [.interrupted])
    }

    @Test("retry with an interval waits before each attempt; the last failure is not delayed")
    func retryWithInterval() {
        let scheduler = TestScheduler()
        let starts = LockedTestValue(0)
        let log = TestLog<String>()
        countingFailures(starts).retry(upTo: 2, interval: .seconds(5), on: scheduler).start { event in
            log.append("\(event)@\(scheduler.now)")
        }
        #expect(log.entries == ["value(1)@0.0 seconds"])
        scheduler.advance(by: .seconds(4))
        #expect(starts.value == 1)
        scheduler.advance(by: .seconds(1))
        #expect(log.entries == ["value(1)@0.0 seconds", "value(2)@5.0 seconds"])
        scheduler.run()
        #expect(
            log.entries == [
                "value(1)@0.0 seconds", "value(2)@5.0 seconds", "value(3)@10.0 seconds", "failed(boom)@10.0 seconds",
            ])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("Each run of a delayed retry counts its own retries")
    func retryWithIntervalPerRun() {
        let scheduler = TestScheduler()
        let starts = LockedTestValue(0)
        let producer = countingFailures(starts).retry(upTo: 1, interval: .seconds(1), on: scheduler)
        let first = EventRecorder<Int, TestError>()
        let second = EventRecorder<Int, TestError>()
        producer.start(first.observer)
        scheduler.run()
        producer.start(second.observer)
        scheduler.run()
        #expect(first.events == [.value(1), .value(2), .failed(.boom)])
        #expect(second.events == [.value(3), .value(4), .failed(.boom)])
    }

    @Test("Disposing a delayed retry while it waits cancels the scheduled attempt")
    func retryWithIntervalDisposal() {
        let scheduler = TestScheduler()
        let starts = LockedTestValue(0)
        let recorder = EventRecorder<Int, TestError>()
        let run = countingFailures(starts).retry(upTo: 3, interval: .seconds(1), on: scheduler).start(recorder.observer)
        #expect(scheduler.pendingActionCount == 1)
        run.dispose()
        #expect(scheduler.pendingActionCount == 0)
        scheduler.run()
        #expect(starts.value == 1)
        #expect(recorder.events == [.value(1), .interrupted])
    }

    @Test("retry whose attempts fail on other threads: every attempt's value, then one failure")
    func retryThreads() {
        let starts = LockedTestValue(0)
        let producer = SignalProducer<Int, TestError> { observer, _ in
            let start = starts.withValue { count -> Int in
                count += 1
                return count
            }
            Watchdog.startThread {
                observer.send(value: start)
                observer.send(error: .boom)
            }
        }
        let recorder = EventRecorder<Int, TestError>()
        producer.retry(upTo: 200).start(recorder.observer)
        #expect(recorder.waitForTermination())
        #expect(recorder.values == Array(1...201))
        #expect(recorder.events.last == .failed(.boom) && recorder.terminalCount == 1)
    }

    // MARK: SignalProducer(operation:catch:)

    @Test("The catching async bridge sends the result, or the value made of the error, then completes")
    func asyncCatch() async {
        let success = EventRecorder<String, Never>()
        SignalProducer<String, Never>(operation: { "ok" }, catch: { _ in "caught" }).start(success.observer)
        #expect(await success.terminated())
        #expect(success.events == [.value("ok"), .completed])

        let failure = EventRecorder<String, Never>()
        SignalProducer<String, Never>(
            operation: { throw TestError.boom },
            catch: { error in "caught \(error)" }
        ).start(failure.observer)
        #expect(await failure.terminated())
        #expect(failure.events == [.value("caught boom"), .completed])
    }

    @Test("Disposing the catching async bridge cancels its task, and the error handler is not called")
    func asyncCatchDisposal() async {
        let cancelled = DispatchSemaphore(value: 0)
        let handled = LockedTestValue(false)
        let recorder = EventRecorder<Int, Never>()
        let run = SignalProducer<Int, Never>(
            operation: {
                do {
                    try await Task.sleep(for: .seconds(120))
                } catch {
                    cancelled.signal()
                    throw error
                }
                return 1
            },
            catch: { _ in
                handled.withValue { $0 = true }
                return 0
            }
        ).start(recorder.observer)
        run.dispose()
        #expect(await Watchdog.signalled(cancelled))
        #expect(recorder.events == [.interrupted])
        #expect(!handled.value)
    }
}
