import Automaton

/// Gauntlet's traffic light (seed 001): the inputs are the target states, and the one table row
/// accepts a target when the current light allows it (`shouldTransition(to:)`).
enum TrafficLight: String, Sendable, Equatable, CustomStringConvertible {
    case red, yellow, green
    var description: String { rawValue }

    func shouldTransition(to target: TrafficLight) -> Bool {
        switch (self, target) {
        case (.red, .green), (.green, .yellow), (.yellow, .red): true
        default: false
        }
    }
}

@Sendable
func runTrafficLightDemo() -> Bool {
    let scheduler = QueueScheduler(label: "demo.traffic-light")
    let automaton = Automaton<TrafficLight, TrafficLight>(
        state: .red,
        table: [
            any | { light, target in light.shouldTransition(to: target) ? target : nil }
        ])
    return play(
        "traffic light",
        automaton: automaton,
        scheduler: scheduler,
        script: [
            (.zero, .green), (.milliseconds(50), .red), (.milliseconds(100), .yellow), (.milliseconds(150), .red),
        ],
        expectedReplies: [
            "success(green, red => green)",
            "failure(red, green)",
            "success(yellow, green => yellow)",
            "success(red, yellow => red)",
        ],
        expectedFinalState: .red
    )
}

/// A connection whose states and inputs carry values (Gauntlet's associated values): rows bind the
/// input's value by case (`\.session`) and compute the next state and the effect from the current
/// state, so a failed attempt n is retried as attempt n + 1.
enum ConnectionState: Sendable, Equatable, CustomStringConvertible {
    case idle, connecting(attempt: Int), connected(session: String), failed(attempt: Int)

    var attempt: Int? { if case let .connecting(attempt) = self { attempt } else { nil } }
    var failedAttempt: Int? { if case let .failed(attempt) = self { attempt } else { nil } }
    var description: String {
        switch self {
        case .idle: "idle"
        case let .connecting(attempt): "connecting(\(attempt))"
        case let .connected(session): "connected(\(session))"
        case let .failed(attempt): "failed(\(attempt))"
        }
    }
}

enum ConnectionInput: Sendable, Equatable, CustomStringConvertible {
    case connect, opened(session: String), dropped, retry

    var session: String? { if case let .opened(session) = self { session } else { nil } }
    var description: String {
        switch self {
        case .connect: "connect"
        case let .opened(session): "opened(\(session))"
        case .dropped: "dropped"
        case .retry: "retry"
        }
    }
}

@Sendable
func runConnectionDemo() -> Bool {
    let scheduler = QueueScheduler(label: "demo.connection")
    // The server drops the first attempt and accepts the second, 50 ms after each.
    let connect: @Sendable (Int) -> SignalProducer<ConnectionInput, Never> = { attempt in
        SignalProducer(value: attempt == 1 ? .dropped : .opened(session: "s\(attempt)"))
            .delay(.milliseconds(50), on: scheduler)
    }
    let automaton = Automaton<ConnectionState, ConnectionInput>(
        state: .idle, strategy: .latest,
        table: [
            .connect | .idle => .connecting(attempt: 1) | connect(1),
            \.session | { state, session in state.attempt.map { _ in .connected(session: session) } },
            .dropped | { state, _ in state.attempt.map { .failed(attempt: $0) } },
            .retry | { state, _ in state.failedAttempt.map { .connecting(attempt: $0 + 1) } }
                | { state, _ in connect((state.failedAttempt ?? 0) + 1) },
        ])
    return play(
        "connection",
        automaton: automaton,
        scheduler: scheduler,
        script: [(.zero, .connect), (.milliseconds(100), .retry)],
        expectedReplies: [
            "success(connect, idle => connecting(1))",
            "success(dropped, connecting(1) => failed(1))",
            "success(retry, failed(1) => connecting(2))",
            "success(opened(s2), connecting(2) => connected(s2))",
        ],
        expectedFinalState: .connected(session: "s2")
    )
}
