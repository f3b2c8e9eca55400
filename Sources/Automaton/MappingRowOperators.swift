// The operators that make the rows of a mapping table written in place (see `MappingRow`):
// `input | transition`, `case row | effect` and `row | effect`.

// MARK: - input | transition: table rows

/// A table row for the input equal to `input`, in the transition's from-states.
@inlinable
public func | <State: Sendable, Input: Equatable & Sendable>(
    input: Input,
    transition: Transition<State>
) -> MappingRow<State, Input> {
    MappingRow(
        inputKey: input,
        keyIndexing: MappingKeyIndexing(),
        matchesInput: { $0 == input },
        matchesState: transition.matches,
        outcome: .fixed(transition.toState, nil)
    )
}

/// A table row for every input the predicate accepts (for example `any`), in the transition's
/// from-states. (Disfavored, as in MappingDSL.swift: tried only when the input is not a value.)
@inlinable @_disfavoredOverload
public func | <State: Sendable, Input: Sendable>(
    input: @escaping @Sendable (Input) -> Bool,
    transition: Transition<State>
) -> MappingRow<State, Input> {
    MappingRow(matchesInput: input, matchesState: transition.matches, outcome: .fixed(transition.toState, nil))
}

/// A table row for the input equal to `input`, in every state, computing the next state from the
/// current one: `.increment | { $0 + 1 }`.
@inlinable
public func | <State: Sendable, Input: Equatable & Sendable>(
    input: Input,
    nextState: @escaping @Sendable (State) -> State
) -> MappingRow<State, Input> {
    MappingRow(
        inputKey: input,
        keyIndexing: MappingKeyIndexing(),
        matchesInput: { $0 == input },
        matchesState: nil,
        outcome: .computed { state, _ in (nextState(state), nil) }
    )
}

/// A table row for the input equal to `input`, computing the next state from the current state and
/// the input; `nil` means the row does not apply (a guard), and the next row is tried:
/// `.retry | { state, _ in state.attempt.map { .connecting(attempt: $0 + 1) } }`.
@inlinable
public func | <State: Sendable, Input: Equatable & Sendable>(
    input: Input,
    nextState: @escaping @Sendable (State, Input) -> State?
) -> MappingRow<State, Input> {
    MappingRow(
        inputKey: input,
        keyIndexing: MappingKeyIndexing(),
        matchesInput: { $0 == input },
        matchesState: nil,
        outcome: .computed { state, input in nextState(state, input).map { ($0, nil) } }
    )
}

/// A table row for every input the predicate accepts (for example `any`), computing the next state
/// from the current state and the input; `nil` means the row does not apply (a guard):
/// `any | { light, target in light.shouldTransition(to: target) ? target : nil }`.
@inlinable
public func | <State: Sendable, Input: Sendable>(
    input: @escaping @Sendable (Input) -> Bool,
    nextState: @escaping @Sendable (State, Input) -> State?
) -> MappingRow<State, Input> {
    MappingRow(
        matchesInput: input,
        matchesState: nil,
        outcome: .computed { state, input in nextState(state, input).map { ($0, nil) } }
    )
}

/// A table row for every input of the case `inputCase` reads (`\.opened`), computing the next state
/// from the current state and the input's associated value; `nil` means the row does not apply (a
/// guard): `\.opened | { state, session in state.isConnecting ? .connected(session) : nil }`.
///
/// (Disfavored: where an effect closure follows, `| { state, session in ... }`, the row is a
/// `MappingCaseRow`, so that the closure receives the associated value too.)
@inlinable @_disfavoredOverload
public func | <State: Sendable, Input: Sendable, InputValue>(
    inputCase: KeyPath<Input, InputValue?> & Sendable,
    nextState: @escaping @Sendable (State, InputValue) -> State?
) -> MappingRow<State, Input> {
    MappingCaseRow(inputCase: inputCase, nextState: nextState).row
}

// MARK: - case row | effect: the effect receives the associated value

/// A row for the inputs of one case, read through a key path to an optional (`\.opened`), as it is
/// before an effect computed from its associated value: `\.opened | { state, session in ... }` followed
/// by `| { state, session in effect }`. Followed by that effect, it is a `MappingRow`, and the
/// associated value is read once per input, for both closures.
///
/// A table row needs no name for it: without an effect closure, `\.opened | { ... }` is a
/// `MappingRow` at once, and so is `\.opened | { ... } | producer`. Its closures are called as a
/// row's are: on the processing thread, with no lock held, the effect closure only when the row
/// applies. (For compatibility, an effect closure whose body only type-checks with the whole input,
/// `{ _, input in ... input.session ... }`, still receives the input, through the `MappingRow` form.)
public struct MappingCaseRow<State: Sendable, Input: Sendable, Payload>: Sendable {
    /// The case: the associated value of an input of that case, `nil` for any other input.
    @usableFromInline let inputCase: KeyPath<Input, Payload?> & Sendable
    /// The next state from the current state and the associated value; `nil` declines.
    @usableFromInline let nextState: @Sendable (State, Payload) -> State?

