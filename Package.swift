// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Automaton",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Signals", targets: ["Signals"]),
        .library(name: "Automaton", targets: ["Automaton"]),
        // For tests only: an exhaustive automaton tester and a recorder for any stream. Apps don't link it.
        .library(name: "AutomatonTesting", targets: ["AutomatonTesting"]),
        .executable(name: "automaton-demo", targets: ["AutomatonDemo"]),
    ],
    targets: [
        // Atomic word operations for the Signals delivery fast path (C, inlined; not a product).
        .target(name: "SignalsAtomics"),
        .target(name: "Signals", dependencies: ["SignalsAtomics"]),
        .target(name: "Automaton", dependencies: ["Signals"]),
        .target(name: "AutomatonTesting", dependencies: ["Automaton", "Signals"]),
        .executableTarget(name: "AutomatonDemo", dependencies: ["Automaton", "Signals"]),
        .testTarget(name: "SignalsTests", dependencies: ["Signals"]),
        .testTarget(name: "AutomatonTests", dependencies: ["Automaton", "AutomatonTesting", "Signals"]),
        .testTarget(name: "AutomatonTestingTests", dependencies: ["AutomatonTesting", "Automaton", "Signals"]),
    ],
    swiftLanguageModes: [.v6]
)
