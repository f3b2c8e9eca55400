// Request and reply (`Automaton.ask`): the group `ask`. W2's machine and inputs (the login cycle, no
// effects), each input awaited in an async loop, beside the same loop sending, and beside the careful
// effects baseline with a hand-written continuation: what an expert writes to await the reply to an
// input without the feature.
//
// - "W2 Automaton, sent": `send`, in the async loop (the loop's own cost, against which the others are
//   read);
// - "W2 Automaton, asked": `try await automaton.ask(input)`;
// - "W2 Automaton, asked with a callback": `ask(_:onReply:)`, the handler made once;
// - "W2 careful effects, sent": `CarefulEffectsMachine.send`, in the async loop;
// - "W2 careful effects, continuation": `await withUnsafeContinuation { machine.send(input, replyTo: $0) }`
//   on `CarefulAskingMachine`, the careful effects machine whose queue carries the continuation of an
//   outside input, resumed right after the input's reply, before its effect starts. Simpler than `ask`:
//   no cancellation, and nothing answers a waiter whose input is never processed (the careful machine
//   processes every outside input).
// - "W2 Automaton, asked while processing" and "W2 careful effects, continuation while processing": the
//   asking task's input finds the machine processing, so the task suspends and is resumed by the
//   processing thread. One event is a pair: a plain send from the driver, during whose reply the task
//   asks the next input of the cycle (queued behind it); the driver's send processes it, resumes the
//   task's continuation, and the driver runs the task on to its next ask.
//
// The async loops run on the calling thread, in a task whose executor preference is an
// `InlineTaskExecutor`: the thread that runs the workload's body runs the task's jobs, so the body is
// timed (and counted by callgrind) like the synchronous workloads, with no other thread involved. The
// task's creation is the only cost per body outside the loop.
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
#if AUTOMATON_ASK
    import Automaton
#endif

// MARK: Running an async loop on the calling thread

