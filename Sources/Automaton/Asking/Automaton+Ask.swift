import Signals

extension Automaton {
    #if compiler(>=6.2)
        /// Sends an outside input, exactly as `send(_:)` does, and returns the automaton's reply to **this**
        /// input: `.success` or `.failure` (an input no row matches is a `.failure` reply, not an error).
        ///
        /// ```swift
        /// // An HTTP handler: answer with the machine's reply to this request's input.
        /// let reply = try await order.ask(.checkout)
        /// return reply.isSuccess ? .ok : .conflict
        /// ```
        ///
        /// The reply is matched by the engine to the queued input itself, never by comparing inputs: two
        /// callers that ask equal inputs at once each get the reply to their own.
        ///
        /// The reply answers the **transition**, not the work it starts: a row that starts a slow effect
        /// (a payment) is answered as soon as the state has changed; the effect's outcome comes later, as
        /// another input. To wait for that outcome, watch `state` or `replies` for it.
        ///
        /// - Order: the input takes its turn in the FIFO queue like any other. If another input is being
        ///   processed, it waits behind it and behind everything queued before it, and the caller
        ///   suspends until its reply. If none is, it is processed at once, on the calling thread, which
        ///   then goes on processing as `send` does (it starts the transition's effect and processes the
        ///   inputs queued meanwhile) before `ask` returns, without suspending. Either way its reply
        ///   reaches every `replies` observer and every processing observer (`observeProcessing(_:)`)
        ///   first, and the answer is given before the transition's effect starts (except an effect that
        ///   waits for its key under `.queue`: it starts when its predecessor ends, on that thread, which
        ///   may be before the answer).
        /// - Termination: an input the automaton never processes is an `AskError`, never a hang:
        ///   `.inputCompleted` if the input signal had completed when it was asked (not queued; inputs
        ///   queued before the completion are still processed and answered), `.interrupted` if the input
        ///   signal was interrupted before its turn (answered after `replies` has ended; an input asked
        ///   once the interruption has been decided, `isTerminated` already true, is refused at once,
        ///   maybe before). (`.released` cannot happen here: the caller keeps the automaton alive while
        ///   it waits; see `ask(_:onReply:)`.)
        /// - Cancellation: the input is sent when `ask` is called, even from a task already cancelled, and
        ///   is never withdrawn; cancelling the waiting task ends only the wait: `ask` throws
        ///   `AskError.cancelled` at once (unless the reply came first, which is then returned), and the
        ///   input is still processed in its turn, its reply sent on `replies`. To bound the wait, use
        ///   ``ask(_:timeout:clock:)``.
        /// - Threads: call it from any task or thread. Answered at once, it costs a plain `send` and a
        ///   few dozen instructions: no allocation, no suspension; an input that has to wait costs a
        ///   waiter and a suspension (`Benchmarks/callgrind "W2 Automaton, asked"`, BENCHMARKS.md).
        // Inlinable, so that it runs specialized for the caller's `State` and `Input` (generic, it looked
        // up type metadata for most of its cost: BENCHMARKS.md, "Request and reply"); nonsending, so that
        // it runs on the caller's executor and an input answered at once costs no executor hop.
        @inlinable
        nonisolated(nonsending) public func ask(_ input: Input) async throws(AskError) -> Reply<State, Input> {
            if let answer = engine.askInline(input) { return try answer.get() }
            return try await askWaiting(input)
        }
    #else
        // Before Swift 6.2, which can run it on the caller's executor: the same, with an executor hop.
        @inlinable
        public func ask(_ input: Input) async throws(AskError) -> Reply<State, Input> {
            if let answer = engine.askInline(input) { return try answer.get() }
            return try await askWaiting(input)
        }
    #endif

    /// `ask(_:)` for an input that must go through the lock: queued behind another, or refused.
    @inlinable
    func askWaiting(_ input: Input) async throws(AskError) -> Reply<State, Input> {
        let waiter = ReplyWaiter<State, Input>()
        engine.ask(queuing: input, target: .waiter(waiter))
        if let answer = waiter.takeAnswer() { return try answer.get() }
        return try await waiter.wait().get()
    }

