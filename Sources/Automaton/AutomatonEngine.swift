import Signals

/// Runs an automaton: the FIFO input queue, drained by one thread at a time, and the effects.
///
/// The engine is the only writer of the state property and the replies signal, and only the thread
/// currently processing inputs writes to them, so they emit in processing order. The user's mapping,
/// the effects and every observer run with no lock held.
///
/// The per-input path is `@inlinable`, so that it is specialized for the caller's `State` and `Input`
/// instead of looking up generic metadata at run time on every input.
///
/// At most one thread at a time holds the processing role (the `processing` bit of the gate word; see
/// `ProcessingGate`): an outside input that finds nothing queued and nobody processing takes and gives
/// it back with a compare-and-swap each, anything else goes through the lock. The current state belongs
/// to that role: only the thread holding it reads or writes it, so a transition that starts, replaces
/// and waits for no effect needs no lock beyond taking and giving up the role.
///
/// Termination (the input interrupted, the automaton released) is performed by the role holder too:
/// if another thread is processing when it is asked for, that thread performs it once it has finished
/// the input in hand: announced it (a failure, or an effect-free success on the fast path), or, for a
/// success that needs the machine (`commitSuccess` returns `.aborted`), not made it. So every
/// transition is either announced by its reply or not made, and `state` never changes after
/// `replies` has ended.
@usableFromInline
final class AutomatonEngine<State: Sendable, Input: Sendable>: @unchecked Sendable {
    // Safe: `state` and `mayHaveRootLatest` are only touched by the thread holding the processing role,
    // which is handed over with acquire/release atomics on the gate word (so each holder sees the
    // previous holder's writes); everything else is immutable or is `machine`, itself a lock.
    /// The mapping with "no effect" spelled as `nil`, so that effect-free transitions start nothing, in
    /// the out-parameter form of a table's rows (see `MappingKeyIndexing.Decide`): a mapping, a table
    /// and its rows pass the result on without copying it through memory at each layer.
    @usableFromInline
    typealias Transition = MappingKeyIndexing<State, Input>.Decide

    /// The mapping, held with one reference of its own and called without retaining it: replaced by
    /// one that applies to nothing when the automaton terminates, so that an effect that keeps its
    /// observer (and through it the engine; see `EffectRecord.engine`) keeps nothing the mapping
    /// captured, and a mapping that captures such an effect's observer makes no cycle. Only the role
    /// holder calls or replaces it (the `Automaton` keeps its own reference, for `graph`), so no call
    /// overlaps its release. `Unmanaged`: a variable closure would be retained around every call,
    /// which costs an effect-free input a tenth of its instructions (W2 224 against 250).
    @usableFromInline @exclusivity(unchecked) var mapping: Unmanaged<TransitionBox<State, Input>>
    @usableFromInline let machine: Locked<EngineStateMachine<State, Input>>
    /// The gate word (see `ProcessingGate`).
    @usableFromInline let gate: AtomicWord
    /// The effect-event word (see `EffectEventGate`).
    @usableFromInline let eventGate: AtomicWord
    /// The lock every effect's lifetime shares (see `Lifetime.init(sharing:)`): an effect's start then
    /// allocates one object less.
    @usableFromInline let lifetimesLock = Lock()
    /// `lifetimesLock`, unretained, for the lifetimes (each effect's record keeps the engine, so the
    /// lock outlives them): starting and freeing an effect then costs no reference counting for it.
    @usableFromInline let unretainedLifetimesLock: UnretainedLock
    @usableFromInline let stateStorage: PropertyStorage<State>
    @usableFromInline let replies: Signal<Reply<State, Input>, Never>
    @usableFromInline let repliesInput: Observer<Reply<State, Input>, Never>
    /// The core behind `replies`: replies are sent into it directly, without the input observer's
    /// closure hop (`repliesInput` is kept: releasing it would interrupt `replies`). Kept in a field of
    /// its own although `replies.core` is the same object: reaching it through the handle costs a
    /// W2 input 176 more instructions (callgrind: 342 against 518).
    @usableFromInline let repliesCore: SignalCore<Reply<State, Input>, Never>
    /// What happens to effects: sent in processing order with the replies; ends with them.
    @usableFromInline let effectEvents: Signal<EffectEvent<Input>, Never>
    @usableFromInline let effectEventsInput: Observer<EffectEvent<Input>, Never>
    /// The core behind `effectEvents`, sent into directly (see `repliesCore`).
    @usableFromInline let effectEventsCore: SignalCore<EffectEvent<Input>, Never>
    /// The current state. Owned by the processing role.
    @usableFromInline @exclusivity(unchecked) var state: State
    /// Under `.latest`, false only if no effect of an outside input is tracked, so that an outside
    /// input without an effect has nothing to replace (see `commitSuccess`). Owned by the processing
    /// role.
    @usableFromInline @exclusivity(unchecked) var mayHaveRootLatest = false

