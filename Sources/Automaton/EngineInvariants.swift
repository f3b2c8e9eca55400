import Signals

#if DEBUG
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif
#endif

// The engine's invariants, checked after every critical section when a test asks for it
// (`Automaton.checksInvariants`, or `AUTOMATON_CHECK_INVARIANTS=1` for every automaton). Compiled into
// debug builds only: release builds check nothing and store no switch.
//
// What they state is what the unretained graph relies on (see `TrackedEffects` and `EffectRecord`): a
// link only ever leads to a tracked record, so following one never reaches freed memory; and the
// counts that decide completion, sweeps and `runningEffectCount` are exact.

#if DEBUG
    /// Whether every automaton checks its engine's invariants, from the environment
    /// (`AUTOMATON_CHECK_INVARIANTS=1 swift test --filter ...`). A check visits every tracked effect
    /// and queued input, so suites that queue hundreds of thousands of inputs slow down
    /// quadratically with it: choose the suites.
    @usableFromInline package let checksInvariantsByDefault: Bool = {
        guard let value = getenv("AUTOMATON_CHECK_INVARIANTS") else { return false }
        return String(cString: value) != "0"
    }()
#endif

extension EngineStateMachine {
    /// Checks every invariant of the machine, stopping the process with a message that names the
    /// broken one (`preconditionFailure("Internal inconsistency: ...")`). Called under the engine's
    /// lock; reads the effects' lifetimes, under their own lock, and calls no user code. O(tracked
    /// effects + key table slots + queued inputs).
    @usableFromInline
    func checkInvariants() {
        func fail(_ message: String) -> Never {
            preconditionFailure("Internal inconsistency (engine invariant): \(message)")
        }
        if phase == .terminated {
            if tracked.firstLink != nil || tracked.lastLink != nil { fail("effects tracked after termination") }
            if !groups.isEmpty { fail("key groups after termination") }
            if !queue.isEmpty { fail("inputs queued after termination") }
            if runningEffects != 0 || waitingEffects != 0 || idleGroups != 0 {
                fail(
                    "counts after termination: \(runningEffects) running, \(waitingEffects) waiting, \(idleGroups) idle"
                )
            }
            if rootLatestLink != nil { fail("a root latest effect after termination") }
            return
        }
        if !undecidedKeys.isEmpty && gate.load() & ProcessingGate.processing == 0 {
            fail("undecided keys left with nobody processing")
        }

        // The list of tracked effects: consistent both ways, in identifier order, counted exactly.
        var records: [Record] = []
        var identities = Set<ObjectIdentifier>()
        var previous: Record?
        var link = tracked.firstLink
        while let current = link {
            let record = current.takeUnretainedValue()
            if !record.isTracked { fail("effect \(record.id) is in the tracked list but not marked tracked") }
            if record.previousLink?.toOpaque() != previous.map({ Unmanaged.passUnretained($0).toOpaque() }) {
                fail("effect \(record.id)'s previous link does not lead back")
            }
            if let previous, previous.id >= record.id { fail("tracked effects out of identifier order") }
            guard identities.insert(ObjectIdentifier(record)).inserted else { fail("a cycle in the tracked list") }
            records.append(record)
            previous = record
            link = record.nextLink
        }
        if tracked.lastLink?.toOpaque() != previous.map({ Unmanaged.passUnretained($0).toOpaque() }) {
            fail("the tracked list's last link is not its last record")
        }

        func isTracked(_ link: Unmanaged<Record>?) -> Bool {
            link.map { identities.contains(ObjectIdentifier($0.takeUnretainedValue())) } ?? true
        }

        // Every link leads to a tracked record; the tree holds no keyed effect and nothing under a
        // waiting one; nothing tracked and still running has ended.
        var queuedFrom: [ObjectIdentifier: Int] = [:]
        for pending in queue.elements {
            if let origin = pending.origin { queuedFrom[ObjectIdentifier(origin), default: 0] += 1 }
        }
        var running = 0
        var waiting = 0
        for record in records {
            let name = "effect \(record.id)"
            if !isTracked(record.parentLink) { fail("\(name)'s parent is not tracked") }
            if !isTracked(record.latestChildLink) { fail("\(name)'s latest child is not tracked") }
            if !isTracked(record.previousOfKey) || !isTracked(record.nextOfKey) {
                fail("\(name)'s neighbour of its key is not tracked")
            }
            // A keyed effect is governed by its key: never a child in the `.latest` tree (it may be a
            // parent: the effects its inputs start are its children).
            if record.key != nil && record.parentLink != nil { fail("keyed \(name) has a .latest parent") }
            if let child = record.latestChildLink?.takeUnretainedValue(), child.key != nil {
                fail("\(name)'s latest child is keyed")
            }
            if record.isWaiting {
                waiting += 1
                if record.latestChildLink != nil { fail("waiting \(name) has a child") }
                if record.groupLink != nil { fail("waiting \(name) is among its key's running effects") }
                if record.hasFinished { fail("waiting \(name) has finished") }
            }
            if let parent = record.parentLink?.takeUnretainedValue(), parent.isWaiting {
                fail("\(name)'s parent is a waiting effect")
            }
            if !record.hasFinished {
                running += 1
                if record.hasEnded { fail("\(name) is tracked as running, but its lifetime has ended") }
            }
            let queued = queuedFrom[ObjectIdentifier(record)] ?? 0
            // The input in hand (taken from the queue, not yet processed) is still counted.
            if record.pendingInputs < queued || record.pendingInputs > queued + 1 {
                fail("\(name) counts \(record.pendingInputs) queued inputs, \(queued) are queued")
            }
        }
        if !isTracked(rootLatestLink) { fail("the root's latest effect is not tracked") }
        if let root = rootLatestLink?.takeUnretainedValue(), root.key != nil {
            fail("the root's latest effect is keyed")
        }
        if running != runningEffects { fail("\(running) effects running, \(runningEffects) counted") }
        if waiting != waitingEffects { fail("\(waiting) effects waiting, \(waitingEffects) counted") }

        // The key table: slots and tags agree; each key is found from its home slot; each group's
        // running list leads both ways through tracked records of its key, and its waiting ones wait.
        var idle = 0
        var waitingInGroups = 0
        var entries = 0
        for index in groups.slots.indices {
            let tag = groups.tags[index]
            guard let entry = groups.slots[index] else {
                if tag != 0 { fail("empty slot \(index) has a tag") }
                continue
            }
            entries += 1
            if tag != EffectKeyTable<Unmanaged<KeyGroup<State, Input>>>.tag(of: entry.key.storage.hash) {
                fail("slot \(index)'s tag is not its key's")
            }
            if entry.keyIdentity != ObjectIdentifier(entry.key.storage) {
                fail("slot \(index)'s identity is not its key's")
            }
            let found = groups.slot(ofIdentity: entry.keyIdentity, hash: entry.key.storage.hash)
            if !found.found || found.index != index { fail("the key of slot \(index) is not found from its home slot") }
            let group = entry.value.takeUnretainedValue()
            if group.isEmpty { idle += 1 }
            var previousOfKey: Unmanaged<Record>?
            var member = group.firstRunning
            while let current = member {
                let record = current.takeUnretainedValue()
                if !identities.contains(ObjectIdentifier(record)) { fail("a running effect of a key is not tracked") }
                if record.groupLink?.toOpaque() != entry.value.toOpaque() {
                    fail("effect \(record.id) is in a group that its group link does not name")
                }
                // Its key is this one or an equal one, found by `==` outside the lock (not called here).
                if record.keyHash != entry.key.storage.hash { fail("effect \(record.id) runs in another key's group") }
                if record.isWaiting || record.hasFinished {
                    fail("effect \(record.id) is among its key's running ones")
                }
                if record.previousOfKey?.toOpaque() != previousOfKey?.toOpaque() {
                    fail("effect \(record.id)'s previous neighbour of its key does not lead back")
                }
                previousOfKey = current
                member = record.nextOfKey
            }
            if group.lastRunning?.toOpaque() != previousOfKey?.toOpaque() {
                fail("a group's last running link is not its last effect")
            }
            for effect in group.waiting.elements {
                waitingInGroups += 1
                if !effect.record.isWaiting || !identities.contains(ObjectIdentifier(effect.record)) {
                    fail("effect \(effect.record.id) waits in a group but is not a tracked waiting effect")
                }
            }
        }
        if entries != groups.count { fail("\(entries) keys in the table, \(groups.count) counted") }
        if idle != idleGroups { fail("\(idle) idle groups, \(idleGroups) counted") }
        if waitingInGroups != waitingEffects {
            fail("\(waitingInGroups) effects wait in groups, \(waitingEffects) counted")
        }
        for record in records where record.groupLink != nil {
            if record.key == nil { fail("un-keyed effect \(record.id) has a group") }
        }
    }
}

