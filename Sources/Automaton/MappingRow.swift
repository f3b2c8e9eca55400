// The rows of a mapping table written in place, `Automaton(state:strategy:table: [rows])` (see
// `MappingTable`). Each row is a concrete struct, so that in the table, where its type is known,
// `.login | .loggedOut => .loggingIn | effect` resolves without searching the operators.

/// One row of a mapping table: which inputs and states it applies to, the state it leads to, and the
/// effect it starts. Made with the table operators, `input | fromState => toState | effect`.
///
/// A row is a value: it starts nothing until an automaton applies it, and its closures are called on
/// the thread processing the input, with no lock held.
public struct MappingRow<State: Sendable, Input: Sendable>: Sendable {
    /// What the row does once its input and state tests pass.
    @usableFromInline
    enum Outcome: Sendable {
        /// Always the same state and effect (`nil`: none).
        case fixed(State, SignalProducer<Input, Never>?)
        /// Computed from the state and input; `nil` when the row declines them after all.
        case computed(@Sendable (State, Input) -> (State, SignalProducer<Input, Never>?)?)
    }

    /// The input the row applies to, when it applies to one input value; tables index rows by it.
    @usableFromInline let inputKey: Input?
    /// For a row with an `inputKey`: how to find an input among a table's distinct keys (made where
    /// `Input: Equatable` is known, so its comparisons are direct).
    @usableFromInline let keyIndexing: MappingKeyIndexing<State, Input>?
    /// The input test, `nil` when every input passes; a row with an `inputKey` tests equality to it.
    @usableFromInline let matchesInput: (@Sendable (Input) -> Bool)?
    /// The from-state test, `nil` when every state passes.
    @usableFromInline let matchesState: (@Sendable (State) -> Bool)?
    @usableFromInline let outcome: Outcome
    /// For a state-scoped declaration (`.during`, `.after`), the scope: such a row is no row, it
    /// never applies to an input; the table wraps its transition with it (see `StateScopes`).
    @usableFromInline let scope: StateScope<State, Input>?

    @inlinable
    init(
        inputKey: Input? = nil,
        keyIndexing: MappingKeyIndexing<State, Input>? = nil,
        matchesInput: (@Sendable (Input) -> Bool)?,
        matchesState: (@Sendable (State) -> Bool)?,
        outcome: Outcome,
        scope: StateScope<State, Input>? = nil
    ) {
        self.inputKey = inputKey
        self.keyIndexing = keyIndexing
        self.matchesInput = matchesInput
        self.matchesState = matchesState
        self.outcome = outcome
        self.scope = scope
    }

    /// A state-scoped declaration: a row no input applies to, carrying `scope`.
    @inlinable
    init(scope: StateScope<State, Input>) {
        self.init(matchesInput: nil, matchesState: nil, outcome: .computed { _, _ in nil }, scope: scope)
    }

    /// The same row, starting `effect` after its transition (`.empty`: no effect; a keyed `.empty` or
    /// a `.cancel(key)` row is kept, for its directive).
    @inlinable
    func with(effect: SignalProducer<Input, Never>) -> MappingRow {
        precondition(scope == nil, Self.scopeTakesNoRowEffect)
        let effect: SignalProducer<Input, Never>? = effect.startsNothing ? nil : effect
        let outcome: Outcome
        switch self.outcome {
        case let .fixed(toState, _):
            outcome = .fixed(toState, effect)
        case let .computed(compute):
            outcome = .computed { state, input in compute(state, input).map { ($0.0, effect) } }
        }
        return MappingRow(
            inputKey: inputKey, keyIndexing: keyIndexing, matchesInput: matchesInput, matchesState: matchesState,
            outcome: outcome
        )
    }

