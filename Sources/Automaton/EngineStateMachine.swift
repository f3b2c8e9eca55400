import Signals

/// The bits of the engine's gate word: the lock-free fast path for an outside input.
///
/// - `processing`: one thread holds the processing role (it owns the current state).
/// - `blocked`: the fast path must not be used: inputs are queued, or the input signal has completed, or
///   the automaton has terminated, or an effect ended on a thread other than the processing one while
///   it processed (so that a value it holds goes through the queue: see `AutomatonEngine.held`). Set
///   and cleared only under the engine's lock.
///
/// An outside input takes the role with a compare-and-swap from 0 and gives it back with one to 0;
/// either failing sends it through the lock.
@usableFromInline
enum ProcessingGate {
    @inlinable static var processing: UInt { 1 }
    @inlinable static var blocked: UInt { 2 }
}

/// The bits of the engine's effect-event word: who sends the events of `effectEvents`.
///
/// - `emitting`: one thread holds the emitter role: it sends the events it decided itself, then the
///   events queued meanwhile (`EngineStateMachine.effectEventOutbox`), in order.
/// - `pending`: events were queued while the role was held. Set only under the engine's lock; it makes
///   the holder's lock-free give-back fail, so it takes the lock and sends them.
///
/// Every effect event is decided under the engine's lock (or, for an effect's start or a `.first`
/// effect's drop, by the thread holding the processing role, which nothing else can decide about
/// before then). The
/// thread deciding it either takes the role then (a compare-and-swap from 0) and sends it at once,
/// or queues it for the holder. So observers hear effect events in the order they were decided,
/// whichever threads decided them, and the common case (one thread) takes no lock to send them.
///
/// An event decided while the word is 0 and `effectEvents` has no observer reaches nobody, and is
/// neither sent nor queued: it costs two loads, not two compare-and-swaps
/// (`reachesNobody(gate:events:)`). No event decided before it can still be on its way (none is
/// held or queued), and every event decided after it is sent or queued as usual, so an observer that
/// attaches meanwhile hears a gap-free run: whatever follows its `observe`. (An effect's start, which
/// the processing role decides without the lock, counts as decided when that thread takes the role,
/// or finds it free with nobody observing: its earlier check that chose the path orders nothing.)
@usableFromInline
enum EffectEventGate {
    @inlinable static var emitting: UInt { 1 }
    @inlinable static var pending: UInt { 2 }

    /// Whether an effect event decided now would reach nobody: nobody holds the emitter role (so every
    /// event decided before has been sent, and none is queued) and `events` has no observer. Called
    /// where the event is decided: under the engine's lock, or by the thread holding the processing
    /// role for an effect's start. The gate is read first: a holder gives the role back after its
    /// sends, so once the word reads 0 the observer list read next is at least as recent as the one
    /// its last send saw.
    @inlinable @inline(__always)
    static func reachesNobody<Input>(gate: AtomicWord, events: SignalCore<EffectEvent<Input>, Never>) -> Bool {
        gate.load() == 0 && events.isUnobserved
    }
}

/// An input waiting to be processed, with the effect that emitted it (`nil` for an outside input).
@usableFromInline
struct PendingInput<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let input: Input
    @usableFromInline let origin: EffectRecord<State, Input>?

    @inlinable
    init(input: Input, origin: EffectRecord<State, Input>?) {
        self.input = input
        self.origin = origin
    }
}

/// How the automaton ends, once it stops taking inputs.
@usableFromInline
enum Termination: Sendable {
    /// The input signal was interrupted: effects are disposed, then `replies` is interrupted.
    case interrupted
    /// The automaton was released: `replies` completes, then effects are disposed, then `state`
    /// completes.
    case released
}

/// A keyed effect waiting (`.queue`) for its key's running effects to end.
@usableFromInline
struct WaitingEffect<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let record: EffectRecord<State, Input>
    /// The input that succeeded and will have started it.
    @usableFromInline let input: Input

    @inlinable
    init(record: EffectRecord<State, Input>, input: Input) {
        self.record = record
        self.input = input
    }
}

/// The effects of one key: the value of the engine's key table (`EngineStateMachine.groups`).
///
/// A class, so that an effect that ends reaches its group through its record (`EffectRecord.groupLink`)
/// without looking its key up, and so that a group stays in the table, empty, after its last effect
/// ended: the next effect of the key (usually soon, for a key is a role, like a connection attempt)
/// finds it there, and neither inserts nor removes anything. Empty groups are swept out once they are
/// most of the table (`EngineStateMachine.group(for:into:)`).
///
/// Only ever read and changed under the engine's lock, so its fields skip the run-time exclusivity
/// checks.
@usableFromInline
final class KeyGroup<State: Sendable, Input: Sendable>: @unchecked Sendable {
    // Safe: every access is under the engine's lock (see above).
    @usableFromInline typealias Record = EffectRecord<State, Input>

