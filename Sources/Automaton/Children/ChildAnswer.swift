import Signals

/// What became of an input a parent forwarded to a child with `ChildAutomata.send(_:to:answer:)` (or
/// `ChildAutomaton.send(_:answer:)`): the child's reply to it, or why there is none.
///
/// The parent learns it as the input its `answer` closure makes of it, processed like any effect's
/// input, so its rows can react to a child's refusal:
///
/// ```swift
/// \.paused | { count, _ in count } | { _, id in
///     transfers.send(.pause, to: id) { answer in answer.isSuccess ? nil : .pauseRefused(id) }
/// }
/// ```
public enum ChildAnswer<State: Sendable, Input: Sendable>: Sendable {
    /// The child processed the input: its reply, `.success` or `.failure` (refused: no row of the
    /// child took it in its state).
    case reply(Reply<State, Input>)
    /// No child runs under the id: it never started, has ended, was removed or replaced, or waits for
    /// its key under `.queue`. The input was not sent.
    case noChild
    /// The child ended before processing the input: it was released (removed, replaced, or its parent
    /// released or interrupted) or its input was interrupted while the input waited in its queue
    /// (`.released`, `.interrupted`), or it takes no more outside inputs (`.inputCompleted`). Never
    /// `.cancelled`: nothing cancels the wait.
    case notProcessed(AskError)

    /// The child's reply, if it processed the input.
    public var reply: Reply<State, Input>? {
        if case let .reply(reply) = self { return reply }
        return nil
    }

    /// Whether the child accepted the input: a `.success` reply. False for a refusal (a `.failure`
    /// reply), no child, and an input not processed.
    public var isSuccess: Bool {
        reply?.isSuccess ?? false
    }

    /// The answer of `ask`'s callback form.
    @inlinable
    init(_ result: Result<Reply<State, Input>, AskError>) {
        switch result {
        case let .success(reply): self = .reply(reply)
        case let .failure(error): self = .notProcessed(error)
        }
    }
}

extension ChildAnswer: Equatable where State: Equatable, Input: Equatable {}
extension ChildAnswer: Hashable where State: Hashable, Input: Hashable {}

extension ChildAnswer: CustomStringConvertible {
    /// One line for logs: `reply success(pause, running => paused)`, `no child`, or
    /// `not processed: automaton released` (the child, as `AskError` says it).
    public var description: String {
        switch self {
        case let .reply(reply): return "reply \(reply)"
        case .noChild: return "no child"
        case let .notProcessed(error): return "not processed: \(error.reason)"
        }
    }
}
