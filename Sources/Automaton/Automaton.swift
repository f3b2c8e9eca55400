@_exported import Signals

/// A Mealy machine: a mapping table decides each transition, and effects feed new inputs back.
///
/// For each input, in this order:
/// 1. The mapping is called exactly once with the current state.
/// 2. No match: `replies` sends `.failure(input, fromState)`; the state is unchanged, `state` emits
///    nothing, and no effect is started or cancelled.
/// 3. Match: (under `.latest`, the effects this input replaces are disposed first;) the state becomes
///    `toState` (visible through `state.value`, and `state` emits, even when `toState == fromState`),
///    then `replies` sends `.success(input, fromState, toState)`, then the effect is started, exactly once.
///
/// Inputs are processed one at a time, in FIFO order, whichever thread or effect sent them. An input
/// sent while another is being processed (by an effect as it starts, by a `replies` or `state`
/// observer, or by another thread) is queued and processed by the thread already processing, after the
/// current input. `send` never blocks on user code and processing never recurses, so a synchronous
/// feedback chain of any length runs in constant stack. Every observer sees every reply in the same order.
///
/// Effects run under a strategy. Under `.merge` every effect runs until it ends. Under `.latest` a
/// successful input replaces the effect previously started at its level: an outside input disposes
/// the effect of the previous successful outside input and everything that effect started; an input
/// emitted by effect E disposes only what E's previous inputs started, never E itself. Inputs still
/// queued from a disposed effect are dropped, as are inputs an effect sends after it ended.
///
/// Termination: when the `input` signal completes, outside inputs stop, effects go on and their inputs
/// are processed, and `replies` completes once the last effect has ended. When it is interrupted,
/// running effects are disposed, `replies` is interrupted and `state` completes. When the automaton is
/// released, `replies` completes, then every running effect is disposed, then `state` completes.
/// Nothing in the package keeps an automaton alive: effects and the input signal hold only its
/// internal engine. (An ``ObservableAutomaton``, made by `observable()`, is an owner: it keeps the
/// automaton it shows until it is released itself.)
public final class Automaton<State: Sendable, Input: Sendable>: @unchecked Sendable {
    // Safe: every stored property is immutable. (The box's `madeLifetime` is only read or written with
    // the engine's `lifetimesLock` held, in `lifetime`, or by `deinit`, which nothing can overlap.)
    /// A transition table without effects: the new state, or `nil` if the input does not apply.
    public typealias Mapping = @Sendable (State, Input) -> State?

    /// A transition table with effects: the new state and the effect to start, or `nil` if the input
    /// does not apply. Use `.empty` for no effect.
    public typealias EffectMapping = @Sendable (State, Input) -> (State, SignalProducer<Input, Never>)?

    /// The current state. `state.value` is updated before `replies` announces the transition; its
    /// `signal` emits on every successful transition and completes when the automaton is released or
    /// its input signal is interrupted (after which it can never change).
    public let state: Property<State>

    /// One reply per processed input, `.success` or `.failure`, in processing order. Completes when the
    /// input signal has completed and every effect has ended, or when the automaton is released;
    /// interrupted when the input signal is interrupted.
    ///
    /// The same signal every time. It is made when first read, so an automaton that nobody observes
    /// costs no signal (see the automaton's memory in `BENCHMARKS.md`); an observer hears the replies
    /// made after it was added, whenever the signal was made. Read after the automaton has ended, it has
    /// ended too, and an observer added then hears its end at once.
    @inlinable
    public var replies: Signal<Reply<State, Input>, Never> {
        engine.replies.signal
    }

    /// What happens to effects: each one's start (with the input that started it), its end, and its
    /// cancellation (with the input, key policy, release or interruption that caused it).
    ///
    /// Order: observers hear the events in the order the engine decided them, under its lock, whatever
    /// threads decided them. The events an input causes are decided by the thread processing it, in
    /// processing order with the replies: the effects it cancels before its state and reply; the
    /// effect it starts, or drops (a `.first` key already running), after them. An input whose effect
    /// is an un-keyed `.empty` starts nothing and has no event. An effect's end, and the start of a `.queue`d effect whose turn
    /// came, by the thread on which it ended. They are sent by the thread that decided them, or by
    /// another one already sending this signal's events. Ends when `replies` ends (interrupted or
    /// completed alike), after the last effect's event.
    ///
    /// The same signal every time, made when first read, as `replies`.
    @inlinable
    public var effectEvents: Signal<EffectEvent<Input>, Never> {
        engine.effectEvents.signal
    }

    /// The number of effects running now: started, and neither ended nor cancelled. Effects waiting
    /// for their key (`.queue`) do not count. Thread safe; a snapshot.
    public var runningEffectCount: Int {
        engine.runningEffectCount
    }

