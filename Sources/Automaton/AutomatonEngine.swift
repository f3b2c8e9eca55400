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
///
/// This is the storage that performs what its state machine (`EngineStateMachine`, behind `machine`'s
/// lock) decides, with no lock held. Its code, one role per file:
/// - `AutomatonEngine+Inputs.swift`: the processing role: taking it, draining the queue, steps 1-3 of
///   one input;
/// - `AutomatonEngine+Commit.swift`: a transition that changes the machine's bookkeeping;
/// - `AutomatonEngine+Effects.swift`: starting effects, and their ends;
/// - `HeldInputs.swift`: the runner and held roles (a fast path: the synchronous feedback);
/// - `EffectEventEmitter.swift`: the emitter role of `effectEvents`;
/// - `EngineTermination.swift`: the input's completion and interruption, the release.
@usableFromInline
final class AutomatonEngine<State: Sendable, Input: Sendable>: @unchecked Sendable {
    // Safe: who owns each field, so that no two accesses overlap:
    // - set by `init`, then immutable: `machine`, the words, the lifetimes' lock, the on-demand
    //   signals (thread safe: their state is a word each), `stateStorage` (itself thread safe);
    // - the processing role, held by one thread at a time and handed over with acquire/release
    //   atomics on `gate` (so each holder sees the previous holder's writes): `state`,
    //   `mayHaveRootLatest`, `mapping` (called and replaced only by the role holder), and the held
    //   inputs' `runningLink`, `runningHasEnded`, `held`, `heldValue`, `isProcessingHeldInputs`;
    // - `machine`: its lock (`critical(_:)`);
    // - the words: atomic operations only (`gate`: `ProcessingGate`; `eventGate`: `EffectEventGate`;
    //   `runnerGate` and `heldGate`: `HeldInputs.swift`).
    /// The mapping with "no effect" spelled as `nil`, so that effect-free transitions start nothing, in
    /// the out-parameter form of a table's rows (see `MappingKeyIndexing.Decide`): a mapping, a table
    /// and its rows pass the result on without copying it through memory at each layer.
    @usableFromInline
    typealias Transition = MappingKeyIndexing<State, Input>.Decide

    /// The mapping, held with one reference of its own and called without retaining it: let go of
    /// (`nil`, which applies to nothing) when the automaton terminates, so that an effect that keeps its
    /// observer (and through it the engine; see `EffectRecord.engine`) keeps nothing the mapping
    /// captured, and a mapping that captures such an effect's observer makes no cycle. Only the role
    /// holder calls or replaces it (the `Automaton` keeps its own reference, for `graph`), so no call
    /// overlaps its release. `Unmanaged`: a variable closure would be retained around every call,
    /// which costs an effect-free input a tenth of its instructions (W2 224 against 250, callgrind at
    /// `f06f5f4`). Optional, not replaced by a mapping that applies to nothing: that one was an
    /// allocation per automaton, 5% of its life ("million create + input + release").
    @usableFromInline @exclusivity(unchecked) var mapping: Unmanaged<TransitionBox<State, Input>>?
    @usableFromInline let machine: Locked<EngineStateMachine<State, Input>>
    /// The engine's seven atomic words, in one allocation: `gate`, `eventGate`, `heldGate`,
    /// `runnerGate`, the words of `effectEvents` and `replies` and `processingObserversWord`, in
    /// that order, are its words, reached unowned (this field keeps them alive; the state machine,
    /// which reaches four, lives in `machine`, which this engine owns). Each is computed from this
    /// field, not stored: the address is the group's plus a constant, one instruction more than a
    /// load, and six stored words were 48 bytes more per automaton, a 160-byte block instead of a
    /// 112-byte one ("bytes per idle automaton", `Benchmarks/run million`).
    @usableFromInline let words: AtomicWordGroup
    /// The gate word (see `ProcessingGate`): stored, unlike the other words, because every input
    /// reads and writes it (computed, it cost an effect-free input 2 to 10 instructions, callgrind).
    @usableFromInline let gate: UnownedAtomicWord
    /// The effect-event word (see `EffectEventGate`).
    @inlinable var eventGate: UnownedAtomicWord { words.word(EngineWord.eventGate) }
    /// The lock every effect's lifetime shares (see `Lifetime.init(sharing:)`), so that an effect's
    /// start allocates one object less, and under which `Automaton.lifetime` is made: the state
    /// property's lock (which lives in the property's storage), so that an automaton has one lock
    /// less, a 48-byte block ("bytes per idle automaton", `Benchmarks/run million`). Sharing it cannot
    /// deadlock: a lifetime holds its lock only to read or change its list, calling nothing outside
    /// `Lifetime.swift`, and the property holds it only in the package's own code of `Signals`, which
    /// never touches a lifetime under it. Its word is the property's (the state change signal's
    /// delivery state), which the lifetimes do not use. The effects' lifetimes hold it unretained
    /// (their records keep the engine, which keeps the storage); the automaton's own lifetime has a
    /// lock of its own, since it may outlive the engine, and a state that keeps it would keep itself.
    @inlinable
    var lifetimesLock: Lock { stateStorage.lock }
    /// `lifetimesLock`, unretained, for the lifetimes (each effect's record keeps the engine, so the
    /// lock outlives them): starting and freeing an effect then costs no reference counting for it.
    /// Made on use, not stored: a field was 8 bytes more per automaton, and a chunk of 16 more.
    @inlinable
    var unretainedLifetimesLock: UnretainedLock { lifetimesLock.unretained }
    @usableFromInline let stateStorage: PropertyStorage<State>
    /// The word of `replies`. The engine stores the words, not the `OnDemandSignal`s they are: its
    /// `deinit` (generic code that nothing specializes) looks up the generic metadata of every field
    /// whose type is built from `State` and `Input` to destroy it, and the two signals cost two
    /// lookups, about 900 instructions per automaton ("million create + input + release").
    @inlinable var repliesWord: UnownedAtomicWord { words.word(EngineWord.replies) }
    /// The word of `effectEvents` (see `repliesWord`).
    @inlinable var effectEventsWord: UnownedAtomicWord { words.word(EngineWord.effectEvents) }
    /// The replies, and their end, sent into a signal made only when `Automaton.replies` is first
    /// read (see `OnDemandSignal`): an automaton that nobody observes costs a handle, a core and a
    /// lock less, and a reply that reaches nobody one load. No input observer either (a release of the
    /// input would interrupt `replies`). Released by `deinit`.
    @inlinable var replies: OnDemandSignal<Reply<State, Input>> { OnDemandSignal(word: repliesWord) }
    /// What happens to effects: sent in processing order with the replies; ends with them. Made on
    /// demand, as `replies`; released by `deinit`.
    @inlinable var effectEvents: OnDemandSignal<EffectEvent<Input>> { OnDemandSignal(word: effectEventsWord) }

