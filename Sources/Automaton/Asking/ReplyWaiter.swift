import Signals

/// A task waiting for the reply to one input it asked (`Automaton.ask`), when the input had to be
/// queued (an input answered at once uses a slot of the asking frame, the callback form its handler:
/// see `ReplyTarget`). The engine answers it exactly once, with no lock held: with the reply, after
/// every `replies` observer and processing observer has heard it and before the transition's effect
/// starts (unless it waits for its key under `.queue`); or with the reason the input was not processed.
///
/// Its phase is behind a lock of its own (one allocation: the value lives in the lock's storage),
/// because three parties race for it: the engine's answer (on the processing thread), the waiting
/// task's suspension, and the end of its wait (its cancellation, or its time-out). Each takes what it
/// must resume under the lock, and resumes it after; an answer nobody takes any more (the wait ended)
/// is released by the caller of `answer(_:)`, after the lock, since a reply holds the user's values.
@usableFromInline
struct ReplyWaiter<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline typealias Answer = Result<Reply<State, Input>, AskError>

    @usableFromInline
    enum Phase: Sendable {
        /// No answer yet, and nobody suspended on it yet.
        case waiting
        /// Answered before the task suspended: the task takes it without suspending.
        case answered(Answer)
        /// The task is suspended, waiting for the answer.
        case suspended(UnsafeContinuation<Answer, Never>)
        /// The task stopped waiting before the answer came (cancelled, or timed out: the error it got):
        /// an answer is dropped.
        case cancelled(AskError)
        /// Answered and handed over (or cancelled and resumed): nothing more happens.
        case done
    }

    @usableFromInline let phase: Locked<Phase>

    /// A waiter for a task, which takes the answer with `takeAnswer()` or `wait()`.
    @inlinable
    init() {
        phase = Locked(.waiting)
    }

    @usableFromInline
    enum AnswerAction {
        case none
        case resume(UnsafeContinuation<Answer, Never>)
    }

    /// Gives the answer: resumes the suspended task, or keeps the answer for the task to take. Called
    /// once per waiter, with no lock held.
    @inlinable
    func answer(_ answer: Answer) {
        let action = phase.withCriticalRegion { phase -> AnswerAction in
            switch phase {
            case .waiting:
                phase = .answered(answer)
                return .none
            case let .suspended(continuation):
                phase = .done
                return .resume(continuation)
            case .cancelled:
                // Stays cancelled: the task may not have suspended yet, and `suspend` then resumes it
                // with its error. The answer is dropped (released by the caller, after the lock).
                return .none
            case .answered, .done:
                preconditionFailure("Internal inconsistency: an input's reply given twice")
            }
        }
        switch action {
        case .none: break
        case let .resume(continuation): continuation.resume(returning: answer)
        }
    }

    /// The answer, if it came already (the input was processed on the asking thread, or by another
    /// one before the task got here); the waiter is then done.
    @inlinable
    func takeAnswer() -> Answer? {
        phase.withCriticalRegion { phase -> Answer? in
            guard case let .answered(answer) = phase else { return nil }
            phase = .done
            return answer
        }
    }

    /// Suspends the task on `continuation` until the answer, or resumes it at once if the answer came
    /// meanwhile, or if the task was cancelled.
    @inlinable
    func suspend(_ continuation: UnsafeContinuation<Answer, Never>) {
        let resumeWith = phase.withCriticalRegion { phase -> Answer? in
            switch phase {
            case .waiting:
                phase = .suspended(continuation)
                return nil
            case let .answered(answer):
                phase = .done
                return answer
            case let .cancelled(error):
                // Stays cancelled: the engine's answer, still to come, is then dropped.
                return .failure(error)
            case .suspended, .done:
                preconditionFailure("Internal inconsistency: a reply waiter suspended in phase \(phase)")
            }
        }
        if let resumeWith { continuation.resume(returning: resumeWith) }
    }

    /// Waits for the answer, suspending the task; a cancellation of the task ends the wait with
    /// `.cancelled`.
    @inlinable
    func wait() async -> Answer {
        await withTaskCancellationHandler {
            await withUnsafeContinuation { continuation in suspend(continuation) }
        } onCancel: {
            stopWaiting(with: .cancelled)
        }
    }

    /// The task stops waiting (it was cancelled, or its time ran out): resumed with `error` if
    /// suspended, or when it suspends. An answer that came already wins.
    @inlinable
    func stopWaiting(with error: AskError) {
        let resume = phase.withCriticalRegion { phase -> UnsafeContinuation<Answer, Never>? in
            switch phase {
            case .waiting:
                phase = .cancelled(error)
                return nil
            case let .suspended(continuation):
                phase = .cancelled(error)
                return continuation
            case .answered, .cancelled, .done:
                return nil
            }
        }
        resume?.resume(returning: .failure(error))
    }
}

/// Where the reply to an asked input goes (`PendingInput.target`): a `ReplyWaiter` (a task that may
/// suspend), a variable of the asking frame (`ask`'s fast path: an input answered at once costs no
/// allocation; see BENCHMARKS.md, "Request and reply"), or the callback form's handler.
@usableFromInline
enum ReplyTarget<State: Sendable, Input: Sendable>: @unchecked Sendable {
    // Safe: a `.waiter` is itself `Sendable`. A `.slot` is used by one thread only: the asking thread,
    // which made it in its own frame and, holding the processing role, processes this input itself,
    // synchronously, before that frame returns (`AutomatonEngine.askInline(_:)`). Such an input is
    // never queued, held or handed to another thread (aborted by a termination, it is kept by that
    // termination, which the same thread performs within the slot's scope, in `drain()`), so the
    // pointer never outlives its frame. A slot not answered by the end of its scope stops the process
    // (`askInline`'s precondition): the ask suites, whose every path is answered, would fail there.
    case waiter(ReplyWaiter<State, Input>)
    case slot(UnsafeMutablePointer<ReplyWaiter<State, Input>.Answer?>)
    /// The callback form's handler (`ask(_:onReply:)`), called with the answer, with no lock held: the
    /// engine answers a target exactly once, so it needs no waiter's lock.
    case handler(@Sendable (ReplyWaiter<State, Input>.Answer) -> Void)

    /// Gives the answer: to the waiter, into the slot, or to the handler.
    @inlinable
    func answer(_ answer: ReplyWaiter<State, Input>.Answer) {
        switch self {
        case let .waiter(waiter): waiter.answer(answer)
        case let .slot(slot): slot.pointee = answer
        case let .handler(handler): handler(answer)
        }
    }
}
