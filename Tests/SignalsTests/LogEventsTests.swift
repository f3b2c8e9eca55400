import Foundation
import Signals
import Testing

@Suite("logEvents and its UTC timestamps")
struct LogEventsTests {
    /// Splits `[timestamp] rest` into its parts, checking the timestamp's shape.
    private func parse(_ line: String) -> (timestamp: String, rest: String)? {
        guard line.hasPrefix("["), let close = line.firstIndex(of: "]") else { return nil }
        let timestamp = String(line[line.index(after: line.startIndex)..<close])
        let rest = line[line.index(after: close)...]
        guard rest.hasPrefix(" ") else { return nil }
        return (timestamp, String(rest.dropFirst()))
    }

    /// Whether `timestamp` reads `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    private func isWellFormed(_ timestamp: String) -> Bool {
        let pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$"
        return timestamp.range(of: pattern, options: .regularExpression) != nil
    }

    @Test(
        "Signal.logEvents writes one timestamped line per event, with the identifier and the event, and forwards every event"
    )
    func signalLines() throws {
        let (signal, input) = Signal<String, TestError>.pipe()
        let log = TestLog<String>()
        let recorder = EventRecorder<String, TestError>()
        signal.logEvents(identifier: "login", logger: log.append).observe(recorder.observer)
        let before = Date()
        input.send(value: "loggedIn")
        input.send(value: "loggedOut")
        input.send(error: .boom)
        let after = Date()
        #expect(recorder.events == [.value("loggedIn"), .value("loggedOut"), .failed(.boom)])
        let lines = try log.entries.map { try #require(parse($0)) }
        #expect(lines.map(\.rest) == ["[login] value(loggedIn)", "[login] value(loggedOut)", "[login] failed(boom)"])
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for line in lines {
            #expect(isWellFormed(line.timestamp), "\(line.timestamp)")
            let date = try #require(formatter.date(from: line.timestamp))
            #expect(date >= before.addingTimeInterval(-0.002) && date <= after.addingTimeInterval(0.002))
        }
    }

    @Test("Signal.logEvents logs completion and interruption, and leaves out an empty identifier")
    func signalTerminals() throws {
        let (completing, completingInput) = Signal<Int, Never>.pipe()
        let completedLog = TestLog<String>()
        completing.logEvents(logger: completedLog.append).observe { _ in }
        completingInput.send(value: 1)
        completingInput.sendCompleted()
        #expect(try completedLog.entries.map { try #require(parse($0)).rest } == ["value(1)", "completed"])

        let (interrupting, interruptingInput) = Signal<Int, Never>.pipe()
        let interruptedLog = TestLog<String>()
        interrupting.logEvents(identifier: "job", logger: interruptedLog.append).observe { _ in }
        interruptingInput.sendInterrupted()
        #expect(try interruptedLog.entries.map { try #require(parse($0)).rest } == ["[job] interrupted"])
    }

    @Test("logEvents writes lines only for the requested kinds of event")
    func filteredKinds() throws {
        let (signal, input) = Signal<Int, Never>.pipe()
        let log = TestLog<String>()
        signal.logEvents(identifier: "only", events: [.completed], logger: log.append).observe { _ in }
        input.send(value: 1)
        input.sendCompleted()
        #expect(try log.entries.map { try #require(parse($0)).rest } == ["[only] completed"])

        let producerLog = TestLog<String>()
        SignalProducer<Int, Never>(values: 1, 2).logEvents(identifier: "v", events: .value, logger: producerLog.append)
            .start()
        #expect(try producerLog.entries.map { try #require(parse($0)).rest } == ["[v] value(1)", "[v] value(2)"])
    }

    @Test("Producer logEvents also logs starting, started and disposed, one line each, per run")
    func producerLines() throws {
        let log = TestLog<String>()
        let recorder = EventRecorder<Int, Never>()
        SignalProducer<Int, Never>(values: 1, 2).logEvents(identifier: "sync", logger: log.append).start(
            recorder.observer)
        #expect(recorder.events == [.value(1), .value(2), .completed])
        #expect(
            try log.entries.map { try #require(parse($0)).rest } == [
                "[sync] starting", "[sync] value(1)", "[sync] value(2)", "[sync] completed", "[sync] disposed",
                "[sync] started",
            ])
    }

    @Test("Producer logEvents logs the interruption and disposal of a disposed run")
    func producerDisposal() throws {
        let source = OperatorTestControlledProducer<Int>()
        let log = TestLog<String>()
        let run = source.producer.logEvents(identifier: "net", logger: log.append).start()
        source.input().send(value: 3)
        run.dispose()
        #expect(source.hasEnded())
        #expect(
            try log.entries.map { try #require(parse($0)).rest } == [
                "[net] starting", "[net] started", "[net] value(3)", "[net] interrupted", "[net] disposed",
            ])
    }

    @Test("UTC timestamps match Foundation's ISO 8601 formatting across leap years, centuries and the epoch")
    func timestampFormatting() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var instants: [Int64] = [
            0, 1, 59, 86_399, 86_400, 951_782_400, 951_868_799, 1_798_000_000, 4_107_542_400, -1, -86_401,
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            instants.append(Int64.random(in: -2_208_988_800...253_402_300_799, using: &generator))
        }
        for seconds in instants {
            let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            #expect(UTCTimestamp.format(secondsSinceEpoch: seconds, nanoseconds: 0) == expected, "seconds \(seconds)")
        }
        #expect(
            UTCTimestamp.format(secondsSinceEpoch: 1_795_322_401, nanoseconds: 123_999_999)
                == "2026-11-22T04:40:01.123Z")
        #expect(
            UTCTimestamp.format(secondsSinceEpoch: 951_782_400, nanoseconds: 5_000_000) == "2000-02-29T00:00:00.005Z")
    }
}