/// A task executor whose jobs run on the thread that calls `runUntilIdle()`: an async loop then runs
/// on the calling thread, with no hop to another thread and none of the global executor's work.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class InlineTaskExecutor: TaskExecutor, @unchecked Sendable {
    // Safe: `jobs` is only read or written with `mutex` held; its storage is freed by `deinit`.
    private let mutex = Mutex()
    @exclusivity(unchecked) private var jobs = InlineQueue<UnownedJob>()

    deinit { jobs.free() }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        mutex.lock()
        jobs.append(job)
        mutex.unlock()
    }

    /// Runs the jobs enqueued, and those they enqueue, until there are none.
    func runUntilIdle() {
        while true {
            mutex.lock()
            let job = jobs.popFirst()
            mutex.unlock()
            guard let job else { return }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Starts `operation` in a task on this executor; it runs when `runUntilIdle()` is next called.
    func start(_ operation: @escaping @Sendable () async throws -> Void) -> TaskOutcome {
        let outcome = TaskOutcome()
        Task(executorPreference: self) {
            do {
                try await operation()
                outcome.finish(nil)
            } catch {
                outcome.finish(error)
            }
        }
        return outcome
    }

    /// Runs `operation` to its end on the calling thread; rethrows its error.
    func run(_ operation: @escaping @Sendable () async throws -> Void) throws {
        let outcome = start(operation)
        runUntilIdle()
        try outcome.check()
    }
}

/// How a task of `InlineTaskExecutor.start` ended.
final class TaskOutcome: @unchecked Sendable {
    // Safe: written by the task, read by the thread that ran it, after `runUntilIdle()`.
    private var finished = false
    private var error: (any Error)?

    func finish(_ error: (any Error)?) {
        finished = true
        self.error = error
    }

    /// Throws the task's error, or `WrongResult` if it has not finished.
    func check() throws {
        if let error { throw error }
        if !finished { throw WrongResult(description: "an async loop did not finish on its executor") }
    }
}

// MARK: The careful effects machine with a continuation

/// Who waits for an input's reply in `CarefulAskingMachine`: a continuation, resumed with the reply.
struct ContinuationReplyWaiter<State: Sendable, Input: Sendable>: ReplyWaiting {
    let continuation: UnsafeContinuation<HandWrittenReply<State, Input>, Never>?

    static var nobody: Self { Self(continuation: nil) }

    @inline(__always)
    func answer(_ reply: HandWrittenReply<State, Input>) {
        continuation?.resume(returning: reply)
    }
}

/// The careful effects machine (`CarefulEffectsMachine.swift`) with the send an expert adds to await the
/// reply to an input: `send(_:replyTo:)` carries a continuation with the input, through the queue if
/// the machine is busy, and resumes it right after the input's reply (before its effect starts).
final class CarefulAskingMachine<State: BitwiseCopyable & Sendable, Input: BitwiseCopyable & Sendable>: Sendable {
    typealias Waiter = ContinuationReplyWaiter<State, Input>
    typealias Core = CarefulEffectsCore<State, Input, Waiter>

    let core: Core

    init(
        state: State, replacesEffects: Bool = false, transition: @escaping Core.Transition,
        reply: @escaping (HandWrittenReply<State, Input>) -> Void
    ) {
        core = Core(state: state, replacesEffects: replacesEffects, transition: transition, reply: reply)
    }

    /// Cancels the running effect: its tokens keep the core, not this machine, so nothing else does.
    deinit { core.release() }

    var currentState: State { core.currentState }

    /// An outside input, its reply awaited by nobody.
    @inline(__always)
    func send(_ input: Input) {
        core.send(input, from: nil, waiter: .nobody)
    }

    /// An outside input whose reply resumes `continuation`: at once if the machine is idle (on this
    /// thread, before `send` returns), else on the thread processing, in the input's turn.
    @inline(__always)
    func send(_ input: Input, replyTo continuation: UnsafeContinuation<HandWrittenReply<State, Input>, Never>) {
        core.send(input, from: nil, waiter: Waiter(continuation: continuation))
    }
}

// MARK: The baselines

/// W2's careful effects machine (no effects), in the async loop: plain sends.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
func carefulEffectsSentAsync(count: Int) -> Workload {
    let name = "W2 careful effects, sent"
    return Workload(name: name, events: count) {
        let counts = ReplyCounts()
        let machine = CarefulEffectsMachine<LoginState, LoginInput>(
            state: .loggedOut, transition: { state, input in loginTransition(state, input).map { ($0, nil) } },
            reply: { counts.record($0) })
        let executor = InlineTaskExecutor()
        let count = opaque(count)
        let cycle = opaque(loginCycle)
        return {
            let successes = counts.successes
            try executor.run {
                for index in 0..<count {
                    machine.send(cycle[index & 3])
                }
            }
            try check(counts.successes - successes, count, "\(name) successes")
            try check(machine.currentState, .loggedOut, "\(name) final state")
        }
    }
}

/// W2's careful effects machine with a continuation per input (`CarefulAskingMachine`).
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
func carefulEffectsContinuation(count: Int) -> Workload {
    let name = "W2 careful effects, continuation"
    return Workload(name: name, events: count) {
        let counts = ReplyCounts()
        let answers = ReplyCounts()
        let machine = CarefulAskingMachine<LoginState, LoginInput>(
            state: .loggedOut, transition: { state, input in loginTransition(state, input).map { ($0, nil) } },
            reply: { counts.record($0) })
        let executor = InlineTaskExecutor()
        let count = opaque(count)
        let cycle = opaque(loginCycle)
        return {
            let (successes, answered) = (counts.successes, answers.successes)
            try executor.run {
                for index in 0..<count {
                    let reply = await withUnsafeContinuation { continuation in
                        machine.send(cycle[index & 3], replyTo: continuation)
                    }
                    answers.record(reply)
                }
            }
            try check(counts.successes - successes, count, "\(name) successes")
            try check(answers.successes - answered, count, "\(name) successes answered")
            try check(machine.currentState, .loggedOut, "\(name) final state")
        }
    }
}

/// The same, the input asked while the machine processes the driver's input, so that the task suspends.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
func carefulEffectsContinuationWhileProcessing(count: Int) -> Workload {
    let name = "W2 careful effects, continuation while processing"
    return Workload(name: name, events: count) {
        let counts = ReplyCounts()
        let answers = ReplyCounts()
        let executor = InlineTaskExecutor()
        // During each reply, the asking task runs on to its next ask, if it is ready to.
        let machine = CarefulAskingMachine<LoginState, LoginInput>(
            state: .loggedOut, transition: { state, input in loginTransition(state, input).map { ($0, nil) } },
            reply: { reply in
                counts.record(reply)
                executor.runUntilIdle()
            })
        let pairs = opaque(count)
        let cycle = opaque(loginCycle)
        return {
            let (successes, answered) = (counts.successes, answers.successes)
            let asking = executor.start {
                for pair in 0..<pairs {
                    let reply = await withUnsafeContinuation { continuation in
                        machine.send(cycle[(2 &* pair &+ 1) & 3], replyTo: continuation)
                    }
                    answers.record(reply)
                }
            }
            for pair in 0..<pairs {
                machine.send(cycle[(2 &* pair) & 3])
            }
            executor.runUntilIdle()
            try asking.check()
            try check(counts.successes - successes, 2 * pairs, "\(name) successes")
            try check(answers.successes - answered, pairs, "\(name) successes answered")
            try check(machine.currentState, .loggedOut, "\(name) final state")
        }
    }
}

// MARK: The automaton

#if AUTOMATON_ASK
    /// Counts an answer of `ask`: successes and failures as replies, the errors as `disposed`.
    @inline(__always)
    func recordAnswer<State, Input>(_ answer: Result<Reply<State, Input>, AskError>, into counts: ReplyCounts) {
        switch answer {
        case let .success(reply):
            if reply.isSuccess { counts.successes &+= 1 } else { counts.failures &+= 1 }
        case .failure: counts.disposed &+= 1
        }
    }

    /// How the async loop hands each input of the login cycle to the automaton.
    enum AskForm {
        case sent, asked, callback
    }

    /// W2 on the automaton, in the async loop, each input sent, asked or asked with a callback.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func automatonAsk(_ form: AskForm, count: Int) -> Workload {
        let name =
            switch form {
            case .sent: "W2 Automaton, sent"
            case .asked: "W2 Automaton, asked"
            case .callback: "W2 Automaton, asked with a callback"
            }
        return Workload(name: name, events: count) {
            let counts = ReplyCounts()
            let answers = ReplyCounts()
            let automaton = Automaton<LoginState, LoginInput>(state: .loggedOut, mapping: loginSwitchMapping)
            countReplies(of: automaton, into: counts)
            // Made once, as a caller that asks in a loop would.
            let onReply: @Sendable (Result<Reply<LoginState, LoginInput>, AskError>) -> Void = { answer in
                recordAnswer(answer, into: answers)
            }
            let executor = InlineTaskExecutor()
            let count = opaque(count)
            let cycle = opaque(loginCycle)
            return {
                let (successes, answered) = (counts.successes, answers.successes)
                try executor.run {
                    switch form {
                    case .sent:
                        for index in 0..<count {
                            automaton.send(cycle[index & 3])
                        }
                    case .asked:
                        for index in 0..<count {
                            let reply = try await automaton.ask(cycle[index & 3])
                            if reply.isSuccess { answers.successes &+= 1 } else { answers.failures &+= 1 }
                        }
                    case .callback:
                        for index in 0..<count {
                            automaton.ask(cycle[index & 3], onReply: onReply)
                        }
                    }
                }
                try check(counts.successes - successes, count, "\(name) successes")
                try check(counts.failures, 0, "\(name) failures")
                try check(answers.successes - answered, form == .sent ? 0 : count, "\(name) successes answered")
                try check(answers.failures + answers.disposed, 0, "\(name) failures and errors answered")
                try check(automaton.state.value, .loggedOut, "\(name) final state")
            }
        }
    }

    /// W2 on the automaton, each asked input finding the automaton processing the driver's input.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func automatonAskWhileProcessing(count: Int) -> Workload {
        let name = "W2 Automaton, asked while processing"
        return Workload(name: name, events: count) {
            let counts = ReplyCounts()
            let answers = ReplyCounts()
            let executor = InlineTaskExecutor()
            let automaton = Automaton<LoginState, LoginInput>(state: .loggedOut, mapping: loginSwitchMapping)
            // During each reply, the asking task runs on to its next ask, if it is ready to.
            automaton.replies.observeValues { reply in
                if reply.isSuccess { counts.successes &+= 1 } else { counts.failures &+= 1 }
                executor.runUntilIdle()
            }
            let pairs = opaque(count)
            let cycle = opaque(loginCycle)
            return {
                let (successes, answered) = (counts.successes, answers.successes)
                let asking = executor.start {
                    for pair in 0..<pairs {
                        let reply = try await automaton.ask(cycle[(2 &* pair &+ 1) & 3])
                        if reply.isSuccess { answers.successes &+= 1 } else { answers.failures &+= 1 }
                    }
                }
                for pair in 0..<pairs {
                    automaton.send(cycle[(2 &* pair) & 3])
                }
                executor.runUntilIdle()
                try asking.check()
                try check(counts.successes - successes, 2 * pairs, "\(name) successes")
                try check(counts.failures, 0, "\(name) failures")
                try check(answers.successes - answered, pairs, "\(name) successes answered")
                try check(answers.failures, 0, "\(name) failures answered")
                try check(automaton.state.value, .loggedOut, "\(name) final state")
            }
        }
    }

    /// Runs the `ask` group side by side; returns its notes and the bars missed.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    func runAsk(_ options: Options) throws -> (notes: [String], barsMissed: Int) {
        var notes: [String] = []
        var barsMissed = 0
        func note(_ line: String) {
            print("  " + line)
            notes.append(line)
        }
        let count = options.count(1_000_000)
        print("ask: W2's machine and inputs in an async loop, each input awaited, \(grouped(count)) inputs")
        let measured = try measureSideBySide(
            [
                automatonAsk(.sent, count: count), automatonAsk(.asked, count: count),
                automatonAsk(.callback, count: count), carefulEffectsSentAsync(count: count),
                carefulEffectsContinuation(count: count),
            ], options: options)
        let (sent, asked, callback, carefulSent, continuation) =
            (measured[0], measured[1], measured[2], measured[3], measured[4])
        let all = [sent, asked, callback, carefulSent, continuation]
        if all.allSatisfy({ !$0.nanosecondsPerEvent.isEmpty }) {
            // The bar (BRIEF §6, fourth round): an awaited send costs at most a plain send plus a
            // hand-written continuation, the careful effects machine's send with its continuation.
            let bound = sent.median + continuation.median
            let met = asked.median <= bound
            if !met { barsMissed += 1 }
            note(
                "ask, W2: asked \(format(asked.median)) ns per input, sent \(format(sent.median)), careful effects "
                    + "with a continuation \(format(continuation.median)) (its plain send \(format(carefulSent.median))"
                    + "); asked ÷ (sent + continuation) \(format(asked.median / bound))×; asked − sent "
                    + "\(format(asked.median - sent.median)) ns against the continuation's own "
                    + "\(format(continuation.median - carefulSent.median)). Bar (fourth round, in time): asked ≤ sent "
                    + "+ continuation: \(met ? "met" : "MISSED") (instructions: Benchmarks/callgrind)")
            note(
                "ask, W2, asked with a callback: \(format(callback.median)) ns per input "
                    + "(\(format(callback.allocationsPerEvent ?? .nan)) allocations; asked "
                    + "\(format(asked.allocationsPerEvent ?? .nan)), sent \(format(sent.allocationsPerEvent ?? .nan)))")
        }
        let pairs = options.count(1_000_000)
        print("ask while processing: a send, during whose reply a task asks the next input; \(grouped(pairs)) pairs")
        let queued = try measureSideBySide(
            [automatonAskWhileProcessing(count: pairs), carefulEffectsContinuationWhileProcessing(count: pairs)],
            options: options)
        if queued.allSatisfy({ !$0.nanosecondsPerEvent.isEmpty }) {
            note(
                "ask while processing, W2: \(format(queued[0].median)) ns per pair (a send, and an asked input "
                    + "queued behind it, the task suspended and resumed); careful effects with a continuation "
                    + "\(format(queued[1].median)); ratio \(format(queued[0].median / queued[1].median))×")
        }
        return (notes, barsMissed)
    }
#endif
