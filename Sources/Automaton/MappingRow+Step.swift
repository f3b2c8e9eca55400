// A row whose next state and effect come from one closure: `.on(.retry) { state, _ in ... }`.
//
// With separate closures, the effect closure sees the from-state, so a row that computes its next
// state (a retry's next attempt) computed it twice, once for the state and once for the effect, and
// the effect's half had to handle states the row never moves from. One closure computes the step once.
//
// Static members of `MappingRow`, not `|` overloads: in a table the element type is `MappingRow`, so
// `.on(...)` is found there at once, and every other row's `|` has no more overloads to try (one more
// `|` overload, even `@_disfavoredOverload`, cost the 30-row tables of `Benchmarks/typecheck-table`
// 5-9% more constraint scopes).

extension MappingRow {
    /// A row for the input equal to `input`, whose next state and effect `step` computes together
    /// from the current state and the input, or `nil` when the row does not apply (a guard: the next
    /// row is tried):
    ///
    /// ```swift
    /// .on(.retry) { order, _ in
    ///     guard case let .failed(attempt) = order, attempt < 3 else { return nil }
    ///     return (.paying(attempt: attempt + 1), charge(attempt: attempt + 1))
    /// }
    /// ```
    ///
    /// `step` is part of the mapping: it is called on the processing thread, with no lock held, at
    /// most once per input (only for `input`), in table order, and must be pure. The effect it returns
    /// (`.empty` for none; keyed or not) is started after the transition, exactly once, as any row's.
    @inlinable
    public static func on(
        _ input: Input,
        _ step: @escaping @Sendable (_ state: State, _ input: Input) -> (State, SignalProducer<Input, Never>)?
    ) -> MappingRow where Input: Equatable {
        MappingRow(
            inputKey: input,
            keyIndexing: MappingKeyIndexing(),
            matchesInput: { $0 == input },
            matchesState: nil,
            outcome: .computed(outcome(of: step))
        )
    }

    /// A row for every input the predicate accepts (for example `any`), whose next state and effect
    /// `step` computes together from the current state and the input; `nil` declines the row. Called
    /// as ``on(_:_:)-(Input,_)``'s is.
    @inlinable @_disfavoredOverload
    public static func on(
        _ input: @escaping @Sendable (Input) -> Bool,
        _ step: @escaping @Sendable (_ state: State, _ input: Input) -> (State, SignalProducer<Input, Never>)?
    ) -> MappingRow {
        MappingRow(matchesInput: input, matchesState: nil, outcome: .computed(outcome(of: step)))
    }

    /// A row for every input of the case `inputCase` reads (`\.paid`), whose next state and effect
    /// `step` computes together from the current state and the input's associated value (read once
    /// per input); `nil` declines the row:
    /// `.on(\.receipt) { order, receipt in order.isPaying ? (.paid(receipt), ship(receipt)) : nil }`.
    @inlinable
    public static func on<Payload>(
        _ inputCase: KeyPath<Input, Payload?> & Sendable,
        _ step: @escaping @Sendable (_ state: State, _ value: Payload) -> (State, SignalProducer<Input, Never>)?
    ) -> MappingRow {
        MappingRow(
            matchesInput: nil,
            matchesState: nil,
            outcome: .computed { state, input in
                guard let value = input[keyPath: inputCase], let (toState, effect) = step(state, value) else {
                    return nil
                }
                return (toState, effect.startsNothing ? nil : effect)
            }
        )
    }

    /// The row outcome of `step`: `.empty` (with no directive) is no effect.
    @inlinable
    static func outcome(
        of step: @escaping @Sendable (State, Input) -> (State, SignalProducer<Input, Never>)?
    ) -> @Sendable (State, Input) -> (State, SignalProducer<Input, Never>?)? {
        { state, input in
            guard let (toState, effect) = step(state, input) else { return nil }
            return (toState, effect.startsNothing ? nil : effect)
        }
    }
}