    // MARK: Held inputs (the synchronous feedback path)
    //
    // An effect's start handler that sends a value at once, on the thread that started it (a
    // `SignalProducer(value:)`, a step of a feedback chain), would otherwise queue it under the lock,
    // and that thread would take it back out under the lock as soon as the handler returns. Instead,
    // the first such value is held by the processing role itself (`held`), with no lock, and processed
    // right after the handler returns, before anything queued.
    //
    // - It is held only if nothing is queued then (the gate's `blocked` bit is clear), so it comes
    //   before any input queued later, as it would have through the queue.
    // - It is not counted in its effect's `pendingInputs`; instead, the held word names the effect
    //   while the value waits, and the machine forgets no effect that word names
    //   (`EngineStateMachine.forgetIfFinished`): the effect stays tracked, with its place in the tree.
    // - If anything else happened meanwhile (an input queued, a termination asked for, an effect ended
    //   on another thread: each sets `blocked`), the value goes to the front of the queue under the
    //   lock, counted as usual (`EngineStateMachine.queueHeld`), and the usual path takes over.

    /// The identity of the thread running the start handler of an effect it has just
    /// committed (`startCommitted(_:)`, holding the processing role), or 0. Only that thread finds its
    /// own identity there, so an effect's observer called on any other thread takes the usual path.
    @usableFromInline let runnerGate: AtomicWord
    /// The address of the record of the effect whose value is held, or 0 (see above). Written
    /// by the processing role; read under the lock by whoever may forget that effect.
    @usableFromInline let heldGate: AtomicWord
    /// The effect whose start handler the processing role is running (see `runnerGate`). Owned by the
    /// processing role; unretained (its observer, alive for the whole call, holds it).
    @usableFromInline @exclusivity(unchecked) var runningLink: Unmanaged<EffectRecord<State, Input>>?
    /// Whether the effect of `runningLink` has ended during its start handler. Owned by the processing
    /// role.
    @usableFromInline @exclusivity(unchecked) var runningHasEnded = false
    /// The held value, with its effect. Owned by the processing role.
    @usableFromInline @exclusivity(unchecked) var held: PendingInput<State, Input>?
    /// The held value while its effect's start handler runs, before `commit` pairs it with the effect
    /// in `held`, handing over its own reference to the record (`hold` would retain it once more).
    /// Owned by the processing role.
    @usableFromInline @exclusivity(unchecked) var heldValue: Input?
    /// Whether `processHeldInputs()` is running (further up the stack). Owned by the processing role.
    @usableFromInline @exclusivity(unchecked) var isProcessingHeldInputs = false

    @inlinable
    init(state: State, mapping: @escaping Transition, strategy: AutomatonStrategy) {
        precondition(
            strategy == .merge || strategy == .latest,
            "Automaton supports the .merge and .latest strategies, not \(strategy). Use .latest to replace running effects, or .merge to keep them all."
        )
        self.mapping = .passRetained(TransitionBox(mapping))
        self.state = state
        let gate = AtomicWord()
        let eventGate = AtomicWord()
        let heldGate = AtomicWord()
        self.gate = gate
        self.eventGate = eventGate
        self.heldGate = heldGate
        runnerGate = AtomicWord()
        unretainedLifetimesLock = lifetimesLock.unretained
        (effectEvents, effectEventsInput) = Signal<EffectEvent<Input>, Never>.pipe()
        effectEventsCore = effectEvents.core
        machine = Locked(
            EngineStateMachine(
                isLatest: strategy == .latest, gate: gate, eventGate: eventGate, heldGate: heldGate,
                effectEvents: effectEventsCore))
        stateStorage = PropertyStorage(state)
        (replies, repliesInput) = Signal<Reply<State, Input>, Never>.pipe()
        repliesCore = replies.core
    }

