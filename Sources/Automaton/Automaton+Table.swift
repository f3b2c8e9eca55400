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
    /// The rows need no annotation: `table:` is a `MappingTable<State, Input>`, written as an array
    /// literal whose element type, `MappingRow<State, Input>`, gives each row its type, so the compiler
    /// checks each row on its own, and a wrong row is reported at that row. (It is not an array of
    /// rows: for an array argument, the compiler's error recovery also tries other element types and
    /// checks every row of a long table together, so a typo ended in "unable to type-check this
    /// expression in reasonable time".) Rows already in an array are passed as
    /// `table: MappingTable(rows)`.
    ///
    /// The state-scoped effects (`.during`, `.after`) of the scopes `state` is in start here, as the
    /// automaton is made (see `MappingRow.during(_:key:policy:restart:_:)`).
    ///
    /// The table is indexed by input here, once (see `MappingTable`). For each input the rows are tried
    /// in table order and the first that applies wins; their closures are called on the processing
    /// thread, with no lock held, and must be pure. Everything else is as in
    /// `init(state:input:mapping:strategy:)`.
    @inlinable
    public convenience init(
        state: State,
        input: Signal<Input, Never>? = nil,
        strategy: AutomatonStrategy = .merge,
        table: MappingTable<State, Input>
    ) {
        self.init(
            state: state, input: input, transition: table.transition, strategy: strategy,
            initialEffects: table.scopes?.entries(of: state) ?? [])
    }
}
