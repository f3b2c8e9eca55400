// Child automata (issue 33): the group `children`. What a child costs per start, beside the same child
// built by hand, and the memory of a million children started and released.
//
// One event is one child's life in a parent: the parent's row starts a child (a counter automaton)
// under the id `index % 8` with the policy `.latest`, so the start releases the child that id had
// (8 children stay alive); the parent forwards one input to it; the child replies, and its reply maps
// to a parent input, which the parent counts. Two outside inputs per event (`.open(id)`, `.poke(id)`),
// four parent inputs processed (`.open`, `.poke`, `.replied`) and one child input.
//
// - "children start+input+release": `ChildAutomata.start(id, .latest, replies:)` and `send(_:to:)`;
// - "children hand-built": what an expert writes without the feature: a producer keyed by the id under
//   `.latest` that makes the child, observes its replies, keeps it in a dictionary (for forwarding) and
//   removes and releases it when its lifetime ends; forwarding is an effect that sends to the
//   dictionary's child after the parent's reply, as `send(_:to:)` does;
// - "children memory": 1,000,000 children started and released by the package's parent: the heap blocks
//   and bytes outstanding after (must be none more than before), and the resident set before and after
//   and its peak.
#if AUTOMATON_CHILDREN
    import AllocationCounter
    import Automaton

    enum ChildCounterInput: Hashable, Sendable {
        case inc
    }

    enum ChildParentInput: Hashable, Sendable {
        case open(Int), poke(Int), replied(Int)

        var opened: Int? { if case let .open(id) = self { id } else { nil } }
        var poked: Int? { if case let .poke(id) = self { id } else { nil } }
        var repliedID: Int? { if case let .replied(id) = self { id } else { nil } }
    }

    /// The child: a counter, no effects.
    @inline(never)
    func makeChildCounter() -> Automaton<Int, ChildCounterInput> {
        Automaton(state: 0) { count, _ in count + 1 }
    }

    /// The ids the events cycle through: each start releases the child its id had 8 events before.
    let childIDs = 8

    // MARK: The package

    /// The parent with `ChildAutomata`: its state counts its children's replies.
    func makeChildParent(_ counters: ChildAutomata<Int, Int, ChildCounterInput>) -> Automaton<Int, ChildParentInput> {
        Automaton(
            state: 0,
            table: [
                \.opened | { count, _ in count } | { _, id in
                    counters.start(id, .latest, replies: { _ in .replied(id) })
                },
                \.poked | { count, _ in count } | { _, id in counters.send(.inc, to: id) },
                \.repliedID | { count, _ in count + 1 },
            ])
    }

    func childrenPackage(count: Int) -> Workload {
        let name = "children start+input+release"
        return Workload(name: name, events: count) {
            let counters = ChildAutomata<Int, Int, ChildCounterInput>("counters") { _ in makeChildCounter() }
            let parent = makeChildParent(counters)
            let count = opaque(count)
            return {
                let before = parent.state.value
                for index in 0..<count {
                    let id = index & (childIDs - 1)
                    parent.send(.open(id))
                    parent.send(.poke(id))
                }
                try check(parent.state.value - before, count, "\(name): children's replies heard")
                try check(parent.runningEffectCount, childIDs, "\(name): children alive")
            }
        }
    }

    // MARK: Hand-built

    /// The hand-kept children of one parent, by id, for forwarding. A child is removed (and released,
    /// with no lock held) by the lifetime of the effect that made it, if it is still the id's child.
    final class HandChildren: @unchecked Sendable {
        // Safe: `children` is only read or written with `mutex` held.
        private let mutex = Mutex()
        private var children: [Int: Automaton<Int, ChildCounterInput>] = [:]

        func add(_ child: Automaton<Int, ChildCounterInput>, id: Int) {
            mutex.lock()
            let replaced = children.updateValue(child, forKey: id)
            mutex.unlock()
            withExtendedLifetime(replaced) {}
        }

        func remove(_ child: Automaton<Int, ChildCounterInput>, id: Int) {
            mutex.lock()
            let removed = children[id] === child ? children.removeValue(forKey: id) : nil
            mutex.unlock()
            withExtendedLifetime(removed) {}
        }

        func send(_ input: ChildCounterInput, to id: Int) {
            mutex.lock()
            let child = children[id]
            mutex.unlock()
            child?.send(input)
        }
    }

    /// The key of a hand-built child's effect.
    struct HandChildKey: Hashable, Sendable {
        let id: Int
    }

    /// The parent with hand-built children: the same table, the child effects written by hand.
    func makeHandChildParent(_ children: HandChildren) -> Automaton<Int, ChildParentInput> {
        Automaton(
            state: 0,
            table: [
                \.opened | { count, _ in count } | { _, id in
                    SignalProducer<ChildParentInput, Never> { observer, lifetime in
                        let child = makeChildCounter()
                        child.replies.observeValues { _ in observer.send(value: .replied(id)) }
                        children.add(child, id: id)
                        lifetime.observeEnded { children.remove(child, id: id) }
                    }
                    .keyed(HandChildKey(id: id), .latest)
                },
                \.poked | { count, _ in count } | { _, id in
                    SignalProducer<ChildParentInput, Never> { observer, _ in
                        children.send(.inc, to: id)
                        observer.sendCompleted()
                    }
                },
                \.repliedID | { count, _ in count + 1 },
            ])
    }

    func childrenHandBuilt(count: Int) -> Workload {
        let name = "children hand-built"
        return Workload(name: name, events: count) {
            let parent = makeHandChildParent(HandChildren())
            let count = opaque(count)
            return {
                let before = parent.state.value
                for index in 0..<count {
                    let id = index & (childIDs - 1)
                    parent.send(.open(id))
                    parent.send(.poke(id))
                }
                try check(parent.state.value - before, count, "\(name): children's replies heard")
                try check(parent.runningEffectCount, childIDs, "\(name): children alive")
            }
        }
    }

    // MARK: Memory

    struct ChildrenMemory {
        let children: Int
        /// Heap blocks and bytes outstanding after the run, over the count before it (nil without the
        /// allocation counter).
        let blocksLeft: Int?
        let bytesLeft: Int?
        let residentBefore: ResidentMemory
        let residentAfter: ResidentMemory
    }

    /// `children` children started and released, in a parent that keeps 8 alive (ids cycling). The
    /// counts start after a warm-up in which every id has a child, so before and after hold the same.
    func childrenMemory(children: Int) throws -> ChildrenMemory {
        let counters = ChildAutomata<Int, Int, ChildCounterInput>("counters") { _ in makeChildCounter() }
        let parent = makeChildParent(counters)
        for index in 0..<(4 * childIDs) {
            parent.send(.open(index & (childIDs - 1)))
            parent.send(.poke(index & (childIDs - 1)))
        }
        let counting = allocation_counter_is_available() != 0
        let residentBefore = ResidentMemory.read()
        allocation_counter_start()
        let (blocksBefore, bytesBefore) = Population.outstanding()
        for index in 0..<children {
            let id = index & (childIDs - 1)
            parent.send(.open(id))
            parent.send(.poke(id))
        }
        let (blocksAfter, bytesAfter) = Population.outstanding()
        allocation_counter_stop()
        let residentAfter = ResidentMemory.read()
        try check(parent.state.value, 4 * childIDs + children, "children memory: children's replies heard")
        try check(counters.ids(in: parent).count, childIDs, "children memory: children alive")
        return ChildrenMemory(
            children: children, blocksLeft: counting ? blocksAfter - blocksBefore : nil,
            bytesLeft: counting ? bytesAfter - bytesBefore : nil,
            residentBefore: residentBefore, residentAfter: residentAfter)
    }

    /// Runs the `children` group; returns its notes for the end of the run and how many bars it missed.
    func runChildren(_ options: Options) throws -> (notes: [String], barsMissed: Int) {
        var notes: [String] = []
        var barsMissed = 0
        func note(_ line: String) {
            print("  " + line)
            notes.append(line)
        }
        let count = options.count(1_000_000)
        print("children: start a child, forward one input, hear its reply, release it; \(grouped(count)) children")
        let measured = try measureSideBySide(
            [childrenPackage(count: count), childrenHandBuilt(count: count)], options: options)
        let (package, hand) = (measured[0], measured[1])
        if !package.nanosecondsPerEvent.isEmpty, !hand.nanosecondsPerEvent.isEmpty {
            note(
                "children, start + one input + release: \(format(package.median)) ns and "
                    + "\(package.allocationsPerEvent.map(format) ?? "-") allocations per child; hand-built "
                    + "\(format(hand.median)) ns and \(hand.allocationsPerEvent.map(format) ?? "-") allocations; "
                    + "package ÷ hand-built \(format(package.median / hand.median))× "
                    + "(instructions: Benchmarks/callgrind \"children start+input+release\" \"children hand-built\")")
        }

        guard options.onlyMatches("children memory") else { return (notes, barsMissed) }
        let children = options.quick ? 100_000 : 1_000_000
        print("children memory: \(grouped(children)) children started and released")
        let memory = try childrenMemory(children: children)
        let flat = (memory.blocksLeft ?? 0) == 0 && (memory.bytesLeft ?? 0) == 0
        if !flat { barsMissed += 1 }
        let heap =
            memory.blocksLeft.map { blocks in
                "heap: \(blocks) blocks (\(memory.bytesLeft ?? 0) bytes) outstanding after, over before"
            } ?? "heap: not counted (no allocation counter)"
        note(
            "children memory, \(grouped(children)) children started and released: \(heap); resident set "
                + "\(grouped(memory.residentBefore.current)) KiB before, \(grouped(memory.residentAfter.current)) KiB "
                + "after, peak (VmHWM) \(grouped(memory.residentAfter.peak)) KiB. Bar: flat (no block left): "
                + (flat ? "met" : "MISSED"))
        return (notes, barsMissed)
    }
#endif