    /// The same row, starting the effect `effect` computes from the from-state and the input.
    @inlinable
    func with(effect: @escaping @Sendable (State, Input) -> SignalProducer<Input, Never>) -> MappingRow {
        precondition(scope == nil, Self.scopeTakesNoRowEffect)
        let outcome: Outcome
        switch self.outcome {
        case let .fixed(toState, _):
            outcome = .computed { state, input in
                let producer = effect(state, input)
                return (toState, producer.startsNothing ? nil : producer)
            }
        case let .computed(compute):
            outcome = .computed { state, input in
                guard let (toState, _) = compute(state, input) else { return nil }
                let producer = effect(state, input)
                return (toState, producer.startsNothing ? nil : producer)
            }
        }
        return MappingRow(
            inputKey: inputKey, keyIndexing: keyIndexing, matchesInput: matchesInput, matchesState: matchesState,
            outcome: outcome
        )
    }

    /// The message of a state-scoped declaration followed by `| effect`.
    @usableFromInline static var scopeTakesNoRowEffect: String {
        "a state-scoped declaration (`.during`, `.after`) takes no `| effect`: return the effect from its closure, "
            + "`.during(states) { state in effect }`, or write `.effects(a, b)` there for several"
    }

    /// The row as one function of the state and the input: if the row applies, it writes the next
    /// state and the effect (`nil`: none) into its out-parameters and returns true; otherwise it
    /// returns false and writes nothing. Without `testingInput`, the input test is taken as passed
    /// (the row is for the input's value).
    @inlinable
    func decision(testingInput: Bool) -> MappingKeyIndexing<State, Input>.Decide {
        let matchesInput = testingInput ? self.matchesInput : nil
        let matchesState = self.matchesState
        switch (outcome, matchesInput, matchesState) {
        case let (.fixed(toState, effect), nil, nil):
            return { _, _, next, nextEffect in
                next = toState
                nextEffect = effect
                return true
            }
        case let (.fixed(toState, nil), nil, matchesState?):
            // No effect captured: the closure's context is the test and the state only.
            return { state, _, next, _ in
                guard matchesState(state) else { return false }
                next = toState
                return true
            }
        case let (.fixed(toState, effect), nil, matchesState?):
            return { state, _, next, nextEffect in
                guard matchesState(state) else { return false }
                next = toState
                nextEffect = effect
                return true
            }
        case let (.fixed(toState, effect), matchesInput?, nil):
            return { _, input, next, nextEffect in
                guard matchesInput(input) else { return false }
                next = toState
                nextEffect = effect
                return true
            }
        case let (.fixed(toState, effect), matchesInput?, matchesState?):
            return { state, input, next, nextEffect in
                guard matchesInput(input) && matchesState(state) else { return false }
                next = toState
                nextEffect = effect
                return true
            }
        case let (.computed(compute), matchesInput, matchesState):
            return { state, input, next, nextEffect in
                if let matchesInput, !matchesInput(input) { return false }
                if let matchesState, !matchesState(state) { return false }
                guard let (toState, effect) = compute(state, input) else { return false }
                next = toState
                nextEffect = effect
                return true
            }
        }
    }
}

/// A `Decide` function kept in an array. An array holds a function value at its most general
/// abstraction, so a bare closure would be wrapped in a reabstraction thunk on the way in and another
/// on the way out, on every call; a struct's field keeps the function as it is.
@usableFromInline
struct DecideBox<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let call: MappingKeyIndexing<State, Input>.Decide

    @inlinable
    init(_ call: @escaping MappingKeyIndexing<State, Input>.Decide) {
        self.call = call
    }
}

/// How a table finds an input among its distinct keys, made where `Input: Equatable` is known: `find`
/// when the table is built, `dispatch` for the function that sends each input to its group's rows.
@usableFromInline
struct MappingKeyIndexing<State: Sendable, Input: Sendable>: Sendable {
    /// A row, a group of rows, a whole table or a mapping as one function: if it applies to the state
    /// and the input, it writes the next state and the effect (`nil`: none) into the out-parameters
    /// (which the caller initializes to `nil`) and returns true; otherwise it returns false and writes
    /// nothing. This is the engine's form of a mapping (`AutomatonEngine.Transition`).
    ///
    /// Out-parameters, not a returned optional tuple: each layer of closures would copy the 40-byte
    /// result through memory, and that copying cost a table more than its comparisons. The next state
    /// is optional so that the caller starts it without copying (retaining) a state.
    @usableFromInline typealias Decide =
        @Sendable (State, Input, _ next: inout State?, _ effect: inout SignalProducer<Input, Never>?) -> Bool

