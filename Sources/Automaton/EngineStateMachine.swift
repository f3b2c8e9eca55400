import Signals

/// An effect's identity in the engine. Identifiers are never reused.
@usableFromInline
typealias EffectID = UInt64

/// The bits of the engine's gate word: the lock-free fast path for an outside input.
///
/// - `processing`: one thread holds the processing role (it owns the current state).
/// - `blocked`: the fast path must not be used: inputs are queued, or the input signal has completed, or
///   the automaton has terminated. Set and cleared only under the engine's lock.
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
/// Every effect event is decided under the engine's lock (or, for an effect's start, by the thread
/// holding the processing role, which nothing else can decide about before the effect starts). The
/// thread deciding it either takes the role then (a compare-and-swap from 0) and sends it at once,
/// or queues it for the holder. So observers hear effect events in the order they were decided,
/// whichever threads decided them, and the common case (one thread) takes no lock to send them.
@usableFromInline
enum EffectEventGate {
    @inlinable static var emitting: UInt { 1 }
    @inlinable static var pending: UInt { 2 }
}

/// An input waiting to be processed, with the effect that emitted it (`nil` for an outside input).
@usableFromInline
struct PendingInput<Input: Sendable>: Sendable {
    @usableFromInline let input: Input
    @usableFromInline let origin: EffectID?