#if DEBUG
    /// A way to break one of the engine's invariants on purpose: for the tests that show each check
    /// can fail. Debug builds only.
    package enum EngineCorruption: Sendable, CaseIterable {
        /// One effect more counted running than there are.
        case runningCount
        /// One effect more counted waiting than there are.
        case waitingCount
        /// One key group more counted idle than there are.
        case idleGroupCount
        /// A tracked effect no longer marked tracked.
        case unmarkedRecord
        /// A keyed effect made a child in the `.latest` tree.
        case keyedParent
        /// A running effect whose lifetime has ended while it is still tracked.
        case endedRecord
    }

    extension EngineStateMachine {
        /// Breaks the invariant `corruption` names (see `EngineCorruption`). The effects it needs must
        /// be tracked: any for most; an un-keyed one and a keyed one for `.keyedParent`.
        mutating func corrupt(_ corruption: EngineCorruption) {
            var records: [Record] = []
            var link = tracked.firstLink
            while let current = link {
                records.append(current.takeUnretainedValue())
                link = current.takeUnretainedValue().nextLink
            }
            switch corruption {
            case .runningCount: runningEffects += 1
            case .waitingCount: waitingEffects += 1
            case .idleGroupCount: idleGroups += 1
            case .unmarkedRecord: records.first?.isTracked = false
            case .keyedParent:
                if let keyed = records.first(where: { $0.key != nil }),
                    let tree = records.first(where: { $0.key == nil })
                {
                    keyed.parent = tree
                }
            case .endedRecord:
                // Ends a lifetime under the lock: only for an effect that registered no cleanup. The
                // record is kept (leaked: the check stops the process), since a record that keeps
                // itself alive lets go of itself when its lifetime ends.
                if let record = records.first(where: { !$0.hasFinished }) {
                    _ = Unmanaged.passRetained(record)
                    record.end()
                }
            }
        }
    }

    extension Automaton {
        /// Breaks one of the engine's invariants (see `EngineCorruption`) in a critical section, at the
        /// end of which the check, if on, stops the process. For tests; debug builds only.
        package func corruptEngineForTesting(_ corruption: EngineCorruption) {
            engine.critical { $0.corrupt(corruption) }
        }
    }
#endif
