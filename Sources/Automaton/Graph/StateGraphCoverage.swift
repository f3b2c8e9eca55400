// Test paths that cover every transition: walk from the initial state taking a transition not yet
// covered whenever the current state has one, otherwise go to the nearest state that has one (breadth
// first, through covered transitions); when none is reachable any more, start a new path from the
// initial state. Every state found is reachable from the initial state, so every transition is
// covered in the end.

extension StateGraph {
    /// A small set of input paths from the initial state that together take every transition of the
    /// graph at least once (and so visit every state that has a transition into it), for
    /// model-based tests: replay each on a fresh automaton and check its replies (see
    /// `StateGraphTester` in AutomatonTesting).
    ///
    /// Greedy, not minimal: each path goes on from where it is while an untaken transition can be
    /// reached, then a new one starts from the initial state. Deterministic: ties go to transitions
    /// earlier in `edges`. Empty when the graph has no transition. Time: O(edges) while the walk
    /// finds untaken transitions where it stands, plus a breadth-first search each time it must move
    /// on to reach one.
    public var edgeCoveringPaths: [Path] {
        var covered = [Bool](repeating: false, count: edges.count)
        var remaining = edges.count
        // For each state, the position in `edges` before which its transitions are all covered.
        var firstUncovered = edgeRanges.map(\.lowerBound)

        func uncoveredEdge(from state: Int) -> Int? {
            let range = edgeRanges[state]
            while firstUncovered[state] < range.upperBound {
                if !covered[firstUncovered[state]] { return firstUncovered[state] }
                firstUncovered[state] += 1
            }
            return nil
        }

        var paths: [Path] = []
        while remaining > 0 {
            var current = 0
            var taken: [Int] = []
            while remaining > 0 {
                if let edge = uncoveredEdge(from: current) {
                    covered[edge] = true
                    remaining -= 1
                    taken.append(edge)
                    current = edges[edge].toIndex
                } else if let route = route(from: current, toFirstStateWhere: { uncoveredEdge(from: $0) != nil }) {
                    taken += route
                    current = route.last.map { edges[$0].toIndex } ?? current
                } else {
                    break
                }
            }
            guard !taken.isEmpty else {
                preconditionFailure(
                    "Internal inconsistency: \(remaining) transitions not reachable from the initial state")
            }
            paths.append(Path(start: initialState, edges: taken.map { edges[$0] }))
        }
        return paths
    }

    /// The edges (positions in `edges`) of a shortest route from `start` to the nearest other state
    /// that `isTarget` accepts, or `nil` if none is reachable.
    private func route(from start: Int, toFirstStateWhere isTarget: (Int) -> Bool) -> [Int]? {
        var arrivedBy = [Int?](repeating: nil, count: states.count)
        var visited = [Bool](repeating: false, count: states.count)
        visited[start] = true
        var queue = [start]
        var head = 0
        while head < queue.count {
            let state = queue[head]
            head += 1
            for edgeIndex in edgeRanges[state] {
                let next = edges[edgeIndex].toIndex
                guard !visited[next] else { continue }
                visited[next] = true
                arrivedBy[next] = edgeIndex
                if isTarget(next) {
                    var route: [Int] = []
                    var current = next
                    while current != start, let edgeIndex = arrivedBy[current] {
                        route.append(edgeIndex)
                        current = edges[edgeIndex].fromIndex
                    }
                    return route.reversed()
                }
                queue.append(next)
            }
        }
        return nil
    }
}
