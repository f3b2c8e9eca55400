import Signals

/// An effect's identity in the engine. Identifiers are never reused.
typealias EffectID = UInt64

/// An input waiting to be processed, with the effect that emitted it (`nil` for an outside input).
struct PendingInput<Input: Sendable>: Sendable {
    let input: Input
    let origin: EffectID?
}

/// One running (or finished but still referenced) effect.
struct EffectNode: Sendable {
    /// The effect whose input started this one; `nil` for an effect started by an outside input.
    let parent: EffectID?
    /// Ends the effect's `Lifetime`: disposing it cancels the effect.
    let token: Lifetime.Token
    /// Under `.latest`, the effect started by this effect's latest successful input, if still tracked.
    var latestChild: EffectID?
    /// Inputs this effect emitted that are still queued.
    var pendingInputs = 0
    /// Whether the effect has completed by itself.
    var hasEnded = false
}

/// The automaton's bookkeeping: current state, input queue and effect tree.
///
/// Every method runs under the engine's lock and calls no user code: each returns what the engine must
/// do once the lock is released (swift-async-algorithms style).
struct EngineStateMachine<State: Sendable, Input: Sendable>: Sendable {
    enum Phase: Sendable {
        /// Taking outside inputs.
        case active
        /// The input signal completed: no more outside inputs; effects go on.
        case inputCompleted
        /// Released or interrupted: nothing more happens.
        case terminated
    }

    /// What `send` should do after enqueueing.
    enum SendAction {
        /// Dropped (terminated, input completed, or the emitting effect was cancelled).
        case drop
        /// Queued behind the input being processed; the processing thread will take it.
        case queued
        /// Nobody is processing: the caller becomes the processing thread and applies `input` to `from`.
        case process(PendingInput<Input>, from: State)
    }

    /// What the processing thread does next.
    enum NextAction {
        case process(PendingInput<Input>, from: State)
        /// The queue is empty; processing stops. `completeReplies` if the automaton has finished.
        case idle(completeReplies: Bool)
    }

    /// The outcome of applying one input, to be performed outside the lock in this order.
    enum CommitAction {
        /// Terminated while the mapping ran: emit nothing.
        case aborted
        case failure
        /// The state changed to `toState`. First end `cancelled` lifetimes, then emit state and reply,
        /// then start `effect` (if any) with its node's lifetime.
        case success(toState: State, cancelled: [Lifetime.Token], effect: EffectID?)
    }

    let isLatest: Bool
    private(set) var state: State
    private(set) var phase = Phase.active
    private var queue = FIFOQueue<PendingInput<Input>>()
    private var isProcessing = false
    private var nodes: [EffectID: EffectNode] = [:]
    private var nextEffectID: EffectID = 0
    /// Under `.latest`, the effect started by the latest successful outside input, if still tracked.
    private var rootLatestChild: EffectID?
    /// Effects that have neither ended nor been cancelled.
    private var runningEffects = 0

    init(state: State, isLatest: Bool) {
        self.state = state
        self.isLatest = isLatest
    }

    // MARK: Inputs

    mutating func send(_ input: Input, from origin: EffectID?) -> SendAction {
        switch phase {
        case .terminated: return .drop
        case .inputCompleted where origin == nil: return .drop
        case .active, .inputCompleted: break
        }
        if let origin {
            // An input from a cancelled effect is ignored; so is a value after its own completion.
            guard nodes[origin] != nil, nodes[origin]?.hasEnded == false else { return .drop }
            nodes[origin]?.pendingInputs += 1
        }
        let pending = PendingInput(input: input, origin: origin)
        if isProcessing {
            queue.append(pending)
            return .queued
        }
        isProcessing = true
        return .process(pending, from: state)
    }

    mutating func next() -> NextAction {
        while let pending = queue.removeFirst() {
            if let origin = pending.origin, nodes[origin] == nil {
                continue  // its effect was cancelled after the input was queued
            }
            return .process(pending, from: state)
        }
        isProcessing = false
        return .idle(completeReplies: shouldCompleteReplies)
    }

    /// Records the result of the mapping for `pending`. `effectToken` is the lifetime token prepared for
    /// the effect, present exactly when the mapping returned an effect to start.
    mutating func commit(
        _ pending: PendingInput<Input>,
        toState: State?,
        effectToken: Lifetime.Token?
    ) -> CommitAction {
        defer { if let origin = pending.origin { inputProcessed(from: origin) } }
        guard phase != .terminated else { return .aborted }
        guard let toState else { return .failure }

        var cancelled: [Lifetime.Token] = []
        if isLatest {
            let previous = pending.origin.map { nodes[$0]?.latestChild } ?? rootLatestChild
            if let previous {
                cancelChain(from: previous, into: &cancelled)
            }
        }
        state = toState

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
                rootLatestChild = effect
            }
        }
        return .success(toState: toState, cancelled: cancelled, effect: effect)
    }

    /// Removes `first` and every effect it started, transitively, collecting their tokens.
    private mutating func cancelChain(from first: EffectID, into tokens: inout [Lifetime.Token]) {
        var current: EffectID? = first
        while let id = current, let node = nodes.removeValue(forKey: id) {
            tokens.append(node.token)
            if !node.hasEnded { runningEffects -= 1 }
            current = node.latestChild
        }
    }

    private mutating func inputProcessed(from origin: EffectID) {
        nodes[origin]?.pendingInputs -= 1
        removeIfFinished(origin)
    }

    /// Forgets an effect that has ended, has no queued inputs and no tracked child, then its parent
    /// if that makes the parent finished too.
    private mutating func removeIfFinished(_ first: EffectID) {
        var current: EffectID? = first
        while let id = current, let node = nodes[id],
            node.hasEnded, node.pendingInputs == 0, node.latestChild == nil
        {
            nodes[id] = nil
            current = node.parent
            if let parent = node.parent, nodes[parent]?.latestChild == id {
                nodes[parent]?.latestChild = nil
            }
        }
    }

    // MARK: Effects

    /// The effect `id` completed (or failed, or interrupted itself). Returns its token, to dispose so
    /// its lifetime ends, and whether the replies should now complete.
    mutating func effectEnded(_ id: EffectID) -> (token: Lifetime.Token?, completeReplies: Bool) {
        guard let node = nodes[id], !node.hasEnded else { return (nil, false) }
        nodes[id]?.hasEnded = true
        runningEffects -= 1
        removeIfFinished(id)
        return (node.token, shouldCompleteReplies)
    }

    private var shouldCompleteReplies: Bool {
        phase == .inputCompleted && !isProcessing && queue.isEmpty && runningEffects == 0
    }

    // MARK: Termination

    /// The input signal completed. Returns whether the replies should complete now.
    mutating func inputCompleted() -> Bool {
        guard phase == .active else { return false }
        phase = .inputCompleted
        return shouldCompleteReplies
    }

    /// Stops everything. Returns the tokens of every tracked effect, to dispose outside the lock, or
    /// `nil` if already terminated.
    mutating func terminate() -> [Lifetime.Token]? {
        guard phase != .terminated else { return nil }
        phase = .terminated
        queue.removeAll()
        let tokens = nodes.values.map(\.token)
        nodes.removeAll()
        rootLatestChild = nil
        runningEffects = 0
        return tokens
    }
}
