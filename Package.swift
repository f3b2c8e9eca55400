// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Automaton",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Signals", targets: ["Signals"]),
        .library(name: "Automaton", targets: ["Automaton"]),
        .executable(name: "automaton-demo", targets: ["AutomatonDemo"]),
    ],
    targets: [
        // Atomic word operations for the Signals delivery fast path (C, inlined; not a product).
        .target(name: "SignalsAtomics"),
        .target(name: "Signals", dependencies: ["SignalsAtomics"]),
        .target(name: "Automaton", dependencies: ["Signals"]),
        .executableTarget(name: "AutomatonDemo", dependencies: ["Automaton", "Signals"]),
        .testTarget(name: "SignalsTests", dependencies: ["Signals"]),
        .testTarget(name: "AutomatonTests", dependencies: ["Automaton", "Signals"]),
    ],
    swiftLanguageModes: [.v6]
)
