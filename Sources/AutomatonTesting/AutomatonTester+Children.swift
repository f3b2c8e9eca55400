import Automaton
import Signals
import Testing

extension AutomatonTester {
    /// Records the replies of the automaton's children of `kind` among its own steps, in one list:
    /// each as a `.child(key, reply)` step, before the parent's reply to the input it maps to. Records
    /// too each input the automaton's rows forward (`send(_:to:)`) to a child of `kind` that does not
    /// run (never started, ended, removed, waiting under `.queue`), which is dropped: an
    /// `.undelivered(input, to: kind, id)` step, after the parent's reply to the forwarding input (and
    /// no warning is printed for it).
    ///
    /// Call it before the children start: a child that started before is not recorded, and a call made
    /// while children of the kind run records an issue at `sourceLocation`. The tester records until it
    /// goes.
    ///
    /// ```swift
    /// tester.recordReplies(of: twoFactor)
    /// tester.send(.code("123"))
    /// tester.expect([
    ///     .success(.code("123"), .verifying, .verifying),
    ///     .child(twoFactor, .success(.enter("123"), .waiting, .accepted)),
    ///     .cancelled(.cancelled(by: .accepted), key: twoFactor.key),
    ///     .success(.accepted, .verifying, .loggedIn),
    /// ])
    /// ```
    public func recordReplies<ID, ChildState: Sendable & Equatable, ChildInput: Sendable & Equatable>(
        of kind: ChildAutomata<ID, ChildState, ChildInput>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let running = kind.ids(in: automaton)
        if !running.isEmpty {
            fail(
                "recordReplies(of: \(kind.name)) was called while \(running.count) of its children run "
                    + "(\(running.map { "\($0)" }.joined(separator: ", "))): their replies are not recorded. "
                    + "Call it before they start, right after making the tester.",
                at: sourceLocation)
        }
        let watch = kind.watchReplies(
            of: automaton,
            undelivered: { [recorded] key, input in
                recorded.withCriticalRegion { $0.append(Step(.undelivered(EffectKey(key), ChildValue(input)))) }
            }
        ) { [recorded] key, reply in
            recorded.withCriticalRegion { $0.append(.child(key, reply)) }
        }
        childWatches.withCriticalRegion { $0.append(watch) }
    }

    /// Records the replies of the automaton's child `child`, and the inputs forwarded to it while it
    /// does not run (`.undelivered(input, to: child)`); see `recordReplies(of:)` for a kind.
    public func recordReplies<ChildState: Sendable & Equatable, ChildInput: Sendable & Equatable>(
        of child: ChildAutomaton<ChildState, ChildInput>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        if child.current(in: automaton) != nil {
            fail(
                "recordReplies(of: \(child.name)) was called while that child runs: its replies are not recorded. "
                    + "Call it before it starts, right after making the tester.",
                at: sourceLocation)
        }
        let watch = child.watchReplies(
            of: automaton,
            undelivered: { [recorded] key, input in
                recorded.withCriticalRegion { $0.append(Step(.undelivered(EffectKey(key), ChildValue(input)))) }
            }
        ) { [recorded] key, reply in
            recorded.withCriticalRegion { $0.append(.child(key, reply)) }
        }
        childWatches.withCriticalRegion { $0.append(watch) }
    }
}

extension Step {
    /// A reply of the child `child`, recorded by `AutomatonTester.recordReplies(of:)`. The child's
    /// types come from `child`, so the reply is written as in the child's own tests:
    /// `.child(twoFactor, .success(.enter("123"), .waiting, .accepted))`.
    public static func child<ChildState: Sendable & Equatable, ChildInput: Sendable & Equatable>(
        _ child: ChildAutomaton<ChildState, ChildInput>, _ reply: Reply<ChildState, ChildInput>
    ) -> Step {
        .child(child.key, reply)
    }

    /// A reply of the child `id` of `kind`, recorded by `AutomatonTester.recordReplies(of:)`:
    /// `.child(downloads, "a", .success(.tick, .downloading(0), .downloading(1)))`.
    public static func child<ID, ChildState: Sendable & Equatable, ChildInput: Sendable & Equatable>(
        _ kind: ChildAutomata<ID, ChildState, ChildInput>, _ id: ID, _ reply: Reply<ChildState, ChildInput>
    ) -> Step {
        .child(kind.key(id), reply)
    }

    /// A reply of the child with key `key` (`ChildAutomata.key(_:)`, `ChildAutomaton.key`), recorded
    /// by `AutomatonTester.recordReplies(of:)`. The reply's type must be written out
    /// (`Reply<ChildState, ChildInput>.success(...)`): `.child(child, reply)` and
    /// `.child(kind, id, reply)` infer it.
    public static func child<ID, ChildState: Sendable & Equatable, ChildInput: Sendable & Equatable>(
        _ key: ChildKey<ID>, _ reply: Reply<ChildState, ChildInput>
    ) -> Step {
        Step(.child(EffectKey(key), ChildValue(reply)))
    }
}

extension Step {
    /// An input the automaton's rows forwarded to `child` while it did not run: dropped. Recorded by
    /// `AutomatonTester.recordReplies(of:)`: `.undelivered(.enter("123"), to: twoFactor)`.
    public static func undelivered<ChildState: Sendable & Equatable, ChildInput: Sendable & Equatable>(
        _ input: ChildInput, to child: ChildAutomaton<ChildState, ChildInput>
    ) -> Step {
        Step(.undelivered(EffectKey(child.key), ChildValue(input)))
    }

    /// An input the automaton's rows forwarded to the child `id` of `kind` while none ran: dropped.
    /// Recorded by `AutomatonTester.recordReplies(of:)`: `.undelivered(.pause, to: transfers, "b.zip")`.
    public static func undelivered<ID, ChildState: Sendable & Equatable, ChildInput: Sendable & Equatable>(
        _ input: ChildInput, to kind: ChildAutomata<ID, ChildState, ChildInput>, _ id: ID
    ) -> Step {
        Step(.undelivered(EffectKey(kind.key(id)), ChildValue(input)))
    }
}

/// A child's reply or input, type-erased, compared with its own `==`.
@usableFromInline
struct ChildValue: Sendable, Equatable {
    let value: any Sendable
    let description: String
    let isEqual: @Sendable (any Sendable) -> Bool

    init<Value: Sendable & Equatable>(_ value: Value) {
        self.value = value
        description = "\(value)"
        isEqual = { other in (other as? Value) == value }
    }

    @usableFromInline
    static func == (lhs: ChildValue, rhs: ChildValue) -> Bool {
        lhs.isEqual(rhs.value)
    }
}