    @inlinable
    init(input: Input, origin: EffectID?) {
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

/// One running effect, or one that has ended but still has inputs queued.
///
/// A node is forgotten as soon as its effect has ended (or was cancelled) and its queued inputs have
/// been processed, so the engine's bookkeeping is bounded by what is live, never by history.
@usableFromInline
struct EffectNode: Sendable {
    /// Under `.latest`, the effect whose tracked chain this one belongs to: the effect whose input
    /// started it, or, once that one has been forgotten, its nearest live ancestor; `nil` for the
    /// root (an effect of an outside input, or the heir of one).
    @usableFromInline var parent: EffectID?
    /// Ends the effect's `Lifetime`: disposing it cancels the effect.
    @usableFromInline let token: Lifetime.Token
    /// Under `.latest`, the effect started by this effect's latest successful input, if still tracked
    /// (or, once that one has been forgotten, the effect that inherited its place).
    @usableFromInline var latestChild: EffectID?
    /// Inputs this effect emitted that are still queued.
    @usableFromInline var pendingInputs = 0
    /// Whether the effect has completed by itself.
    @usableFromInline var hasEnded = false
    /// The key of a keyed effect; `nil` for an effect of the tree.
    @usableFromInline let key: EffectKey?
    /// Whether the effect waits for its key's running effects to end (`.queue`), not started yet.
    @usableFromInline var isWaiting = false

    @inlinable
    init(parent: EffectID?, token: Lifetime.Token, key: EffectKey? = nil) {
        self.parent = parent
        self.token = token
        self.key = key
    }
}

/// An effect the mapping returned, prepared before the lock is taken.
@usableFromInline
struct PreparedEffect<Input: Sendable>: Sendable {
    @usableFromInline let effect: SignalProducer<Input, Never>
    @usableFromInline let lifetime: Lifetime
    @usableFromInline let token: Lifetime.Token
    /// Its key and policy, if it is keyed.
    @usableFromInline let keyed: (key: EffectKey, policy: EffectPolicy)?

    @inlinable
    init(effect: SignalProducer<Input, Never>, keyed: (key: EffectKey, policy: EffectPolicy)?) {
        self.effect = effect
        (lifetime, token) = Lifetime.make()
        self.keyed = keyed
    }
}

/// A keyed effect waiting (`.queue`) for its key's running effects to end.
@usableFromInline
struct WaitingEffect<Input: Sendable>: Sendable {
    @usableFromInline let id: EffectID
    @usableFromInline let prepared: PreparedEffect<Input>
    /// The input that succeeded and will have started it.
    @usableFromInline let input: Input

    @inlinable
    init(id: EffectID, prepared: PreparedEffect<Input>, input: Input) {
        self.id = id
        self.prepared = prepared
        self.input = input
    }
}

/// The effects of one key.
@usableFromInline
struct KeyGroup<Input: Sendable>: Sendable {
    /// Started and not ended, in start order.
    @usableFromInline var running: [EffectID] = []
    /// Waiting (`.queue`) for `running` to empty, FIFO.
    @usableFromInline var waiting = FIFOQueue<WaitingEffect<Input>>()

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { running.isEmpty && waiting.isEmpty }
}

/// An effect cancelled by the engine: its token to dispose, and what to report.
@usableFromInline
struct CancelledEffect: Sendable {
    @usableFromInline let id: EffectID
    @usableFromInline let key: EffectKey?
    @usableFromInline let token: Lifetime.Token
    /// Cancelled by a `.cancel(key)` row, rather than replaced.
    @usableFromInline let byCancelRow: Bool
    /// What must not be released under the engine's lock (a waiting effect's producer).
    @usableFromInline let leftover: (any Sendable)?

    @inlinable
    init(id: EffectID, key: EffectKey?, token: Lifetime.Token, byCancelRow: Bool, leftover: (any Sendable)? = nil) {
        self.id = id
        self.key = key
        self.token = token
        self.byCancelRow = byCancelRow
        self.leftover = leftover
    }
}

/// What becomes of the effect a successful input returned.
@usableFromInline
enum EffectDecision<Input: Sendable>: Sendable {
    /// No effect (or a `.cancel(key)` row).
    case none
    /// Start it now, as `id`.
    case start(EffectID, PreparedEffect<Input>)
    /// Its key's `.first` policy drops it: never started; `id` is reported.
    case drop(EffectID, PreparedEffect<Input>)
    /// Its key's `.queue` policy makes it wait.
    case wait
}

/// The automaton's shared bookkeeping: the input queue, who is processing, and the effect tree.
///
/// Every method runs under the engine's lock and calls no user code: each returns what the engine must
/// do once the lock is released (swift-async-algorithms style). The current state and the root's latest
/// child are not here: they belong to the thread that holds the processing role (see `AutomatonEngine`).
@usableFromInline
struct EngineStateMachine<State: Sendable, Input: Sendable>: Sendable {
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
        case process(PendingInput<Input>)
    }

    /// What the processing thread does next.
    @usableFromInline
    enum NextAction {
        case process(PendingInput<Input>)
        /// The queue is empty; processing stops. `completeReplies` if the automaton has finished.
        case idle(completeReplies: Bool)
        /// The automaton was terminated while this thread processed: processing stops, and this thread
        /// performs the termination (dispose `effects` and end the signals, in `termination`'s order).
        case terminate(Termination, effects: [CancelledEffect])
    }

    /// The outcome of a successful transition, to be performed outside the lock in this order.
    @usableFromInline
    enum CommitAction {
        /// Terminated while the mapping ran: emit nothing.
        case aborted
        /// First end `cancelled` lifetimes (and send their cancellations if `sendsCancellations`, then
        /// give up the emitter role), then emit state and reply, then act on `decision`.
        case success(cancelled: [CancelledEffect], decision: EffectDecision<Input>, sendsCancellations: Bool)
    }

    @usableFromInline let isLatest: Bool
    @usableFromInline var phase = Phase.active
    @usableFromInline var queue = FIFOQueue<PendingInput<Input>>()
    /// The gate word: see `ProcessingGate`. Only its atomic word is used.
    @usableFromInline let gate: Lock
    @usableFromInline var nodes: [EffectID: EffectNode] = [:]
    /// Under `.latest`, the effect started by the latest successful outside input, or the effect that
    /// inherited its place, if still tracked.
    @usableFromInline var rootLatest: EffectID?
    /// A termination requested while another thread held the processing role: that thread performs it
    /// when it finishes the input in hand, so the input's reply comes before the end of `replies`.
    @usableFromInline var pendingTermination: (Termination, [CancelledEffect])?
    @usableFromInline var nextEffectID: EffectID = 0
    /// Effects that have neither ended nor been cancelled, those waiting for their key included.
    @usableFromInline var runningEffects = 0
    /// Keyed effects waiting (`.queue`) for their key.
    @usableFromInline var waitingEffects = 0
    /// The keyed effects, by key.
    @usableFromInline var groups: [EffectKey: KeyGroup<Input>] = [:]
    /// The events of `effectEvents` decided while another thread held the emitter role, in the order
    /// they were decided; that thread sends them (see `EffectEventGate`).
    @usableFromInline var effectEventOutbox = FIFOQueue<Event<EffectEvent<Input>, Never>>()
    /// The effect-event word: see `EffectEventGate`. Only its atomic word is used.
    @usableFromInline let eventGate: Lock

    @inlinable
    init(isLatest: Bool, gate: Lock, eventGate: Lock) {
        self.isLatest = isLatest
        self.gate = gate
        self.eventGate = eventGate
    }

    // MARK: Inputs

    @inlinable
    mutating func send(_ input: Input, from origin: EffectID?) -> SendAction {
        switch phase {
        case .terminated: return .drop
        case .inputCompleted where origin == nil: return .drop
        case .active, .inputCompleted: break
        }
        if let origin {
            // An input from a cancelled effect is ignored; so is a value after its own completion.
            guard nodes[origin]?.hasEnded == false else { return .drop }
            nodes[origin]?.pendingInputs += 1
        }
        let pending = PendingInput(input: input, origin: origin)
        // Take the processing role, or, if someone holds it, block its lock-free give-back so that it
        // comes here and finds this input.
        guard gate.takeWordBit(ProcessingGate.processing, orSet: ProcessingGate.blocked) else {
            queue.append(pending)
            return .queued
        }
        return .process(pending)
    }

    @inlinable
    mutating func next() -> NextAction {
        if let (termination, effects) = pendingTermination {
            pendingTermination = nil
            gate.storeWord(ProcessingGate.blocked)
            return .terminate(termination, effects: effects)
        }
        while let pending = queue.removeFirst() {
            if let origin = pending.origin, nodes[origin] == nil {
                continue  // its effect was cancelled after the input was queued
            }
            return .process(pending)
        }
        // Give up the role; the fast path stays blocked unless the automaton is still active.
        gate.storeWord(phase == .active ? 0 : ProcessingGate.blocked)
        return .idle(completeReplies: phase == .inputCompleted && runningEffects == 0)
    }

    /// Records a successful transition for `pending`. `prepared` is the effect the mapping returned, if
    /// it is one to run (not `.empty`, not a `.cancel(key)` row); `cancelKeys` are the keys a `.cancel`
    /// row cancels. `mayHaveRootLatest` is the processing thread's lock-free hint that the root has a
    /// tracked latest child (under `.latest`), updated here: exact now; later it may stay true after
    /// that child is forgotten, never the other way round.
    @inlinable
    mutating func commitSuccess(
        _ pending: PendingInput<Input>,
        prepared: PreparedEffect<Input>?,
        cancelKeys: [EffectKey],
        mayHaveRootLatest: inout Bool
    ) -> CommitAction {
        defer { if let origin = pending.origin { inputProcessed(from: origin) } }
        guard phase != .terminated else { return .aborted }

        var cancelled: [CancelledEffect] = []
        if isLatest {
            let previous = pending.origin.map { nodes[$0]?.latestChild } ?? rootLatest
            if let previous {
                cancelChain(from: previous, into: &cancelled, byCancelRow: false)
            }
        }
        for key in cancelKeys {
            cancelGroup(key, into: &cancelled, byCancelRow: true)
        }

        var decision = EffectDecision<Input>.none
        // The effect that becomes the level's latest child: only an effect of the tree.
        var treeChild: EffectID?
        if let prepared {
            let id = nextEffectID
            nextEffectID &+= 1
            if let (key, policy) = prepared.keyed {
                switch policy.kind {
                case .latest:
                    cancelGroup(key, into: &cancelled, byCancelRow: false)
                    decision = startKeyed(id, prepared, key: key)
                case .first:
                    if let group = groups[key], !group.isEmpty {
                        decision = .drop(id, prepared)
                    } else {
                        decision = startKeyed(id, prepared, key: key)
                    }
                case .queue:
                    if let group = groups[key], !group.isEmpty {
                        var node = EffectNode(parent: nil, token: prepared.token, key: key)
                        node.isWaiting = true
                        nodes[id] = node
                        runningEffects += 1
                        waitingEffects += 1
                        groups[key, default: KeyGroup()].waiting.append(
                            WaitingEffect(id: id, prepared: prepared, input: pending.input)
                        )
                        decision = .wait
                    } else {
                        decision = startKeyed(id, prepared, key: key)
                    }
                case .merge:
                    decision = startKeyed(id, prepared, key: key)
                }
            } else {
                nodes[id] = EffectNode(parent: isLatest ? pending.origin : nil, token: prepared.token)
                runningEffects += 1
                treeChild = id
                decision = .start(id, prepared)
            }
        }
        if isLatest {
            if let origin = pending.origin {
                nodes[origin]?.latestChild = treeChild
            } else {
                rootLatest = treeChild
            }
        }
        mayHaveRootLatest = rootLatest != nil
        // The cancellations are decided here: the caller sends them itself if it takes the emitter
        // role now, else they are queued for the thread that holds it (see `EffectEventGate`).
        var sendsCancellations = false
        if !cancelled.isEmpty {
            if claimEmitter() {
                sendsCancellations = true
            } else {
                for effect in cancelled {
                    queue(.value(AutomatonEngine<State, Input>.cancellation(of: effect, by: pending.input)))
                }
            }
        }
        return .success(cancelled: cancelled, decision: decision, sendsCancellations: sendsCancellations)
    }

    /// Registers the keyed effect `id` as running in its group.
    @inlinable
    mutating func startKeyed(_ id: EffectID, _ prepared: PreparedEffect<Input>, key: EffectKey) -> EffectDecision<Input> {
        nodes[id] = EffectNode(parent: nil, token: prepared.token, key: key)
        runningEffects += 1
        groups[key, default: KeyGroup()].running.append(id)
        return .start(id, prepared)
    }

    /// Cancels every running and waiting effect of `key` (and what they started), collecting them.
    @inlinable
    mutating func cancelGroup(_ key: EffectKey, into cancelled: inout [CancelledEffect], byCancelRow: Bool) {
        guard var group = groups.removeValue(forKey: key) else { return }
        for id in group.running {
            cancelChain(from: id, into: &cancelled, byCancelRow: byCancelRow)
        }
        while let waiting = group.waiting.removeFirst() {
            if nodes.removeValue(forKey: waiting.id) != nil {
                runningEffects -= 1
                waitingEffects -= 1
                cancelled.append(CancelledEffect(
                    id: waiting.id, key: key, token: waiting.prepared.token, byCancelRow: byCancelRow, leftover: waiting
                ))
            }
        }
    }

    /// Removes `first` and every effect it started, transitively, collecting those still running. An
    /// effect that has ended (and is only kept for its queued inputs, now dropped) was reported ended
    /// and its lifetime has ended: it is not reported again.
    @inlinable
    mutating func cancelChain(from first: EffectID, into cancelled: inout [CancelledEffect], byCancelRow: Bool) {
        var current: EffectID? = first
        while let id = current, let node = nodes.removeValue(forKey: id) {
            if !node.hasEnded {
                cancelled.append(CancelledEffect(id: id, key: node.key, token: node.token, byCancelRow: byCancelRow))
                runningEffects -= 1
            }
            current = node.latestChild
        }
    }

    /// An input `origin` emitted has been processed (successfully or not).
    @inlinable
    mutating func inputProcessed(from origin: EffectID) {
        nodes[origin]?.pendingInputs -= 1
        forgetIfFinished(origin)
    }

    /// Forgets `id` if its effect has ended and it has no queued input: nothing can come of it any
    /// more. Under `.latest` its tracked child takes its place in its parent's chain (the child of a
    /// finished effect can only be cancelled together with that effect, by its ancestors, so this
    /// keeps the tree's meaning), so a feedback loop of effects that each start the next and end
    /// keeps O(1) nodes, however long it runs.
    @inlinable
    mutating func forgetIfFinished(_ id: EffectID) {
        guard let node = nodes[id], node.hasEnded, node.pendingInputs == 0 else { return }
        nodes[id] = nil
        let heir = node.latestChild
        if let heir {
            nodes[heir]?.parent = node.parent
        }
        if let parent = node.parent {
            if nodes[parent]?.latestChild == id { nodes[parent]?.latestChild = heir }
        } else if rootLatest == id {
            rootLatest = heir
        }
    }

    // MARK: Effects

    /// The effect `id` completed (or failed, or interrupted itself). Returns its token, to dispose so
    /// its lifetime ends, its key, the effect of that key that may now start (`.queue`), and whether
    /// the replies should now complete.
    @inlinable
    mutating func effectEnded(_ id: EffectID) -> (
        token: Lifetime.Token?, key: EffectKey?, next: WaitingEffect<Input>?, completeReplies: Bool
    ) {
        guard let node = nodes[id], !node.hasEnded, !node.isWaiting else { return (nil, nil, nil, false) }
        nodes[id]?.hasEnded = true
        runningEffects -= 1
        var next: WaitingEffect<Input>?
        if let key = node.key, var group = groups[key] {
            group.running.removeAll { $0 == id }
            if group.running.isEmpty, let waiting = group.waiting.removeFirst() {
                nodes[waiting.id]?.isWaiting = false
                waitingEffects -= 1
                group.running.append(waiting.id)
                next = waiting
            }
            groups[key] = group.isEmpty ? nil : group
        }
        forgetIfFinished(id)
        return (node.token, node.key, next, shouldCompleteReplies)
    }

    @inlinable
    var shouldCompleteReplies: Bool {
        phase == .inputCompleted && gate.loadWord() & ProcessingGate.processing == 0 && queue.isEmpty
            && runningEffects == 0
    }

    // MARK: Effect events

    /// For effect events just decided under the lock: takes the emitter role, so the caller sends them
    /// itself, at once, then calls `AutomatonEngine.finishEmitting()`; or, if another thread holds
    /// it, returns false: the caller must `queue` them, in this same critical section.
    @inlinable
    func claimEmitter() -> Bool {
        eventGate.takeWordBit(EffectEventGate.emitting, orSet: EffectEventGate.pending)
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
            eventGate.storeWord(0)
            return nil
        }
        eventGate.storeWord(EffectEventGate.emitting)  // clears `pending`: later queuers set it again
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
        gate.setWordBits(ProcessingGate.blocked)
    }