    /// How long the automaton lives: it ends when the automaton is released, last, after `replies` and
    /// `state` have completed and its effects were disposed. Bindings to the automaton
    /// (`automaton <~ source`) end with it.
    ///
    /// The same lifetime every time. It is made when first read (an automaton whose lifetime nobody
    /// reads costs none), so it is never read already ended: reading it takes the automaton, which is
    /// alive. Thread safe.
    @inlinable
    public var lifetime: Lifetime {
        engine.lifetimesLock.withLock {
            if let made = box.madeLifetime { return made }
            // With a lock of its own, not the one the engine gives its effects' lifetimes (the state
            // property's, which lives in the property's storage): holding that lock would hold the
            // storage, and a state that keeps the automaton's lifetime would then keep itself (a
            // leak; `StateStorageReleaseTests`). Made under `lifetimesLock` (the state property's lock, not
            // the engine's machine lock): allocations, no user code.
            let lifetime = Lifetime()
            box.madeLifetime = lifetime
            return lifetime
        }
    }

    @usableFromInline let engine: AutomatonEngine<State, Input>
    /// The mapping (for `graph`: the engine lets go of its reference when it terminates), the
    /// engine's release and the made `lifetime`, in the object the engine holds the mapping in (see
    /// `TransitionBox`).
    @usableFromInline let box: TransitionBox<State, Input>
    @usableFromInline let inputObservation: Disposable?

    /// The mapping, for `graph`.
    @inlinable
    var transition: AutomatonEngine<State, Input>.Transition { box.transition }

    /// An automaton without effects, fed by `input` and by `send(_:)`.
    @inlinable
    public convenience init(state: State, input: Signal<Input, Never>, mapping: @escaping Mapping) {
        self.init(state: state, input: input, transition: Self.transition(from: mapping), strategy: .merge)
    }

    /// An automaton whose transitions may start effects, fed by `input` and by `send(_:)`.
    ///
    /// - Parameters:
    ///   - state: the initial state, the value of `state` until the first successful input.
    ///   - input: the outside inputs, observed from now on, queued with those sent by `send(_:)`. When
    ///     it completes, outside inputs stop and `replies` completes once the last effect has ended;
    ///     when it is interrupted, running effects are disposed and `replies` is interrupted.
    ///   - mapping: the next state and the effect to start (`.empty` for none), or `nil` if the input
    ///     does not apply in that state. Called exactly once per input, on the processing thread, with
    ///     no lock held: it must be pure and only build the effect, which the automaton starts after
    ///     the transition.
    ///   - strategy: `.merge` (every effect runs until it ends) or `.latest` (a successful
    ///     input replaces the effect previously started at its level).
    @inlinable
    public convenience init(
        state: State,
        input: Signal<Input, Never>,
        mapping: @escaping EffectMapping,
        strategy: AutomatonStrategy = .merge
    ) {
        self.init(state: state, input: input, transition: Self.transition(from: mapping), strategy: strategy)
    }

    /// An automaton without effects, fed only by `send(_:)`.
    @inlinable
    public convenience init(state: State, mapping: @escaping Mapping) {
        self.init(state: state, input: nil, transition: Self.transition(from: mapping), strategy: .merge)
    }

    /// An automaton whose transitions may start effects, fed only by `send(_:)`. See
    /// `init(state:input:mapping:strategy:)`.
    @inlinable
    public convenience init(state: State, mapping: @escaping EffectMapping, strategy: AutomatonStrategy = .merge) {
        self.init(state: state, input: nil, transition: Self.transition(from: mapping), strategy: strategy)
    }

    // Inlinable, like the convenience initializers, so that the closures it creates are specialized for
    // the caller's `State` and `Input` and run without generic metadata lookups on every input.
    @inlinable
    init(
        state: State,
        input: Signal<Input, Never>?,
        transition: @escaping AutomatonEngine<State, Input>.Transition,
        strategy: AutomatonStrategy,
        initialEffects: [SignalProducer<Input, Never>] = []
    ) {
        let box = TransitionBox(
            transition, releaseEngine: { engine, lifetime in engine.release(endingAfterwards: lifetime) })
        let engine = AutomatonEngine(state: state, mapping: box, strategy: strategy)
        self.engine = engine
        self.box = box
        self.state = Property(storage: engine.stateStorage)
        // The state-scoped effects of the initial state, before any input can come.
        engine.startInitial(initialEffects)
        // Strong: `deinit` disposes the observation, so the input signal holds the engine only while
        // the automaton lives. A weak reference would give the engine a side table, and every retain
        // and release of the engine would then take the slow path (see `EffectRecord.engine`).
        self.inputObservation = input?.observe { event in
            switch event {
            case let .value(value): engine.send(value, from: nil)
            case .completed: engine.inputCompleted()
            case .interrupted: engine.inputInterrupted()
            }
        }
    }

