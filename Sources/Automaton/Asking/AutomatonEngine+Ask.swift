import Signals

// An outside input whose reply someone waits for (`Automaton.ask`): it takes the same paths as
// `send(_:from:)` (the lock-free fast path when nothing is queued and nobody processes, the queue
// otherwise), carrying its reply target (`ReplyTarget`) in its `PendingInput`. The processing role
// answers the target when it has delivered the reply (`answer(_:with:)`, at each place `process` delivers one); an input that is
// never processed is answered with the reason: refused here (the input had completed, or the
// automaton had terminated), dropped from the queue by the termination (`perform`), or aborted by a
// termination that came while its mapping ran (`commit`: it joins the dropped inputs, first, so that it
// too is answered after `replies` has ended).

/// What `EngineStateMachine.ask(_:)` decided.
@usableFromInline
enum AskAction<State: Sendable, Input: Sendable> {
    /// Not queued: the automaton takes no more outside inputs.
    case refused(AskError)
    /// Queued behind the input being processed.
    case queued
    /// Nobody is processing: the caller becomes the processing thread and processes it.
    case process(PendingInput<State, Input>)
}

extension EngineStateMachine {
    /// `send(_:from:)` for an outside input with a reply target: queued, or to be processed by the
    /// caller, or refused with the reason (released by the caller, after the lock).
    @inlinable
    mutating func ask(_ pending: PendingInput<State, Input>) -> AskAction<State, Input> {
        switch phase {
        case .terminated: return .refused(.dropped(by: terminationCause ?? .released))
        case .inputCompleted: return .refused(.inputCompleted)
        case .active: break
        }
        guard gate.takeBit(ProcessingGate.processing, orSet: ProcessingGate.blocked) else {
            queue.append(pending)
            return .queued
        }
        return .process(pending)
    }

    /// `pending`, whose commit the termination aborted (it came while the mapping ran, so the caller
    /// holds the processing role and the termination waits for it in `pendingTermination`), joins the
    /// inputs that termination dropped, ahead of them: its target is answered with theirs, after the
    /// replies ended. Returns the termination's cause if none is pending (then the caller answers now).
    @inlinable
    mutating func dropAborted(_ pending: PendingInput<State, Input>) -> Termination? {
        guard pendingTermination != nil else { return terminationCause ?? .released }
        pendingTermination!.1.keepFirst(pending)
        return nil
    }
}

extension AutomatonEngine {
    /// Sends an outside input, as `send(_:from:)` does, and answers `target` with its reply, or with
    /// why it was not processed (the callback form: its handler is the target).
    @inlinable
    func ask(_ input: Input, target: ReplyTarget<State, Input>) {
        if gate.compareExchange(expected: 0, desired: ProcessingGate.processing) {
            // Nothing queued, nobody processing, still active: process without the lock.
            process(PendingInput(input: input, target: target))
            if !gate.compareExchange(expected: ProcessingGate.processing, desired: 0) {
                drain()
            }
            return
        }
        ask(queuing: input, target: target)
    }

    /// `ask(_:target:)`'s fast path for an awaited ask: if nothing is queued and nobody processes,
    /// this thread processes `input` at once, the reply written into a variable of this frame (a
    /// `.slot` target: no allocation), then goes on processing what was queued meanwhile, and returns
    /// the answer. Returns `nil`, having sent nothing, if the input must go through the lock (the
    /// caller then asks with a `ReplyWaiter`).
    @inlinable
    func askInline(_ input: Input) -> ReplyWaiter<State, Input>.Answer? {
        guard gate.compareExchange(expected: 0, desired: ProcessingGate.processing) else { return nil }
        var answer: ReplyWaiter<State, Input>.Answer?
        withUnsafeMutablePointer(to: &answer) { slot in
            process(PendingInput(input: input, target: .slot(slot)))
            // Within the slot's scope: an input whose commit a termination aborted joins the inputs
            // that termination drops, and is answered when this thread performs it, in `drain()`.
            if !gate.compareExchange(expected: ProcessingGate.processing, desired: 0) {
                drain()
            }
        }
        // Every path of `process` answers: with the reply, or, aborted by a termination, its reason
        // (then by `drain()`, within the slot's scope). A slot that escaped unanswered stops here.
        guard let answer else { preconditionFailure("Internal inconsistency: an input processed without an answer") }
        return answer
    }

    /// `ask(_:target:)` through the lock: queued, processed by this thread, or refused.
    @inlinable
    func ask(queuing input: Input, target: ReplyTarget<State, Input>) {
        // Made here, not in the critical section: refused, it is released after the lock (a user's value).
        let pending = PendingInput(input: input, target: target)
        switch critical({ $0.ask(pending) }) {
        case let .refused(error):
            target.answer(.failure(error))
        case .queued:
            return
        case let .process(pending):
            process(pending)
            drain()
        }
    }

    /// Answers the target of `pending`, if it has one, with `reply`, which has been delivered. Run by
    /// the processing role, with no lock held. Inlined: for an input of `send`, whose `PendingInput`
    /// has no target, it compiles to nothing on the fast path, and to one test on the others.
    @inlinable @inline(__always)
    func answer(_ pending: PendingInput<State, Input>, with reply: @autoclosure () -> Reply<State, Input>) {
        if let target = pending.target {
            target.answer(.success(reply()))
        }
    }

    /// Has the target of `pending`, an input that a termination decided while its mapping ran (so it
    /// was not processed), answered with the termination's reason: by this thread, once it has
    /// performed the termination (`answerDropped`), after the replies ended, as a queued input is.
    @inlinable @inline(never)
    func answerAborted(_ pending: PendingInput<State, Input>) {
        guard let target = pending.target else { return }
        // Kept by the pending termination (a user's value: released with it, after the lock).
        guard let cause = critical({ $0.dropAborted(pending) }) else { return }
        target.answer(.failure(.dropped(by: cause)))
    }

    /// Answers the targets of the inputs a termination dropped from the queue (`leftovers`), with the
    /// termination's reason. Run by the holder of the processing role, after the replies ended.
    @inlinable
    func answerDropped(_ effects: CancelledEffects<State, Input>, by termination: Termination) {
        guard let leftovers = effects.leftovers else { return }
        for case let .inputs(queue) in leftovers {
            var queue = queue
            while let pending = queue.removeFirst() {
                pending.target?.answer(.failure(.dropped(by: termination)))
            }
        }
    }
}