    deinit {
        mapping.release()
        // The key table holds its groups by hand; the termination that every automaton's release
        // performs has emptied it and given them back.
        assert(
            critical { $0.groups.isEmpty },
            "Internal inconsistency: an engine freed without its termination")
    }

    // MARK: Inputs

    /// Processes `input` now if no other input is being processed, or queues it behind the current one.
    @inlinable
    func send(_ input: Input, from origin: EffectRecord<State, Input>?) {
        if origin == nil, gate.compareExchange(expected: 0, desired: ProcessingGate.processing) {
            // Nothing queued, nobody processing, still active: process without the lock.
            process(PendingInput(input: input, origin: nil))
            if !gate.compareExchange(expected: ProcessingGate.processing, desired: 0) {
                drain()
            }
            return
        }
        let action = critical { $0.send(input, from: origin) }
        guard case let .process(pending) = action else { return }
        process(pending)
        drain()
    }

    /// Processes queued inputs until the queue is empty, then gives up the processing role.
    @inlinable
    func drain() {
        while true {
            switch critical({ $0.next() }) {
            case let .process(pending):
                process(pending)
            case .discard:
                continue
            case let .idle(completeReplies):
                if completeReplies { complete() }
                return
            case let .terminate(termination, effects):
                perform(termination, cancelling: effects)
                finishTermination()
                return
            }
        }
    }

    /// Processes the value an effect's start handler sent at once (see `held`), then the one that
    /// value's effect sent, and so on, in a loop (a feedback chain runs in constant stack); or, if
    /// anything happened meanwhile that the queue must order (the gate is blocked), puts it at the
    /// front of the queue, for `drain()`. Called by `commit` once its effect's start handler has
    /// returned, unless this loop is already running further up the stack.
    @inlinable @inline(never)
    func processHeldInputs() {
        isProcessingHeldInputs = true
        defer { isProcessingHeldInputs = false }
        while let pending = held.take() {
            // Sequentially consistent, after the held word was set: if an effect ended on another
            // thread and missed that word, its thread set `blocked` first, and this sees it (see
            // `EngineStateMachine.effectEnded(_:onRunner:)`).
            guard gate.loadSequentially() == ProcessingGate.processing else {
                queueHeld(pending)
                return
            }
            process(pending)
        }
    }

    /// Puts the held `pending` at the front of the queue, counted as usual, or drops it if its effect is
    /// no longer tracked or the automaton has terminated (then released here, after the lock).
    @usableFromInline
    func queueHeld(_ pending: PendingInput<State, Input>) {
        critical { $0.queueHeld(pending) }
    }

    /// Steps 1-3 of the automaton contract for one input. Runs in the processing role.
    @inlinable
    func process(_ pending: PendingInput<State, Input>) {
        let from = state
        var next: State?
        var effect: SignalProducer<Input, Never>?
        let applies = mapping._withUnsafeGuaranteedRef { $0.transition(from, pending.input, &next, &effect) }
        assert(!applies || next != nil, "Internal inconsistency: a mapping applied without writing the next state")
        guard applies, let toState = next else {
            if let origin = pending.origin {
                critical { $0.inputProcessed(from: origin) }
            }
            repliesCore.send(.value(.failure(pending.input, from)))
            return
        }
        if effect == nil && pending.origin == nil && !mayHaveRootLatest {
            // Nothing shared changes: no effect to start, none to replace, no emitting effect to update.
            state = toState
            stateStorage.set(toState)
            repliesCore.send(.value(.success(pending.input, from, toState)))
            return
        }
        commit(pending, from: from, to: toState, effect: consume effect)
    }

