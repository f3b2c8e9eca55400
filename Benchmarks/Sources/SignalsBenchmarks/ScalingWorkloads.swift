import Signals

// How cost grows (issue 13): the group `scaling`. For each dimension (observers on one signal, running
// effects, depth of the `.latest` tree, table rows, sending threads) the same workload at a few sizes,
// printed as a small Markdown table, and one note per table on how the cost per unit grows from the
// smallest size to the largest. Every workload checks its result, like the others.
#if AUTOMATON_ENGINE
    import Automaton
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the group found: the notes for the end of the run, and how many tables grow faster than they
/// should (BRIEF §6: "nothing growing faster than its size").
struct ScalingReport {
    var notes: [String] = []
    var growing = 0
}

/// Runs the `scaling` group: prints each table as soon as it is measured.
func runScaling(_ options: Options) throws -> ScalingReport {
    var report = ScalingReport()
    func add(_ note: GrowthNote?) {
        guard let note else { return }
        print("  " + note.line)
        report.notes.append(note.line)
        if note.grows { report.growing += 1 }
    }

    // 1. Observers on one signal.
    let observerSizes = [1, 10, 100, 1_000]
    print("scaling: observers on one Signal (\(observerSizes.map(grouped).joined(separator: ", ")))")
    var sends: [(Int, Measurement)] = []
    for size in observerSizes {
        // About the same number of deliveries at every size.
        let count = Swift.max(4, options.count(2_000_000) / size)
        sends.append((size, try measure(observersSend(observers: size, count: count), options: options)))
    }
    var churn: [(Int, Measurement)] = []
    for size in observerSizes {
        // Fewer events at larger sizes: adding and disposing cost O(N) now (see the note).
        let count = Swift.max(20, options.count(200_000) / size)
        churn.append((size, try measure(observersAddRemove(observers: size, count: count), options: options)))
    }
    printScalingTable(
        "Observers on one `Signal`: one `send(value:)` to N observers (each adds the value to a total)",
        sizeHeader: "observers", rows: sends, perUnit: ("ns per observer delivered", { size in Double(size) }))
    add(growthNote("observers, send", sends, unit: "per observer delivered", divideBySize: true))
    printScalingTable(
        "Observers on one `Signal`: add one observer (`observeValues`) and dispose it, beside N observers",
        sizeHeader: "observers", rows: churn)
    add(growthNote("observers, add + dispose one", churn, unit: "per add + dispose", divideBySize: false))

    #if AUTOMATON_ENGINE
        // 2. Running effects.
        let effectSizes = [1, 100, 10_000, 100_000]
        for keyed in [false, true] {
            let variant = keyed ? "each keyed (`.keyed(i, .merge)`)" : "`.merge`, no keys"
            print("scaling: running effects, \(variant) (\(effectSizes.map(grouped).joined(separator: ", ")))")
            var unrelated: [(Int, Measurement)] = []
            var ending: [(Int, Measurement)] = []
            for size in effectSizes {
                unrelated.append(
                    (
                        size,
                        try measure(
                            runningEffectsUnrelatedInput(effects: size, keyed: keyed, count: options.count(400_000)),
                            options: options)
                    ))
                ending.append(
                    (
                        size,
                        try measure(
                            runningEffectsEndOne(effects: size, keyed: keyed, count: options.count(100_000)),
                            options: options)
                    ))
            }
            printScalingTable(
                "N never-ending effects running (\(variant)): an unrelated input (a transition without effect)",
                sizeHeader: "effects", rows: unrelated)
            add(
                growthNote(
                    "running effects (\(keyed ? "keyed" : "merge")), unrelated input", unrelated,
                    unit: "per input", divideBySize: false))
            printScalingTable(
                "N never-ending effects running (\(variant)): one event = one effect completes through its trigger, "
                    + "then one input starts its replacement (so N stay running)",
                sizeHeader: "effects", rows: ending)
            add(
                growthNote(
                    "running effects (\(keyed ? "keyed" : "merge")), end one + start its replacement", ending,
                    unit: "per end + start", divideBySize: false))
        }

        // 3. Depth of the `.latest` tree.
        let depths = [1, 100, 10_000]
        print("scaling: depth of the .latest tree (\(depths.map(grouped).joined(separator: ", ")))")
        var replacements: [(Int, Measurement)] = []
        for depth in depths {
            let count = Swift.max(4, options.count(400_000) / depth)
            replacements.append(
                (depth, try measure(latestChainReplacement(depth: depth, count: count), options: options)))
        }
        printScalingTable(
            "`.latest` chain of depth N (each effect's input starts the next never-ending effect): one event = an "
                + "outside input that cancels the chain (N effects) and starts a new one (N transitions, N starts)",
            sizeHeader: "depth", rows: replacements,
            perUnit: ("ns per level (1 cancelled + 1 started effect)", { size in Double(size) }))
        add(growthNote(".latest chain, replacement", replacements, unit: "per level", divideBySize: true))

        // 4. Table rows.
        let rowCounts = [4, 30, 300]
        print("scaling: table rows (\(rowCounts.map(grouped).joined(separator: ", ")))")
        var switches: [(Int, Measurement)] = []
        for rows in rowCounts {
            switches.append(
                (
                    rows,
                    try measure(
                        tableRowsWorkload(
                            name: "rows \(rows) switch", rows: rows, count: options.count(1_000_000),
                            make: { Automaton(state: 0, mapping: rowsSwitchMapping(rows: rows)) }), options: options)
                ))
        }
        printScalingTable(
            "Table of N rows (`i | i => (i + 1) % N`), as a `switch` closure: literal cases for 4 and 30 rows; for 300, "
                + "a closure computing the same function arithmetically",
            sizeHeader: "rows", rows: switches)
        add(growthNote("table rows, switch", switches, unit: "per input", divideBySize: false))
        #if AUTOMATON_DSL
            var tables: [(Int, Measurement)] = []
            for rows in rowCounts {
                tables.append(
                    (
                        rows,
                        try measure(
                            tableRowsWorkload(
                                name: "rows \(rows) DSL table", rows: rows, count: options.count(1_000_000),
                                make: { Automaton(state: 0, table: rowsTable(rows: rows)) }), options: options)
                    ))
            }
            printScalingTable(
                "Table of N rows (`i | i => (i + 1) % N`), in the DSL's table form (`Automaton(state:table:)`, rows "
                    + "built in a loop into a `MappingTable`)",
                sizeHeader: "rows", rows: tables)
            add(growthNote("table rows, DSL table", tables, unit: "per input", divideBySize: false))
        #endif

        // 5. Threads sending into one automaton.
        print("scaling: threads sending into one automaton (1, 2)")
        let total = options.count(2_000_000)
        var threads: [(Int, Measurement)] = []
        for count in [1, 2] {
            threads.append((count, try measure(concurrentSenders(threads: count, total: total), options: options)))
        }
        printScalingTable(
            "An `Automaton<Int, Int>` counter without effects: \(grouped(total)) inputs in all, sent by 1 thread or "
                + "split over 2 threads sending at once (throughput; the machine has \(sysconf(Int32(_SC_NPROCESSORS_ONLN))) cores)",
            sizeHeader: "threads", rows: threads,
            perUnit: ("inputs per second", { _ in 0 }))
        if let one = threads.first?.1, let two = threads.last?.1, one.median.isFinite, two.median.isFinite {
            let line =
                "scaling, 2 threads vs 1 sending into one automaton: \(format(two.median)) vs "
                + "\(format(one.median)) ns per input (×\(format(two.median / one.median)) the time per input)"
            print("  " + line)
            report.notes.append(line)
        }
    #else
        print("scaling: running effects, .latest depth, table rows and threads need the Automaton engine (not built)")
    #endif
    return report
}

