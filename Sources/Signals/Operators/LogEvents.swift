/// Which events `logEvents` writes a line for.
///
/// A set of flags: combine them (`[.value, .failed]`) or use `.all`. `starting`, `started` and
/// `disposed` only exist for producer runs; a signal's `logEvents` ignores them.
public struct LoggedEvents: OptionSet, Hashable, Sendable {
    /// The bits of the set, one per kind of event.
    public let rawValue: UInt8

    /// Creates a set from its raw bits.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Each `.value` event.
    public static let value = LoggedEvents(rawValue: 1 << 0)
    /// The `.failed` event.
    public static let failed = LoggedEvents(rawValue: 1 << 1)
    /// The `.completed` event.
    public static let completed = LoggedEvents(rawValue: 1 << 2)
    /// The `.interrupted` event.
    public static let interrupted = LoggedEvents(rawValue: 1 << 3)
    /// A producer run is about to run its start handler.
    public static let starting = LoggedEvents(rawValue: 1 << 4)
    /// A producer run's start handler has returned.
    public static let started = LoggedEvents(rawValue: 1 << 5)
    /// A producer run has ended (after its terminal event).
    public static let disposed = LoggedEvents(rawValue: 1 << 6)

    /// The four kinds of stream event: values and the three terminal events.
    public static let events: LoggedEvents = [.value, .failed, .completed, .interrupted]
    /// Everything.
    public static let all: LoggedEvents = [.events, .starting, .started, .disposed]

    /// The flag for `event`'s kind.
    init<Value, Error>(_ event: Event<Value, Error>) {
        switch event {
        case .value: self = .value
        case .failed: self = .failed
        case .completed: self = .completed
        case .interrupted: self = .interrupted
        }
    }
}

/// One log line: `[2026-11-22T04:40:01.123Z] [identifier] what`, or without the identifier part when
/// the identifier is empty.
private func logLine(identifier: String, _ what: String) -> String {
    let timestamp = UTCTimestamp.now()
    return identifier.isEmpty ? "[\(timestamp)] \(what)" : "[\(timestamp)] [\(identifier)] \(what)"
}

extension Signal {
    /// A signal that forwards every event of this signal and first hands `logger` one timestamped line
    /// describing it, for each kind of event in `events`.
    ///
    /// A line reads `[2026-11-22T04:40:01.123Z] [login] value(loggedIn)`: the wall-clock time in UTC with
    /// millisecond precision, the identifier (left out, brackets included, when empty), and the event's
    /// `description` (`value(…)`, `failed(…)`, `completed`, `interrupted`).
    ///
    /// `logger` runs on the thread that delivers the event, serially, before the event is forwarded,
    /// with no lock held. The default logger `print`s the line.
    ///
    /// Logging starts at once and goes on until this signal terminates, whether or not anything
    /// observes or keeps the returned signal, so the result may be ignored:
    /// `replies.logEvents(identifier: "x")`. (Unlike other operators, and unlike ReactiveSwift's, whose
    /// result detaches once nobody holds or observes it: a log is wanted for as long as the stream runs.
    /// Call it once per stream, not per subscriber.)
    @discardableResult
    public func logEvents(
        identifier: String = "",
        events: LoggedEvents = .all,
        logger: @escaping @Sendable (String) -> Void = { print($0) }
    ) -> Signal {
        // The logging observer is attached to this signal itself, not to the result, so it does not
        // end with the result; the result's input is kept by it and forwards each logged event.
        let (logged, input) = Signal.pipe()
        observe(
            Observer { event in
                if events.contains(LoggedEvents(event)) {
                    logger(logLine(identifier: identifier, event.description))
                }
                input.send(event)
            })
        return logged
    }
}

extension SignalProducer {
    /// A producer whose runs log every event of a run of this producer, and also the run's `starting`,
    /// `started` and `disposed` moments, one timestamped line each through `logger`, for each kind in
    /// `events`. See `Signal.logEvents(identifier:events:logger:)` for the line format.
    ///
    /// The lines of one run come in this order: `starting`, the events sent synchronously by the start
    /// handler, `started`, later events; `disposed` follows the terminal event (see
    /// `on(starting:started:event:value:failed:completed:interrupted:terminated:disposed:)`).
    /// `logger` runs with no lock held.
    public func logEvents(
        identifier: String = "",
        events: LoggedEvents = .all,
        logger: @escaping @Sendable (String) -> Void = { print($0) }
    ) -> SignalProducer {
        @Sendable func log(_ kind: LoggedEvents, _ what: String) -> (@Sendable () -> Void)? {
            guard events.contains(kind) else { return nil }
            return { logger(logLine(identifier: identifier, what)) }
        }
        return on(
            starting: log(.starting, "starting"),
            started: log(.started, "started"),
            event: { event in
                if events.contains(LoggedEvents(event)) {
                    logger(logLine(identifier: identifier, event.description))
                }
            },
            disposed: log(.disposed, "disposed")
        )
    }
}