    /// Step 3 of `process(_:)` for a transition that changes the machine's bookkeeping: it starts,
    /// replaces or cancels effects, or its input came from an effect. Not inlined into `process`, so
    /// that an effect-free input's path keeps a small stack frame.
    @inlinable @inline(never)
    func commit(
        _ pending: PendingInput<State, Input>, from: State, to toState: State,
        effect: consuming SignalProducer<Input, Never>?
    ) {
        // A constant, not a variable: the critical section below captures it, and a captured variable
        // is retained and released around the call that reads it. A keyed effect's key and policy are
        // read by its record, straight from the producer (a local copy here retained the key once more).
        let cancelKeys = effect?.directiveBox?.cancelKeys
        // The producer moves into the record (the caller gives it up): no reference counting for it.
        // The record goes into the critical section unretained (this frame holds `prepared`): captured
        // as a reference, it was retained and released around it.
        let prepared: EffectRecord<State, Input>?
        let preparedLink: Unmanaged<EffectRecord<State, Input>>?
        if cancelKeys == nil, let producer = effect.take() {
            let record = EffectRecordFields.makeRecord(engine: self, effect: producer)
            prepared = record
            preparedLink = .passUnretained(record)
        } else {
            (prepared, preparedLink) = (nil, nil)
        }
        var cancelled = CancelledEffects<State, Input>()
        var decision = EffectDecision.none
        var result = critical {
            $0.commitSuccess(
                pending, prepared: preparedLink, cancelKeys: cancelKeys, equalities: nil,
                mayHaveRootLatest: &mayHaveRootLatest, cancelled: &cancelled, decision: &decision
            )
        }
        if case .compareKeys = result {
            result = commitComparingKeys(
                pending, prepared: preparedLink, cancelKeys: cancelKeys, cancelled: &cancelled, decision: &decision)
        }
        if case .aborted = result {
            prepared?.lifetime.end()
            return
        }
        if case .committedSendingCancellations = result {
            // Sent before the lifetimes end: their cleanup is user code, and must not run while this
            // thread holds the emitter role, or other threads' effect events would wait for it.
            for effect in cancelled {
                effectEventsCore.sendValue { Self.cancellation(of: effect, by: pending.input) }
            }
            finishEmitting()
        }
        if !cancelled.isEmpty {  // the usual case skips making an iterator (it retains the effects)
            for effect in cancelled {
                effect.record.lifetime.end()
            }
        }
        state = toState
        stateStorage.set(toState)
        repliesCore.send(.value(.success(pending.input, from, toState)))
        guard let record = consume prepared else { return }
        switch decision {
        case .none, .wait:
            break
        case .start:
            // Decided here, after the reply: nothing can end this effect's lifetime before it starts
            // (this thread holds the processing role). A termination asked for meanwhile, by an
            // observer of the reply or of this event, is performed after this input: it untracks the
            // effect at once, then ends its lifetime and reports it cancelled once it has started.
            emit(record, .started(by: pending.input))
            startCommitted(record)
            if let value = heldValue.take() {
                // This frame's reference to the record moves into the held input.
                held = PendingInput(input: value, origin: consume record)
                if !isProcessingHeldInputs { processHeldInputs() }
            }
        case .drop:
            record.lifetime.end()
            emit(record, .cancelled(.dropped(by: pending.input)))
        }
    }

    /// Commits again after a commit found keys that only their `==` can tell apart (see
    /// `KeyEqualities`): takes the candidates, compares them here, with no lock held, then commits with
    /// what it found. The candidates are released here too, after the lock.
    @usableFromInline @inline(never)
    func commitComparingKeys(
        _ pending: PendingInput<State, Input>,
        prepared: Unmanaged<EffectRecord<State, Input>>?,
        cancelKeys: [EffectKey]?,
        cancelled: inout CancelledEffects<State, Input>,
        decision: inout EffectDecision
    ) -> CommitResult {
        let candidates = critical { machine in
            defer { machine.undecidedKeys = [] }  // a copy goes out: nothing is freed here
            return machine.undecidedKeys
        }
        var keys = cancelKeys ?? []
        if let key = prepared?.takeUnretainedValue().key { keys.append(key) }
        // User code: each key's `==`.
        let equalities = KeyEqualities(comparing: keys, with: candidates)
        let result = critical {
            $0.commitSuccess(
                pending, prepared: prepared, cancelKeys: cancelKeys, equalities: equalities,
                mayHaveRootLatest: &mayHaveRootLatest, cancelled: &cancelled, decision: &decision
            )
        }
        precondition(
            result != .compareKeys,
            "Internal inconsistency: the engine's key table changed while the processing thread compared keys")
        return result
    }

