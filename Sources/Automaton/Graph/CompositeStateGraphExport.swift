// A composite diagram as Mermaid (`state "label" as id { ... }` blocks, `--` between concurrent
// regions) and as Graphviz DOT (a cluster per host state, a cluster per region when it has a name or
// shares its host). Each level is written as `StateGraph.mermaid()` and `dot()` write a graph, so a
// diagram with no child exports exactly as its parent graph does.
//
// Identifiers: a child's are its own (`DiagramIdentifiers`) prefixed with its host's and `__`, and
// with its region's and `__` when the region has a name or its host has several regions. A level's
// identifiers never hold `__`, nor start or end with `_`, so the prefixed ones are unique across
// levels; start points are `__start__` and the prefix, which no state's identifier starts with.

extension CompositeStateGraph {
    /// The diagram as Mermaid `stateDiagram-v2` text, ending with a newline.
    ///
    /// The parent's states, start and transitions are written as `StateGraph.mermaid(stateName:inputName:)`
    /// writes them, except that a state hosting children is a block, `state "label" as id {`, holding
    /// each child written the same way (its states, `[*] --> initial`, its transitions), one level of
    /// indentation deeper, and `}`. Several children of one state are concurrent regions separated by
    /// `--`, in the order nested; a child with a name is wrapped in a block of its own that shows the
    /// name (`state "downloads[*]" as running__downloads { ... }`). The parent's transitions go to and
    /// from the host's block.
    ///
    /// A child's identifiers are its states' identifiers prefixed with the host's identifier and `__`
    /// (`verifying__waitingForCode`), and with the region's (the name's, or `region`) and `__` when
    /// it has a name or shares its host (`running__downloads__queued`), so they are unique across
    /// levels. Labels are escaped as in `StateGraph.mermaid(stateName:inputName:)`. The output
    /// depends only on the graphs and the names, so it is the same on every run.
    public func mermaid() -> String {
        var lines = ["stateDiagram-v2"]
        diagram.appendMermaid(to: &lines, prefix: "", indentation: "    ")
        return lines.joined(separator: "\n") + "\n"
    }

