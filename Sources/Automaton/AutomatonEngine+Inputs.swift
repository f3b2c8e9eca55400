import Signals

// The processing role: one thread at a time processes inputs, in FIFO order, and owns the current
// state. An outside input that finds nothing queued and nobody processing takes the role and gives
// it back with a compare-and-swap each on the gate word, without the lock (a fast path: W2 910 -> 720
// instructions per input when it came in at `e0ae773`); anything else goes through the lock
// (`EngineStateMachine.send`, `next`). An effect-free transition of an outside input with nothing to
// replace then touches nothing shared (`process(_:)`); any other goes through `commit`
// (`AutomatonEngine+Commit.swift`). Checked by `Verification/ProcessingGate.pml`.

/// The bits of the engine's gate word: the lock-free fast path for an outside input.
///
/// - `processing`: one thread holds the processing role (it owns the current state).
/// - `blocked`: the fast path must not be used: inputs are queued, or the input signal has completed, or
///   the automaton has terminated, or an effect ended on a thread other than the processing one while
///   it processed (so that a value it holds goes through the queue: see `HeldInputs.swift`). Set
///   and cleared only under the engine's lock.
///
/// An outside input takes the role with a compare-and-swap from 0 and gives it back with one to 0;
/// either failing sends it through the lock.
@usableFromInline
enum ProcessingGate {
    @inlinable static var processing: UInt { 1 }
    @inlinable static var blocked: UInt { 2 }
}

extension AutomatonEngine {
    /// Processes `input` now if no other input is being processed, or queues it behind the current one.
    @inlinable
    func send(_ input: Input, from origin: EffectRecord<State, Input>?) {
        if origin == nil, gate.compareExchange(expected: 0, desired: ProcessingGate.processing) {
            // Nothing queued, nobody processing, still active: process without the lock.
            process(sent: input)
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

    /// Steps 1-3 of the automaton contract for one input. Runs in the processing role.
    @inlinable
    func process(_ pending: PendingInput<State, Input>) {
        processObserving(pending)
    }

    /// `process(_:)` for an outside input that nobody waits for (`send`'s fast path): a copy of the
    /// body of its own, into which `processObserving(_:)` is inlined with the input's reply target
    /// known to be `nil`, so that a sent input neither tests nor keeps one in a register (without it,
    /// `ask`'s target cost W2 13 instructions per input: BENCHMARKS.md, "Request and reply").
    @inlinable
    func process(sent input: Input) {
        processObserving(PendingInput(input: input, origin: nil))
    }

    /// `process(_:)` for an effect's held value (`processHeldInputs()`, the synchronous feedback): a
    /// copy of its own, as `process(sent:)` is, so that a held value, which nobody waits for, neither
    /// tests nor keeps a reply target (BENCHMARKS.md, "Request and reply"). Not inlined: a third
    /// inlined copy of the body made the others' code worse (W2 236 when `send` shared this one).
    @inlinable @inline(never)
    func process(held: HeldInput<State, Input>) {
        processObserving(held.pending)
    }

    /// The body of the three above: reads the processing observers' word, and the clock only if a
    /// processing observer is attached (a reply listener, a child's run, needs none), then processes.
    /// Always inlined, so that each caller's copy knows what it knows of `pending` (no reply target).
    @inlinable @inline(__always)
    func processObserving(_ pending: PendingInput<State, Input>) {
        let observation = processingObserversWord.load()
        if _slowPath(observation != 0) {
            let start =
                observation & ProcessingObservation.timed != 0 ? ProcessingClock.now : ProcessingClock.untimed
            process(pending, observedSince: start)
        } else {
            process(pending, observedSince: 0)
        }
    }

    /// `process(_:)`, telling the processing observers (see `Automaton.observeProcessing(_:)`) and the
    /// reply listeners if `start`, the instant processing began (`ProcessingClock`; `untimed` if only
    /// reply listeners are attached), is not 0. Inlined into both branches
    /// of the caller, so that an unobserved input's path tests nothing more. (A plain integer: an
    /// optional `ContinuousClock.Instant`, a type of another module, was copied and destroyed through
    /// its value witnesses, and W2 went from 196 to 405 instructions per input.)
    @inlinable @inline(__always)
    func process(_ pending: PendingInput<State, Input>, observedSince start: UInt64) {
        processedInputs &+= 1
        let from = state
        var next: State?
        var effect: SignalProducer<Input, Never>?
        // No mapping once terminated: nothing applies.
        let applies = mapping?._withUnsafeGuaranteedRef { $0.transition(from, pending.input, &next, &effect) } ?? false
        assert(!applies || next != nil, "Internal inconsistency: a mapping applied without writing the next state")
        guard applies, let toState = next else {
            if let origin = pending.origin {
                critical { $0.inputProcessed(from: origin) }
            }
            replies.sendIfMade { .failure(pending.input, from) }
            if start != 0 {
                announceProcessing(.failure(pending.input, from), sentBy: pending.origin?.id, effect: nil, since: start)
            }
            answer(pending, with: .failure(pending.input, from))
            return
        }
        if effect == nil && pending.origin == nil && !mayHaveRootLatest {
            // Nothing shared changes: no effect to start, none to replace, no emitting effect to update.
            state = toState
            stateStorage.set(toState)
            replies.sendIfMade { .success(pending.input, from, toState) }
            if start != 0 {
                announceProcessing(.success(pending.input, from, toState), sentBy: nil, effect: nil, since: start)
            }
            answer(pending, with: .success(pending.input, from, toState))
            return
        }
        commit(pending, from: from, to: toState, effect: consume effect, observedSince: start)
    }
}
