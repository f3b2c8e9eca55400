// The graph as Graphviz DOT, for `dot -Tsvg` or `dot -Tpng`.

extension StateGraph {
    /// The graph as a Graphviz DOT `digraph`, ending with a newline.
    ///
    /// Left to right, rounded boxes: a point node `__start` with an arrow to the initial state, one
    /// node line per state in the order of `states`, then one edge line per edge in the order of
    /// `edges`. Edges are labelled as in `mermaid(stateName:inputName:)` (`login / effect`); those
    /// that start an effect (other than a state-scoped one) are also drawn bold, `after` edges (with a
    /// `delay`) dashed. A state's label lists below its name, one a line, the state-scoped effects it
    /// runs (`during 0`). The output depends only on the graph, the name and the labels, so it is the
    /// same on every run.
    ///
    /// Node identifiers are those of the Mermaid export (ASCII letters, digits and `_`, unique, no DOT
    /// keyword); labels are DOT strings with `\` and `"` escaped and line breaks as `\n`.
    ///
    /// - Parameters:
    ///   - name: the graph's name (`digraph "name"`).
    ///   - stateName: the text shown for a state; by default `String(describing:)`.
    ///   - inputName: the text shown for an input; by default `String(describing:)`.
    public func dot(
        name: String = "automaton",
        stateName: (State) -> String = { String(describing: $0) },
        inputName: (Input) -> String = { String(describing: $0) }
    ) -> String {
        let shown = DiagramNames(self, stateName: stateName, inputName: inputName)
        let (names, identifiers) = (shown.states, shown.identifiers)
        var lines = [
            "digraph \(DOTText.quoted(name)) {",
            "    rankdir=LR;",
            "    node [shape=box, style=rounded];",
            "    __start [shape=point, label=\"\"];",
        ]
        for (identifier, (name, effects)) in zip(identifiers, zip(names, shown.scopedEffects)) {
            let label = ([name] + effects).joined(separator: "\n")
            lines.append("    \(identifier) [label=\(DOTText.quoted(label))];")
        }
        lines.append("    __start -> \(identifiers[0]);")
        for (edge, (label, startsEffect)) in zip(edges, zip(shown.edgeLabels, shown.edgeStartsEffect)) {
            let label = DOTText.quoted(label)
            let style =
                edge.delay != nil
                ? (startsEffect ? ", style=\"bold,dashed\"" : ", style=dashed")
                : (startsEffect ? ", style=bold" : "")
            lines.append("    \(identifiers[edge.fromIndex]) -> \(identifiers[edge.toIndex]) [label=\(label)\(style)];")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Quoting for DOT strings.
enum DOTText {
    /// `text` as a double-quoted DOT string: `\` and `"` escaped with `\`, each line break as `\n`.
    static func quoted(_ text: String) -> String {
        let escaped = DiagramText.rewritten(text, lineBreak: "\\n") { scalar in
            switch scalar {
            case "\"": "\\\""
            case "\\": "\\\\"
            default: nil
            }
        }
        return "\"" + escaped + "\""
    }
}
