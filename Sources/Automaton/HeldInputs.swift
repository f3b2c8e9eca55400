import Signals

// Held inputs: the runner and held roles, a fast path for the synchronous feedback.
//
// An effect's start handler that sends a value at once, on the thread that started it (a
// `SignalProducer(value:)`, a step of a feedback chain), would otherwise queue it under the lock, and
// that thread would take it back out under the lock as soon as the handler returns. Instead, the
// first such value is held by the processing role itself (`AutomatonEngine.held`), with no lock, and
// processed right after the handler returns, before anything queued.
//
// - It is held only if nothing is queued then (the gate's `blocked` bit is clear), so it comes before
//   any input queued later, as it would have through the queue.
// - It is not counted in its effect's `pendingInputs`; instead, the held word (`heldGate`) names the
//   effect while the value waits, and the machine forgets no effect that word names
//   (`EngineStateMachine.forgetIfFinished`): the effect stays tracked, with its place in the tree.
// - If anything else happened meanwhile (an input queued, a termination asked for, an effect ended on
//   another thread: each sets `blocked`), the value goes to the front of the queue under the lock,
//   counted as usual (`EngineStateMachine.queueHeld`), and the usual path takes over.
// - The value of a `SignalProducer(value:)` effect run with no record
//   (`AutomatonEngine.commitKnownValue`) is held the same way, with no origin and no held word: no
//   record is there to keep tracked, and nothing can cancel an effect that has already ended.
//
// Who owns what: `runnerGate` (the identity of the thread running a just-committed effect's start
// handler) is written by the processing role and read by any thread; `heldGate` is written by the
// processing role and read under the lock (sequentially consistent, against `blocked` in `gate`: see
// `EngineStateMachine.effectEnded(_:onRunner:)`); `runningLink`, `runningHasEnded`, `held`,
// `heldValue` and `isProcessingHeldInputs` belong to the processing role. Checked by
// `Verification/HeldInput.pml`.
//
// What it saves (callgrind, instructions per event): chain 2,955 -> 2,853, W3 3,346 -> 3,201 when it
// came in at `9305169`; starting a committed effect without reading its lifetime under the lock
// (`startCommitted(_:)`), W3 3,666 -> 3,576 at `3a636c7`; telling an end during the start handler
// without the lifetime's lock (`EffectRecord.effectEnded()`), chain 33 -> 29 atomic operations at
// `6c614f5`. Without this file, every such value would take the usual path: queued under the lock.

extension EngineStateMachine {
    /// The held word that names `record`: its address (never 0). The held input keeps the record
    /// alive while the word names it, so no other record can have that address meanwhile.
    @inlinable
    static func heldWord(naming record: Record) -> UInt {
        UInt(bitPattern: ObjectIdentifier(record))
    }

    /// Whether `record`'s value is the held one (see `heldGate`).
    @inlinable
    func holdsValue(of record: Record) -> Bool {
        heldGate.loadSequentially() == Self.heldWord(naming: record)
    }

    /// The held value `pending` (see the top of this file) could not be processed at once: it goes to
    /// the front of the queue, counted in its effect's `pendingInputs`, unless its effect is no longer
    /// tracked or the automaton has terminated (then the caller lets it go). The gate is blocked (that
    /// is why it is queued), so the processing role comes for it.
    @inlinable
    mutating func queueHeld(_ pending: PendingInput<State, Input>) {
        heldGate.store(0)
        guard phase != .terminated else { return }
        // No origin: the value of an effect run as its transition was made (see
        // `AutomatonEngine.commitKnownValue`), which nothing tracks and nothing can cancel.
        if let origin = pending.origin {
            guard origin.isTracked else { return }
            origin.pendingInputs += 1
        }
        queue.prepend(pending)
    }
}

extension EngineStateMachine {
    /// Queues the value of an effect run with no record (`AutomatonEngine.commitKnownValue`) behind
    /// the inputs queued during its transition's reply, as the usual path's start handler would have
    /// sent it (an effect's input, so still processed once the input signal has completed). The caller
    /// holds the processing role, so the gate's give-back is already blocked. Returns the value if the
    /// automaton has terminated, to be released after the lock.
    @inlinable
    mutating func queueKnownValue(_ pending: PendingInput<State, Input>) -> PendingInput<State, Input>? {
        guard phase != .terminated else { return pending }
        let taken = gate.takeBit(ProcessingGate.processing, orSet: ProcessingGate.blocked)
        assert(!taken, "Internal inconsistency: an effect's value queued by a thread without the processing role")
        queue.append(pending)
        return nil
    }
}

extension AutomatonEngine {
    /// Processes the value an effect's start handler sent at once (see `held`), then the one that
    /// value's effect sent, and so on, in a loop (a feedback chain runs in constant stack); or, if
    /// anything happened meanwhile that the queue must order (the gate is blocked), puts it at the
    /// front of the queue, for `drain()`. Called by `commit` once its effect's start handler has
    /// returned, unless this loop is already running further up the stack.
    @inlinable @inline(never)
    func processHeldInputs() {
        isProcessingHeldInputs = true
        defer { isProcessingHeldInputs = false }
        while let heldInput = held.take() {
            // Sequentially consistent, after the held word was set: if an effect ended on another
            // thread and missed that word, its thread set `blocked` first, and this sees it (see
            // `EngineStateMachine.effectEnded(_:onRunner:)`).
            guard gate.loadSequentially() == ProcessingGate.processing else {
                queueHeld(heldInput.pending)
                return
            }
            process(held: heldInput)
        }
    }

    /// Puts the held `pending` at the front of the queue, counted as usual, or drops it if its effect is
    /// no longer tracked or the automaton has terminated (then released here, after the lock).
    @usableFromInline
    func queueHeld(_ pending: PendingInput<State, Input>) {
        critical { $0.queueHeld(pending) }
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
        guard let effect = record.effect.take() else { return }
        runningLink = .passUnretained(record)
        runningHasEnded = false
        runnerGate.store(currentThreadIdentity())
        if let value = effect.knownValue {
            // A `SignalProducer(value:)`: exactly what its start handler would make its observer do,
            // on this thread, without the observer (an allocation) or the handler (see
            // `runKnownValue(_:of:)`).
            runKnownValue(value, of: record)
        } else {
            effect.run(record.makeObserver(), lifetimeOf: record)
        }
        runnerGate.store(0)
        runningLink = nil
    }

    /// Runs the effect of `record`, a `SignalProducer(value:)`, as its start handler would: its
    /// observer receives `value`, then completes. The observer's events go to the record
    /// (`EffectRecord.receive(_:)`) as they would have, so the value is held or queued, and the end
    /// counted, exactly as on the usual path; what is skipped is package code only: the observer's
    /// allocation and release (which finds the effect ended and does nothing), and the handler's call
    /// (callgrind, W3: see BENCHMARKS.md, "known values").
    @inlinable @inline(__always)
    func runKnownValue(_ value: Input, of record: EffectRecord<State, Input>) {
        record.receive(.value(value))
        record.receive(.completed)
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
}