    /// Stops everything: no input is processed any more and every tracked effect is forgotten.
    ///
    /// - Returns: the tokens of every running or waiting effect, in the order of their numbers, if the caller
    ///   now holds the processing role and must perform `termination` itself (then give the role up
    ///   with `giveUpRoleAfterTermination()`); `nil` if already terminated, or if another thread holds
    ///   the role: that thread performs it when it finishes the input in hand (see `next()`).
    @inlinable
    mutating func terminate(_ termination: Termination) -> [CancelledEffect]? {
        guard phase != .terminated else { return nil }
        phase = .terminated
        blockFastPath()
        queue.removeAll()
        // Effects that have ended were reported so; only their queued inputs were left.
        var effects = nodes.filter { !$0.value.hasEnded }.sorted { $0.key < $1.key }.map {
            CancelledEffect(id: $0.key, key: $0.value.key, token: $0.value.token, byCancelRow: false)
        }
        // The waiting effects' producers go out with the last entry, to be released unlocked.
        var leftovers: [WaitingEffect<Input>] = []
        for (_, var group) in groups {
            while let waiting = group.waiting.removeFirst() { leftovers.append(waiting) }
        }
        if !leftovers.isEmpty, let last = effects.popLast() {
            effects.append(CancelledEffect(id: last.id, key: last.key, token: last.token, byCancelRow: false, leftover: leftovers))
        }
        nodes.removeAll()
        groups.removeAll()
        rootLatest = nil
        runningEffects = 0
        waitingEffects = 0
        if gate.takeWordBit(ProcessingGate.processing, orSet: ProcessingGate.blocked) {
            return effects
        }
        pendingTermination = (termination, effects)
        return nil
    }

    /// Gives up the processing role taken by `terminate(_:)`, leaving the fast path blocked for good.
    @inlinable
    func giveUpRoleAfterTermination() {
        gate.storeWord(ProcessingGate.blocked)
    }
}
