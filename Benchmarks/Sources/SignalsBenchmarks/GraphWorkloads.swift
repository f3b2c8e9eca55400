// Exploring a state graph (issue 12): a 10,000-state machine explored from an automaton, through its
// mapping, breadth first. Compiled only when the root package has `StateGraph` (see `Package.swift`:
// the `AUTOMATON_GRAPH` condition).
#if AUTOMATON_GRAPH
    import Automaton

    /// `automaton.graph(inputs:)` on an `Automaton<Int, Int>` over the states `0..<states`, with five
    /// inputs: a ring step, a multiplicative jump, a jump with an effect (never started), a step back
    /// rejected in every third state, and a halving. One event is one state explored (five mapping
    /// calls); every state is reachable from 0 through the ring. The result is checked: every state found,
    /// the limit not reached, and the number of edges.
    func graphExploration(states: Int) -> Workload {
        let inputs = [0, 1, 2, 3, 4]
        let rejected = (states + 2) / 3  // the states s with s % 3 == 0 reject input 3
        return Workload(name: "graph explore \(grouped(states)) states", events: states) {
            let effect = SignalProducer<Int, Never>(value: 0)
            let count = opaque(states)
            let automaton = Automaton<Int, Int>(
                state: 0,
                mapping: { (state: Int, input: Int) -> (Int, SignalProducer<Int, Never>)? in
                    switch input {
                    case 0: return ((state + 1) % count, .empty)
                    case 1: return ((state &* 7 &+ 3) % count, .empty)
                    case 2: return ((state + 100) % count, effect)
                    case 3: return state % 3 == 0 ? nil : (state - 1, .empty)
                    default: return (state / 2, .empty)
                    }
                })
            return {
                let graph = automaton.graph(inputs: inputs)
                try check(graph.states.count, states, "states found")
                try check(graph.reachedStateLimit, false, "state limit reached")
                try check(graph.edges.count, states * inputs.count - rejected, "edges")
            }
        }
    }
#endif