// MARK: Tables

/// Prints `rows` as `size | ns per event (median) | [per unit] | allocations per event`. `perUnit`
/// adds a column: the median divided by the divisor it gives for a size; a divisor of 0 means "events
/// per second" instead.
func printScalingTable(
    _ title: String, sizeHeader: String, rows: [(Int, Measurement)],
    perUnit: (header: String, divisor: (Int) -> Double)? = nil
) {
    print("")
    print("**\(title)**")
    print("")
    var header = "| \(sizeHeader) | events | ns per event (median) |"
    var rule = "|---:|---:|---:|"
    if let perUnit {
        header += " \(perUnit.header) |"
        rule += "---:|"
    }
    header += " allocations per event |"
    rule += "---:|"
    print(header)
    print(rule)
    for (size, measurement) in rows {
        var line = "| \(grouped(size)) | \(grouped(measurement.events)) | \(format(measurement.median)) |"
        if let perUnit {
            let divisor = perUnit.divisor(size)
            if divisor == 0 {
                let perSecond = 1e9 / measurement.median
                line += " \(perSecond.isFinite ? grouped(Int(perSecond.rounded())) : "-") |"
            } else {
                line += " \(format(measurement.median / divisor)) |"
            }
        }
        line += " \(measurement.allocationsPerEvent.map(format) ?? "-") |"
        print(line)
    }
    print("")
}