    /// The event of `effect`'s cancellation by the successful input `input`.
    @inlinable
    static func cancellation(of effect: CancelledEffect<State, Input>, by input: Input) -> EffectEvent<Input> {
        let cause: EffectCancellation<Input> = effect.byCancelRow ? .cancelled(by: input) : .replaced(by: input)
        return EffectEvent(id: effect.record.id, key: effect.record.key, kind: .cancelled(cause))
    }

    // MARK: Effect events (see `EffectEventGate`)

    /// Sends the event `kind` of `record`, decided now by the thread holding the processing role (an
    /// effect's start or drop): nowhere if it would reach nobody (see `EffectEventGate`); else at once
    /// if it can take the emitter role (building the event only if `effectEvents` has an observer: an
    /// event retains its key), else queued for the thread that holds it.
    @inlinable
    func emit(_ record: EffectRecord<State, Input>, _ kind: EffectEvent<Input>.Kind) {
        if EffectEventGate.reachesNobody(gate: eventGate, events: effectEventsCore) { return }
        if eventGate.compareExchange(expected: 0, desired: EffectEventGate.emitting) {
            effectEventsCore.sendValue { EffectEvent(id: record.id, key: record.key, kind: kind) }
            finishEmitting()
            return
        }
        sendInOrder(.value(EffectEvent(id: record.id, key: record.key, kind: kind)))
    }

    /// Sends `event`, decided by the caller, after every effect event decided before it: takes the
    /// emitter role under the lock or queues it there.
    @inlinable
    func sendInOrder(_ event: Event<EffectEvent<Input>, Never>) {
        let claimed = critical { machine -> Bool in
            if machine.claimEmitter() { return true }
            machine.queue(event)
            return false
        }
        if claimed {
            effectEventsCore.send(event)
            finishEmitting()
        }
    }

    /// Gives up the emitter role after sending, once the events queued meanwhile are sent too.
    @inlinable @inline(__always)
    func finishEmitting() {
        if eventGate.compareExchange(expected: EffectEventGate.emitting, desired: 0) { return }
        sendQueuedEffectEvents()
    }

    /// The slow path of `finishEmitting()`: other threads queued events while this one sent.
    @usableFromInline
    func sendQueuedEffectEvents() {
        while let event = critical({ $0.nextQueuedEffectEvent() }) {
            effectEventsCore.send(event)
        }
    }

    // MARK: The critical section

    /// Runs `body` in the engine's critical section. In debug builds, then checks the machine's
    /// invariants if asked to (`EngineStateMachine.checksInvariants`), before the lock is released.
    @inlinable @inline(__always)
    func critical<Result>(_ body: (inout EngineStateMachine<State, Input>) throws -> Result) rethrows -> Result {
        #if DEBUG
            try machine.withCriticalRegion { machine in
                let result = try body(&machine)
                if machine.checksInvariants { machine.checkInvariants() }
                return result
            }
        #else
            try machine.withCriticalRegion(body)
        #endif
    }

    // MARK: Effects

    /// Starts the effect of `record`, unless it was cancelled before it could start (its lifetime has
    /// ended). Its observer is its record's (see `EffectRecord.makeObserver()`).
    @inlinable
    func start(_ record: EffectRecord<State, Input>) {
        run(record, ifNotCancelled: !record.hasEnded)
    }

    /// Starts the effect of `record`, which this thread has just committed, holding the processing
    /// role: nothing can have cancelled it yet, since only the role holder decides a cancellation (a
    /// `.latest` replacement, a `.cancel` row, or a termination, performed by the role holder after
    /// the input in hand). So, unlike `start(_:)`, it skips reading the lifetime under its lock.
    ///
    /// While its start handler runs, the first value it sends on this thread may be held instead of
    /// queued (see `held`).
    @inlinable @inline(__always)
    func startCommitted(_ record: EffectRecord<State, Input>) {
        assert(!record.hasEnded, "Internal inconsistency: a committed effect was cancelled before it started")
        guard let effect = record.takeEffect() else { return }
        runningLink = .passUnretained(record)
        runningHasEnded = false
        runnerGate.store(currentThreadIdentity())
        effect.run(record.makeObserver(), lifetime: record)
        runnerGate.store(0)
        runningLink = nil
    }

