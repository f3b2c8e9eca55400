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
/// Applying a table calls, for one input, only the closures of the rows it tries, in table order; it
/// holds no lock and keeps no state, so a table may be shared by automata on any threads.
public struct MappingTable<State: Sendable, Input: Sendable>: Sendable {
    /// The rows, in table order.
    public let rows: [MappingRow<State, Input>]

    /// The table as the engine calls it: the next state and the effect (`nil`: none), or `nil` if no
    /// row applies.
    @usableFromInline let transition: @Sendable (State, Input) -> (State, SignalProducer<Input, Never>?)?

    /// A table of `rows`, tried in order: the first that applies wins. Rows for one input value are
    /// indexed by it here, once.
    @inlinable
    public init(_ rows: [MappingRow<State, Input>]) {
        self.rows = rows
        let index = MappingTableIndex(rows: rows)
        let others = index.others
        guard let findKey = index.findKey else {
            transition = { state, input in others.apply(state: state, input: input) }
            return
        }
        let groups = index.groups
        transition = { state, input in
            guard let position = findKey(input) else { return others.apply(state: state, input: input) }
            return groups[position].apply(state: state, input: input)
        }
    }

    /// The table as a mapping function, for `Automaton(state:mapping:)` or `reduce`. Each call tries
    /// the rows as the automaton does.
    @inlinable
    public var mapping: Automaton<State, Input>.EffectMapping {
        let transition = transition
        return { state, input in transition(state, input).map { ($0.0, $0.1 ?? .empty) } }
    }
}

/// The rows one input tries, in table order; `isKeyed[i]` says the row is for this group's input value,
/// so its input test has passed already.
@usableFromInline
struct MappingRowGroup<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline var rows: [MappingRow<State, Input>] = []
    @usableFromInline var isKeyed: [Bool] = []

    @inlinable
    init() {}

    @inlinable
    mutating func append(_ row: MappingRow<State, Input>, isKeyed: Bool) {
        rows.append(row)
        self.isKeyed.append(isKeyed)
    }

    @inlinable
    func apply(state: State, input: Input) -> (State, SignalProducer<Input, Never>?)? {
        for position in rows.indices {
            let row = rows[position]
            if !isKeyed[position], let matchesInput = row.matchesInput, !matchesInput(input) { continue }
            if let result = row.apply(state: state, input: input) { return result }
        }
        return nil
    }
}

/// A table's rows grouped by input value: the group of each distinct input value of its keyed rows,
/// and the group of every other input.
@usableFromInline
struct MappingTableIndex<State: Sendable, Input: Sendable> {
    /// Finds an input's group; `nil` when no row is keyed.
    @usableFromInline var findKey: (@Sendable (Input) -> Int?)?
    @usableFromInline var groups: [MappingRowGroup<State, Input>] = []
    @usableFromInline var others = MappingRowGroup<State, Input>()

    @inlinable
    init(rows: [MappingRow<State, Input>]) {
        // The distinct input values, in order of first appearance, and the lookup over them.
        var keys: [Input] = []
        var makeLookup: (@Sendable ([Input]) -> @Sendable (Input) -> Int?)?
        for row in rows {
            guard let key = row.inputKey, let lookup = row.keyLookup else { continue }
            makeLookup = lookup
            if lookup(keys)(key) == nil { keys.append(key) }
        }
        guard let makeLookup else {
            for row in rows { others.append(row, isKeyed: false) }
            return
        }
        let findKey = makeLookup(keys)
        self.findKey = findKey
        groups = Array(repeating: MappingRowGroup(), count: keys.count)
        for row in rows {
            if let key = row.inputKey, let position = findKey(key) {
                groups[position].append(row, isKeyed: true)
            } else {
                for position in groups.indices { groups[position].append(row, isKeyed: false) }
                others.append(row, isKeyed: false)
            }
        }
    }
}
