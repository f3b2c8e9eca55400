import Foundation
import Testing

/// Asserts that an exported diagram is exactly `expected` plus a final newline, line for line, and, when the environment
/// names a directory in `AUTOMATON_DIAGRAM_DIR`, writes it there as `name` (CI renders every `.dot`
/// file written there with `dot -Tsvg`, so that each DOT export the tests check is also proven to
/// render, and checks the structure of every `.mmd` file with `.ci/check-mermaid`).
func expectDiagram(
    _ actual: String,
    _ expected: String,
    named name: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    if let directory = ProcessInfo.processInfo.environment["AUTOMATON_DIAGRAM_DIR"], !directory.isEmpty {
        let url = URL(fileURLWithPath: directory).appendingPathComponent(name)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try actual.write(to: url, atomically: true, encoding: .utf8)
        } catch {
            Issue.record("could not write \(url.path): \(error)", sourceLocation: sourceLocation)
        }
    }
    let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
    let expectedLines = (expected + "\n").split(separator: "\n", omittingEmptySubsequences: false)
    #expect(actualLines == expectedLines, "\(name):\n\(actual)", sourceLocation: sourceLocation)
}
