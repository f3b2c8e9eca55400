import Signals

// The effect tree: cancelling a chain, counting an effect's inputs out, forgetting what can no longer
// act, and an effect's end. Under the engine's lock. Checked by `Verification/EffectGraph.pml`.

extension EngineStateMachine {
    /// Forgets `first` and every effect it started, transitively, collecting those still running. An
    /// effect that has ended (and is only kept for its queued inputs, now dropped) was reported ended
    /// and its lifetime has ended: it is not reported again.
    @inlinable
    mutating func cancelChain(
        from first: Record, into cancelled: inout CancelledEffects<State, Input>, cause: CancellationCause
    ) {
        var current: Record? = first
        while let record = current, record.isTracked {
            current = record.latestChild
            if !record.hasFinished {
                cancelled.append(CancelledEffect(record, cause: cause))
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
}
