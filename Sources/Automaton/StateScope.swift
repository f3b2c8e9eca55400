import Signals

// State-scoped effects and delayed inputs: declared once for a set of states, in the table
// (`.during(states) { state in effect }`, `.after(delay, in: states, send: input, on: scheduler)`),
// started when the machine enters the set and cancelled when it leaves it.
//
// How: the table's transition is wrapped (`StateScopes.wrapping(_:)`). After a row applies, each scope
// compares the from-state and the to-state: a scope left (or restarted) adds the cancellation of its
// key, a scope entered (or restarted) adds its effect, keyed; the row's effect becomes
// `.effects(exits, rowEffect, entries...)`, so the exits are decided with the row's cancellations
// (before the state and reply) and the entries start after the row's own effect, after the reply. A
// table without scopes is not wrapped: its rows cost what they cost.

/// When a state-scoped effect that keeps running through a transition is restarted instead: cancelled
/// (as if the machine had left its states) and started again with the new state.
public struct ScopeRestart: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Hashable, Sendable {
        case never, onStateChange, onEveryTransition
    }

    @usableFromInline let kind: Kind

    @inlinable
    init(_ kind: Kind) {
        self.kind = kind
    }

    /// A transition that stays in the scope's states keeps the effect running (the default, and
    /// XState's for a transition that does not re-enter its state).
    public static let never = ScopeRestart(.never)
    /// A transition to another state of the scope (a different value: `.paying(attempt: 1)` to
    /// `.paying(attempt: 2)`) restarts the effect with the new state; a transition to the same value
    /// does not. Needs `State: Equatable`.
    public static let onStateChange = ScopeRestart(.onStateChange)
    /// Every successful input whose from-state and to-state are both in the scope restarts the
    /// effect, even one that keeps the same state (XState's `reenter: true`).
    public static let onEveryTransition = ScopeRestart(.onEveryTransition)

    /// `never`, `onStateChange` or `onEveryTransition`.
    public var description: String {
        switch kind {
        case .never: return "never"
        case .onStateChange: return "onStateChange"
        case .onEveryTransition: return "onEveryTransition"
        }
    }
}

/// The key of a state-scoped effect declared without one: the scope's place among the table's
/// declarations, and what it is, for `effectEvents` and logs (`during 0`, `after 10.0 seconds 1`).
public struct StateScopeKey: Hashable, Sendable, CustomStringConvertible {
    /// The scope's place among its table's scope declarations, from 0, in table order.
    public let index: Int
    /// `during` or `after <delay>`.
    public let kind: String

    @usableFromInline
    init(index: Int, kind: String) {
        self.index = index
        self.kind = kind
    }

    /// e.g. `during 0`, `after 10.0 seconds 1`.
    public var description: String { "\(kind) \(index)" }
}

/// One scope declaration of a table: which states it covers, its effect, its key and policy, when it
/// restarts; for an `after`, the delay and the input, for the state graph.
@usableFromInline
struct StateScope<State: Sendable, Input: Sendable>: Sendable {
    /// Whether a state is in the scope (user code).
    @usableFromInline let contains: @Sendable (State) -> Bool
    /// The effect for the state entered (user code: builds the producer).
    @usableFromInline let effect: @Sendable (State) -> SignalProducer<Input, Never>
    /// The user's key, or `nil` for the scope's own (`StateScopeKey`, given by the table).
    @usableFromInline let key: EffectKey?
    @usableFromInline let policy: EffectPolicy
    /// Whether a transition from the first state to the second, both in the scope, restarts it;
    /// `nil`: never.
    @usableFromInline let restarts: (@Sendable (State, State) -> Bool)?
    /// For `after`: the delay and the input it sends.
    @usableFromInline let delayed: (delay: Duration, input: Input)?

    @inlinable
    init(
        contains: @escaping @Sendable (State) -> Bool,
        effect: @escaping @Sendable (State) -> SignalProducer<Input, Never>,
        key: EffectKey?,
        policy: EffectPolicy,
        restarts: (@Sendable (State, State) -> Bool)?,
        delayed: (delay: Duration, input: Input)? = nil
    ) {
        self.contains = contains
        self.effect = effect
        self.key = key
        self.policy = policy
        self.restarts = restarts
        self.delayed = delayed
    }
}

/// A table's scopes, keyed, wrapped around its transition.
@usableFromInline
struct StateScopes<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let scopes: [StateScope<State, Input>]
    /// Each scope's key: the user's, or its own `StateScopeKey`.
    @usableFromInline let keys: [EffectKey]

    @inlinable
    init(_ scopes: [StateScope<State, Input>]) {
        self.scopes = scopes
        keys = scopes.enumerated().map { index, scope in
            scope.key
                ?? EffectKey(
                    StateScopeKey(index: index, kind: scope.delayed.map { "after \($0.delay)" } ?? "during"))
        }
    }

    /// `decide`, then, when a row applied, the exits and entries of the scopes added to its effect.
    @inlinable
    func wrapping(_ decide: @escaping MappingKeyIndexing<State, Input>.Decide)
        -> MappingKeyIndexing<State, Input>.Decide
    {
        let scopes = self
        return { state, input, next, effect in
            guard decide(state, input, &next, &effect) else { return false }
            guard let toState = next else { return true }
            scopes.addExitsAndEntries(from: state, to: toState, to: &effect)
            return true
        }
    }

    /// Adds to `effect` the cancellation of the scopes a transition from `from` to `to` leaves or
    /// restarts, then the effects of those it enters or restarts. Calls the scopes' closures (user
    /// code): on the processing thread, with no lock held.
    @inlinable
    func addExitsAndEntries(from: State, to: State, to effect: inout SignalProducer<Input, Never>?) {
        var exits: [EffectKey] = []
        var entries: [SignalProducer<Input, Never>] = []
        for position in scopes.indices {
            let scope = scopes[position]
            let wasIn = scope.contains(from)
            let isIn = scope.contains(to)
            let restarts = wasIn && isIn && (scope.restarts?(from, to) ?? false)
            if wasIn && (!isIn || restarts) { exits.append(keys[position]) }
            if isIn && (!wasIn || restarts) {
                entries.append(scope.effect(to).keyed(keys[position], scope.policy))
            }
        }
        guard !exits.isEmpty || !entries.isEmpty else { return }
        var parts: [SignalProducer<Input, Never>] = []
        if !exits.isEmpty { parts.append(.exiting(exits)) }
        if let rowEffect = effect { parts.append(rowEffect) }
        parts.append(contentsOf: entries)
        let combined = SignalProducer.effects(parts)
        // Exits always in an `.effects` list, even of one element: the engine reads them only there.
        effect =
            exits.isEmpty || combined.directiveBox?.several != nil
            ? combined : SignalProducer.merge(parts).attaching(EffectDirectiveBox(.several(EffectList(parts))))
    }

    /// The effects of the scopes `state` is in: what a machine made in `state` starts.
    @inlinable
    func entries(of state: State) -> [SignalProducer<Input, Never>] {
        scopes.indices.compactMap { position in
            let scope = scopes[position]
            return scope.contains(state) ? scope.effect(state).keyed(keys[position], scope.policy) : nil
        }
    }
}

extension SignalProducer where Error == Never {
    /// The cancellation of the state-scoped effects of `keys`, whose states the machine leaves.
    @inlinable
    static func exiting(_ keys: [EffectKey]) -> SignalProducer {
        SignalProducer.empty.attaching(EffectDirectiveBox(.exit(keys)))
    }
}
