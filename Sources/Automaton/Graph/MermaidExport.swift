// The graph as a Mermaid `stateDiagram-v2`, which GitHub renders in a ```mermaid block.

extension StateGraph {
    /// The graph as Mermaid `stateDiagram-v2` text, ending with a newline.
    ///
    /// One `state "label" as id` line per state, in the order of `states`; `[*] --> id` for the
    /// initial state; then one `from --> to : label` line per edge, in the order of `edges`. A label
    /// is the input's name, followed by ` / effect` where the transition starts an effect
    /// (` / effect [key]` for a keyed one), ` / cancel [keys]` where it cancels keyed effects, and
    /// ` / send [child]` where it forwards an input to a child automaton. An `after` edge (one with a
    /// `delay`) is labelled `after 10 s / input`, then its actions. The state-scoped effects a state
    /// runs (`scopedEffects(in:)`) are description lines, `id : during 0`, after the state lines;
    /// a graph without them has none. In a graph explored from a table, the starts and cancellations
    /// of its state-scoped effects (`.during` and `.after`) are left out of the edges' labels: the
    /// states show them.
    /// The output depends only on the graph and the names, so it is the same on every run.
    ///
    /// Identifiers are the states' names reduced to ASCII letters, digits and `_`, made unique
    /// (`connecting(1)` becomes `connecting_1`); the full names are the display labels. Labels are
    /// escaped with Mermaid's entity codes (`"` as `#quot;`, `#` as `#35;`, `:` as `#58;`, ...), and a
    /// line break becomes `<br>`.
    ///
    /// - Parameters:
    ///   - stateName: the text shown for a state; by default `String(describing:)`.
    ///   - inputName: the text shown for an input; by default `String(describing:)`.
    public func mermaid(
        stateName: (State) -> String = { String(describing: $0) },
        inputName: (Input) -> String = { String(describing: $0) }
    ) -> String {
        let shown = DiagramNames(self, stateName: stateName, inputName: inputName)
        let (names, identifiers) = (shown.states, shown.identifiers)
        var lines = ["stateDiagram-v2"]
        for (identifier, name) in zip(identifiers, names) {
            lines.append("    state \"\(MermaidText.escaped(name))\" as \(identifier)")
        }
        for (identifier, effects) in zip(identifiers, shown.scopedEffects) {
            for effect in effects {
                lines.append("    \(identifier) : \(MermaidText.escaped(effect))")
            }
        }
        lines.append("    [*] --> \(identifiers[0])")
        for (edge, label) in zip(edges, shown.edgeLabels) {
            let label = MermaidText.escaped(label)
            lines.append("    \(identifiers[edge.fromIndex]) --> \(identifiers[edge.toIndex]) : \(label)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Escaping for text in Mermaid labels.
enum MermaidText {
    /// `text` with every character that could end or change a Mermaid label written as an entity code
    /// (`#quot;`, `#35;`, ...), and each line break as `<br>`.
    static func escaped(_ text: String) -> String {
        DiagramText.rewritten(text, lineBreak: "<br>") { scalar in
            switch scalar {
            case "\"": "#quot;"
            case "#": "#35;"
            case "%": "#37;"
            case "&": "#amp;"
            case ":": "#58;"
            case ";": "#59;"
            case "<": "#lt;"
            case ">": "#gt;"
            case "\\": "#92;"
            case "{": "#123;"
            case "}": "#125;"
            case "\t": " "
            default: nil
            }
        }
    }
}
