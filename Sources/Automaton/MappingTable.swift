// A mapping table: rows tried in order, the first that applies wins, indexed by input when it is built.
//
// Rows for one input value (`.login | ...`) are grouped by that value when the table is built; each
// group keeps, in table order, its own rows and the rows that test inputs otherwise (predicates, `any`,
// cases). An input then finds its group (one comparison per distinct input value, compiled where
// `Input: Equatable` is known, so the comparisons are direct) and tries only that group's rows, in
// table order. So the first row that applies still wins, exactly as with `reduce`, and an input whose
// value has no row tries only the rows that test inputs otherwise.

/// A mapping table: rows tried in order, the first that applies wins.
///
/// Written as an array literal of rows, `[input | fromState => toState | effect, ...]`, wherever a
/// `MappingTable` is expected (`Automaton(state:strategy:table:)`, `let table: MappingTable<S, I> = [...]`),
/// or made from an array of rows with `MappingTable(rows)`.
///
/// Applying a table calls, for one input, only the closures of the rows it tries, in table order; it
/// holds no lock and keeps no state, so a table may be shared by automata on any threads.
public struct MappingTable<State: Sendable, Input: Sendable>: Sendable, ExpressibleByArrayLiteral {
    /// The rows, in table order.
    public let rows: [MappingRow<State, Input>]

    /// The table as the engine calls it (see `MappingKeyIndexing.Decide`).
    @usableFromInline let transition: MappingKeyIndexing<State, Input>.Decide

    /// A table of `rows`, tried in order: the first that applies wins. Rows for one input value are
    /// indexed by it here, once.
    /// The table's state-scoped declarations (`.during`, `.after`), in table order, keyed; `nil` when
    /// it has none.
    @usableFromInline let scopes: StateScopes<State, Input>?

    @inlinable
    public init(_ rows: [MappingRow<State, Input>]) {
        self.rows = rows
        let declared = rows.compactMap(\.scope)
        guard !declared.isEmpty else {
            scopes = nil
            transition = MappingTableIndex(rows: rows).transition
            return
        }
        let scopes = StateScopes(declared)
        self.scopes = scopes
        transition = scopes.wrapping(MappingTableIndex(rows: rows.filter { $0.scope == nil }).transition)
    }

    /// A table of the rows written in the literal, tried in order: the first that applies wins.
    ///
    /// The literal's element type is `MappingRow<State, Input>`, known before its rows are checked, so the
    /// compiler checks each row on its own, and reports a wrong row (a misspelled case, an effect of the
    /// wrong type) at that row in a fraction of a second, however long the table.
    @inlinable
    public init(arrayLiteral rows: MappingRow<State, Input>...) {
        self.init(rows)
    }

    /// The table as a mapping function, for `Automaton(state:mapping:)` or `reduce`. Each call tries
    /// the rows as the automaton does.
    @inlinable
    public var mapping: Automaton<State, Input>.EffectMapping {
        let transition = transition
        return { state, input in
            MappingKeyIndexing.apply(transition, state, input).map { ($0.0, $0.1 ?? .empty) }
        }
    }
}

/// A table's rows grouped by input value, compiled into one function: an input equal to a keyed row's
/// value tries that value's group (its keyed rows and the un-keyed rows, in table order), any other
/// input tries the un-keyed rows.
@usableFromInline
struct MappingTableIndex<State: Sendable, Input: Sendable> {
    @usableFromInline typealias Decide = MappingKeyIndexing<State, Input>.Decide

    @usableFromInline var transition: Decide

    @inlinable
    init(rows: [MappingRow<State, Input>]) {
        // The distinct input values, in order of first appearance.
        var keys: [Input] = []
        var indexing: MappingKeyIndexing<State, Input>?
        for row in rows {
            guard let key = row.inputKey, let rowIndexing = row.keyIndexing else { continue }
            indexing = rowIndexing
            if rowIndexing.find(keys, key) == nil { keys.append(key) }
        }
        let others = Self.group(rows.filter { $0.inputKey == nil }.map { DecideBox($0.decision(testingInput: true)) })
        guard let indexing else {
            transition = others
            return
        }
        var groups: [[DecideBox<State, Input>]] = Array(repeating: [], count: keys.count)
        for row in rows {
            if let key = row.inputKey, let position = indexing.find(keys, key) {
                groups[position].append(DecideBox(row.decision(testingInput: false)))
            } else {
                let decision = DecideBox(row.decision(testingInput: true))
                for position in groups.indices { groups[position].append(decision) }
            }
        }
        transition = indexing.dispatch(keys, groups.map { DecideBox(Self.group($0)) }, others)
    }

    /// The rows of a group as one function: the first that applies wins.
    @inlinable
    static func group(_ decisions: [DecideBox<State, Input>]) -> Decide {
        switch decisions.count {
        case 0:
            return { _, _, _, _ in false }
        case 1:
            return decisions[0].call
        default:
            return { state, input, next, effect in
                for decide in decisions where decide.call(state, input, &next, &effect) {
                    return true
                }
                return false
            }
        }
    }
}