    @inlinable
    init(inputCase: KeyPath<Input, Payload?> & Sendable, nextState: @escaping @Sendable (State, Payload) -> State?) {
        self.inputCase = inputCase
        self.nextState = nextState
    }

    /// The row without an effect.
    @inlinable
    var row: MappingRow<State, Input> {
        let inputCase = inputCase
        let nextState = nextState
        return MappingRow(
            matchesInput: nil,
            matchesState: nil,
            outcome: .computed { state, input in
                guard let value = input[keyPath: inputCase], let toState = nextState(state, value) else { return nil }
                return (toState, nil)
            }
        )
    }
}

/// A row for every input of the case `inputCase` reads (`\.opened`), computing the next state from
/// the current state and the input's associated value, before the effect that follows it:
/// `\.opened | { state, session in ... } | { state, session in effect }` (see `MappingCaseRow`).
@inlinable
public func | <State: Sendable, Input: Sendable, Payload>(
    inputCase: KeyPath<Input, Payload?> & Sendable,
    nextState: @escaping @Sendable (State, Payload) -> State?
) -> MappingCaseRow<State, Input, Payload> {
    MappingCaseRow(inputCase: inputCase, nextState: nextState)
}

/// The case row, starting the effect `effect` computes from the from-state and the input's
/// associated value, the value the row's case path read (not the whole input):
/// `\.fetch | { _, id in .loading(id) } | { _, id in api.fetch(id) }`; `.empty` for none.
///
/// The associated value is read once per input. `effect` is called as part of the mapping, once when
/// the row applies (after its next-state closure accepted the input), on the processing thread,
/// with no lock held: it should only build the producer, which is started after the transition,
/// exactly once.
@inlinable
public func | <State: Sendable, Input: Sendable, Payload>(
    row: MappingCaseRow<State, Input, Payload>,
    effect: @escaping @Sendable (State, Payload) -> SignalProducer<Input, Never>
) -> MappingRow<State, Input> {
    let inputCase = row.inputCase
    let nextState = row.nextState
    return MappingRow(
        matchesInput: nil,
        matchesState: nil,
        outcome: .computed { state, input in
            guard let value = input[keyPath: inputCase], let toState = nextState(state, value) else { return nil }
            let producer = effect(state, value)
            return (toState, producer.startsNothing ? nil : producer)
        }
    )
}

// MARK: - row | effect

/// The row, starting `effect` after its transition. Use `.empty` for no effect.
@inlinable
public func | <State: Sendable, Input: Sendable>(
    row: MappingRow<State, Input>,
    effect: SignalProducer<Input, Never>
) -> MappingRow<State, Input> {
    row.with(effect: effect)
}

/// The row, with an effect written as a closure that receives `send` (the Stated style). `effect` is
/// called once per transition the row makes, after the transition, on the processing thread; it may
/// call `send` at once or later, from any thread. The effect lives as long as `send` does (see
/// `|(_:_:)` for mappings). To key it, write `.keyed(key, policy) { send in ... }` instead (see
/// `SignalProducer.keyed(_:_:_:)`).
@inlinable
public func | <State: Sendable, Input: Sendable>(
    row: MappingRow<State, Input>,
    effect: @escaping @Sendable (_ send: @escaping @Sendable (Input) -> Void) -> Void
) -> MappingRow<State, Input> {
    row.with(effect: SignalProducer.closureEffect(effect))
}

/// The row, starting the effect `effect` computes from the from-state and the input
/// (`attempt n → connect(n + 1)`); `.empty` for none. `effect` is called as part of the mapping, once
/// when the row applies, on the processing thread: it should only build the producer, which is
/// started after the transition, exactly once.
@inlinable
public func | <State: Sendable, Input: Sendable>(
    row: MappingRow<State, Input>,
    effect: @escaping @Sendable (State, Input) -> SignalProducer<Input, Never>
) -> MappingRow<State, Input> {
    row.with(effect: effect)
}

extension SignalProducer where Error == Never {
    /// Whether this effect does nothing at all: `.empty` carrying no directive. A keyed `.empty` still
    /// starts (and ends at once), and a `.cancel(key)` row cancels.
    @inlinable
    var startsNothing: Bool { isEmpty && !hasDirective }
}
