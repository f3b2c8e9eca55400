import Foundation
import Logging

/// One record a `RecordingLogHandler` received: its level, message and metadata (the handler's and
/// the record's), the metadata values as text.
struct LogRecord: Equatable, CustomStringConvertible {
    var level: Logger.Level
    var message: String
    var metadata: [String: String]

    init(_ level: Logger.Level, _ message: String, _ metadata: [String: String] = [:]) {
        self.level = level
        self.message = message
        self.metadata = metadata
    }

    var description: String {
        let fields = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "\(level) \(message) [\(fields)]"
    }
}

/// Where a `RecordingLogHandler` keeps its records; thread safe.
final class LogRecords: @unchecked Sendable {
    // Safe: `records` is only touched with `lock` held.
    private let lock = NSLock()
    private var records: [LogRecord] = []

    func append(_ record: LogRecord) {
        lock.withLock { records.append(record) }
    }

    var all: [LogRecord] {
        lock.withLock { records }
    }

    var count: Int {
        lock.withLock { records.count }
    }
}

/// An in-memory `LogHandler`: records every record it is given in `records`.
struct RecordingLogHandler: LogHandler {
    let records: LogRecords
    /// Kept only by the handler (and the loggers that copy it), to tell when they are all gone.
    let token = Token()
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    final class Token: Sendable {}

    init(records: LogRecords) {
        self.records = records
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        records.append(LogRecord(event.level, event.message.description, merged.mapValues(\.description)))
    }
}

extension Logger {
    /// A logger at `.trace` that records into `records`.
    static func recording(into records: LogRecords, level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "test") { _ in RecordingLogHandler(records: records) }
        logger.logLevel = level
        return logger
    }
}
