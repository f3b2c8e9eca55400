import Signals
import Testing

/// Every programming error the library catches stops the process with a message saying what to do.
/// Each case runs in a child process (`#expect(processExitsWith:)`); in debug builds the message is
/// checked too (optimized builds do not print precondition messages).
@Suite("Misuse stops with a clear message")
struct PreconditionTests {
    @Test("take(first:) with a negative count, on a signal and on a producer")
    func takeNegative() async {
        let onSignal = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Signal<Int, Never>.pipe().output.take(first: -1)
        }
        expectMessage(onSignal, contains: "take(first:) needs a count of at least 0")
        let onProducer = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = SignalProducer<Int, Never>(value: 1).take(first: -1)
        }
        expectMessage(onProducer, contains: "take(first:) needs a count of at least 0")
    }

    @Test("delay with a negative interval, on a signal and on a producer")
    func negativeDelay() async {
        let onSignal = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Signal<Int, Never>.pipe().output.delay(.seconds(-1), on: TestScheduler())
        }
        expectMessage(onSignal, contains: "the interval must not be negative")
        let onProducer = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = SignalProducer<Int, Never>(value: 1).delay(.seconds(-1), on: TestScheduler())
        }
        expectMessage(onProducer, contains: "the interval must not be negative")
    }

    @Test("timer with an interval that is not positive")
    func timerWithoutPositiveInterval() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = SignalProducer.timer(interval: .zero, on: TestScheduler())
        }
        expectMessage(result, contains: "the interval must be positive")
    }

    @Test("a repeating action without a positive interval, on TestScheduler and QueueScheduler")
    func repeatingWithoutPositiveInterval() async {
        let onTestScheduler = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            TestScheduler().schedule(after: .zero, interval: .zero) {}
        }
        expectMessage(onTestScheduler, contains: "a repeating action needs a positive interval")
        let onQueueScheduler = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            QueueScheduler(label: "precondition").schedule(after: .zero, interval: .seconds(-1)) {}
        }
        expectMessage(onQueueScheduler, contains: "a repeating action needs a positive interval")
    }

    @Test("moving a TestScheduler's clock backwards")
    func testSchedulerBackwards() async {
        let byNegative = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            TestScheduler().advance(by: .seconds(-1))
        }
        expectMessage(byNegative, contains: "cannot advance by a negative duration")
        let toPast = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let scheduler = TestScheduler()
            scheduler.advance(by: .seconds(2))
            scheduler.advance(to: .seconds(1))
        }
        expectMessage(toPast, contains: "cannot move the clock back")
    }
}

/// In debug builds, expects the child process's standard error to contain `message`.
func expectMessage(
    _ result: ExitTest.Result?,
    contains message: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #if DEBUG
        guard let result else { return }
        let output = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(output.contains(message), "standard error was: \(output)", sourceLocation: sourceLocation)
    #endif
}