    /// Started and not ended, in start order: a list linked through the records.
    ///
    /// The links are unretained, so that starting and ending a keyed effect costs no reference counting:
    /// a record joins its group only once tracked, and leaves it (`removeRunning`, or when the group is
    /// cancelled or the engine terminates) before it is forgotten, and a tracked record is alive (see
    /// `TrackedEffects`).
    @usableFromInline @exclusivity(unchecked) var firstRunning: Unmanaged<Record>?
    @usableFromInline @exclusivity(unchecked) var lastRunning: Unmanaged<Record>?
    /// Waiting (`.queue`) for the running ones to end, FIFO.
    @usableFromInline @exclusivity(unchecked) var waiting = FIFOQueue<WaitingEffect<State, Input>>()

    @inlinable
    init() {}

    /// No effect of the key runs or waits: the sweep may remove the group.
    @inlinable
    var isEmpty: Bool { firstRunning == nil && waiting.isEmpty }

    @inlinable
    var hasRunning: Bool { firstRunning != nil }

    /// Links `record` last among the running effects, and links the record to this group.
    @inlinable
    func appendRunning(_ record: Record) {
        let link = Unmanaged.passUnretained(record)
        record.previousOfKey = lastRunning
        if let lastRunning {
            lastRunning._withUnsafeGuaranteedRef { $0.nextOfKey = link }
        } else {
            firstRunning = link
        }
        lastRunning = link
        record.groupLink = Unmanaged.passUnretained(self)
    }

    /// Unlinks `record` from the running effects, and from this group.
    @inlinable
    func removeRunning(_ record: Record) {
        let (previous, next) = (record.previousOfKey, record.nextOfKey)
        if let previous {
            previous._withUnsafeGuaranteedRef { $0.nextOfKey = next }
        } else {
            firstRunning = next
        }
        if let next {
            next._withUnsafeGuaranteedRef { $0.previousOfKey = previous }
        } else {
            lastRunning = previous
        }
        record.previousOfKey = nil
        record.nextOfKey = nil
        record.groupLink = nil
    }
}

/// An effect cancelled by the engine: its record (whose lifetime to end, and whose identifier and key
/// to report), and whether a `.cancel(key)` row cancelled it.
@usableFromInline
struct CancelledEffect<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let record: EffectRecord<State, Input>
    /// Cancelled by a `.cancel(key)` row, rather than replaced.
    @usableFromInline let byCancelRow: Bool

    @inlinable
    init(_ record: EffectRecord<State, Input>, byCancelRow: Bool) {
        self.record = record
        self.byCancelRow = byCancelRow
    }
}

/// What `CancelledEffects` keeps to be released after the engine's lock.
@usableFromInline
enum Leftover<State: Sendable, Input: Sendable>: Sendable {
    case waiting(WaitingEffect<State, Input>)
    case key(EffectKey)
    case inputs(FIFOQueue<PendingInput<State, Input>>)
}

/// The effects one input cancels: usually none or one, kept inline; an array only beyond one.
@usableFromInline
struct CancelledEffects<State: Sendable, Input: Sendable>: Sendable, Sequence {
    // The arrays are optional so that the usual input, which cancels one effect or none, neither makes
    // nor releases one.
    @usableFromInline var first: CancelledEffect<State, Input>?
    @usableFromInline var rest: [CancelledEffect<State, Input>]?
    /// What must not be released under the engine's lock, so goes out with the rest: the producers of
    /// waiting effects cancelled with them, the keys the key table let go of (a key is a user's
    /// value), and a termination's queued inputs. One array for all, so that the usual input releases
    /// one `nil`, not three.
    @usableFromInline var leftovers: [Leftover<State, Input>]?

    @inlinable
    init() {}

    /// No effect was cancelled (`rest` is only made after `first`; `leftovers` are released with this
    /// value in any case).
    @inlinable
    var isEmpty: Bool { first == nil }

    @inlinable
    mutating func append(_ effect: CancelledEffect<State, Input>) {
        if first == nil {
            first = effect
        } else if rest == nil {
            rest = [effect]
        } else {
            rest!.append(effect)
        }
    }

    /// Keeps `effect`'s producer until these effects are let go of.
    @inlinable
    mutating func keep(_ effect: WaitingEffect<State, Input>) {
        if leftovers == nil { leftovers = [.waiting(effect)] } else { leftovers!.append(.waiting(effect)) }
    }

    /// Keeps the inputs of `queue` until these effects are let go of.
    @inlinable
    mutating func keep(_ queue: FIFOQueue<PendingInput<State, Input>>) {
        guard !queue.isEmpty else { return }
        if leftovers == nil { leftovers = [.inputs(queue)] } else { leftovers!.append(.inputs(queue)) }
    }

    /// Keeps the keys of `entries` until these effects are let go of, and gives back the table's
    /// reference to each entry's group (a group holds nothing of the user's once it is out of the table).
    @inlinable
    mutating func keepKeys(of entries: [EffectKeyTable<Unmanaged<KeyGroup<State, Input>>>.Entry]) {
        guard !entries.isEmpty else { return }
        if leftovers == nil { leftovers = [] }
        for entry in entries {
            leftovers!.append(.key(entry.key))
            entry.value.release()
        }
    }

    @inlinable
    func makeIterator() -> Iterator {
        Iterator(first: first, rest: rest?.makeIterator())
    }

