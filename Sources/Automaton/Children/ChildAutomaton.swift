import Signals

/// The id of the one child of a ``ChildAutomaton``: its key is `ChildKey(name, ChildAutomatonID())`,
/// described by the name alone.
public struct ChildAutomatonID: Hashable, Sendable, CustomStringConvertible {
    /// The only id.
    @inlinable public init() {}
    /// Empty: a ``ChildKey`` of this id is described by its name.
    public var description: String { "" }
}

/// A child automaton that a parent runs one of at a time, under a name: a login machine that hosts a
/// two-factor machine while it is verifying.
///
/// A ``ChildAutomata`` with one id; see it for the lifetime and order rules.
///
/// ```swift
/// let twoFactor = ChildAutomaton("twoFactor") { makeVerification(code: "123") }
/// let signIn = Automaton<SignIn, SignInInput>(
///     state: .signedOut,
///     table: [
///         .submit | .signedOut => .verifying | twoFactor.start(replies: verdict),
///         \.code | { state, _ in state == .verifying ? .verifying : nil } | { _, code in
///             twoFactor.send(.enter(code))
///         },
///         .verified | .verifying => .signedIn | twoFactor.stop(),
///         .refused | .verifying => .signedOut | twoFactor.stop(),
///         .cancel | .verifying => .signedOut | twoFactor.stop(),
///     ])
/// ```
///
/// where `verdict` maps the child's replies to the parent's inputs (`.accepted` to `.verified`, `.rejected` to
/// `.refused`, `nil` to ignore a reply), and `var code: String?` on `SignInInput` matches `.code(_)`.
public struct ChildAutomaton<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let kind: ChildAutomata<ChildAutomatonID, State, Input>

    /// A child named `name`, made by `make` on each start.
    @inlinable
    public init(_ name: String, make: @escaping @Sendable () -> Automaton<State, Input>) {
        kind = ChildAutomata(name) { _ in make() }
    }

    /// The child's name.
    public var name: String { kind.name }

    /// The effect key of the child: what its effect events carry.
    public var key: ChildKey<ChildAutomatonID> { kind.key(ChildAutomatonID()) }

    /// An effect that starts the child and feeds its replies through `replies` to the parent. Keyed by
    /// ``key`` under `policy`: by default a new start replaces a running child.
    @inlinable
    public func start<ParentInput: Sendable>(
        _ policy: EffectPolicy = .latest,
        replies: @escaping @Sendable (Reply<State, Input>) -> ParentInput?
    ) -> SignalProducer<ParentInput, Never> {
        kind.start(ChildAutomatonID(), policy, replies: replies)
    }

    /// An effect that starts the child and feeds each state it enters (not its initial state) through
    /// `states` to the parent.
    @inlinable
    public func start<ParentInput: Sendable>(
        _ policy: EffectPolicy = .latest,
        states: @escaping @Sendable (State) -> ParentInput?
    ) -> SignalProducer<ParentInput, Never> {
        kind.start(ChildAutomatonID(), policy, states: states)
    }

    /// An effect that starts the child and tells the parent nothing of it.
    @inlinable
    public func start<ParentInput: Sendable>(_ policy: EffectPolicy = .latest) -> SignalProducer<ParentInput, Never> {
        kind.start(ChildAutomatonID(), policy)
    }

    /// A row's effect that sends `input` to the running child; see ``ChildAutomata/send(_:to:)``.
    @inlinable
    public func send<ParentInput: Sendable>(_ input: Input) -> SignalProducer<ParentInput, Never> {
        kind.send(input, to: ChildAutomatonID())
    }

    /// A row's effect that sends `input` to the running child and feeds what became of it through
    /// `answer` to the parent: its reply, `.noChild`, or `.notProcessed`; see
    /// ``ChildAutomata/send(_:to:answer:)``.
    @inlinable
    public func send<ParentInput: Sendable>(
        _ input: Input, answer: @escaping @Sendable (ChildAnswer<State, Input>) -> ParentInput?
    ) -> SignalProducer<ParentInput, Never> {
        kind.send(input, to: ChildAutomatonID(), answer: answer)
    }

    /// An effect that cancels the child, which releases it, before the parent's new state and reply.
    public func stop<ParentInput: Sendable>() -> SignalProducer<ParentInput, Never> {
        kind.remove(ChildAutomatonID())
    }

    /// `parent`'s running child, if any; see ``ChildAutomata/child(_:in:)``.
    public func current<ParentState, ParentInput>(in parent: Automaton<ParentState, ParentInput>)
        -> Automaton<State, Input>?
    {
        kind.child(ChildAutomatonID(), in: parent)
    }

    /// The effect events of `parent`'s running child, if any, reached without keeping the child alive;
    /// see ``ChildAutomata/effectEvents(of:in:)``.
    public func effectEvents<ParentState, ParentInput>(in parent: Automaton<ParentState, ParentInput>)
        -> Signal<EffectEvent<Input>, Never>?
    {
        kind.effectEvents(of: ChildAutomatonID(), in: parent)
    }

    /// The replies of `parent`'s running child, if any, reached without keeping the child alive; see
    /// ``ChildAutomata/replies(of:in:)``.
    public func replies<ParentState, ParentInput>(in parent: Automaton<ParentState, ParentInput>)
        -> Signal<Reply<State, Input>, Never>?
    {
        kind.replies(of: ChildAutomatonID(), in: parent)
    }

    /// The state of `parent`'s running child, if any.
    public func state<ParentState, ParentInput>(in parent: Automaton<ParentState, ParentInput>) -> State? {
        kind.state(of: ChildAutomatonID(), in: parent)
    }
}
