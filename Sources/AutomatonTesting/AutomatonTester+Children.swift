import Automaton
import Signals

extension AutomatonTester {
    /// Records the replies of the automaton's children of `kind` among its own steps, in one list:
    /// each as a `.child(key, reply)` step, before the parent's reply to the input it maps to.
    ///
    /// Call it before the children start: a child that started before is not recorded. The tester
    /// records until it goes.
    ///
    /// ```swift
    /// tester.recordReplies(of: twoFactor)
    /// tester.send(.code("123"))
    /// tester.expect([
    ///     .success(.code("123"), .verifying, .verifying),
    ///     .child(twoFactor.key, Reply<TwoFactorState, TwoFactorInput>.success(.enter("123"), .waiting, .accepted)),
    ///     .cancelled(.cancelled(by: .accepted), key: twoFactor.key),
    ///     .success(.accepted, .verifying, .loggedIn),
    /// ])
    /// ```
    public func recordReplies<ID, ChildState: Sendable & Equatable, ChildInput: Sendable & Equatable>(
        of kind: ChildAutomata<ID, ChildState, ChildInput>
    ) {
        let watch = kind.watchReplies(of: automaton) { [recorded] key, reply in
            recorded.withCriticalRegion { $0.append(.child(key, reply)) }
        }
        childWatches.withCriticalRegion { $0.append(watch) }
    }

    /// Records the replies of the automaton's child `child`; see `recordReplies(of:)` for a kind.
    public func recordReplies<ChildState: Sendable & Equatable, ChildInput: Sendable & Equatable>(
        of child: ChildAutomaton<ChildState, ChildInput>
    ) {
        let watch = child.watchReplies(of: automaton) { [recorded] key, reply in
            recorded.withCriticalRegion { $0.append(.child(key, reply)) }
        }
        childWatches.withCriticalRegion { $0.append(watch) }
    }
}

extension Step {
    /// A reply of the child with key `key` (`ChildAutomata.key(_:)`, `ChildAutomaton.key`), recorded
    /// by `AutomatonTester.recordReplies(of:)`.
    public static func child<ID, ChildState: Sendable & Equatable, ChildInput: Sendable & Equatable>(
        _ key: ChildKey<ID>, _ reply: Reply<ChildState, ChildInput>
    ) -> Step {
        Step(.child(EffectKey(key), ChildReplyValue(reply)))
    }
}

/// A child's reply, type-erased, compared with its own `==`.
@usableFromInline
struct ChildReplyValue: Sendable, Equatable {
    let reply: any Sendable
    let description: String
    let isEqual: @Sendable (any Sendable) -> Bool

    init<ChildState: Sendable & Equatable, ChildInput: Sendable & Equatable>(_ reply: Reply<ChildState, ChildInput>) {
        self.reply = reply
        description = "\(reply)"
        isEqual = { other in (other as? Reply<ChildState, ChildInput>) == reply }
    }

    @usableFromInline
    static func == (lhs: ChildReplyValue, rhs: ChildReplyValue) -> Bool {
        lhs.isEqual(rhs.reply)
    }
}
