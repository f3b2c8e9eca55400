// What the Mermaid and DOT exports share: the identifiers of the states in the diagram's source, the
// text of each edge's label, and the walk that escapes a label. What each format escapes, and how, is in
// its own file.

/// The identifiers of a graph's states in an exported diagram: each state's name with every run of
/// characters other than ASCII letters and digits turned into one `_`, trimmed of `_` at the ends;
/// `s` in front of a name that is empty or starts with a digit; `_2`, `_3`, ... after a name already
/// taken or reserved by either format. Unique, and the same for the same names.
struct DiagramIdentifiers {
    /// Words with a meaning of their own in Mermaid state diagrams or in DOT, compared without case.
    static let reserved: Set<String> = [
        "end", "state", "note", "direction", "class", "classdef", "style", "click", "as", "left", "right", "of",
        "fork", "join", "choice", "default", "linkstyle", "acctitle", "accdescr", "hide_empty_description",
        "graph", "digraph", "subgraph", "node", "edge", "strict", "__start",
    ]

    let identifiers: [String]

    init(names: [String]) {
        var taken = Set<String>()
        var identifiers: [String] = []
        identifiers.reserveCapacity(names.count)
        for name in names {
            let base = Self.sanitized(name)
            var candidate = base
            var suffix = 2
            while Self.reserved.contains(candidate.lowercased()) || taken.contains(candidate) {
                candidate = "\(base)_\(suffix)"
                suffix += 1
            }
            taken.insert(candidate)
            identifiers.append(candidate)
        }
        self.identifiers = identifiers
    }

    static func sanitized(_ name: String) -> String {
        var result = ""
        var pendingSeparator = false
        for scalar in name.unicodeScalars {
            let isIdentifierCharacter =
                scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar))
            if isIdentifierCharacter {
                if pendingSeparator, !result.isEmpty { result.append("_") }
                pendingSeparator = false
                result.unicodeScalars.append(scalar)
            } else {
                pendingSeparator = true
            }
        }
        if result.isEmpty || result.unicodeScalars.first.map({ ("0"..."9").contains($0) }) == true {
            result = "s" + result
        }
        return result
    }
}

extension StateGraph.Edge {
    /// The edge's label: the input's name, then what it does about effects, UML style:
    /// `login / effect`, `connect / effect [connection]`, `disconnect / cancel [connection]`,
    /// `code / send [twoFactor]` (an input forwarded to a child automaton). An edge with a `delay`
    /// starts with it: `after 10 s / timedOut`, then ` / ` and its actions, if any. The effects and
    /// cancellations of the keys in `scopeKeys` (state-scoped effects, drawn in their states) are
    /// left out.
    func label(inputName: String, scopeKeys: Set<EffectKey> = []) -> String {
        let inputName = delay.map { "after \(DiagramText.delay($0)) / \(inputName)" } ?? inputName
        var actions: [String] = []
        let cancelledKeys = cancelledKeys.filter { !scopeKeys.contains($0) }
        if !cancelledKeys.isEmpty {
            actions.append("cancel [\(cancelledKeys.map(\.description).joined(separator: ", "))]")
        }
        for key in effects where key.map({ !scopeKeys.contains($0) }) ?? true {
            actions.append(key.map { "effect [\($0.description)]" } ?? "effect")
        }
        for target in forwards {
            actions.append("send [\(target.description)]")
        }
        return actions.isEmpty ? inputName : "\(inputName) / \(actions.joined(separator: ", "))"
    }
}

/// The walk both formats escape labels with.
enum DiagramText {
    /// A delay as diagrams show it: whole seconds as `10 s`, whole milliseconds as `1500 ms`,
    /// anything else as seconds with a fraction, `0.000001 s`.
    static func delay(_ delay: Duration) -> String {
        let (seconds, attoseconds) = delay.components
        if attoseconds == 0 { return "\(seconds) s" }
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        if attoseconds % attosecondsPerMillisecond == 0 {
            return "\(seconds * 1000 + attoseconds / attosecondsPerMillisecond) ms"
        }
        return "\(Double(seconds) + Double(attoseconds) / 1e18) s"
    }

    /// `text` rewritten scalar by scalar: each line break (`\n`, `\r` or `\r\n`) becomes `lineBreak`,
    /// and every other scalar becomes what `replacement` returns for it, or stays as it is for `nil`.
    static func rewritten(
        _ text: String,
        lineBreak: String,
        replacement: (Unicode.Scalar) -> String?
    ) -> String {
        var result = ""
        var previousWasCarriageReturn = false
        for scalar in text.unicodeScalars {
            defer { previousWasCarriageReturn = scalar == "\r" }
            switch scalar {
            case "\n": if !previousWasCarriageReturn { result += lineBreak }
            case "\r": result += lineBreak
            default:
                if let replaced = replacement(scalar) {
                    result += replaced
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }
}

/// The names a diagram shows and the identifiers of its states, computed once for an export.
struct DiagramNames {
    /// Each state's shown name, in the graph's state order.
    let states: [String]
    /// Each state's identifier in the diagram's source (see `DiagramIdentifiers`).
    let identifiers: [String]
    /// Each input's shown name, in the alphabet's order.
    let inputs: [String]
    /// Each edge's label, in the order of the graph's `edges` (see `StateGraph.Edge.label(inputName:)`).
    let edgeLabels: [String]
    /// Whether each edge is drawn as starting an effect: it starts one other than a state-scoped
    /// effect of the table (those are drawn in their states), in the order of the graph's `edges`.
    let edgeStartsEffect: [Bool]
    /// Each state's state-scoped effects as shown, in the graph's state order (`during 0`).
    let scopedEffects: [[String]]

    init<State: Hashable & Sendable, Input: Sendable>(
        _ graph: StateGraph<State, Input>,
        stateName: (State) -> String,
        inputName: (Input) -> String
    ) {
        states = graph.states.map(stateName)
        identifiers = DiagramIdentifiers(names: states).identifiers
        let inputs = graph.inputs.map(inputName)
        self.inputs = inputs
        edgeLabels = graph.edges.map { edge in
            edge.label(
                inputName: edge.delay == nil ? inputs[edge.inputIndex] : inputName(edge.input),
                scopeKeys: graph.scopeKeys)
        }
        edgeStartsEffect = graph.edges.map { edge in
            edge.effects.contains { key in key.map { !graph.scopeKeys.contains($0) } ?? true }
        }
        scopedEffects = graph.states.indices.map { graph.scopedEffects(atIndex: $0).map(\.description) }
    }
}
