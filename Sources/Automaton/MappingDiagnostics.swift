// Rows written wrongly, made to fail with a message that says what to write instead. Each overload
// below is unavailable: it is only chosen when nothing valid fits, and then its message is the error.

/// A mis-ordered row, `fromState => toState | input`, before its effect (never a value: nothing makes
/// one). Only the unavailable operators below take it.
///
/// The mis-ordered `transition | input` is not a `MappingRow`, so that no operator that takes a row
/// takes it: a row whose input is misspelled, `.logni | .loggedOut => .loggingIn | effect`, is then
/// reported as the misspelled member (`type 'Input' has no member 'logni'`). Were `transition | input`
/// a row, the type checker would rather read that row as `(.logni | transition) | effect` with the
/// standard library's `SIMD` operator `|` on the left and this one on the right (two fixes weighing
/// less than a missing member), and report that `Transition` does not conform to `SIMD`. The price: a
/// mis-ordered row without an effect is reported as a `MisorderedMappingRow` that is not a
/// `MappingRow` (BENCHMARKS.md, "Type-checking the mapping DSL").
public enum MisorderedMappingRow<State: Sendable, Input: Sendable>: Sendable {}

/// A mis-ordered row, `fromState => toState | input`: the input comes first.
@available(
    *, unavailable,
    message:
        "write the input first: `input | fromState => toState | effect`, for example `.login | .loggedOut => .loggingIn | loginOK`"
)
public func | <State: Sendable, Input: Sendable>(
    transition: Transition<State>,
    input: Input
) -> MisorderedMappingRow<State, Input> {
    fatalError("unavailable")
}

/// A mis-ordered row with an effect, `fromState => toState | input | effect`: the input comes first.
@available(
    *, unavailable,
    message:
        "write the input first: `input | fromState => toState | effect`, for example `.login | .loggedOut => .loggingIn | loginOK`"
)
public func | <State: Sendable, Input: Sendable>(
    row: MisorderedMappingRow<State, Input>,
    effect: SignalProducer<Input, Never>
) -> MappingRow<State, Input> {
    fatalError("unavailable")
}

/// A mis-ordered row with an effect closure, `fromState => toState | input | { send in ... }`: the
/// input comes first.
@available(
    *, unavailable,
    message:
        "write the input first: `input | fromState => toState | effect`, for example `.login | .loggedOut => .loggingIn | loginOK`"
)
public func | <State: Sendable, Input: Sendable>(
    row: MisorderedMappingRow<State, Input>,
    effect: @escaping @Sendable (_ send: @escaping @Sendable (Input) -> Void) -> Void
) -> MappingRow<State, Input> {
    fatalError("unavailable")
}

/// A mis-ordered row with a computed effect, `fromState => toState | input | { state, input in ... }`:
/// the input comes first.
@available(
    *, unavailable,
    message:
        "write the input first: `input | fromState => toState | effect`, for example `.login | .loggedOut => .loggingIn | loginOK`"
)
public func | <State: Sendable, Input: Sendable>(
    row: MisorderedMappingRow<State, Input>,
    effect: @escaping @Sendable (State, Input) -> SignalProducer<Input, Never>
) -> MappingRow<State, Input> {
    fatalError("unavailable")
}

/// A row without `=>`, `input | fromState | toState`: the from-state and the to-state are joined by `=>`.
@available(
    *, unavailable,
    message:
        "join the from-state and the to-state with `=>`: `input | fromState => toState | effect`, for example `.login | .loggedOut => .loggingIn | loginOK`"
)
public func | <State: Sendable, Input: Sendable>(
    input: Input,
    fromState: State
) -> MappingRow<State, Input> {
    fatalError("unavailable")
}

/// The second half of a row without `=>`, `input | fromState | toState`.
@available(
    *, unavailable,
    message:
        "join the from-state and the to-state with `=>`: `input | fromState => toState | effect`, for example `.login | .loggedOut => .loggingIn | loginOK`"
)
public func | <State: Sendable, Input: Sendable>(
    row: MappingRow<State, Input>,
    toState: State
) -> MappingRow<State, Input> {
    fatalError("unavailable")
}

/// An effect that can fail: effects are `SignalProducer<Input, Never>`.
@available(
    *, unavailable,
    message:
        "an effect cannot fail: handle its error first, for example `effect.flatMapError { _ in SignalProducer(value: .failed) }` to turn it into an input, or `effect.flatMapError { _ in .empty }` to ignore it"
)
public func | <State: Sendable, Input: Sendable, Failure: Error>(
    row: MappingRow<State, Input>,
    effect: SignalProducer<Input, Failure>
) -> MappingRow<State, Input> {
    fatalError("unavailable")
}

/// An effect that can fail, in a mapping (`[Automaton<State, Input>.EffectMapping]`).
@available(
    *, unavailable,
    message:
        "an effect cannot fail: handle its error first, for example `effect.flatMapError { _ in SignalProducer(value: .failed) }` to turn it into an input, or `effect.flatMapError { _ in .empty }` to ignore it"
)
public func | <State: Sendable, Input: Sendable, Failure: Error>(
    mapping: @escaping Automaton<State, Input>.Mapping,
    effect: SignalProducer<Input, Failure>
) -> Automaton<State, Input>.EffectMapping {
    fatalError("unavailable")
}
