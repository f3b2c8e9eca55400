// swift-tools-version:6.0
import PackageDescription

// Server integrations: a separate package so that the root package keeps zero dependencies. Each
// product depends on the root package by path and on one package of the server ecosystem.
let package = Package(
    name: "AutomatonIntegrations",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        // Replies and effect events as structured swift-log records.
        .library(name: "AutomatonLogging", targets: ["AutomatonLogging"]),
        // Reply counters, a running-effects gauge and an input-processing timer through swift-metrics.
        .library(name: "AutomatonMetrics", targets: ["AutomatonMetrics"]),
        // A span per processed input and a child span per effect through swift-distributed-tracing.
        .library(name: "AutomatonTracing", targets: ["AutomatonTracing"]),
        // A server-shaped example: a few hundred session machines driven from several threads.
        .executable(name: "session-server", targets: ["SessionServerExample"]),
    ],
    dependencies: [
        .package(name: "Automaton", path: ".."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    ],
    targets: [
        // The lock the metrics and tracing products share (not a product; underscored: not API).
        .target(name: "_AutomatonIntegrationSupport"),
        .target(
            name: "AutomatonLogging",
            dependencies: [
                .product(name: "Automaton", package: "Automaton"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "AutomatonMetrics",
            dependencies: [
                "_AutomatonIntegrationSupport",
                .product(name: "Automaton", package: "Automaton"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .target(
            name: "AutomatonTracing",
            dependencies: [
                "_AutomatonIntegrationSupport",
                .product(name: "Automaton", package: "Automaton"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .executableTarget(
            name: "SessionServerExample",
            dependencies: [
                "AutomatonLogging", "AutomatonMetrics", "AutomatonTracing",
                .product(name: "Automaton", package: "Automaton"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        .testTarget(
            name: "AutomatonLoggingTests",
            dependencies: [
                "AutomatonLogging",
                .product(name: "Automaton", package: "Automaton"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "AutomatonMetricsTests",
            dependencies: [
                "AutomatonMetrics",
                .product(name: "Automaton", package: "Automaton"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "AutomatonTracingTests",
            dependencies: [
                "AutomatonTracing",
                .product(name: "Automaton", package: "Automaton"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
