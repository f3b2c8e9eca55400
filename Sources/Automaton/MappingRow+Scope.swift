import Signals

// The declarations of state-scoped effects and delayed inputs, written among a table's rows
// (see StateScope.swift for how they run).

extension MappingRow {
    /// A state-scoped effect: `effect` runs while the machine is in a state `states` accepts. It is
    /// started when the machine enters those states, with the state entered, and cancelled when it
    /// leaves them; a transition that stays inside keeps it running unless `restart` says otherwise.
    ///
    /// ```swift
    /// .during(\.isPaying) { order in charge(order.attempt) }
    /// ```
    ///
    /// - Entering: the effect starts after the entering input's reply, after that row's own effect,
    ///   as an effect of that input (`started(by:)`), on the processing thread. A machine made in
    ///   such a state starts it as it is made.
    /// - Leaving: it is cancelled with the leaving input's other cancellations, before the new state
    ///   and the reply (`cancelled(by:)` in `effectEvents`); an input it sent before is still
    ///   processed, as a cancelled effect's is.
    /// - It is a keyed effect: of `key`, or of the scope's own key (a ``StateScopeKey``) if `key` is
    ///   `nil`, under `policy`, so a `.cancel(key)` row can cancel it too, and its inputs are
    ///   processed as any effect's. It is not part of the `.latest` tree: an unrelated input never
    ///   cancels it.
    /// - `effect` is called on the processing thread, with no lock held, once per entry: it should
    ///   only build the producer. `states` is called for the from-state and the to-state of every
    ///   successful input: keep it cheap and pure.
    @inlinable
    public static func during(
        _ states: @escaping @Sendable (State) -> Bool,
        key: (any Hashable & Sendable)? = nil,
        policy: EffectPolicy = .latest,
        restart: ScopeRestart = .never,
        _ effect: @escaping @Sendable (_ state: State) -> SignalProducer<Input, Never>
    ) -> MappingRow {
        MappingRow(
            scope: StateScope(
                contains: states, effect: effect, key: key.map { EffectKey($0) }, policy: policy,
                restarts: restarts(restart)))
    }

    /// A state-scoped effect for the state equal to `state` (see ``during(_:key:policy:restart:_:)-((State)->Bool,_,_,_,_)``).
    @inlinable
    public static func during(
        _ state: State,
        key: (any Hashable & Sendable)? = nil,
        policy: EffectPolicy = .latest,
        restart: ScopeRestart = .never,
        _ effect: @escaping @Sendable (_ state: State) -> SignalProducer<Input, Never>
    ) -> MappingRow where State: Equatable {
        during({ $0 == state }, key: key, policy: policy, restart: restart, effect)
    }

    /// A state-scoped effect for the states in `states` (see ``during(_:key:policy:restart:_:)-((State)->Bool,_,_,_,_)``).
    @inlinable @_disfavoredOverload
    public static func during(
        _ states: [State],
        key: (any Hashable & Sendable)? = nil,
        policy: EffectPolicy = .latest,
        restart: ScopeRestart = .never,
        _ effect: @escaping @Sendable (_ state: State) -> SignalProducer<Input, Never>
    ) -> MappingRow where State: Equatable {
        during({ states.contains($0) }, key: key, policy: policy, restart: restart, effect)
    }

    /// A state-scoped effect for the states of one case, read through a key path to an optional (a
    /// *case path*, `\.attempt`): it runs while the value is not `nil`, and its closure receives the
    /// value, not the whole state:
    ///
    /// ```swift
    /// .during(\.payingAttempt) { attempt in charge(attempt) }
    /// ```
    ///
    /// Otherwise as ``during(_:key:policy:restart:_:)-((State)->Bool,_,_,_,_)``; with
    /// `restart: .onStateChange`, a transition to another state of the case (another value) restarts it.
    @inlinable
    public static func during<Value>(
        _ casePath: KeyPath<State, Value?> & Sendable,
        key: (any Hashable & Sendable)? = nil,
        policy: EffectPolicy = .latest,
        restart: ScopeRestart = .never,
        _ effect: @escaping @Sendable (_ value: Value) -> SignalProducer<Input, Never>
    ) -> MappingRow {
        during(
            { $0[keyPath: casePath] != nil }, key: key, policy: policy, restart: restart,
            { state in state[keyPath: casePath].map(effect) ?? .empty })
    }