    @usableFromInline
    struct Iterator: IteratorProtocol {
        @usableFromInline var first: CancelledEffect<State, Input>?
        @usableFromInline var rest: IndexingIterator<[CancelledEffect<State, Input>]>?

        @inlinable
        init(first: CancelledEffect<State, Input>?, rest: IndexingIterator<[CancelledEffect<State, Input>]>?) {
            self.first = first
            self.rest = rest
        }

        @inlinable
        mutating func next() -> CancelledEffect<State, Input>? {
            if let effect = first {
                first = nil
                return effect
            }
            return rest?.next()
        }
    }
}

/// What becomes of the effect a successful input returned.
@usableFromInline
enum EffectDecision: Sendable {
    /// No effect (or a `.cancel(key)` row).
    case none
    /// Start it now.
    case start
    /// Its key's `.first` policy drops it: never started; its identifier is reported.
    case drop
    /// Its key's `.queue` policy makes it wait.
    case wait
}

/// How `commitSuccess` ended.
@usableFromInline
enum CommitResult: Sendable {
    /// Terminated while the mapping ran: emit nothing.
    case aborted
    /// Nothing done: a key of the effect (or of the cancel row) has the hash of a key in the table but
    /// another storage, and only its `==` (user code) can tell whether they are equal. The candidates
    /// are in `undecidedKeys`; the caller takes them, compares them with no lock held and commits again
    /// with the equalities found.
    case compareKeys
    /// Committed; the caller takes the emitter role and sends the cancellations itself.
    case committedSendingCancellations
    /// Committed; any cancellations were queued for the thread holding the emitter role.
    case committed
}

