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

    @inlinable
    init(parent: EffectID?, token: Lifetime.Token) {
        self.parent = parent
        self.token = token
    }
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
        /// performs the termination (dispose `tokens` and end the signals, in `termination`'s order).
        case terminate(Termination, tokens: [Lifetime.Token])
    }

    /// The outcome of a successful transition, to be performed outside the lock in this order.
    @usableFromInline
    enum CommitAction {
        /// Terminated while the mapping ran: emit nothing.
        case aborted
        /// First end `cancelled` lifetimes, then emit state and reply, then start `effect` (if any) with
        /// its node's lifetime.
        case success(cancelled: [Lifetime.Token], effect: EffectID?)
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
    @usableFromInline var pendingTermination: (Termination, [Lifetime.Token])?
    @usableFromInline var nextEffectID: EffectID = 0
    /// Effects that have neither ended nor been cancelled.
    @usableFromInline var runningEffects = 0

    @inlinable
    init(isLatest: Bool, gate: Lock) {
        self.isLatest = isLatest
        self.gate = gate
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
        if let (termination, tokens) = pendingTermination {
            pendingTermination = nil
            gate.storeWord(ProcessingGate.blocked)
            return .terminate(termination, tokens: tokens)
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

    /// Records a successful transition for `pending`. `effectToken` is the lifetime token prepared for
    /// the effect, present exactly when the mapping returned an effect to start. `mayHaveRootLatest` is
    /// the processing thread's lock-free hint that the root has a tracked latest child (under
    /// `.latest`), updated here: exact now; later it may stay true after that child is forgotten,
    /// never the other way round.
    @inlinable
    mutating func commitSuccess(
        _ pending: PendingInput<Input>,
        effectToken: Lifetime.Token?,
        mayHaveRootLatest: inout Bool
    ) -> CommitAction {
        defer { if let origin = pending.origin { inputProcessed(from: origin) } }
        guard phase != .terminated else { return .aborted }

        var cancelled: [Lifetime.Token] = []
        if isLatest {
            let previous = pending.origin.map { nodes[$0]?.latestChild } ?? rootLatest
            if let previous {
                cancelChain(from: previous, into: &cancelled)
            }
        }

        var effect: EffectID?
        if let effectToken {
            let id = nextEffectID
            nextEffectID &+= 1
            nodes[id] = EffectNode(parent: isLatest ? pending.origin : nil, token: effectToken)
            runningEffects += 1
            effect = id
        }
        if isLatest {
            if let origin = pending.origin {
                nodes[origin]?.latestChild = effect
            } else {
                rootLatest = effect
            }
        }
        mayHaveRootLatest = rootLatest != nil
        return .success(cancelled: cancelled, effect: effect)
    }

    /// Removes `first` and every effect it started, transitively, collecting their tokens.
    @inlinable
    mutating func cancelChain(from first: EffectID, into tokens: inout [Lifetime.Token]) {
        var current: EffectID? = first
        while let id = current, let node = nodes.removeValue(forKey: id) {
            tokens.append(node.token)
            if !node.hasEnded { runningEffects -= 1 }
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
    /// its lifetime ends, and whether the replies should now complete.
    @inlinable
    mutating func effectEnded(_ id: EffectID) -> (token: Lifetime.Token?, completeReplies: Bool) {
        guard let node = nodes[id], !node.hasEnded else { return (nil, false) }
        nodes[id]?.hasEnded = true
        runningEffects -= 1
        forgetIfFinished(id)
        return (node.token, shouldCompleteReplies)
    }

    @inlinable
    var shouldCompleteReplies: Bool {
        phase == .inputCompleted && gate.loadWord() & ProcessingGate.processing == 0 && queue.isEmpty
            && runningEffects == 0
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
    /// - Returns: the tokens of every tracked effect in the order the effects started, if the caller
    ///   now holds the processing role and must perform `termination` itself (then give the role up
    ///   with `giveUpRoleAfterTermination()`); `nil` if already terminated, or if another thread holds
    ///   the role: that thread performs it when it finishes the input in hand (see `next()`).
    @inlinable
    mutating func terminate(_ termination: Termination) -> [Lifetime.Token]? {
        guard phase != .terminated else { return nil }
        phase = .terminated
        blockFastPath()
        queue.removeAll()
        let tokens = nodes.sorted { $0.key < $1.key }.map(\.value.token)
        nodes.removeAll()
        rootLatest = nil
        runningEffects = 0
        if gate.takeWordBit(ProcessingGate.processing, orSet: ProcessingGate.blocked) {
            return tokens
        }
        pendingTermination = (termination, tokens)
        return nil
    }

    /// Gives up the processing role taken by `terminate(_:)`, leaving the fast path blocked for good.
    @inlinable
    func giveUpRoleAfterTermination() {
        gate.storeWord(ProcessingGate.blocked)
    }
}
