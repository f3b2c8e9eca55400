import Foundation
import Logging

/// Where the `JSONLogHandler`s write: standard output, one JSON object per line, for the first
/// `limit` records; the others are counted only. Thread safe.
final class JSONLogOutput: @unchecked Sendable {
    // Safe: every stored var is only touched with `lock` held.
    private let lock = NSLock()
    private let limit: Int
    private var printed = 0
    private var countsByLevel: [Logger.Level: Int] = [:]

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts a record, and prints the line `makeLine` makes while fewer than `limit` were printed.
    func write(level: Logger.Level, _ makeLine: () -> String) {
        lock.withLock {
            countsByLevel[level, default: 0] += 1
            guard printed < limit else { return }
            printed += 1
            print(makeLine())
        }
    }

    /// The records written, by level, and how many were printed.
    var counts: (byLevel: [Logger.Level: Int], printed: Int) {
        lock.withLock { (countsByLevel, printed) }
    }
}

/// A `LogHandler` that writes each record as one JSON object: time, level, label, message and
/// metadata (the logger's and the record's), e.g.
/// `{"time":"...","level":"info","label":"session","message":"Input accepted","metadata":{...}}`.
struct JSONLogHandler: LogHandler {
    let label: String
    let output: JSONLogOutput
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        output.write(level: event.level) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let time = Date().ISO8601Format(.init(includingFractionalSeconds: true))
            return "{\"time\":\(json(time)),\"level\":\(json(event.level.rawValue)),\"label\":\(json(label)),"
                + "\"message\":\(json(event.message.description)),\"metadata\":\(json(.dictionary(merged)))}"
        }
    }
}

/// A metadata value as JSON: strings as strings, dictionaries (keys sorted) as objects, arrays as
/// arrays.
private func json(_ value: Logger.MetadataValue) -> String {
    switch value {
    case let .string(string): return json(string)
    case let .stringConvertible(convertible): return json(convertible.description)
    case let .dictionary(dictionary):
        let fields = dictionary.sorted { $0.key < $1.key }.map { "\(json($0.key)):\(json($0.value))" }
        return "{" + fields.joined(separator: ",") + "}"
    case let .array(array):
        return "[" + array.map { json($0) }.joined(separator: ",") + "]"
    }
}

/// A string as a JSON string literal.
private func json(_ string: String) -> String {
    var escaped = "\""
    for scalar in string.unicodeScalars {
        switch scalar {
        case "\"": escaped += "\\\""
        case "\\": escaped += "\\\\"
        case "\n": escaped += "\\n"
        case "\r": escaped += "\\r"
        case "\t": escaped += "\\t"
        case let control where control.value < 0x20:
            let hex = String(control.value, radix: 16)
            escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        default: escaped.unicodeScalars.append(scalar)
        }
    }
    return escaped + "\""
}
