// The mapping table DSL: `input | fromState => toState | effect`.
//
// `=>` binds tighter than `|`, so `.login | .loggedOut => .loggingIn | effect` reads as
// `(.login | (.loggedOut => .loggingIn)) | effect`.

precedencegroup AutomatonTransitionPrecedence {
    associativity: left
    higherThan: AdditionPrecedence
}

/// Builds the `fromState => toState` part of a mapping row.
infix operator => : AutomatonTransitionPrecedence

/// The `fromState => toState` part of a mapping row: which states it applies to, and the state it
/// leads to. Made with `=>`.
public struct Transition<State: Sendable>: Sendable {
    /// Whether the row applies in a given state.
    public let matches: @Sendable (State) -> Bool
    /// The state the row leads to.
    public let toState: State

    /// A transition from every state `matches` accepts to `toState`.
    @inlinable
    public init(from matches: @escaping @Sendable (State) -> Bool, to toState: State) {
        self.matches = matches
        self.toState = toState
    }
}

// Type-checking cost: the type checker cannot tell `.a => .b` from the predicate or array forms until it
// has tried them, and it tries every overload that is not disfavored even after one has worked. The
// predicate and array forms (of `=>`, and of the input in `input | transition`) are therefore
// `@_disfavoredOverload`: tried only when the value form fails, which it always does for a predicate
// or an array (a function is not `Equatable`; an array literal is not a state). That cuts the work
// for a table by about a third (BENCHMARKS.md, "Type-checking the mapping DSL") and changes no row's
// meaning: in a row's table or mapping, where a disfavored form applies, the value form does not.

/// From the state equal to `fromState`, to `toState`.
@inlinable
public func => <State: Equatable & Sendable>(fromState: State, toState: State) -> Transition<State> {
    Transition(from: { $0 == fromState }, to: toState)
}

/// From every state the predicate accepts (for example `any`), to `toState`.
@inlinable @_disfavoredOverload
public func => <State: Sendable>(
    fromState: @escaping @Sendable (State) -> Bool,
    toState: State
) -> Transition<State> {
    Transition(from: fromState, to: toState)
}

/// From any of the states in `fromStates`, to `toState`.
@inlinable @_disfavoredOverload
public func => <State: Equatable & Sendable>(fromStates: [State], toState: State) -> Transition<State> {
    Transition(from: { fromStates.contains($0) }, to: toState)
}

/// A row that applies to the input equal to `input` in the transition's from-states.
@inlinable
public func | <State: Sendable, Input: Equatable & Sendable>(
    input: Input,
    transition: Transition<State>
) -> Automaton<State, Input>.Mapping {
    { state, receivedInput in
        receivedInput == input && transition.matches(state) ? transition.toState : nil
    }
}

/// A row that applies to every input the predicate accepts (for example `any`), in the transition's
/// from-states.
@inlinable @_disfavoredOverload
public func | <State: Sendable, Input: Sendable>(
    input: @escaping @Sendable (Input) -> Bool,
    transition: Transition<State>
) -> Automaton<State, Input>.Mapping {
    { state, receivedInput in
        input(receivedInput) && transition.matches(state) ? transition.toState : nil
    }
}

/// A row that applies to the input equal to `input` in every state, computing the next state from the
/// current one: `.increment | { $0 + 1 }`.
@inlinable
public func | <State: Sendable, Input: Equatable & Sendable>(
    input: Input,
    nextState: @escaping @Sendable (State) -> State
) -> Automaton<State, Input>.Mapping {
    { state, receivedInput in
        receivedInput == input ? nextState(state) : nil
    }
}

/// A row with an effect: when `mapping` applies, `effect` is started after the transition. Use
/// `.empty` for no effect.
@inlinable
public func | <State: Sendable, Input: Sendable>(
    mapping: @escaping Automaton<State, Input>.Mapping,
    effect: SignalProducer<Input, Never>
) -> Automaton<State, Input>.EffectMapping {
    { state, input in
        mapping(state, input).map { ($0, effect) }
    }
}

/// A row with an effect written as a closure that receives `send` (the Stated style): when `mapping`
/// applies, `effect` is called once after the transition, on the processing thread, and may call
/// `send` at once or later from any thread.
///
/// Such an effect lives as long as its `send` does, as a ReactiveSwift run lives as long as its input
/// observer: if `effect` does not keep `send` (nor hand it to something that does), the effect has
/// ended when `effect` returns; if it keeps it, for example in a callback or a `Task`, the effect ends
/// when the last copy of `send` is released. It also ends when it is replaced (under `.latest`) or
/// the automaton is released or interrupted; from then on `send` does nothing. An input sent through
/// `send` is this effect's own input: under `.latest` it replaces what this effect started, never the
/// effect itself, and the effects it starts are this effect's children. An ended effect is
/// forgotten, with everything its closure captured, and counts no more towards completing `replies`
/// after the input completes. Keep `send` no longer than the effect should run. To key it, write
/// `.keyed(key, policy) { send in ... }` instead (see `SignalProducer.keyed(_:_:_:)`).
@inlinable
public func | <State: Sendable, Input: Sendable>(
    mapping: @escaping Automaton<State, Input>.Mapping,
    effect: @escaping @Sendable (_ send: @escaping @Sendable (Input) -> Void) -> Void
) -> Automaton<State, Input>.EffectMapping {
    mapping | SignalProducer.closureEffect(effect)
}

/// Matches anything: use it as a from-state (`.reset | any => .idle`) or as an input
/// (`any | .broken => .broken`).
@inlinable
public func any<Value>(_: Value) -> Bool {
    true
}

/// Combines mapping rows into one mapping: the first row that applies wins.
@inlinable
public func reduce<State, Input>(
    _ mappings: [Automaton<State, Input>.Mapping]
) -> Automaton<State, Input>.Mapping {
    let rows = mappings
    return { state, input in
        for row in rows {
            if let toState = row(state, input) { return toState }
        }
        return nil
    }
}

/// Combines mapping rows with effects into one mapping: the first row that applies wins.
@inlinable
public func reduce<State, Input>(
    _ mappings: [Automaton<State, Input>.EffectMapping]
) -> Automaton<State, Input>.EffectMapping {
    let rows = mappings
    return { state, input in
        for row in rows {
            if let result = row(state, input) { return result }
        }
        return nil
    }
}
