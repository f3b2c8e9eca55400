import Automaton
import Signals
import Testing

/// Model-based tests from a state graph, in the spirit of XState's test paths: replays input paths
/// (by default the graph's `edgeCoveringPaths`) against live automata and checks that every reply is
/// what the graph says.
///
/// ```swift
/// // `makeLoginMachine(scheduler:)`: your factory, whose effects are scheduled on `scheduler`.
/// let graph = makeLoginMachine(scheduler: TestScheduler()).graph()
/// let tester = StateGraphTester(graph) { scheduler in     // a fresh automaton for each path
///     makeLoginMachine(scheduler: scheduler)
/// }
/// tester.replay()                                 // the graph's edge-covering paths
/// tester.replay(runningEffectsFor: .seconds(1))   // the same, letting effects run between inputs
/// ```
///
/// Each path gets a fresh `TestScheduler` and a fresh automaton from `makeAutomaton`, which must start
/// in the path's start state and schedule its effects' inputs on that scheduler. A step along an
/// `after` edge (one with a `delay`, from a table's `.after` declaration) sends nothing: the scheduler
/// advances by the delay, and the declaration's input must get the reply an input would (so its
/// `.after` must be scheduled on the given scheduler too). For each step:
///
/// - Without running effects (the default), the scheduler never moves, so the path is followed
///   exactly: the automaton must be in the edge's from-state, the step's input must get exactly
///   `.success(input, from, to)`, and nothing else may happen (an effect that sends synchronously
///   is reported, since it moves the machine off the path). With `checkingRejections`, the first
///   time a path reaches a state, each input the graph says it rejects is sent first and must get
///   exactly `.failure(input, state)` (a failure changes nothing, so the path goes on); the state a
///   path ends in is checked so too.
/// - With `runningEffectsFor: duration`, after each input the scheduler advances by `duration`, and
///   every reply, the effects' included, must agree with the graph: a success must be one of its
///   edges, a failure one of its rejections, from a state it found, with an input of its alphabet.
///   The path's inputs are sent in order from wherever the effects took the machine.
///
/// Failures are reported through Swift Testing's `Issue.record` at the `replay` call's source
/// location, one per diverging path (the path stops there), and kept in `failures`; `replay` returns
/// whether everything agreed, for XCTest users. Drive a tester from one thread; it is not `Sendable`.
public final class StateGraphTester<State: Hashable & Sendable, Input: Equatable & Sendable> {
    /// The graph the automata are checked against.
    public let graph: StateGraph<State, Input>
    private let makeAutomaton: (TestScheduler) -> Automaton<State, Input>

    /// Every failure reported so far, as text.
    public private(set) var failures: [String] = []

    /// A tester of the automata `makeAutomaton` builds (one per path, given the path's fresh virtual
    /// clock) against `graph`.
    public init(_ graph: StateGraph<State, Input>, makeAutomaton: @escaping (TestScheduler) -> Automaton<State, Input>)
    {
        self.graph = graph
        self.makeAutomaton = makeAutomaton
    }

    /// Replays `paths` (by default the graph's `edgeCoveringPaths`), each against a fresh automaton,
    /// and checks every reply against the graph (see the type's documentation).
    ///
    /// - Parameters:
    ///   - paths: the paths to replay, in order; `nil` (the default) replays the graph's
    ///     `edgeCoveringPaths`.
    ///   - duration: how far to advance the virtual clock after each input (`runningEffectsFor:`), so
    ///     that effects run; `nil` (the default) never advances it and follows each path exactly.
    ///   - checkingRejections: without running effects, also send each input the graph says a state
    ///     rejects, the first time a path reaches that state, and expect a failure.
    ///   - sourceLocation: where failures are reported; the call's location by default.
    /// - Returns: whether every path agreed with the graph.
    @discardableResult
    public func replay(
        _ paths: [StateGraph<State, Input>.Path]? = nil,
        runningEffectsFor duration: Duration? = nil,
        checkingRejections: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let paths = paths ?? graph.edgeCoveringPaths
        let failuresBefore = failures.count
        var rejectionsChecked = Set<Int>()
        for (number, path) in paths.enumerated() {
            let name = "path #\(number + 1) [\(path.inputs.map { "\($0)" }.joined(separator: ", "))]"
            let failure: String?
            if let duration {
                failure = replayRunningEffects(path, advancingBy: duration)
            } else {
                failure = replayExactly(path, checkingRejections: checkingRejections, checked: &rejectionsChecked)
            }
            if let failure {
                let message = "\(name): \(failure)"
                failures.append(message)
                Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
            }
        }
        return failures.count == failuresBefore
    }

    // MARK: Replays

