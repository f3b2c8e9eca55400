import Dispatch
import Foundation
import Signals
import Testing

// Shared checks of the operator test matrix (values, terminal events, disposal mid-stream,
// reentrancy, threads), so that each operator's test states only what it expects.

// MARK: Reentrancy

/// Sends a script of events into a source one at a time, through an operator's result: an observer of
/// the result sends the next event of the script into the source each time it is handed an event, and
/// a second observer, added after it, records. `finish()` checks that those sends were queued (each
/// event of the result reached both observers before the next one was delivered, and no delivery
/// nested in another) and returns what the second observer saw.
///
/// The first event is sent from outside, and so is the next one whenever the result sent nothing for
/// the last one (an operator that drops or gathers values).
private final class ReentrantSender<
    SourceValue: Sendable, SourceError: Swift.Error, Output: Sendable, OutputError: Swift.Error
>: Sendable {
    private let script: [Event<SourceValue, SourceError>]
    private let input: Observer<SourceValue, SourceError>
    private let cursor = LockedTestValue(0)
    private let log = TestLog<String>()
    private let probe = InFlightProbe()
    private let recorder = EventRecorder<Output, OutputError>()

    init(_ script: [Event<SourceValue, SourceError>], into input: Observer<SourceValue, SourceError>) {
        self.script = script
        self.input = input
    }

    /// Adds the two observers to `result`.
    func observe(_ result: Signal<Output, OutputError>) {
        result.observe { [self] event in
            probe.run {
                log.append("first observer: \(event)")
                _ = sendNext()
            }
        }
        result.observe { [self] event in
            log.append("second observer: \(event)")
            recorder.record(event)
        }
    }

    /// Sends the next event of the script, if any is left; whether it sent one.
    private func sendNext() -> Bool {
        let index = cursor.withValue { cursor -> Int? in
            guard cursor < script.count else { return nil }
            defer { cursor += 1 }
            return cursor
        }
        guard let index else { return false }
        input.send(script[index])
        return true
    }

    /// Sends the whole script, checks the order of delivery, and returns what the result sent.
    func finish(sourceLocation: SourceLocation) -> [Event<Output, OutputError>] {
        while sendNext() {}
        let seen = recorder.events
        #expect(probe.maximum == 1, "a send from an observer was delivered recursively", sourceLocation: sourceLocation)
        #expect(
            log.entries == seen.flatMap { ["first observer: \($0)", "second observer: \($0)"] },
            "each event reaches every observer before the next is delivered",
            sourceLocation: sourceLocation
        )
        return seen
    }
}

/// What an observer of `transform`'s result sees when an observer of that result sends each next event
/// of `script` into the source during delivery (see `ReentrantSender`): checks that those sends are
/// queued, never recursive, and returns the result's whole sequence of events.
func eventsWithReentrantSends<
    SourceValue: Sendable, SourceError: Swift.Error, Output: Sendable, OutputError: Swift.Error
>(
    _ script: [Event<SourceValue, SourceError>],
    through transform: (Signal<SourceValue, SourceError>) -> Signal<Output, OutputError>,
    sourceLocation: SourceLocation = #_sourceLocation
) -> [Event<Output, OutputError>] {
    let (source, input) = Signal<SourceValue, SourceError>.pipe()
    let sender = ReentrantSender<SourceValue, SourceError, Output, OutputError>(script, into: input)
    sender.observe(transform(source))
    return sender.finish(sourceLocation: sourceLocation)
}

/// `eventsWithReentrantSends(_:through:)` for a producer operator: one run of `transform` applied to a
/// producer of the source signal, observed before it starts.
func eventsOfRunWithReentrantSends<
    SourceValue: Sendable, SourceError: Swift.Error, Output: Sendable, OutputError: Swift.Error
>(
    _ script: [Event<SourceValue, SourceError>],
    through transform: (SignalProducer<SourceValue, SourceError>) -> SignalProducer<Output, OutputError>,
    sourceLocation: SourceLocation = #_sourceLocation
) -> [Event<Output, OutputError>] {
    let (source, input) = Signal<SourceValue, SourceError>.pipe()
    let sender = ReentrantSender<SourceValue, SourceError, Output, OutputError>(script, into: input)
    transform(SignalProducer(source)).startWithSignal { result, _ in sender.observe(result) }
    return sender.finish(sourceLocation: sourceLocation)
}

// MARK: Disposal mid-stream

/// Starts `transform` applied to a producer whose run the test drives, sends `values` into that run,
/// disposes the result's run, then sends more into the underlying run. Checks that the underlying run
/// ended and that nothing sent after the disposal came through; returns what the result's observer
/// saw (values, then `.interrupted`, for most operators).
func eventsDisposingMidStream<Output: Sendable, OutputError: Swift.Error>(
    after values: [Int],
    _ transform: (SignalProducer<Int, TestError>) -> SignalProducer<Output, OutputError>,
    sourceLocation: SourceLocation = #_sourceLocation
) -> [Event<Output, OutputError>] {
    let source = OperatorTestControlledProducer<Int>()
    let recorder = EventRecorder<Output, OutputError>()
    let run = transform(source.producer).start(recorder.observer)
    for value in values { source.input().send(value: value) }
    #expect(
        !source.hasEnded(), "the underlying run is still running before the disposal", sourceLocation: sourceLocation)
    let beforeDisposal = recorder.events
    run.dispose()
    #expect(source.hasEnded(), "disposing the result's run ends the underlying run", sourceLocation: sourceLocation)
    source.input().send(value: -1)
    source.input().sendCompleted()
    let seen = recorder.events
    #expect(seen.dropLast().elementsEqual(beforeDisposal, by: { "\($0)" == "\($1)" }), sourceLocation: sourceLocation)
    #expect(
        seen.count == beforeDisposal.count + 1, "only the interruption follows the disposal",
        sourceLocation: sourceLocation)
    return seen
}

// MARK: Threads

/// Calls `send` with `perThread` values from each of four threads at once (thread `t` sends
/// `t * perThread ..< (t + 1) * perThread`, in order), then `afterValues(t)` on each thread once it has
/// sent its values; fails the test instead of hanging if they do not finish.
func sendFromFourThreads(
    perThread: Int,
    _ send: @escaping @Sendable (Int) -> Void,
    afterValues: @escaping @Sendable (_ thread: Int) -> Void = { _ in },
    sourceLocation: SourceLocation = #_sourceLocation
) {
    Watchdog.runOnThreads(4, sourceLocation: sourceLocation) { thread in
        for value in 0..<perThread { send(thread * perThread + value) }
        afterValues(thread)
    }
}