struct GrowthNote {
    let line: String
    let grows: Bool
}

/// How the cost per unit (per event, or per event divided by the size) grows from the smallest size
/// to the largest: flat up to 1.5×; up to 3×, it grows slowly (within the noise of a shared machine
/// and the caches of a larger working set, or a small term in the size); beyond 3×, it grows with the
/// size where it should not, and misses the bar (BRIEF §6: "nothing growing faster than its size",
/// taken as: the cost per unit stays within 3× from the smallest size to the largest).
func growthNote(_ what: String, _ rows: [(Int, Measurement)], unit: String, divideBySize: Bool) -> GrowthNote? {
    guard let (smallSize, small) = rows.first, let (largeSize, large) = rows.last,
        small.median.isFinite, large.median.isFinite
    else { return nil }
    let perUnit = { (size: Int, measurement: Measurement) in
        divideBySize ? measurement.median / Double(size) : measurement.median
    }
    let (smallCost, largeCost) = (perUnit(smallSize, small), perUnit(largeSize, large))
    let factor = largeCost / smallCost
    let grows = factor > 3
    let verdict = factor <= 1.5 ? "flat" : factor <= 3 ? "grows slowly (≤ 3×)" : "GROWS with the size"
    let line =
        "scaling, \(what): \(format(smallCost)) ns \(unit) at \(grouped(smallSize)), \(format(largeCost)) at "
        + "\(grouped(largeSize)) (×\(format(factor)) for ×\(grouped(largeSize / smallSize)) the size): \(verdict). "
        + "Bar: \(unit) within 3× over the sizes: " + (grows ? "MISSED" : "met")
    return GrowthNote(line: line, grows: grows)
}

// MARK: 1. Observers

/// `observers` observers on one `Signal.pipe()`, each adding every value to one shared total; one event
/// is one `send(value:)` (delivered to every observer).
func observersSend(observers: Int, count: Int) -> Workload {
    let name = "observers \(grouped(observers)) send"
    return Workload(name: name, events: count) {
        let (signal, input) = Signal<Int, Never>.pipe()
        let total = Total()
        let disposables = (0..<observers).map { _ in signal.observeValues { total.value &+= $0 } }
        let count = opaque(count)
        return {
            let before = total.value
            for value in 0..<count {
                input.send(value: value)
            }
            try check(total.value - before, observers * sumBelow(count), "\(name): total")
            withExtendedLifetime((signal, disposables)) {}
        }
    }
}

/// `observers` observers on one signal; one event adds one more observer and disposes it. Checked by a
/// send after the loop: only the `observers` observers hear it.
func observersAddRemove(observers: Int, count: Int) -> Workload {
    let name = "observers \(grouped(observers)) add + dispose"
    return Workload(name: name, events: count) {
        let (signal, input) = Signal<Int, Never>.pipe()
        let total = Total()
        let disposables = (0..<observers).map { _ in signal.observeValues { total.value &+= $0 } }
        let extra = Total()
        let count = opaque(count)
        return {
            var disposed = 0
            for _ in 0..<count {
                let disposable = signal.observeValues { extra.value &+= $0 }
                disposable.dispose()
                if disposable.isDisposed { disposed &+= 1 }
            }
            try check(disposed, count, "\(name): disposed")
            let (before, extraBefore) = (total.value, extra.value)
            input.send(value: 1)
            try check(total.value - before, observers, "\(name): observers that heard the send")
            try check(extra.value - extraBefore, 0, "\(name): disposed observers that heard the send")
            withExtendedLifetime(disposables) {}
        }
    }
}