    // The runner and held roles: see `HeldInputs.swift`.

    /// The identity of the thread running the start handler of an effect it has just
    /// committed (`startCommitted(_:)`, holding the processing role), or 0. Only that thread finds its
    /// own identity there, so an effect's observer called on any other thread takes the usual path.
    @inlinable var runnerGate: UnownedAtomicWord { words.word(EngineWord.runnerGate) }
    /// The address of the record of the effect whose value is held, or 0 (see `HeldInputs.swift`). Written
    /// by the processing role; read under the lock by whoever may forget that effect.
    @inlinable var heldGate: UnownedAtomicWord { words.word(EngineWord.heldGate) }
    /// The effect whose start handler the processing role is running (see `runnerGate`). Owned by the
    /// processing role; unretained (its observer, alive for the whole call, holds it).
    @usableFromInline @exclusivity(unchecked) var runningLink: Unmanaged<EffectRecord<State, Input>>?
    /// `held` and `heldValue`, stored in one struct: the engine's `deinit` (generic code, never
    /// specialized) looks up the generic metadata of each field whose type is built from `State` and
    /// `Input` to destroy it: `PendingInput<State, Input>?` and `Input?` cost three lookups, about
    /// 1,300 instructions per automaton ("million create + input + release" at cf52ac0); this
    /// struct, one. Owned by the processing role.
    @usableFromInline @exclusivity(unchecked) var heldInputs = HeldInputs<State, Input>()
    /// The held value, with its effect. Owned by the processing role.
    @inlinable var held: HeldInput<State, Input>? {
        get { heldInputs.held }
        _modify { yield &heldInputs.held }
    }
    /// The held value while its effect's start handler runs, before `commit` pairs it with the effect
    /// in `held`, handing over its own reference to the record (`hold` would retain it once more).
    /// Owned by the processing role.
    @inlinable var heldValue: Input? {
        get { heldInputs.value }
        _modify { yield &heldInputs.value }
    }
    /// Whether `processHeldInputs()` is running (further up the stack). Owned by the processing role.
    @usableFromInline @exclusivity(unchecked) var isProcessingHeldInputs = false

    // The small fields last, after the words and references: the engine's fields are laid out in the
    // order they are declared, and a byte between two words costs a word. An engine of the `million`
    // login machine (a one-byte state) is then 87 bytes, a 96-byte block instead of a 112-byte one.

    /// How many inputs the processing role has begun to process: the number of the input in hand
    /// (`InputProcessing.number`). Owned by the processing role.
    @usableFromInline @exclusivity(unchecked) var processedInputs: UInt64 = 0
    /// The current state. Owned by the processing role.
    @usableFromInline @exclusivity(unchecked) var state: State
    /// Under `.latest`, false only if no effect of an outside input is tracked, so that an outside
    /// input without an effect has nothing to replace (see `commitSuccess`). Owned by the processing
    /// role.
    @usableFromInline @exclusivity(unchecked) var mayHaveRootLatest = false
    /// Whether the strategy is `.latest` (the machine's copy is under its lock).
    @usableFromInline let isLatest: Bool
    /// Whether the effect of `runningLink` has ended during its start handler. Owned by the processing
    /// role.
    @usableFromInline @exclusivity(unchecked) var runningHasEnded = false