    /// The diagram as a Graphviz DOT `digraph`, ending with a newline.
    ///
    /// The parent is written as `StateGraph.dot(name:stateName:inputName:)` writes a graph, except
    /// that a state hosting children is a dashed cluster, `subgraph cluster_id { ... }`, that holds
    /// the state's own node and each child written the same way (a start point
    /// `__start__` + prefix, its states, its transitions). A child with a name, or one of several
    /// children of the state, has a cluster of its own inside, labelled with the name, so that
    /// concurrent regions are side by side boxes. Identifiers are those of `mermaid()`.
    ///
    /// The parent's transitions go to and from the host's node, inside its cluster, rather than to the
    /// cluster's border (`compound=true` with `lhead`/`ltail`): Graphviz cannot clip a transition from
    /// a host to itself at its own cluster (it warns that the head is inside the tail's cluster), and
    /// the host's node keeps its name where the transitions meet. The output depends only on the
    /// graphs, the names and `name`, so it is the same on every run.
    ///
    /// - Parameter name: the graph's name (`digraph "name"`).
    public func dot(name: String = "automaton") -> String {
        var lines = [
            "digraph \(DOTText.quoted(name)) {",
            "    rankdir=LR;",
            "    node [shape=box, style=rounded];",
        ]
        diagram.appendDOT(to: &lines, prefix: "", indentation: "    ")
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Where a child diagram goes in its host: the prefix of its identifiers and, when it is drawn as a
/// region of its own (named, or one of several), the region's identifier.
private struct RegionPlacement {
    let prefix: String
    let region: String?

    /// The placements of `children`, in order, in the host whose identifier is `host`.
    static func placements(of children: [StateDiagram], host: String) -> [RegionPlacement] {
        if children.count == 1, children[0].name == nil {
            return [RegionPlacement(prefix: host + "__", region: nil)]
        }
        let segments = DiagramIdentifiers(names: children.map { $0.name ?? "region" }).identifiers
        return segments.map { RegionPlacement(prefix: "\(host)__\($0)__", region: "\(host)__\($0)") }
    }
}

extension StateDiagram {
    /// Appends this level's lines: its states (hosts as blocks holding their children), the start
    /// arrow, its transitions, with identifiers prefixed with `prefix`.
    fileprivate func appendMermaid(to lines: inout [String], prefix: String, indentation: String) {
        for index in stateNames.indices {
            let identifier = prefix + identifiers[index]
            let declaration = "\(indentation)state \"\(MermaidText.escaped(stateNames[index]))\" as \(identifier)"
            let children = regions[index]
            if children.isEmpty {
                lines.append(declaration)
                continue
            }
            lines.append(declaration + " {")
            let inner = indentation + "    "
            let placements = RegionPlacement.placements(of: children, host: identifier)
            for (position, (child, placement)) in zip(children, placements).enumerated() {
                if position > 0 { lines.append(inner + "--") }
                if let name = child.name, let region = placement.region {
                    lines.append("\(inner)state \"\(MermaidText.escaped(name))\" as \(region) {")
                    child.appendMermaid(to: &lines, prefix: placement.prefix, indentation: inner + "    ")
                    lines.append(inner + "}")
                } else {
                    child.appendMermaid(to: &lines, prefix: placement.prefix, indentation: inner)
                }
            }
            lines.append(indentation + "}")
        }
        for (identifier, effects) in zip(identifiers, scopedEffects) {
            for effect in effects {
                lines.append("\(indentation)\(prefix + identifier) : \(MermaidText.escaped(effect))")
            }
        }
        lines.append("\(indentation)[*] --> \(prefix + identifiers[0])")
        for edge in edges {
            let (from, to) = (prefix + identifiers[edge.from], prefix + identifiers[edge.to])
            lines.append("\(indentation)\(from) --> \(to) : \(MermaidText.escaped(edge.label))")
        }
    }

    /// Appends this level's statements: its start point, its states (hosts as clusters holding their
    /// node and their children), the start arrow, its transitions, with identifiers prefixed with
    /// `prefix`.
    fileprivate func appendDOT(to lines: inout [String], prefix: String, indentation: String) {
        let start = prefix.isEmpty ? "__start" : "__start__" + prefix.dropLast(2)
        lines.append("\(indentation)\(start) [shape=point, label=\"\"];")
        for index in stateNames.indices {
            let identifier = prefix + identifiers[index]
            let label = ([stateNames[index]] + scopedEffects[index]).joined(separator: "\n")
            let node = "\(identifier) [label=\(DOTText.quoted(label))];"
            let children = regions[index]
            if children.isEmpty {
                lines.append(indentation + node)
                continue
            }
            let inner = indentation + "    "
            lines += [
                "\(indentation)subgraph cluster_\(identifier) {",
                "\(inner)label=\"\";",
                "\(inner)style=\"rounded,dashed\";",
                inner + node,
            ]
            for (child, placement) in zip(children, RegionPlacement.placements(of: children, host: identifier)) {
                if let region = placement.region {
                    lines += [
                        "\(inner)subgraph cluster_\(region) {",
                        "\(inner)    label=\(DOTText.quoted(child.name ?? ""));",
                        "\(inner)    style=rounded;",
                    ]
                    child.appendDOT(to: &lines, prefix: placement.prefix, indentation: inner + "    ")
                    lines.append(inner + "}")
                } else {
                    child.appendDOT(to: &lines, prefix: placement.prefix, indentation: inner)
                }
            }
            lines.append(indentation + "}")
        }
        lines.append("\(indentation)\(start) -> \(prefix + identifiers[0]);")
        for edge in edges {
            let label = DOTText.quoted(edge.label)
            let style =
                edge.isDelayed
                ? (edge.startsEffect ? ", style=\"bold,dashed\"" : ", style=dashed")
                : (edge.startsEffect ? ", style=bold" : "")
            let (from, to) = (prefix + identifiers[edge.from], prefix + identifiers[edge.to])
            lines.append("\(indentation)\(from) -> \(to) [label=\(label)\(style)];")
        }
    }
}
