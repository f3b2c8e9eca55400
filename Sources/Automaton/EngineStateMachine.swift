import Signals

/// An input waiting to be processed, with the effect that emitted it (`nil` for an outside input), and
/// who waits for its reply (`Automaton.ask`; only an outside input has one).
@usableFromInline
struct PendingInput<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let input: Input
    @usableFromInline let origin: EffectRecord<State, Input>?
    /// Who waits for this input's reply: answered exactly once, with no lock held, by the processing
    /// role once the reply has been delivered (`AutomatonEngine.process`), or with the reason it was
    /// not processed (`AutomatonEngine.ask`, the termination, an aborted commit).
    @usableFromInline let target: ReplyTarget<State, Input>?

    @inlinable
    init(input: Input, origin: EffectRecord<State, Input>?) {
        self.input = input
        self.origin = origin
        self.target = nil
    }

    @inlinable
    init(input: Input, target: ReplyTarget<State, Input>) {
        self.input = input
        self.origin = nil
        self.target = target
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
///
/// Who owns each field: every `var` is read and written only under the engine's lock (the machine
/// lives inside it: `AutomatonEngine.machine`); the `let`s are set by `init`. The three words are
/// shared with the engine and change by atomic operations only, here under the lock and there without
/// it: `gate` (`ProcessingGate`, `AutomatonEngine+Inputs.swift`), `eventGate` (`EffectEventGate`,
/// `EffectEventEmitter.swift`) and `heldGate` (`HeldInputs.swift`).
///
/// Its methods, one concern per file: inputs (`send`, `next`) here; a successful transition's
/// bookkeeping in `EngineStateMachine+Commit.swift`; the key table in `EngineStateMachine+Keys.swift`;
/// the effect tree and effects' ends in `EngineStateMachine+EffectTree.swift`; the emitter role in
/// `EffectEventEmitter.swift`; held inputs in `HeldInputs.swift`; termination in
/// `EngineTermination.swift`.
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

    @usableFromInline var queue = FIFOQueue<PendingInput<State, Input>>()
    /// The engine's words (see `AutomatonEngine.words`), unowned: the engine keeps them alive, and
    /// this machine lives in the engine's lock storage, which dies with it. One field for the four
    /// words the machine reaches, computed from it as the engine's are: four stored words were 24
    /// bytes more per automaton, a 160-byte block for the machine instead of a 128-byte one.
    @usableFromInline let words: UnownedAtomicWordGroup
    /// The gate word: see `ProcessingGate`. Shared with the engine.
    @inlinable var gate: UnownedAtomicWord { words.word(EngineWord.gate) }
    /// Every tracked effect, in the order of their identifiers.
    @usableFromInline var tracked = TrackedEffects<State, Input>()
    /// Under `.latest`, the effect started by the latest successful outside input, or the effect that
    /// inherited its place, if still tracked.
    /// Unretained, like every link to a tracked record (see `EffectRecord.parentLink`).
    @usableFromInline var rootLatestLink: Unmanaged<Record>?
    @usableFromInline var nextEffectID: EffectID = 0
    /// Effects that have neither ended nor been cancelled, those waiting for their key included.
    @usableFromInline var runningEffects = 0
    #if DEBUG
        /// Whether `AutomatonEngine.critical(_:)` checks the invariants after each critical section (see
        /// `checkInvariants()`). Debug builds only.
        @usableFromInline var checksInvariants = checksInvariantsByDefault
    #endif
    /// The effect-event word: see `EffectEventGate`. Shared with the engine.
    @inlinable var eventGate: UnownedAtomicWord { words.word(EngineWord.eventGate) }
    /// The word of `effectEvents`, only to learn whether an event would reach nobody
    /// (`EffectEventGate.reachesNobody(gate:events:)`). Shared with the engine. A word, not the
    /// `OnDemandSignal` it is, for the same reason as the engine's (see `AutomatonEngine.repliesWord`).
    @inlinable var effectEventsWord: UnownedAtomicWord { words.word(EngineWord.effectEvents) }
    /// `effectEvents`, seen through its word.
    @inlinable var effectEvents: OnDemandSignal<EffectEvent<Input>> { OnDemandSignal(word: effectEventsWord) }
    /// The held word: the address of the record of the effect whose value the processing role holds,
    /// not counted in its `pendingInputs`, or 0 (see `AutomatonEngine.held`). Shared with the engine.
    @inlinable var heldGate: UnownedAtomicWord { words.word(EngineWord.heldGate) }
    /// What most automata never use, made on first use (see `OccasionalState`).
    @usableFromInline var occasional: OccasionalLink<State, Input>?
    // The one-byte fields last: the machine's fields are laid out in the order they are declared,
    // and its lock comes right after them in its storage. Fields of one byte between words cost a word.
    @usableFromInline let isLatest: Bool
    @usableFromInline var phase = Phase.active
    /// Whether the termination has been performed (by whichever thread held the processing role).
    @usableFromInline var hasPerformedTermination = false
    /// How the automaton terminated (`nil` until it does): the reason an input asked afterwards, or
    /// dropped, was not processed (`AskError`).
    @usableFromInline var terminationCause: Termination?

    /// See `rootLatestLink`.
    @inlinable
    var rootLatest: Record? {
        get { rootLatestLink?.takeUnretainedValue() }
        set { rootLatestLink = newValue.map { .passUnretained($0) } }
    }

    @inlinable
    init(isLatest: Bool, words: UnownedAtomicWordGroup) {
        self.isLatest = isLatest
        self.words = words
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
}