    /// ``ask(_:)`` with a bound on the wait: throws `AskError.timedOut` if the reply has not come
    /// within `timeout` on `clock`. The input is not withdrawn: it is processed in its turn, its
    /// reply sent on `replies`; only the wait ends. Cancelling the task ends the wait as in
    /// ``ask(_:)``.
    ///
    /// ```swift
    /// let reply = try await order.ask(.checkout, timeout: .seconds(2))
    /// ```
    ///
    /// The time-out bounds the wait for the input's **turn**: an input processed at once (nothing
    /// else was being processed) is answered without starting the timer, however slow the effect its
    /// row starts (see ``ask(_:)``: the reply answers the transition). Otherwise the wait runs a child
    /// task that sleeps on `clock`: pass a `TestScheduler`'s `clock` to test a time-out on virtual
    /// time.
    @inlinable
    public func ask<C: Clock>(
        _ input: Input, timeout: C.Duration, clock: C = ContinuousClock()
    ) async throws(AskError) -> Reply<State, Input> where C.Duration == Duration {
        if let answer = engine.askInline(input) { return try answer.get() }
        let waiter = ReplyWaiter<State, Input>()
        engine.ask(queuing: input, target: .waiter(waiter))
        if let answer = waiter.takeAnswer() { return try answer.get() }
        let answer = await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // Cancelled (the answer came first), `sleep` throws and the waiter is left alone.
                guard (try? await clock.sleep(for: timeout)) != nil else { return }
                waiter.stopWaiting(with: .timedOut)
            }
            let answer = await waiter.wait()
            group.cancelAll()
            return answer
        }
        return try answer.get()
    }

    /// Sends an outside input, exactly as `send(_:)` does, and calls `onReply` once with the
    /// automaton's reply to **this** input, or with why it was not processed: the form of ``ask(_:)``
    /// for code outside Swift concurrency. A refused input is `.success(.failure(input, state))`: the
    /// ask succeeded, and the machine's reply is a refusal.
    ///
    /// - Threads and order: `onReply` is called exactly once, with no lock held: on the thread that
    ///   processes the input, after every `replies` observer and processing observer has heard the
    ///   reply and before the transition's effect starts (unless that effect waits for its key under
    ///   `.queue`, as for ``ask(_:)``; like a `replies` observer, it holds up processing while it runs,
    ///   and an input it sends is queued); or, if the input is refused, on the calling thread before
    ///   `ask` returns. If nothing is being processed, the input is processed on the calling thread,
    ///   so `onReply` may run before `ask` returns. The handler is let go of once its input's
    ///   processing returns (after the effect's start).
    /// - Termination: `.failure(.inputCompleted)` if the input signal had completed (the input is not
    ///   queued); `.failure(.interrupted)` or `.failure(.released)` if the automaton terminated before
    ///   the input's turn: the automaton's input was interrupted, or the automaton was released (this
    ///   form does not keep it alive). Then `onReply` is called by the thread performing the
    ///   termination, after `replies` has ended.
    @inlinable
    public func ask(
        _ input: Input, onReply: @escaping @Sendable (Result<Reply<State, Input>, AskError>) -> Void
    ) {
        engine.ask(input, target: .handler(onReply))
    }

    /// Whether the automaton has ended: its input signal was interrupted, or it completed and every
    /// effect has ended (`replies` has ended or is ending), or it was released. Nothing it is sent
    /// will be processed any more: `send` does nothing and `ask` throws.
    ///
    /// Thread safe; a snapshot. Once true, it stays true.
    public var isTerminated: Bool {
        engine.critical { $0.phase == .terminated } || engine.replies.hasTerminated
    }

    /// Whether the automaton still takes outside inputs: false once its input signal has completed or
    /// it has terminated. Effects' inputs are still processed after the input signal has completed,
    /// until `isTerminated`.
    ///
    /// Thread safe; a snapshot. Once false, it stays false.
    public var acceptsInputs: Bool {
        engine.critical { $0.phase == .active }
    }
}