/// The automaton's shared bookkeeping: the input queue, who is processing, and the effect tree.
///
/// Every method runs under the engine's lock and calls no user code: each returns what the engine must
/// do once the lock is released (swift-async-algorithms style). The current state and the root's latest
/// child are not here: they belong to the thread that holds the processing role (see `AutomatonEngine`).
@usableFromInline
struct EngineStateMachine<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline typealias Record = EffectRecord<State, Input>

    @usableFromInline
    enum Phase: Sendable {
        /// Taking outside inputs.
        case active
        /// The input signal completed: no more outside inputs; effects go on.
        case inputCompleted
        /// Released or interrupted: nothing more happens.
        case terminated
    }

    /// What `send` should do after enqueueing.
    @usableFromInline
    enum SendAction {
        /// Dropped (terminated, input completed, or the emitting effect was cancelled).
        case drop
        /// Queued behind the input being processed; the processing thread will take it.
        case queued
        /// Nobody is processing: the caller becomes the processing thread and processes `input`.
        case process(PendingInput<State, Input>)
    }

    /// What the processing thread does next.
    @usableFromInline
    enum NextAction {
        case process(PendingInput<State, Input>)
        /// An input whose effect was cancelled after it was queued: the caller lets it go, after the
        /// lock (it may hold the last reference to its effect's record, and so to its key, and the
        /// input is a user's value), then asks again.
        case discard(PendingInput<State, Input>)
        /// The queue is empty; processing stops. `completeReplies` if the automaton has finished.
        case idle(completeReplies: Bool)
        /// The automaton was terminated while this thread processed: processing stops, and this thread
        /// performs the termination (dispose `effects` and end the signals, in `termination`'s order).
        case terminate(Termination, effects: CancelledEffects<State, Input>)
    }

    @usableFromInline let isLatest: Bool
    @usableFromInline var phase = Phase.active
    @usableFromInline var queue = FIFOQueue<PendingInput<State, Input>>()
    /// The gate word: see `ProcessingGate`. Shared with the engine.
    @usableFromInline let gate: AtomicWord
    /// Every tracked effect, in the order of their identifiers.
    @usableFromInline var tracked = TrackedEffects<State, Input>()
    /// Under `.latest`, the effect started by the latest successful outside input, or the effect that
    /// inherited its place, if still tracked.
    /// Unretained, like every link to a tracked record (see `EffectRecord.parentLink`).
    @usableFromInline var rootLatestLink: Unmanaged<Record>?
    /// A termination requested while another thread held the processing role: that thread performs it
    /// when it finishes the input in hand, so the input's reply comes before the end of `replies`.
    @usableFromInline var pendingTermination: (Termination, CancelledEffects<State, Input>)?
    /// Whether the termination has been performed (by whichever thread held the processing role).
    @usableFromInline var hasPerformedTermination = false
    /// The released automaton's lifetime token, disposed once the termination has been performed, so
    /// that the automaton's `lifetime` ends last even when another thread performs the termination
    /// later (see `AutomatonEngine.release(endingAfterwards:)`).
    @usableFromInline var lifetimeToken: Lifetime.Token?
    @usableFromInline var nextEffectID: EffectID = 0
    /// Effects that have neither ended nor been cancelled, those waiting for their key included.
    @usableFromInline var runningEffects = 0
    /// Keyed effects waiting (`.queue`) for their key.
    @usableFromInline var waitingEffects = 0
    /// The keyed effects, by key.
    ///
    /// The table holds one reference to each group, taken by hand in `insertGroup` and given back in
    /// `CancelledEffects.keepKeys` (sweeps and termination), so that looking a group up costs no
    /// reference counting.
    @usableFromInline var groups = EffectKeyTable<Unmanaged<KeyGroup<State, Input>>>()
    #if DEBUG
        /// Whether `AutomatonEngine.critical(_:)` checks the invariants after each critical section (see
        /// `checkInvariants()`). Debug builds only.
        @usableFromInline var checksInvariants = checksInvariantsByDefault
    #endif
    /// The keys of the table that only a key's `==` can tell from the key of the effect or cancel row
    /// being committed (see `CommitResult.compareKeys`): copies, for the processing thread to take and
    /// compare with no lock held. Empty but between those two critical sections.
    @usableFromInline var undecidedKeys: [EffectKey] = []
    /// How many of `groups` are empty (`KeyGroup.isEmpty`): kept in step wherever a group empties or
    /// fills, so that the engine knows when to sweep them without looking at each.
    @usableFromInline var idleGroups = 0
    /// The events of `effectEvents` decided while another thread held the emitter role, in the order
    /// they were decided; that thread sends them (see `EffectEventGate`).
    @usableFromInline var effectEventOutbox = FIFOQueue<Event<EffectEvent<Input>, Never>>()
    /// The effect-event word: see `EffectEventGate`. Shared with the engine.
    @usableFromInline let eventGate: AtomicWord
    /// The core behind `effectEvents`, only to learn whether an event would reach nobody
    /// (`EffectEventGate.reachesNobody(gate:events:)`).
    @usableFromInline let effectEvents: SignalCore<EffectEvent<Input>, Never>
    /// The held word: the address of the record of the effect whose value the processing role holds,
    /// not counted in its `pendingInputs`, or 0 (see `AutomatonEngine.held`). Shared with the engine.
    @usableFromInline let heldGate: AtomicWord

    /// See `rootLatestLink`.
    @inlinable
    var rootLatest: Record? {
        get { rootLatestLink?.takeUnretainedValue() }
        set { rootLatestLink = newValue.map { .passUnretained($0) } }
    }

    @inlinable
    init(
        isLatest: Bool, gate: AtomicWord, eventGate: AtomicWord, heldGate: AtomicWord,
        effectEvents: SignalCore<EffectEvent<Input>, Never>
    ) {
        self.isLatest = isLatest
        self.gate = gate
        self.eventGate = eventGate
        self.effectEvents = effectEvents
        self.heldGate = heldGate
    }

    /// The held word that names `record`: its address (never 0). The held input keeps the record
    /// alive while the word names it, so no other record can have that address meanwhile.
    @inlinable
    static func heldWord(naming record: Record) -> UInt {
        UInt(bitPattern: ObjectIdentifier(record))
    }

    /// Whether `record`'s value is the held one (see `heldGate`).
    @inlinable
    func holdsValue(of record: Record) -> Bool {
        heldGate.loadSequentially() == Self.heldWord(naming: record)
    }

    /// The held value `pending` (see `AutomatonEngine.held`) could not be processed at once: it goes to
    /// the front of the queue, counted in its effect's `pendingInputs`, unless its effect is no longer
    /// tracked or the automaton has terminated (then the caller lets it go). The gate is blocked (that
    /// is why it is queued), so the processing role comes for it.
    @inlinable
    mutating func queueHeld(_ pending: PendingInput<State, Input>) {
        heldGate.store(0)
        guard phase != .terminated, let origin = pending.origin, origin.isTracked else { return }
        origin.pendingInputs += 1
        queue.prepend(pending)
    }

    // MARK: Inputs

    @inlinable
    mutating func send(_ input: Input, from origin: Record?) -> SendAction {
        switch phase {
        case .terminated: return .drop
        case .inputCompleted where origin == nil: return .drop
        case .active, .inputCompleted: break
        }
        if let origin {
            // An input from a cancelled effect is ignored; so is a value after its own completion, and
            // one sent as if from an effect that waits for its key (`send(_:asIfFromEffect:)`): it has
            // not started, and a cancellation forgets a waiting effect without a subtree.
            guard origin.isTracked, !origin.hasFinished, !origin.isWaiting else { return .drop }
            origin.pendingInputs += 1
        }
        let pending = PendingInput(input: input, origin: origin)
        // Take the processing role, or, if someone holds it, block its lock-free give-back so that it
        // comes here and finds this input.
        guard gate.takeBit(ProcessingGate.processing, orSet: ProcessingGate.blocked) else {
            queue.append(pending)
            return .queued
        }
        return .process(pending)
    }

    @inlinable
    mutating func next() -> NextAction {
        if let (termination, effects) = pendingTermination {
            pendingTermination = nil
            gate.store(ProcessingGate.blocked)
            return .terminate(termination, effects: effects)
        }
        if let pending = queue.removeFirst() {
            if let origin = pending.origin, !origin.isTracked { return .discard(pending) }
            return .process(pending)
        }
        // Give up the role; the fast path stays blocked unless the automaton is still active.
        gate.store(phase == .active ? 0 : ProcessingGate.blocked)
        return .idle(completeReplies: phase == .inputCompleted && runningEffects == 0)
    }

    /// Records a successful transition for `pending`. `prepared` is the record of the effect the mapping
    /// returned (made before the lock was taken, holding the producer), if it is one to run (not
    /// `.empty`, not a `.cancel(key)` row), unretained: the caller holds it for the whole call.
    /// `cancelKeys` are the keys a `.cancel` row cancels (`nil` for any other row). `mayHaveRootLatest` is the processing thread's lock-free hint that the root has
    /// a tracked latest child (under `.latest`), updated here: exact now; later it may stay true after
    /// that child is forgotten, never the other way round.
    ///
    /// Unless it returns `.aborted`, the caller then, outside the lock and in this order, ends the
    /// lifetimes of `cancelled` (sending their cancellations first if told to, then giving up the
    /// emitter role), emits state and reply, then acts on `decision`. (Out-parameters, not a returned
    /// enum: copying a generic enum with these payloads cost more than the bookkeeping itself.)
    @inlinable
    mutating func commitSuccess(
        _ pending: PendingInput<State, Input>,
        prepared: Unmanaged<Record>?,
        cancelKeys: [EffectKey]?,
        equalities: KeyEqualities?,
        mayHaveRootLatest: inout Bool,
        cancelled: inout CancelledEffects<State, Input>,
        decision: inout EffectDecision
    ) -> CommitResult {
        // Keys first, before anything changes: a key that only its `==` can find is compared outside
        // the lock, and the commit made again (see `KeyEqualities`).
        // The usual keyed effect, whose key is the very one in its home slot, settles it in one look.
        if !groups.isEmpty, phase != .terminated, cancelKeys != nil || keyNeedsLookUp(prepared),
            needsComparison(prepared: prepared, cancelKeys: cancelKeys, equalities: equalities)
        {
            return .compareKeys
        }
        // Borrowed, not retained: the caller's `pending` keeps the origin alive for the whole call.
        defer {
            if let origin = pending.origin.map(Unmanaged.passUnretained) {
                origin._withUnsafeGuaranteedRef { inputProcessed(from: $0) }
            }
        }
        guard phase != .terminated else { return .aborted }

        if isLatest {
            let previous = pending.origin.map { $0.isTracked ? $0.latestChild : nil } ?? rootLatest
            if let previous {
                cancelChain(from: previous, into: &cancelled, byCancelRow: false)
                // The link to the forgotten chain goes at once (it is set anew below): a cancel by key
                // below may walk the tree through the input's origin.
                if let origin = pending.origin { origin.latestChildLink = nil } else { rootLatestLink = nil }
            }
        }
        if let cancelKeys {
            var none: [EffectKey] = []
            for key in cancelKeys {
                if let group = groups.value(for: key, equalities: equalities, undecided: &none) {
                    group._withUnsafeGuaranteedRef { cancel($0, into: &cancelled, byCancelRow: true) }
                }
            }
            sweepIdleGroupsIfMost(into: &cancelled)
        }

        // The effect that becomes the level's latest child: only an effect of the tree. Unretained
        // (the caller's frame holds it), as the tree's links are.
        var treeChild: Unmanaged<Record>?
        if let prepared {
            prepared._withUnsafeGuaranteedRef { record in
                record.id = nextEffectID
                nextEffectID &+= 1
                // The key is not bound (a binding copies it: a retain and a release); its group is found
                // from the hash and identity the record keeps of it.
                if let policy = record.policy, record.key != nil {
                    decision = group(forKeyOf: record, equalities: equalities, into: &cancelled)
                        ._withUnsafeGuaranteedRef { group in
                            switch policy.kind {
                            case .latest:
                                cancel(group, into: &cancelled, byCancelRow: false)
                                return startKeyed(record, in: group)
                            case .first:
                                return group.isEmpty ? startKeyed(record, in: group) : .drop
                            case .queue:
                                guard !group.isEmpty else { return startKeyed(record, in: group) }
                                record.isWaiting = true
                                tracked.append(record)
                                runningEffects += 1
                                waitingEffects += 1
                                group.waiting.append(WaitingEffect(record: record, input: pending.input))
                                return .wait
                            case .merge:
                                return startKeyed(record, in: group)
                            }
                        }
                    // After the effect has joined its group (or found it busy and been dropped), so that the
                    // key in hand is never swept.
                    sweepIdleGroupsIfMost(into: &cancelled)
                } else {
                    if isLatest, let origin = pending.origin, origin.isTracked {
                        record.parent = origin
                    }
                    tracked.append(record)
                    runningEffects += 1
                    treeChild = .passUnretained(record)
                    decision = .start
                }
            }
        }
        if isLatest {
            if let origin = pending.origin {
                if origin.isTracked { origin.latestChildLink = treeChild }
            } else {
                rootLatestLink = treeChild
            }
        }
        mayHaveRootLatest = rootLatestLink != nil
        // The cancellations are decided here: the caller sends them itself if it takes the emitter
        // role now, else they are queued for the thread that holds it (see `EffectEventGate`).
        guard !cancelled.isEmpty, !effectEventsReachNobody() else { return .committed }
        if claimEmitter() { return .committedSendingCancellations }
        for effect in cancelled {
            queue(.value(AutomatonEngine<State, Input>.cancellation(of: effect, by: pending.input)))
        }
        return .committed
    }

    /// Registers the keyed effect of `record` as running in `group`.
    @inlinable
    mutating func startKeyed(_ record: Record, in group: KeyGroup<State, Input>) -> EffectDecision {
        if group.isEmpty { idleGroups -= 1 }
        tracked.append(record)
        runningEffects += 1
        group.appendRunning(record)
        return .start
    }

    /// The group of `key`, made (empty) and put in the table if it has none. A group left empty when
    /// its last effect ends stays in the table, so that the key's next effect finds it; the empty
    /// groups are swept out once they are most of the table (`mostAreIdle`): after a keyed effect
    /// joins its group or a cancel row (`sweepIdleGroupsIfMost`), or as the table grows. The keys
    /// swept out go to `cancelled`, to be released after the lock.
    @inlinable
    mutating func group(
        for key: EffectKey, equalities: KeyEqualities?, into cancelled: inout CancelledEffects<State, Input>
    ) -> Unmanaged<KeyGroup<State, Input>> {
        var undecided: [EffectKey] = []
        if let group = groups.value(for: key, equalities: equalities, undecided: &undecided) { return group }
        precondition(undecided.isEmpty, "Internal inconsistency: a key looked up undecided after its comparison")
        return insertGroup(for: key, into: &cancelled)
    }

    /// Whether the effect of `prepared` is keyed and its key is not the very key in its home slot.
    @inlinable @inline(__always)
    func keyNeedsLookUp(_ prepared: Unmanaged<Record>?) -> Bool {
        guard let prepared else { return false }
        let (isKeyed, hash, identity) = prepared._withUnsafeGuaranteedRef {
            ($0.policy != nil, $0.keyHash, $0.keyIdentity)
        }
        return isKeyed && groups.valueInHomeSlot(hash: hash, identity: identity) == nil
    }

    /// Whether a key of `prepared`'s effect or of `cancelKeys` has, in the table, keys of the same hash
    /// and another storage that `equalities` does not decide: they go to `undecidedKeys`, for the
    /// caller to compare by `==` with no lock held. Calls no user code.
    @inlinable
    mutating func needsComparison(
        prepared: Unmanaged<Record>?, cancelKeys: [EffectKey]?, equalities: KeyEqualities?
    ) -> Bool {
        var undecided: [EffectKey] = []
        defer { undecidedKeys = undecided }
        if let cancelKeys {
            for key in cancelKeys { _ = groups.value(for: key, equalities: equalities, undecided: &undecided) }
        }
        prepared?._withUnsafeGuaranteedRef { record in
            guard record.policy != nil, let key = record.key,
                groups.valueInHomeSlot(hash: record.keyHash, identity: record.keyIdentity) == nil
            else { return }
            _ = groups.value(for: key, equalities: equalities, undecided: &undecided)
        }
        return !undecided.isEmpty
    }

    /// `group(for:into:)` for the key of the keyed `record`. The usual case (the key's own storage in
    /// its home slot) reads only the hash and identity the record keeps of its key: passing the key
    /// itself to a lookup that is not inlined, or even binding its storage, retains and releases it.
    @inlinable
    mutating func group(
        forKeyOf record: Record, equalities: KeyEqualities?, into cancelled: inout CancelledEffects<State, Input>
    ) -> Unmanaged<KeyGroup<State, Input>> {
        if let group = groups.valueInHomeSlot(hash: record.keyHash, identity: record.keyIdentity) {
            return group
        }
        return group(for: record.key.unsafelyUnwrapped, equalities: equalities, into: &cancelled)
    }

    /// `group(for:into:)` for a key that has no group: out of line, to keep the usual path short.
    @usableFromInline
    mutating func insertGroup(
        for key: EffectKey, into cancelled: inout CancelledEffects<State, Input>
    ) -> Unmanaged<KeyGroup<State, Input>> {
        let group = Unmanaged.passRetained(KeyGroup<State, Input>())
        // A full table grows, dropping its empty groups only if they are most of it (as below).
        let sweeps = mostAreIdle
        if let swept = groups.insert(key, group, sweeping: { sweeps && Self.isIdle($0) }), !swept.isEmpty {
            sweptOut(swept, into: &cancelled)
        }
        idleGroups += 1
        return group
    }

    /// Sweeps the empty groups out of the table once they are more than 8 and more than those in use,
    /// so that the keys of effects that have ended are let go of soon (at the next keyed effect or
    /// cancel row), and the table stays within a small multiple of the keys in use; a rotation of up
    /// to 9 keys never sweeps. A sweep visits every slot, and comes at most once per as many groups
    /// emptied as the table keeps: O(1) per effect, amortized.
    @inlinable
    mutating func sweepIdleGroupsIfMost(into cancelled: inout CancelledEffects<State, Input>) {
        guard mostAreIdle else { return }
        sweepIdleGroups(into: &cancelled)
    }

    /// The empty groups are more than 8 and more than those in use.
    @inlinable
    var mostAreIdle: Bool { idleGroups > 8 && idleGroups * 2 > groups.count }

    @usableFromInline
    mutating func sweepIdleGroups(into cancelled: inout CancelledEffects<State, Input>) {
        sweptOut(groups.sweep(dropping: Self.isIdle), into: &cancelled)
    }

    @inlinable
    static func isIdle(_ group: Unmanaged<KeyGroup<State, Input>>) -> Bool {
        group._withUnsafeGuaranteedRef { $0.isEmpty }
    }

    /// The table has just dropped `swept`: every empty group.
    @usableFromInline
    mutating func sweptOut(
        _ swept: [EffectKeyTable<Unmanaged<KeyGroup<State, Input>>>.Entry],
        into cancelled: inout CancelledEffects<State, Input>
    ) {
        precondition(
            swept.count == idleGroups, "Internal inconsistency: \(swept.count) groups swept, \(idleGroups) counted idle"
        )
        idleGroups = 0
        cancelled.keepKeys(of: swept)
    }

    /// Cancels every running and waiting effect of `group` (and what they started), collecting them.
    /// The group stays in the table, empty.
    @inlinable
    mutating func cancel(
        _ group: KeyGroup<State, Input>, into cancelled: inout CancelledEffects<State, Input>, byCancelRow: Bool
    ) {
        if !group.isEmpty { idleGroups += 1 }
        var current = group.firstRunning
        group.firstRunning = nil
        group.lastRunning = nil
        while let link = current {
            let record = link.takeUnretainedValue()
            current = record.nextOfKey
            record.previousOfKey = nil
            record.nextOfKey = nil
            record.groupLink = nil
            cancelChain(from: record, into: &cancelled, byCancelRow: byCancelRow)
        }
        while let waiting = group.waiting.removeFirst() {
            let record = waiting.record
            if record.isTracked {
                tracked.remove(record)
                runningEffects -= 1
                waitingEffects -= 1
                cancelled.append(CancelledEffect(record, byCancelRow: byCancelRow))
            }
            // Released after the lock, whatever its record's state: it holds an input and a producer.
            cancelled.keep(waiting)
        }
    }

    /// Forgets `first` and every effect it started, transitively, collecting those still running. An
    /// effect that has ended (and is only kept for its queued inputs, now dropped) was reported ended
    /// and its lifetime has ended: it is not reported again.
    @inlinable
    mutating func cancelChain(
        from first: Record, into cancelled: inout CancelledEffects<State, Input>, byCancelRow: Bool
    ) {
        var current: Record? = first
        while let record = current, record.isTracked {
            current = record.latestChild
            if !record.hasFinished {
                cancelled.append(CancelledEffect(record, byCancelRow: byCancelRow))
                runningEffects -= 1
            }
            tracked.remove(record)
        }
    }

    /// An input `origin` emitted has been processed (successfully or not).
    @inlinable
    mutating func inputProcessed(from origin: Record) {
        if holdsValue(of: origin) {
            heldGate.store(0)  // the held value, never counted
        } else if origin.isTracked {
            origin.pendingInputs -= 1
        } else {
            return
        }
        forgetIfFinished(origin)
    }

    /// Forgets `record` if its effect has ended and it has no queued input: nothing can come of it any
    /// more. Under `.latest` its tracked child takes its place in its parent's chain (the child of a
    /// finished effect can only be cancelled together with that effect, by its ancestors, so this
    /// keeps the tree's meaning), so a feedback loop of effects that each start the next and end
    /// keeps O(1) records, however long it runs.
    @inlinable
    mutating func forgetIfFinished(_ record: Record) {
        guard record.isTracked, record.hasFinished, record.pendingInputs == 0, !holdsValue(of: record) else { return }
        let heir = record.latestChild
        let parent = record.parent
        if let heir {
            heir.parent = parent
        }
        if let parent {
            if parent.latestChild === record { parent.latestChild = heir }
        } else if rootLatest === record {
            rootLatest = heir
        }
        tracked.remove(record)
    }

    // MARK: Effects

    /// The effect of `record` completed (or failed, or interrupted itself). Returns whether it was
    /// still running (then the caller ends its lifetime and reports it), the effect of its key that
    /// may now start (`.queue`), and whether the replies should now complete.
    ///
    /// `onRunner`: whether the caller's thread is running an effect's start handler for the
    /// processing role (see `AutomatonEngine.runnerGate`). Any other thread blocks the gate first if
    /// someone processes: a value may have been held meanwhile, and either this reads the held word
    /// (and keeps the effect), or the role holder sees `blocked` (and queues the value under the lock,
    /// where it finds the effect forgotten and drops it, as sent after the end).
    @inlinable
    mutating func effectEnded(_ record: Record, onRunner: Bool) -> (
        ended: Bool, next: WaitingEffect<State, Input>?, completeReplies: Bool
    ) {
        if !onRunner, gate.load() & ProcessingGate.processing != 0 {
            gate.setBitsSequentially(ProcessingGate.blocked)
        }
        guard record.isTracked, !record.hasFinished, !record.isWaiting else { return (false, nil, false) }
        record.hasFinished = true
        runningEffects -= 1
        precondition(runningEffects >= 0, "Internal inconsistency: more effects ended than were running")
        var next: WaitingEffect<State, Input>?
        if let groupLink = record.groupLink {
            groupLink._withUnsafeGuaranteedRef { group in
                group.removeRunning(record)
                // (`isEmpty` first: inline, where `removeFirst()` is a call.)
                if !group.hasRunning, !group.waiting.isEmpty, let waiting = group.waiting.removeFirst() {
                    group.appendRunning(waiting.record)
                    next = waiting
                }
                if group.isEmpty { idleGroups += 1 }
            }
            if let next {
                next.record.isWaiting = false
                waitingEffects -= 1
            }
        }
        forgetIfFinished(record)
        return (true, next, shouldCompleteReplies)
    }

    @inlinable
    var shouldCompleteReplies: Bool {
        phase == .inputCompleted && gate.load() & ProcessingGate.processing == 0 && queue.isEmpty
            && runningEffects == 0
    }

    // MARK: Effect events

    /// For effect events just decided under the lock: takes the emitter role, so the caller sends them
    /// itself, at once, then calls `AutomatonEngine.finishEmitting()`; or, if another thread holds
    /// it, returns false: the caller must `queue` them, in this same critical section.
    @inlinable
    func claimEmitter() -> Bool {
        eventGate.takeBit(EffectEventGate.emitting, orSet: EffectEventGate.pending)
    }

    /// Whether an effect event decided now would reach nobody, so that it need be neither sent nor
    /// queued (see `EffectEventGate`).
    @inlinable @inline(__always)
    func effectEventsReachNobody() -> Bool {
        EffectEventGate.reachesNobody(gate: eventGate, events: effectEvents)
    }

    /// Queues an effect event for the thread holding the emitter role (after `claimEmitter()` failed).
    @inlinable
    mutating func queue(_ event: Event<EffectEvent<Input>, Never>) {
        effectEventOutbox.append(event)
    }

    /// For the emitter, whose lock-free give-back failed: the next queued event to send, or `nil`, and
    /// then the role is given up.
    @inlinable
    mutating func nextQueuedEffectEvent() -> Event<EffectEvent<Input>, Never>? {
        guard let event = effectEventOutbox.removeFirst() else {
            eventGate.store(0)
            return nil
        }
        eventGate.store(EffectEventGate.emitting)  // clears `pending`: later queuers set it again
        return event
    }

    // MARK: Termination

    /// The input signal completed. Returns whether the replies should complete now.
    @inlinable
    mutating func inputCompleted() -> Bool {
        guard phase == .active else { return false }
        phase = .inputCompleted
        blockFastPath()
        return shouldCompleteReplies
    }

    /// Sets `blocked`, so that outside inputs take the lock and see the phase.
    @inlinable
    func blockFastPath() {
        gate.setBits(ProcessingGate.blocked)
    }

    /// Stops everything: no input is processed any more and every tracked effect is forgotten.
    ///
    /// - Returns: every running or waiting effect, in the order of their numbers, if the caller now
    ///   holds the processing role and must perform `termination` itself (then give the role up with
    ///   `finishTermination()`); `nil` if already terminated, or if another thread holds the
    ///   role: that thread performs it when it finishes the input in hand (see `next()`).
    @inlinable
    mutating func terminate(_ termination: Termination) -> CancelledEffects<State, Input>? {
        guard phase != .terminated else { return nil }
        phase = .terminated
        blockFastPath()
        var effects = CancelledEffects<State, Input>()
        // The queued inputs go out with the effects, to be released unlocked: user values, which
        // hold the last references to the records of effects that have ended (and so to their keys).
        effects.keep(queue)
        queue = FIFOQueue()
        // Effects that have ended were reported so; only their queued inputs were left.
        while let record = tracked.first {
            if !record.hasFinished {
                effects.append(CancelledEffect(record, byCancelRow: false))
            }
            record.previousOfKey = nil
            record.nextOfKey = nil
            record.groupLink = nil
            tracked.remove(record)
        }
        // The waiting effects' producers go out with them, to be released unlocked.
        let entries = groups.removeAll()
        for entry in entries {
            entry.value._withUnsafeGuaranteedRef { group in
                while let waiting = group.waiting.removeFirst() { effects.keep(waiting) }
            }
        }
        idleGroups = 0
        effects.keepKeys(of: entries)
        rootLatest = nil
        runningEffects = 0
        waitingEffects = 0
        if gate.takeBit(ProcessingGate.processing, orSet: ProcessingGate.blocked) {
            return effects
        }
        pendingTermination = (termination, effects)
        return nil
    }

    /// Records that the termination has been performed, and gives up the processing role, leaving the
    /// fast path blocked for good. Returns the released automaton's lifetime token, if it was given
    /// already, for the caller to dispose with the lock released.
    @inlinable
    mutating func finishTermination() -> Lifetime.Token? {
        hasPerformedTermination = true
        gate.store(ProcessingGate.blocked)
        defer { lifetimeToken = nil }
        return lifetimeToken
    }

    /// Keeps `token` for the thread that performs the termination, or returns it to be disposed now if
    /// the termination has been performed already (the input signal was interrupted before).
    @inlinable
    mutating func keepUntilTerminated(_ token: Lifetime.Token) -> Lifetime.Token? {
        if hasPerformedTermination { return token }
        lifetimeToken = token
        return nil
    }
}
