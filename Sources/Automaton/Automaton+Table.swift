// Automata made from a mapping table written in place, with no annotation.

extension Automaton {
    /// An automaton whose mapping is the table `table`, fed by `input` (if given) and by `send(_:)`:
    ///
    /// ```swift
    /// Automaton(state: .loggedOut, strategy: .latest, table: [
    ///     .login   | .loggedOut => .loggingIn | loginOK,
    ///     .loginOK | .loggingIn => .loggedIn,
    /// ])
    /// ```
    ///
    /// The rows need no annotation: the parameter's type, `[MappingRow<State, Input>]`, gives each row
    /// its type, so the compiler checks each on its own. The table is indexed by input here, once
    /// (see `MappingTable`). For each input the rows are tried in table order and the first that
    /// applies wins; their closures are called on the processing thread, with no lock held, and must
    /// be pure. Everything else is as in `init(state:input:mapping:strategy:)`.
    @inlinable
    public convenience init(
        state: State,
        input: Signal<Input, Never>? = nil,
        strategy: AutomatonStrategy = .merge,
        table: [MappingRow<State, Input>]
    ) {
        self.init(state: state, input: input, transition: MappingTable(table).transition, strategy: strategy)
    }
}