    /// A delayed input: `delay` after the machine enters a state `states` accepts, on `scheduler`,
    /// `input` is sent, unless the machine has left those states by then; a row of the table decides
    /// what it does, as for any input.
    ///
    /// ```swift
    /// .after(.seconds(10), in: \.isPaying, send: .paymentTimedOut, on: scheduler),
    /// .paymentTimedOut | \.isPaying => .failed,
    /// ```
    ///
    /// It is a state-scoped effect (``during(_:key:policy:restart:_:)-((State)->Bool,_,_,_,_)``) that
    /// sends `input` after `delay`: its timer starts after the entering input's reply, on
    /// `scheduler`'s clock (a `TestScheduler` in tests: virtual time), and is cancelled when the
    /// machine leaves the states (or by `.cancel(key)`); a transition that stays inside keeps it
    /// running, unless `restart` says otherwise. The input is processed as any effect's, once.
    @inlinable
    public static func after(
        _ delay: Duration,
        in states: @escaping @Sendable (State) -> Bool,
        send input: Input,
        on scheduler: some TimeScheduler,
        key: (any Hashable & Sendable)? = nil,
        restart: ScopeRestart = .never
    ) -> MappingRow {
        MappingRow(
            scope: StateScope(
                contains: states,
                effect: { _ in SignalProducer(value: input).delay(delay, on: scheduler) },
                key: key.map { EffectKey($0) }, policy: .latest, restarts: restarts(restart),
                delayed: (delay, input)))
    }

    /// A delayed input for the state equal to `state` (see
    /// ``after(_:in:send:on:key:restart:)-(_,(State)->Bool,_,_,_,_)``).
    @inlinable
    public static func after(
        _ delay: Duration,
        in state: State,
        send input: Input,
        on scheduler: some TimeScheduler,
        key: (any Hashable & Sendable)? = nil,
        restart: ScopeRestart = .never
    ) -> MappingRow where State: Equatable {
        after(delay, in: { $0 == state }, send: input, on: scheduler, key: key, restart: restart)
    }

    /// A delayed input for the states in `states` (see
    /// ``after(_:in:send:on:key:restart:)-(_,(State)->Bool,_,_,_,_)``).
    @inlinable @_disfavoredOverload
    public static func after(
        _ delay: Duration,
        in states: [State],
        send input: Input,
        on scheduler: some TimeScheduler,
        key: (any Hashable & Sendable)? = nil,
        restart: ScopeRestart = .never
    ) -> MappingRow where State: Equatable {
        after(delay, in: { states.contains($0) }, send: input, on: scheduler, key: key, restart: restart)
    }

    /// The restart test of `restart`: `nil` for never.
    @inlinable
    static func restarts(_ restart: ScopeRestart) -> (@Sendable (State, State) -> Bool)? {
        switch restart.kind {
        case .never:
            return nil
        case .onEveryTransition:
            return { _, _ in true }
        case .onStateChange:
            precondition(
                State.self is any Equatable.Type,
                "`restart: .onStateChange` compares states: make \(State.self) Equatable, or use `.onEveryTransition`")
            return { from, to in !statesAreEqual(from, to) }
        }
    }
}

/// Whether `first` and `second` are equal, by their type's `==` (`first`'s type is `Equatable`:
/// checked when the scope was declared).
@inlinable
func statesAreEqual<State>(_ first: State, _ second: State) -> Bool {
    guard let first = first as? any Equatable else { return false }
    return isEqual(first, second)
}

@inlinable
func isEqual<Value: Equatable>(_ value: Value, _ other: Any) -> Bool {
    (other as? Value).map { $0 == value } ?? false
}