#if AUTOMATON_ENGINE
    // MARK: 2. Running effects

    /// The observers of running effects, by effect number: each effect's trigger. Safe: only the thread
    /// driving the workload touches it (effects start synchronously on it, and are ended from it).
    final class EffectTriggers: @unchecked Sendable {
        private let storage: UnsafeMutablePointer<Observer<Int, Never>?>
        let count: Int

        init(count: Int) {
            self.count = count
            storage = .allocate(capacity: count)
            storage.initialize(repeating: nil, count: count)
        }

        deinit {
            storage.deinitialize(count: count)
            storage.deallocate()
        }

        subscript(index: Int) -> Observer<Int, Never>? {
            get { storage[index] }
            set { storage[index] = newValue }
        }
    }

    /// An `Automaton<Int, Int>` under `.merge` whose input `i >= 0` starts effect `i` (keyed by `i` under
    /// `.merge` if `keyed`), a producer that never ends by itself: it keeps its observer in `triggers[i]`
    /// until it is told to complete or is disposed. Input -1 is unrelated: a transition without effect.
    /// The state counts the transitions; `counts` the effects started and ended.
    func runningEffectsAutomaton(
        effects: Int, keyed: Bool, triggers: EffectTriggers,
        counts: ReplyCounts
    ) -> Automaton<Int, Int> {
        let automaton = Automaton<Int, Int>(
            state: 0,
            mapping: { state, input in
                guard input >= 0 else { return (state + 1, .empty) }
                let effect = SignalProducer<Int, Never> { observer, lifetime in
                    counts.started &+= 1
                    triggers[input] = observer
                    lifetime.observeEnded { counts.disposed &+= 1 }
                }
                return (state + 1, keyed ? effect.keyed(input, .merge) : effect)
            }, strategy: .merge)
        countReplies(of: automaton, into: counts)
        for index in 0..<effects {
            automaton.send(index)
        }
        return automaton
    }

    /// `effects` effects running; one event is one unrelated input (success, no effect).
    func runningEffectsUnrelatedInput(effects: Int, keyed: Bool, count: Int) -> Workload {
        let name = "effects \(grouped(effects)) \(keyed ? "keyed" : "merge") unrelated"
        return Workload(name: name, events: count) {
            let counts = ReplyCounts()
            let triggers = EffectTriggers(count: effects)
            let automaton = runningEffectsAutomaton(effects: effects, keyed: keyed, triggers: triggers, counts: counts)
            try check(automaton.runningEffectCount, effects, "\(name): effects running after setup")
            let count = opaque(count)
            let unrelated = opaque(-1)
            return {
                let (state, successes, started, ended) = (
                    automaton.state.value, counts.successes, counts.started, counts.disposed
                )
                for _ in 0..<count {
                    automaton.send(unrelated)
                }
                try check(counts.successes - successes, count, "\(name): successes")
                try check(automaton.state.value - state, count, "\(name): final state")
                try check(counts.started - started, 0, "\(name): effects started")
                try check(counts.disposed - ended, 0, "\(name): effects ended")
                try check(automaton.runningEffectCount, effects, "\(name): effects running")
                withExtendedLifetime(triggers) {}
            }
        }
    }

    /// `effects` effects running; one event ends one of them (it completes through its trigger, in turn
    /// from the oldest) and sends the input that starts its replacement, so `effects` stay running.
    func runningEffectsEndOne(effects: Int, keyed: Bool, count: Int) -> Workload {
        let name = "effects \(grouped(effects)) \(keyed ? "keyed" : "merge") end + start"
        return Workload(name: name, events: count) {
            let counts = ReplyCounts()
            let triggers = EffectTriggers(count: effects)
            let automaton = runningEffectsAutomaton(effects: effects, keyed: keyed, triggers: triggers, counts: counts)
            try check(automaton.runningEffectCount, effects, "\(name): effects running after setup")
            let count = opaque(count)
            var next = 0
            return {
                let (state, successes, started, ended) = (
                    automaton.state.value, counts.successes, counts.started, counts.disposed
                )
                for _ in 0..<count {
                    triggers[next]!.sendCompleted()
                    automaton.send(next)
                    next = next + 1 == effects ? 0 : next + 1
                }
                try check(counts.successes - successes, count, "\(name): successes")
                try check(automaton.state.value - state, count, "\(name): final state")
                try check(counts.started - started, count, "\(name): effects started")
                try check(counts.disposed - ended, count, "\(name): effects ended")
                try check(automaton.runningEffectCount, effects, "\(name): effects running")
            }
        }
    }

    // MARK: 3. Depth of the .latest tree

    /// An `Automaton<Int, Int>` under `.latest` where input `level` (from 0) starts a never-ending effect
    /// that emits `level + 1` as it starts, up to `depth` levels: one outside input 0 builds a chain of
    /// `depth` running effects, each the latest child of the one before. The next outside input 0 replaces
    /// the first, so cancels the whole chain, then builds a new one. One event is one such outside input.
    func latestChainReplacement(depth: Int, count: Int) -> Workload {
        let name = ".latest depth \(grouped(depth)) replace"
        return Workload(name: name, events: count) {
            let counts = ReplyCounts()
            let automaton = Automaton<Int, Int>(
                state: 0,
                mapping: { state, level in
                    let effect = SignalProducer<Int, Never> { observer, lifetime in
                        counts.started &+= 1
                        lifetime.observeEnded {
                            counts.disposed &+= 1
                            withExtendedLifetime(observer) {}  // never ends by itself: keeps its observer
                        }
                        if level + 1 < depth { observer.send(value: level + 1) }
                    }
                    return (state + 1, effect)
                }, strategy: .latest)
            countReplies(of: automaton, into: counts)
            automaton.send(0)
            try check(automaton.runningEffectCount, depth, "\(name): effects running after setup")
            let count = opaque(count)
            let root = opaque(0)
            return {
                let (state, successes, started, ended) = (
                    automaton.state.value, counts.successes, counts.started, counts.disposed
                )
                for _ in 0..<count {
                    automaton.send(root)
                }
                try check(counts.successes - successes, count * depth, "\(name): successes")
                try check(automaton.state.value - state, count * depth, "\(name): final state")
                try check(counts.started - started, count * depth, "\(name): effects started")
                try check(counts.disposed - ended, count * depth, "\(name): effects cancelled")
                try check(automaton.runningEffectCount, depth, "\(name): effects running")
            }
        }
    }

    // MARK: 4. Table rows

    /// The machine of `rows` rows (states and inputs `0..<rows`; row i: input i in state i leads to
    /// `(i + 1) % rows`) as a `switch`: literal cases for 4 and 30 rows; otherwise a closure computing
    /// the same function arithmetically (a 300-case literal would measure the same jump table).
    func rowsSwitchMapping(rows: Int) -> Automaton<Int, Int>.Mapping {
        switch rows {
        case 4: return switch4
        case 30: return switch30
        default:
            let rows = opaque(rows)
            return { state, input in input == state && input >= 0 && input < rows ? (input + 1) % rows : nil }
        }
    }

    @Sendable
    func switch4(_ state: Int, _ input: Int) -> Int? {
        switch (state, input) {
        case (0, 0): return 1
        case (1, 1): return 2
        case (2, 2): return 3
        case (3, 3): return 0
        default: return nil
        }
    }

    @Sendable
    func switch30(_ state: Int, _ input: Int) -> Int? {
        switch (state, input) {
        case (0, 0): return 1
        case (1, 1): return 2
        case (2, 2): return 3
        case (3, 3): return 4
        case (4, 4): return 5
        case (5, 5): return 6
        case (6, 6): return 7
        case (7, 7): return 8
        case (8, 8): return 9
        case (9, 9): return 10
        case (10, 10): return 11
        case (11, 11): return 12
        case (12, 12): return 13
        case (13, 13): return 14
        case (14, 14): return 15
        case (15, 15): return 16
        case (16, 16): return 17
        case (17, 17): return 18
        case (18, 18): return 19
        case (19, 19): return 20
        case (20, 20): return 21
        case (21, 21): return 22
        case (22, 22): return 23
        case (23, 23): return 24
        case (24, 24): return 25
        case (25, 25): return 26
        case (26, 26): return 27
        case (27, 27): return 28
        case (28, 28): return 29
        case (29, 29): return 0
        default: return nil
        }
    }

    #if AUTOMATON_DSL
        /// The same machine in the DSL: `i | i => (i + 1) % rows` for each row, built in a loop into a
        /// `MappingTable` (what `table: [rows]` builds, indexed by input).
        func rowsTable(rows: Int) -> MappingTable<Int, Int> {
            var table: [MappingRow<Int, Int>] = []
            table.reserveCapacity(rows)
            for row in 0..<rows {
                let next = (row + 1) % rows  // (`=>` and `%` are in unordered precedence groups)
                table.append(row | row => next)
            }
            return MappingTable(table)
        }
    #endif

    /// Sends the input the current state accepts, `count` times: every input succeeds, and the state goes
    /// round the `rows` states.
    func tableRowsWorkload(name: String, rows: Int, count: Int, make: @escaping () -> Automaton<Int, Int>) -> Workload {
        Workload(name: name, events: count) {
            let counts = ReplyCounts()
            let automaton = make()
            countReplies(of: automaton, into: counts)
            let count = opaque(count)
            let rows = opaque(rows)
            return {
                let (start, successes, failures) = (automaton.state.value, counts.successes, counts.failures)
                var state = start
                for _ in 0..<count {
                    automaton.send(state)
                    state = state + 1 == rows ? 0 : state + 1
                }
                try check(counts.successes - successes, count, "\(name): successes")
                try check(counts.failures - failures, 0, "\(name): failures")
                try check(automaton.state.value, (start + count) % rows, "\(name): final state")
            }
        }
    }

    // MARK: 5. Threads

    /// An `Automaton<Int, Int>` counter (each input adds itself to the state, no effects); one event is one
    /// input; `total` inputs per body, split evenly over `threads` threads sending at once (each body
    /// starts its threads and joins them; 1 thread runs on a thread of its own too, for the same cost).
    func concurrentSenders(threads: Int, total: Int) -> Workload {
        let name = "threads \(threads) sending"
        let perThread = total / threads
        return Workload(name: name, events: perThread * threads) {
            let counts = ReplyCounts()
            let automaton = Automaton<Int, Int>(state: 0, mapping: { state, input in state &+ input })
            countReplies(of: automaton, into: counts)
            let perThread = opaque(perThread)
            let one = opaque(1)
            return {
                let (state, successes) = (automaton.state.value, counts.successes)
                try runConcurrently(
                    (0..<threads).map { _ in
                        { for _ in 0..<perThread { automaton.send(one) } }
                    })
                try check(counts.successes - successes, perThread * threads, "\(name): replies")
                try check(automaton.state.value - state, perThread * threads, "\(name): final state")
            }
        }
    }
#endif

/// Runs each of `bodies` on a thread of its own, all at once, and waits for them all.
func runConcurrently(_ bodies: [() -> Void]) throws {
    #if os(Linux)
        var threads: [pthread_t] = []
    #else
        var threads: [pthread_t?] = []
    #endif
    for body in bodies {
        #if os(Linux)
            var thread = pthread_t()
        #else
            var thread: pthread_t?
        #endif
        let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            }, context)
        guard created == 0 else { throw WrongResult(description: "pthread_create failed: \(created)") }
        threads.append(thread)
    }
    for thread in threads {
        #if os(Linux)
            pthread_join(thread, nil)
        #else
            pthread_join(thread!, nil)
        #endif
    }
}