    @inlinable
    static func transition(from mapping: @escaping EffectMapping) -> AutomatonEngine<State, Input>.Transition {
        { state, input, next, nextEffect in
            guard let (toState, effect) = mapping(state, input) else { return false }
            next = toState
            if !effect.startsNothing { nextEffect = effect }
            return true
        }
    }

    @inlinable
    static func transition(from mapping: @escaping Mapping) -> AutomatonEngine<State, Input>.Transition {
        { state, input, next, _ in
            guard let toState = mapping(state, input) else { return false }
            next = toState
            return true
        }
    }

    deinit {
        inputObservation?.dispose()
        // The engine ends the lifetime after the termination, which another thread may perform later.
        box.releaseEngine(engine, box.madeLifetime)
    }

    /// Sends an outside input, exactly as if it came through `input`.
    ///
    /// Thread safe. If no input is being processed, this one is processed on the calling thread before
    /// `send` returns, together with any input queued meanwhile; otherwise it is queued and processed
    /// by the thread already processing, and `send` returns at once. Ignored after the input signal
    /// completed or was interrupted.
    ///
    /// One difference in timing: the `input` signal is a `Signal`, so a value sent into it while it is
    /// delivering (for example from a `replies` observer, while the automaton processes a value that
    /// came through `input`) waits in that signal until its current delivery returns, that is, until
    /// the automaton has processed everything already queued. `send` queues the input in the
    /// automaton at once instead. From inside observers and effects, prefer `send`.
    @inlinable
    public func send(_ input: Input) {
        engine.send(input, from: nil)
    }

    /// A function that sends an outside input to this automaton, exactly as `send(_:)`, without keeping
    /// the automaton alive: once the automaton is released, calling it does nothing.
    ///
    /// Use it to send from `replies` or `state` observers and from effects, which the automaton keeps
    /// alive: an observer that captures the automaton itself makes a retain cycle that keeps it, its
    /// mapping and its effects alive for as long as the observed signal lives.
    ///
    /// ```swift
    /// let send = automaton.sender
    /// automaton.replies.observeValues { reply in
    ///     if case .failure(.retry, _) = reply { send(.giveUp) }
    /// }
    /// ```
    public var sender: @Sendable (Input) -> Void {
        // Weak to the automaton, not to its engine (see `init`), and only while the engine is read: a
        // strong reference to the automaton held through the whole send would defer its release,
        // and so its termination, until the send and every input it drains had been processed.
        { [weak self] input in
            guard let engine = self?.engine else { return }
            engine.send(input, from: nil)
        }
    }

    /// Sends `input` as if the running effect `effectID` had sent it: it belongs to that effect's level
    /// of the `.latest` tree, and is dropped if that effect has ended or was cancelled. For test
    /// harnesses.
    package func send(_ input: Input, asIfFromEffect effectID: UInt64) {
        engine.send(input, asIfFromEffect: effectID)
    }

    /// Whether the engine checks its invariants after every critical section (see
    /// `EngineStateMachine.checkInvariants()`), stopping the process with a message that names a broken
    /// one. For tests; debug builds only: in release builds it reads false and setting it does nothing.
    /// `AUTOMATON_CHECK_INVARIANTS=1` in the environment turns it on for every automaton.
    package var checksInvariants: Bool {
        get {
            #if DEBUG
                engine.critical { $0.checksInvariants }
            #else
                false
            #endif
        }
        set {
            #if DEBUG
                engine.critical { $0.checksInvariants = newValue }
            #endif
        }
    }

    /// How many effects the engine tracks: those running, and those that have ended but whose emitted
    /// inputs are still queued. Bounded by what is live, never by history. For tests.
    package var trackedEffectCount: Int {
        engine.critical { $0.tracked.count }
    }

    /// Which of the automaton's signals have been made: each is made when first read (see `replies`).
    /// For tests.
    package var signalsMade: (replies: Bool, effectEvents: Bool, stateChanges: Bool) {
        (engine.replies.isMade, engine.effectEvents.isMade, engine.stateStorage.isSignalMade)
    }

    /// Whether the engine's state machine has made its occasional parts (keyed effects, the effect-event
    /// outbox, processing observers, a termination left to another thread; see `OccasionalState`).
    /// For tests.
    package var occasionalPartsMade: Bool {
        engine.critical { $0.occasional != nil }
    }

    /// The keys the engine's key table holds (those with running or waiting effects, and those left
    /// idle since the table last swept), and its number of slots. For tests.
    package var keyTableSize: (keys: Int, slots: Int) {
        engine.critical { ($0.groups.count, $0.groups.capacity) }
    }
}