    /// Follows `path` exactly, the clock standing still. Returns what went wrong, if anything.
    private func replayExactly(_ path: StateGraph<State, Input>.Path, checkingRejections: Bool, checked: inout Set<Int>)
        -> String?
    {
        let scheduler = TestScheduler()
        let automaton = makeAutomaton(scheduler)
        let replies = record(automaton)
        if let wrongStart = check(start: path.start, of: automaton) { return wrongStart }

        /// Sends each input the graph says the state at `stateIndex` rejects, once per replay.
        func checkRejections(at stateIndex: Int, _ at: String) -> String? {
            guard checkingRejections, checked.insert(stateIndex).inserted else { return nil }
            let state = graph.states[stateIndex]
            for inputIndex in graph.rejectedInputIndices(fromIndex: stateIndex) {
                let input = graph.inputs[inputIndex]
                automaton.send(input)
                let expected: [Reply<State, Input>] = [.failure(input, state)]
                let actual = replies.take()
                if actual != expected {
                    return "\(at), rejected input \(input): expected \(describe(expected)), got \(describe(actual))"
                }
            }
            return nil
        }

        for (step, edge) in path.edges.enumerated() {
            let at = "step \(step + 1) (\(edge.input))"
            if automaton.state.value != edge.from {
                return "\(at): the automaton is in \(automaton.state.value), the graph's path in \(edge.from)"
            }
            if let failure = checkRejections(at: edge.fromIndex, at) { return failure }
            if let delay = edge.delay {
                scheduler.advance(by: delay)  // an `after` edge: the machine sends its input by itself
            } else {
                automaton.send(edge.input)
            }
            let expected: [Reply<State, Input>] = [.success(edge.input, edge.from, edge.to)]
            let actual = replies.take()
            if actual != expected {
                var message = "\(at): expected \(describe(expected)), got \(describe(actual))"
                if actual.first == expected.first {
                    message += " (an effect sent inputs at once; schedule effects on the given TestScheduler)"
                }
                return message
            }
        }
        if let last = path.edges.last {
            return checkRejections(at: last.toIndex, "at the end, in \(last.to)")
        }
        return nil
    }

    /// Sends the inputs of `path` in order, letting effects run, and checks every reply against the
    /// graph. Returns what went wrong, if anything.
    private func replayRunningEffects(_ path: StateGraph<State, Input>.Path, advancingBy duration: Duration) -> String?
    {
        let scheduler = TestScheduler()
        let automaton = makeAutomaton(scheduler)
        let replies = record(automaton)
        if let wrongStart = check(start: path.start, of: automaton) { return wrongStart }

        for (step, edge) in path.edges.enumerated() {
            let input = edge.input
            if let delay = edge.delay {
                scheduler.advance(by: delay)  // an `after` edge: the machine sends its input by itself
            } else {
                automaton.send(input)
            }
            scheduler.advance(by: duration)
            for reply in replies.take() {
                if let disagreement = disagreement(with: reply) {
                    return "step \(step + 1) (\(input)): \(reply): \(disagreement)"
                }
            }
        }
        return nil
    }

    // MARK: Checks

    private func check(start: State, of automaton: Automaton<State, Input>) -> String? {
        let state = automaton.state.value
        return state == start ? nil : "the automaton starts in \(state), the path in \(start)"
    }

    /// Why `reply` does not agree with the graph, or `nil` if it does.
    private func disagreement(with reply: Reply<State, Input>) -> String? {
        guard let fromIndex = graph.index(of: reply.fromState) else {
            return "the graph has no state \(reply.fromState)"
        }
        let delayed = graph.edges(from: reply.fromState).first { $0.delay != nil && $0.input == reply.input }
        guard let inputIndex = graph.inputs.firstIndex(of: reply.input) else {
            guard let delayed else { return "the input is not in the graph's alphabet" }
            return reply.toState == delayed.to ? nil : "the graph leads to \(delayed.to)"
        }
        // An input of the alphabet sent by an `after` declaration goes where its edge says.
        let edge = graph.edge(fromIndex: fromIndex, inputIndex: inputIndex) ?? delayed
        switch (reply.toState, edge) {
        case let (toState?, edge?):
            return toState == edge.to ? nil : "the graph leads to \(edge.to)"
        case (_?, nil):
            return graph.rejectedInputIndices(fromIndex: fromIndex).contains(inputIndex)
                ? "the graph rejects this input here" : "the graph has no transition for it here"
        case let (nil, edge?):
            return "the graph leads to \(edge.to)"
        case (nil, nil):
            return nil
        }
    }

    private func record(_ automaton: Automaton<State, Input>) -> ReplyLog<State, Input> {
        let log = ReplyLog<State, Input>()
        automaton.replies.observeValues { reply in log.append(reply) }
        return log
    }

    private func describe(_ replies: [Reply<State, Input>]) -> String {
        replies.isEmpty ? "no reply" : replies.map { "\($0)" }.joined(separator: ", ")
    }
}

/// The replies of one automaton, recorded from any thread.
private final class ReplyLog<State: Sendable, Input: Sendable>: Sendable {
    private let replies = Locked<[Reply<State, Input>]>([])

    func append(_ reply: Reply<State, Input>) {
        replies.withCriticalRegion { $0.append(reply) }
    }

    /// The replies recorded since the last call.
    func take() -> [Reply<State, Input>] {
        replies.withCriticalRegion { replies in
            defer { replies = [] }
            return replies
        }
    }
}
