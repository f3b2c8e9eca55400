// A server-shaped program: 300 login sessions (connecting → authenticating → active → closed), driven
// by 4 concurrent request handlers that each await the reply to their own input (`ask`), their
// effects simulating I/O on a few queues. Each session logs through swift-log (JSON lines; the first
// 12 are printed, the rest counted), records metrics into an in-process backend and traces to
// swift-distributed-tracing's in-memory tracer; a summary follows. Run it with
// `swift run --package-path Integrations session-server`.

import Automaton
import AutomatonLogging
import AutomatonMetrics
import AutomatonTracing
import Foundation
import InMemoryTracing
import Logging
import Metrics
import Tracing

let sessionCount = 300
let workerCount = 4
let requestRounds = 5
let printedRecords = 12

// A server bootstraps its backends once, at start.
let logOutput = JSONLogOutput(limit: printedRecords)
LoggingSystem.bootstrap { label in JSONLogHandler(label: label, output: logOutput) }
let metrics = InProcessMetrics()
MetricsSystem.bootstrap(metrics)

let tracer = InMemoryTracer()
InstrumentationSystem.bootstrap(tracer)

/// Makes session `id`, with its logging, metrics and tracing attached. Nothing needs keeping: they
/// stop when the session is released.
func openSession(id: Int, io: QueueScheduler) -> Automaton<SessionState, SessionInput> {
    let session = makeSession(id: id, io: io)
    var logger = Logger(label: "session")
    logger.logLevel = .debug
    logger[metadataKey: "session.id"] = "\(id)"
    session.log(to: logger)
    session.recordMetrics(label: "session", inputCase: \.caseName, recordProcessingTime: true)
    var tracing = AutomatonTraceOptions<SessionState, SessionInput>()
    tracing.attributes["session.id"] = id
    session.trace(options: tracing)  // the bootstrapped tracer: a span per input, a child per effect
    return session
}

let started = ContinuousClock.now
let io = (0..<4).map { QueueScheduler(label: "io-\($0)") }
var sessions = (0..<sessionCount).map { openSession(id: $0, io: io[$0 % io.count]) }

/// What the request handlers answered: each asks its input and answers with the reply to it, as an
/// HTTP handler would (200 for a success, 409 for a refusal), or names why it got none.
struct Answers: Sendable {
    var accepted = 0
    var refused = 0
    var unanswered: [String] = []

    mutating func count(_ outcome: Result<Reply<SessionState, SessionInput>, AskError>) {
        switch outcome {
        case let .success(reply): if reply.isSuccess { accepted += 1 } else { refused += 1 }
        case let .failure(error): unanswered.append("\(error)")
        }
    }

    static func + (lhs: Answers, rhs: Answers) -> Answers {
        Answers(
            accepted: lhs.accepted + rhs.accepted, refused: lhs.refused + rhs.refused,
            unanswered: lhs.unanswered + rhs.unanswered)
    }
}

/// Each of `workerCount` concurrent handlers serves every 4th session: connects them, sends a few
/// rounds of requests (the first ones race the credential check: some are refused), then closes
/// them (cancelling the requests still being served). Each input is asked, with a time-out, and
/// answered with its own reply, whatever the other handlers send at the same time.
func serve(_ sessions: [Automaton<SessionState, SessionInput>]) async -> Answers {
    await withTaskGroup(of: Answers.self) { group in
        for worker in 0..<workerCount {
            group.addTask {
                let mine = stride(from: worker, to: sessions.count, by: workerCount).map { sessions[$0] }
                var answers = Answers()
                func ask(_ session: Automaton<SessionState, SessionInput>, _ input: SessionInput) async {
                    do {
                        answers.count(.success(try await session.ask(input, timeout: .seconds(5))))
                    } catch {
                        answers.count(.failure(error))
                    }
                }
                for session in mine { await ask(session, .connected) }
                for _ in 0..<requestRounds {
                    try? await Task.sleep(for: .milliseconds(2))
                    for session in mine { await ask(session, .request) }
                }
                for session in mine { await ask(session, .close) }
                return answers
            }
        }
        return await group.reduce(Answers(), +)
    }
}

let answers = await serve(sessions)
let asked = sessionCount * (requestRounds + 2)