    /// The position of an input among `keys`.
    @usableFromInline let find: @Sendable (_ keys: [Input], _ input: Input) -> Int?
    /// The table's function: it calls `groups[i]` for an input equal to `keys[i]`, `others` for the
    /// rest. The comparisons are in the function itself, so that a table is one call more than a
    /// row, not two.
    @usableFromInline let dispatch:
        @Sendable (_ keys: [Input], _ groups: [DecideBox<State, Input>], _ others: @escaping Decide) -> Decide

    /// What `decide` makes of `input` in `state`, as a value: the next state and the effect (`nil`:
    /// none), or `nil` if it does not apply.
    @inlinable
    static func apply(
        _ decide: Decide, _ state: State, _ input: Input
    ) -> (State, SignalProducer<Input, Never>?)? {
        var next: State?
        var effect: SignalProducer<Input, Never>?
        let applies = decide(state, input, &next, &effect)
        assert(!applies || next != nil, "Internal inconsistency: a mapping applied without writing the next state")
        guard applies, let next else { return nil }
        return (next, effect)
    }

    @inlinable
    init() where Input: Equatable {
        find = { keys, input in keys.firstIndex(of: input) }
        dispatch = { keys, groups, others in
            switch keys.count {
            case 1...4:
                // One reference captured: a closure that captured the keys and groups themselves would
                // unpack all of them from its context on every call.
                let dispatch = FourKeyDispatch(keys: keys, groups: groups, others: others)
                return { state, input, next, effect in dispatch.decide(state, input, &next, &effect) }
            default:
                // Past four values, one comparison per value in turn (the groups' functions are not
                // copied out of the array unless the input matches).
                return { state, input, next, effect in
                    for position in keys.indices where keys[position] == input {
                        return groups[position].call(state, input, &next, &effect)
                    }
                    return others(state, input, &next, &effect)
                }
            }
        }
    }
}

/// The dispatch of a table with one to four distinct input values: each compared in turn, then the
/// rows of the input's value, or those of every other input. Fewer than four values are padded with
/// copies of the first and its group, which the first comparison always finds first.
@usableFromInline
final class FourKeyDispatch<State: Sendable, Input: Equatable & Sendable>: Sendable {
    @usableFromInline typealias Decide = MappingKeyIndexing<State, Input>.Decide

    @usableFromInline let key0: Input
    @usableFromInline let key1: Input
    @usableFromInline let key2: Input
    @usableFromInline let key3: Input
    @usableFromInline let group0: Decide
    @usableFromInline let group1: Decide
    @usableFromInline let group2: Decide
    @usableFromInline let group3: Decide
    @usableFromInline let others: Decide

    @inlinable
    init(keys: [Input], groups: [DecideBox<State, Input>], others: @escaping Decide) {
        precondition(
            (1...4).contains(keys.count) && groups.count == keys.count,
            "Internal inconsistency: a four-key dispatch built with \(keys.count) keys and \(groups.count) groups"
        )
        func at(_ position: Int) -> Int { position < keys.count ? position : 0 }
        key0 = keys[0]
        key1 = keys[at(1)]
        key2 = keys[at(2)]
        key3 = keys[at(3)]
        group0 = groups[0].call
        group1 = groups[at(1)].call
        group2 = groups[at(2)].call
        group3 = groups[at(3)].call
        self.others = others
    }

    /// Always inlined into the table's function, so that an input costs one call less (a call through
    /// the generic closure convention passes the state, the input and the result through memory).
    @inlinable @inline(__always)
    func decide(
        _ state: State, _ input: Input, _ next: inout State?, _ effect: inout SignalProducer<Input, Never>?
    ) -> Bool {
        // Each group called where it is found: a group taken into a local first was retained and
        // released around the call.
        if input == key0 { return group0(state, input, &next, &effect) }
        if input == key1 { return group1(state, input, &next, &effect) }
        if input == key2 { return group2(state, input, &next, &effect) }
        if input == key3 { return group3(state, input, &next, &effect) }
        return others(state, input, &next, &effect)
    }
}
