// swift-tools-version:6.0
import Foundation
import PackageDescription

// W2-W5, the chain and the memory figure need the Automaton engine (BRIEF §5). They are compiled when
// the root package has it (a source file under ../Sources/Automaton declaring `public final class
// Automaton`), so this package also builds on a checkout from before the engine. AUTOMATON_ENGINE=1 or
// =0 in the environment forces the choice. (SwiftPM caches this manifest: after the engine lands, a
// `swift package reset` or touching this file makes it look again.)
// Likewise the DSL variants of W2 and W3 need the mapping DSL (a source file there declaring `reduce`);
// AUTOMATON_DSL=1 or =0 forces that choice.
func rootAutomatonSources(
    in subdirectory: String = "/../Sources/Automaton", contain needles: [String], unlessForcedBy variable: String
) -> Bool {
    if let forced = ProcessInfo.processInfo.environment[variable] { return forced == "1" }
    let directory = Context.packageDirectory + subdirectory
    let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return files.contains { file in
        guard file.hasSuffix(".swift"),
            let text = try? String(contentsOfFile: directory + "/" + file, encoding: .utf8)
        else { return false }
        return needles.contains { text.contains($0) }
    }
}

let automatonEngine = rootAutomatonSources(
    contain: ["public final class Automaton<", "public final class Automaton "], unlessForcedBy: "AUTOMATON_ENGINE")
let automatonDSL =
    automatonEngine
    && rootAutomatonSources(
        contain: ["public func reduce"], unlessForcedBy: "AUTOMATON_DSL")
// And the state-graph exploration needs `StateGraph` (a file under ../Sources/Automaton/Graph declaring
// it); AUTOMATON_GRAPH=1 or =0 forces that choice.
let automatonGraph =
    automatonEngine
    && rootAutomatonSources(
        in: "/../Sources/Automaton/Graph", contain: ["public struct StateGraph<"], unlessForcedBy: "AUTOMATON_GRAPH")

// And the child automata (issue 33) need `ChildAutomata` (a file under ../Sources/Automaton/Children
// declaring it); AUTOMATON_CHILDREN=1 or =0 forces that choice.
let automatonChildren =
    automatonEngine
    && rootAutomatonSources(
        in: "/../Sources/Automaton/Children", contain: ["public struct ChildAutomata<"],
        unlessForcedBy: "AUTOMATON_CHILDREN")

// And the request and reply workloads (`ask`) need `Automaton.ask` (a file under
// ../Sources/Automaton/Asking declaring it); AUTOMATON_ASK=1 or =0 forces that choice.
let automatonAsk =
    automatonEngine
    && rootAutomatonSources(
        in: "/../Sources/Automaton/Asking", contain: ["public func ask("], unlessForcedBy: "AUTOMATON_ASK")

// The benchmark package: a separate package so that only it depends on other packages (OpenCombine as
// the peer). It depends on the root package by path; the hot loops live in `SignalsBenchmarks`, so the
// libraries' `@inlinable` entry points are specialized here, as in a user's module.
let package = Package(
    name: "SignalsBenchmarks",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    dependencies: [
        .package(name: "Automaton", path: ".."),
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", exact: "0.14.0"),
        // The server integrations, for what attaching each costs per input (the `integrations` group).
        .package(name: "AutomatonIntegrations", path: "../Integrations"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        // Counts heap allocations by defining malloc & co. in the executable (Linux/glibc only; elsewhere
        // the counter reports "not available").
        .target(name: "AllocationCounter"),
        // The hand-written baselines' lock: on Linux a futex lock, as cheap uncontended as the library's.
        .target(name: "BaselineLock"),
        .executableTarget(
            name: "SignalsBenchmarks",
            dependencies: [
                "AllocationCounter",
                "BaselineLock",
                .product(name: "Signals", package: "Automaton"),
                .product(name: "Automaton", package: "Automaton"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "AutomatonLogging", package: "AutomatonIntegrations"),
                .product(name: "AutomatonMetrics", package: "AutomatonIntegrations"),
                .product(name: "AutomatonTracing", package: "AutomatonIntegrations"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: (automatonEngine ? [.define("AUTOMATON_ENGINE")] : [])
                + (automatonDSL ? [.define("AUTOMATON_DSL")] : [])
                + (automatonGraph ? [.define("AUTOMATON_GRAPH")] : [])
                + (automatonChildren ? [.define("AUTOMATON_CHILDREN")] : [])
                + (automatonAsk ? [.define("AUTOMATON_ASK")] : [])
        ),
    ],
    swiftLanguageModes: [.v6]
)