    @inlinable
    init(state: State, mapping: TransitionBox<State, Input>, strategy: AutomatonStrategy) {
        precondition(
            strategy == .merge || strategy == .latest,
            "Automaton supports the .merge and .latest strategies, not \(strategy). Use .latest to replace running effects, or .merge to keep them all."
        )
        self.mapping = .passRetained(mapping)
        isLatest = strategy == .latest
        self.state = state
        let words = AtomicWordGroup.make(count: EngineWord.count)
        self.words = words
        gate = words.word(EngineWord.gate)
        machine = Locked { EngineStateMachine(isLatest: strategy == .latest, words: UnownedAtomicWordGroup(words)) }
        stateStorage = PropertyStorage.holding(state)
    }

    deinit {
        mapping?.release()
        OnDemandSignalWord.releaseMadeSignal(word: repliesWord)
        OnDemandSignalWord.releaseMadeSignal(word: effectEventsWord)
        // The key table holds its groups by hand; the termination that every automaton's release
        // performs has emptied it and given them back.
        assert(
            critical { $0.groups.isEmpty },
            "Internal inconsistency: an engine freed without its termination")
        freeOccasional()
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
}

/// Where each of the engine's atomic words is in its group (see `AutomatonEngine.words`): one list for
/// the engine and its state machine, which both reach them.
@usableFromInline
enum EngineWord {
    /// The gate word (see `ProcessingGate`).
    @inlinable static var gate: Int { 0 }
    /// The effect-event word (see `EffectEventGate`).
    @inlinable static var eventGate: Int { 1 }
    /// The held word (see `HeldInputs.swift`).
    @inlinable static var heldGate: Int { 2 }
    /// The runner word (see `HeldInputs.swift`).
    @inlinable static var runnerGate: Int { 3 }
    /// The word of `effectEvents` (see `OnDemandSignal`).
    @inlinable static var effectEvents: Int { 4 }
    /// The word of `replies` (see `OnDemandSignal`).
    @inlinable static var replies: Int { 5 }
    /// How many processing observers are attached (see `InputProcessing.swift`).
    @inlinable static var processingObservers: Int { 6 }
    /// How many words the group has.
    @inlinable static var count: Int { 7 }
}

/// The engine's held input (see `AutomatonEngine.heldInputs`).
@usableFromInline
struct HeldInputs<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline var held: HeldInput<State, Input>?
    @usableFromInline var value: Input?

    @inlinable
    init() {}
}

/// An effect's value held by the processing role (see `HeldInputs.swift`): a `PendingInput` without
/// a waiter, since only outside inputs have one, so that the engine stays 8 bytes smaller ("bytes per
/// idle automaton", `Benchmarks/run million`).
@usableFromInline
struct HeldInput<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let input: Input
    @usableFromInline let origin: EffectRecord<State, Input>?

    @inlinable
    init(input: Input, origin: EffectRecord<State, Input>?) {
        self.input = input
        self.origin = origin
    }

    /// The held value as a queued input.
    @inlinable
    var pending: PendingInput<State, Input> {
        PendingInput(input: input, origin: origin)
    }
}

/// The engine's mapping, in an object of its own so that the engine can hold it unretained (see
/// `AutomatonEngine.mapping`), and what else its automaton keeps: the automaton holds this box, not
/// these fields, so that the automaton and the box fit two 64-byte blocks (they were a 96-byte and a
/// 48-byte one: "bytes per idle automaton", `Benchmarks/run million`).
@usableFromInline
final class TransitionBox<State: Sendable, Input: Sendable>: @unchecked Sendable {
    // Safe: every stored property is immutable but `madeLifetime`, which is only read or written with
    // the engine's `lifetimesLock` held (`Automaton.lifetime`), or by the automaton's `deinit`, which
    // nothing can overlap; the box's own `deinit` (on whichever thread lets go of it last: the
    // automaton's, or the engine's termination) destroys it when nothing can read it any more.
    @usableFromInline let transition: AutomatonEngine<State, Input>.Transition
    /// `engine.release(endingAfterwards:)`, made in the automaton's (inlinable) initializer, so
    /// specialized for the caller's `State` and `Input`: the automaton's `deinit`, generic code that
    /// no caller specializes, calls it. Unspecialized, the termination looks up generic metadata at
    /// almost every step, and an automaton's release cost 56,000 instructions (callgrind, "million
    /// create + input + release", at af89f07). It captures nothing, so it costs no allocation.
    @usableFromInline let releaseEngine: @Sendable (AutomatonEngine<State, Input>, Lifetime?) -> Void
    /// The automaton's `lifetime`, once made. Nothing ends it but the engine, after the release's
    /// termination (no `Lifetime.Token`: one object less per automaton; none at all if nobody read it).
    @usableFromInline @exclusivity(unchecked) var madeLifetime: Lifetime?

    @inlinable
    init(
        _ transition: @escaping AutomatonEngine<State, Input>.Transition,
        releaseEngine: @escaping @Sendable (AutomatonEngine<State, Input>, Lifetime?) -> Void
    ) {
        self.transition = transition
        self.releaseEngine = releaseEngine
    }
}