    /// Whether this thread is running the start handler of an effect it has just committed (see
    /// `startCommitted(_:)`), holding the processing role.
    @inlinable @inline(__always)
    var isRunnerThread: Bool {
        runnerGate.load() == currentThreadIdentity()
    }

    /// Whether this thread is running the start handler of `record` (see `startCommitted(_:)`).
    @inlinable @inline(__always)
    func isRunningStartHandler(of record: EffectRecord<State, Input>) -> Bool {
        // The identity first: only the processing role reads `runningLink`.
        isRunnerThread && isRunning(record)
    }

    /// Whether `record` is the effect whose start handler the processing role is running. Only for the
    /// thread holding that role (see `runnerGate`).
    @inlinable @inline(__always)
    func isRunning(_ record: EffectRecord<State, Input>) -> Bool {
        runningLink?.toOpaque() == Unmanaged.passUnretained(record).toOpaque()
    }

    /// Holds `input`, sent by the effect of `record`, for the processing role to process once the
    /// start handler returns (see `held`), if this thread is running that handler, the effect has not
    /// ended, no value is held yet and nothing is queued. Returns false if it did not.
    @inlinable
    func hold(_ input: Input, from record: EffectRecord<State, Input>) -> Bool {
        guard isRunningStartHandler(of: record), !runningHasEnded, heldValue == nil,
            gate.load() == ProcessingGate.processing
        else { return false }
        assert(held == nil, "Internal inconsistency: a value held while another waits")
        heldValue = input
        heldGate.storeSequentially(EngineStateMachine<State, Input>.heldWord(naming: record))
        return true
    }

    /// Takes the producer out of `record` (the thread that starts an effect is the only one that reads
    /// it) and, if `notCancelled`, runs it with the record's observer and the record as its lifetime.
    @inlinable @inline(__always)
    func run(_ record: EffectRecord<State, Input>, ifNotCancelled notCancelled: Bool) {
        guard let effect = record.takeEffect(), notCancelled else { return }
        effect.run(record.makeObserver(), lifetime: record)
    }

    /// Sends `input` as if the running effect `id` had sent it; dropped if it is not tracked, has ended
    /// or waits for its key (see `EngineStateMachine.send(_:from:)`).
    @usableFromInline
    func send(_ input: Input, asIfFromEffect id: EffectID) {
        guard let record = critical({ $0.tracked.record(withID: id) }) else { return }
        send(input, from: record)
    }

    /// The effect of `record` ended (or its observer was released), on this thread; `onRunner` is
    /// `isRunnerThread`, read by the caller.
    @inlinable
    func effectEnded(_ record: EffectRecord<State, Input>, onRunner: Bool) {
        if onRunner, isRunning(record) {
            runningHasEnded = true  // its later values are dropped, through the usual path
        }
        let (ended, next, completeReplies, sends) = critical { machine in
            let (ended, next, completeReplies) = machine.effectEnded(record, onRunner: onRunner)
            guard ended, !machine.effectEventsReachNobody() else { return (ended, next, completeReplies, false) }
            // Decided in the critical section that counts the effect out, so that the end of
            // `effectEvents`, decided later, comes after it.
            if machine.claimEmitter() { return (ended, next, completeReplies, true) }
            machine.queue(.value(EffectEvent(id: record.id, key: record.key, kind: .ended)))
            if let next {
                let successor = next.record
                machine.queue(.value(EffectEvent(id: successor.id, key: successor.key, kind: .started(by: next.input))))
            }
            return (ended, next, completeReplies, false)
        }
        guard ended else { return }
        if sends {
            // Sent before the lifetime ends: its cleanup is user code, and must not run while this
            // thread holds the emitter role (see `process(_:)`).
            effectEventsCore.sendValue { EffectEvent(id: record.id, key: record.key, kind: .ended) }
            if let next {
                let successor = next.record
                effectEventsCore.sendValue {
                    EffectEvent(id: successor.id, key: successor.key, kind: .started(by: next.input))
                }
            }
            finishEmitting()
        }
        record.lifetime.end()
        if let next {
            // A `.queue` effect whose turn has come starts here, on the thread where its predecessor
            // ended (not at all if a cancellation ended its lifetime meanwhile).
            start(next.record)
        }
        if completeReplies { complete() }
    }

    /// Every input has been processed and every effect has ended after the input completed.
    @inlinable
    func complete() {
        repliesInput.sendCompleted()
        endEffectEvents(with: .completed)
    }

