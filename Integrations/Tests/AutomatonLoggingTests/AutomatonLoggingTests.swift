import Automaton
import AutomatonLogging
import Dispatch
import Logging
import Testing

enum Phase: Sendable, Equatable {
    case idle, connecting, closing, closed
}

enum Command: Sendable, Equatable {
    case connect, send, disconnect, closed
}

/// A connection: `connect` starts an effect that runs until cancelled; `disconnect` replaces it
/// (`.latest`) with one that sends `closed` at once and ends.
func makeConnection() -> Automaton<Phase, Command> {
    Automaton(
        state: .idle, strategy: .latest,
        table: [
            .connect | .idle => .connecting | .never,
            .disconnect | .connecting => .closing | SignalProducer(value: .closed),
            .closed | .closing => .closed,
        ])
}

@Suite("Automaton.log(to:options:)")
struct AutomatonLoggingTests {
    @Test("a script's records: replies, a failure, a replacement, a start, an end, in the engine's order")
    func scriptRecords() {
        let records = LogRecords()
        let automaton = makeConnection()
        automaton.log(to: .recording(into: records))

        automaton.send(.connect)
        automaton.send(.send)
        automaton.send(.disconnect)

        #expect(
            records.all == [
                LogRecord(
                    .info, "Input accepted",
                    [
                        "automaton.outcome": "success", "automaton.input": "connect", "automaton.from": "idle",
                        "automaton.to": "connecting", "automaton.effect": "0",
                    ]),
                LogRecord(
                    .debug, "Effect started",
                    ["automaton.effect_event": "started", "automaton.effect": "0", "automaton.input": "connect"]),
                LogRecord(
                    .warning, "Input refused",
                    ["automaton.outcome": "failure", "automaton.input": "send", "automaton.from": "connecting"]),
                LogRecord(
                    .debug, "Effect cancelled",
                    [
                        "automaton.effect_event": "cancelled", "automaton.effect": "0",
                        "automaton.cancellation": "replaced", "automaton.input": "disconnect",
                    ]),
                LogRecord(
                    .info, "Input accepted",
                    [
                        "automaton.outcome": "success", "automaton.input": "disconnect",
                        "automaton.from": "connecting", "automaton.to": "closing", "automaton.effect": "1",
                    ]),
                LogRecord(
                    .debug, "Effect started",
                    ["automaton.effect_event": "started", "automaton.effect": "1", "automaton.input": "disconnect"]),
                LogRecord(.debug, "Effect ended", ["automaton.effect_event": "ended", "automaton.effect": "1"]),
                LogRecord(
                    .info, "Input accepted",
                    [
                        "automaton.outcome": "success", "automaton.input": "closed", "automaton.from": "closing",
                        "automaton.to": "closed", "automaton.sent_by_effect": "1",
                    ]),
            ])
    }

    @Test("keyed effects: the key, a cancel row, a dropped effect; the logger's metadata on every record")
    func keyedEffects() {
        let records = LogRecords()
        let automaton = Automaton<Phase, Command>(
            state: .idle,
            table: [
                .connect | any => .connecting | SignalProducer<Command, Never>.never.keyed("link", .first),
                .disconnect | any => .idle | .cancel("link"),
            ])
        var logger = Logger.recording(into: records)
        logger[metadataKey: "session.id"] = "7"
        automaton.log(to: logger, options: AutomatonLogOptions(successLevel: nil, failureLevel: nil))

        automaton.send(.connect)
        automaton.send(.connect)  // dropped: the key's policy is .first
        automaton.send(.disconnect)

        #expect(
            records.all == [
                LogRecord(
                    .debug, "Effect started",
                    [
                        "session.id": "7", "automaton.effect_event": "started", "automaton.effect": "0",
                        "automaton.effect_key": "link", "automaton.input": "connect",
                    ]),
                LogRecord(
                    .debug, "Effect cancelled",
                    [
                        "session.id": "7", "automaton.effect_event": "cancelled", "automaton.effect": "1",
                        "automaton.effect_key": "link", "automaton.cancellation": "dropped",
                        "automaton.input": "connect",
                    ]),
                LogRecord(
                    .debug, "Effect cancelled",
                    [
                        "session.id": "7", "automaton.effect_event": "cancelled", "automaton.effect": "0",
                        "automaton.effect_key": "link", "automaton.cancellation": "cancelled",
                        "automaton.input": "disconnect",
                    ]),
            ])
    }

    @Test("options: levels, messages, keys (nil leaves a value out), descriptions, processing time")
    func options() throws {
        let records = LogRecords()
        let automaton = makeConnection()
        let options = AutomatonLogOptions<Phase, Command>(
            successLevel: .notice,
            failureLevel: .error,
            effectEventLevel: nil,
            messages: .init(success: "moved", failure: "refused"),
            keys: .init(outcome: nil, input: "cmd", from: "was", to: "now", effect: nil, processingTime: "ns"),
            describeInput: { "<\($0)>" },
            describeState: { $0 == .idle ? "IDLE" : "\($0)" })
        automaton.log(to: .recording(into: records), options: options)

        automaton.send(.connect)
        automaton.send(.send)

        let all = records.all
        try #require(all.count == 2)
        let durations = all.map { Int($0.metadata["ns"] ?? "") }
        #expect(durations.allSatisfy { ($0 ?? -1) >= 0 })
        #expect(
            all.map { LogRecord($0.level, $0.message, $0.metadata.filter { $0.key != "ns" }) } == [
                LogRecord(.notice, "moved", ["cmd": "<connect>", "was": "IDLE", "now": "connecting"]),
                LogRecord(.error, "refused", ["cmd": "<send>", "was": "connecting"]),
            ])
    }

    @Test("the logger's level filters: at .info, no effect event and no metadata built for one")
    func loggerLevelFilters() {
        let records = LogRecords()
        let rendered = LogRecords()
        let automaton = makeConnection()
        let options = AutomatonLogOptions<Phase, Command>(
            describeInput: { input in
                rendered.append(LogRecord(.trace, "\(input)"))
                return "\(input)"
            },
            describeState: { state in
                rendered.append(LogRecord(.trace, "\(state)"))
                return "\(state)"
            })
        automaton.log(to: .recording(into: records, level: .info), options: options)

        automaton.send(.connect)
        automaton.send(.disconnect)

        #expect(records.all.map(\.message) == ["Input accepted", "Input accepted", "Input accepted"])
        // Three values per success (input, from, to): none described for the effect events.
        #expect(rendered.count == 9)
    }

    @Test("disposal stops both kinds of record, an effect's later end included")
    func disposalStops() {
        let records = LogRecords()
        let scheduler = TestScheduler()
        let automaton = Automaton<Phase, Command>(
            state: .idle,
            table: [
                .connect | .idle => .connecting | SignalProducer(value: .disconnect).delay(.seconds(1), on: scheduler),
                .disconnect | .connecting => .idle,
            ])
        let logging = automaton.log(to: .recording(into: records))

        automaton.send(.connect)
        #expect(records.count == 2)
        logging.dispose()
        scheduler.advance(by: .seconds(1))  // the effect sends disconnect and ends: not logged
        automaton.send(.send)

        #expect(automaton.state.value == .idle)
        #expect(records.count == 2)
    }

    @Test("released while attached: its effects' cancellations are logged, then nothing; the logger is let go of")
    func releasedWhileAttached() {
        let records = LogRecords()
        weak var token: RecordingLogHandler.Token?
        do {
            let automaton = makeConnection()
            let logger = Logger.recording(into: records)
            token = (logger.handler as? RecordingLogHandler)?.token
            automaton.log(to: logger)
            automaton.send(.connect)
            #expect(token != nil)
        }
        #expect(
            records.all.suffix(1) == [
                LogRecord(
                    .debug, "Effect cancelled",
                    [
                        "automaton.effect_event": "cancelled", "automaton.effect": "0",
                        "automaton.cancellation": "released",
                    ])
            ])
        #expect(records.count == 3)
        #expect(token == nil)
    }

    @Test("4 threads × 500 inputs each: one record per reply, none lost")
    func concurrentSenders() {
        let records = LogRecords()
        let automaton = Automaton<Int, Command>(state: 0) { count, command in
            command == .send ? count + 1 : nil
        }
        automaton.log(to: .recording(into: records))

        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for index in 0..<500 {
                automaton.send(index.isMultiple(of: 4) ? .disconnect : .send)
            }
        }

        let all = records.all
        #expect(all.count == 2000)
        #expect(all.filter { $0.level == .info }.count == 1500)
        #expect(all.filter { $0.level == .warning }.count == 500)
        #expect(automaton.state.value == 1500)
        // In processing order: the successes' `to` counts 1...1500.
        #expect(all.compactMap { $0.metadata["automaton.to"] } == (1...1500).map(String.init))
    }
}