// Every effect was cancelled by `close`, or had ended; wait for the stragglers still on the I/O queues.
let deadline = ContinuousClock.now + .seconds(5)
while sessions.contains(where: { $0.runningEffectCount > 0 }) && ContinuousClock.now < deadline {
    try await Task.sleep(for: .milliseconds(1))
}
let closed = sessions.filter { $0.state.value == .closed }.count
sessions = []  // releases the sessions: their logging and metrics stop
let elapsed = ContinuousClock.now - started

// The summary.
let logs = logOutput.counts
let records = logs.byLevel.values.reduce(0, +)
let counters = metrics.counterTotals
func total(_ prefix: String) -> Int64 {
    counters.filter { $0.key.hasPrefix(prefix) }.values.reduce(0, +)
}
let successes = total("session.replies{outcome=success")
let failures = total("session.replies{outcome=failure")
let running = metrics.meter("session.effects.running") ?? (0, 0)
let durations = metrics.timerValues("session.processing.duration").sorted()
func percentile(_ fraction: Double) -> String {
    guard !durations.isEmpty else { return "-" }
    let index = min(durations.count - 1, Int((Double(durations.count) * fraction).rounded(.up)) - 1)
    return String(format: "%.1f µs", Double(durations[max(0, index)]) / 1000)
}

print("")
print("--- session-server summary (\(elapsed.formatted(.units(allowed: [.milliseconds])))) ---")
print("sessions: \(sessionCount) served by \(workerCount) concurrent handlers, \(closed) closed at the end")
print(
    "asked: \(asked) inputs, each answered with its own reply: \(answers.accepted) accepted (200), "
        + "\(answers.refused) refused (409), \(answers.unanswered.count) unanswered")
let levels = [Logger.Level.info, .warning, .debug].map { "\($0) \(logs.byLevel[$0, default: 0])" }
print("log records: \(records) (\(levels.joined(separator: ", "))); \(logs.printed) printed")
print(
    "replies: \(successes) success, \(failures) failure (requests before the credentials were checked or after "
        + "a rejection, closes of rejected sessions, responses sent just after a close)")
for (name, value) in counters.sorted(by: { $0.key < $1.key }) where name.hasPrefix("session.replies") {
    print("  \(name): \(value)")
}
print(
    "effects: \(total("session.effects{event=started")) started, \(total("session.effects{event=ended")) ended, "
        + "\(total("session.effects{event=cancelled")) cancelled; running now \(Int(running.value)), "
        + "peak \(Int(running.peak))")
print(
    "processing time (\(durations.count) inputs): p50 \(percentile(0.5)), p90 \(percentile(0.9)), "
        + "p99 \(percentile(0.99)), max \(percentile(1))")
let spans = tracer.finishedSpans
let inputSpans = spans.filter { $0.operationName == "automaton.input" }
let effectSpans = spans.filter { $0.operationName == "automaton.effect" }
let inputSpanIDs = Set(inputSpans.map(\.spanID))
let effectSpanIDs = Set(effectSpans.map(\.spanID))
let linked = inputSpans.filter { !$0.links.isEmpty }
print(
    "spans: \(inputSpans.count) input spans, \(effectSpans.count) effect spans (each a child of the input "
        + "that made it), \(linked.count) inputs linked to the effect that sent them; "
        + "\(tracer.activeSpans.count) still open")

// The two integrations saw the same inputs: one reply record per counted reply, one timer value each.
let replyRecords = logs.byLevel[.info, default: 0] + logs.byLevel[.warning, default: 0]
let consistent =
    Int64(replyRecords) == successes + failures && durations.count == replyRecords && running.value == 0
    && closed == sessionCount && inputSpans.count == replyRecords
    && Int64(effectSpans.count) == total("session.effects{event=started")  // no effect waits or is dropped
    && effectSpans.allSatisfy { $0.parentSpanID.map(inputSpanIDs.contains) == true }
    && linked.allSatisfy { span in
        span.links.allSatisfy { effectSpanIDs.contains($0.context.inMemorySpanContext?.spanID ?? "") }
    }
    && tracer.activeSpans.isEmpty
    && answers.accepted + answers.refused == asked && answers.unanswered.isEmpty
    // The handlers' answers are the replies to their own inputs: as many accepted as the metrics counted
    // successes of the inputs they sent, as many refused as failures (only they send inputs that fail).
    && Int64(answers.accepted)
        == total("session.replies{outcome=success,input=connected")
        + total("session.replies{outcome=success,input=request")
        + total("session.replies{outcome=success,input=close")
    && Int64(answers.refused) == failures
print(consistent ? "check: consistent" : "check: INCONSISTENT")
exit(consistent ? 0 : 1)