    /// The number of effects running now (started, not ended, not cancelled); effects waiting for
    /// their key do not count.
    @usableFromInline
    var runningEffectCount: Int {
        critical { $0.runningEffects - $0.waitingEffects }
    }

    // MARK: Termination

    /// The input signal completed: outside inputs stop; replies complete once every effect has ended.
    @usableFromInline
    func inputCompleted() {
        if critical({ $0.inputCompleted() }) {
            complete()
        }
    }

    /// The input signal was interrupted: effects are disposed, then replies are interrupted.
    @usableFromInline
    func inputInterrupted() {
        terminate(.interrupted)
    }

    /// The automaton was released: replies complete, then effects are disposed, then state completes,
    /// then `token` is disposed (ending the automaton's `lifetime`): here, or, if another thread is
    /// processing, by that thread once it has performed the termination.
    @usableFromInline
    func release(endingAfterwards token: Lifetime.Token) {
        if let token = critical({ $0.keepUntilTerminated(token) }) {
            token.dispose()  // the input was interrupted, and that termination is done
            return
        }
        terminate(.released)
    }

    /// Stops the automaton. Performed here if no other thread is processing; otherwise by that thread,
    /// after the input it is processing (see `EngineStateMachine.terminate(_:)`).
    @usableFromInline
    func terminate(_ termination: Termination) {
        guard let effects = critical({ $0.terminate(termination) }) else { return }
        perform(termination, cancelling: effects)
        finishTermination()
    }

    /// Records that the termination has been performed and gives up the processing role; then ends
    /// the released automaton's lifetime, if it was released.
    @usableFromInline
    func finishTermination() {
        critical { $0.finishTermination() }?.dispose()
    }

    /// Ends the signals and disposes the effects, in the order `termination` prescribes. Run by the
    /// holder of the processing role.
    @usableFromInline
    func perform(_ termination: Termination, cancelling effects: CancelledEffects<State, Input>) {
        let released = mapping
        mapping = .passRetained(TransitionBox { _, _, _, _ in false })
        defer { released.release() }
        switch termination {
        case .interrupted:
            cancel(effects, .interrupted)
            repliesInput.sendInterrupted()
            endEffectEvents(with: .interrupted)
            // It can never change again; its observers are let go of now, not at the release (which
            // finds the automaton terminated and performs nothing).
            stateStorage.complete()
        case .released:
            repliesInput.sendCompleted()
            cancel(effects, .released)
            endEffectEvents(with: .completed)
            stateStorage.complete()
        }
    }

    /// Reports the cancellation of `effects`, then ends their lifetimes. Every effect event decided
    /// before (an end on another thread included) was queued before these. The events go first, as on
    /// every other path: a lifetime's cleanup is user code, and must not run while this thread holds
    /// the emitter role, nor hold up the events of other threads.
    @usableFromInline
    func cancel(_ effects: CancelledEffects<State, Input>, _ cause: EffectCancellation<Input>) {
        guard !effects.isEmpty else { return }
        defer {
            for effect in effects {
                effect.record.lifetime.end()
            }
        }
        let claimed = critical { machine -> Bool in
            if machine.claimEmitter() { return true }
            for effect in effects {
                machine.queue(
                    .value(EffectEvent(id: effect.record.id, key: effect.record.key, kind: .cancelled(cause))))
            }
            return false
        }
        if claimed {
            for effect in effects {
                effectEventsCore.send(
                    .value(EffectEvent(id: effect.record.id, key: effect.record.key, kind: .cancelled(cause))))
            }
            finishEmitting()
        }
    }

    /// Ends `effectEvents`, after every effect event decided before. The machine is terminated or has
    /// completed, so none can be decided after this one.
    @usableFromInline
    func endEffectEvents(with terminal: Event<EffectEvent<Input>, Never>) {
        sendInOrder(terminal)
    }
}

/// The engine's mapping, in an object of its own so that the engine can hold it unretained (see
/// `AutomatonEngine.mapping`).
@usableFromInline
final class TransitionBox<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let transition: AutomatonEngine<State, Input>.Transition

    @inlinable
    init(_ transition: @escaping AutomatonEngine<State, Input>.Transition) {
        self.transition = transition
    }
}
