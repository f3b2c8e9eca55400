import Signals

/// An effect's identity in the engine. Identifiers are never reused.
@usableFromInline
typealias EffectID = UInt64

/// One effect the engine tracks: running, waiting for its key, or ended with inputs still queued.
///
/// The record is the engine's whole bookkeeping for an effect, in one allocation: its place in the
/// `.latest` tree, in the list of tracked effects and in its key's group are links between records,
/// so that starting, ending and cancelling an effect touch no dictionary. It is also what the
/// effect's observer captures (one reference: no closure context to allocate), and the input it
/// sends carries it as its origin.
///
/// A record is forgotten (`isTracked` false, every link cleared) as soon as its effect has ended or
/// was cancelled and its queued inputs have been processed, so the engine's bookkeeping is bounded by
/// what is live, never by history. Links between records are unretained, and so is the list of tracked
/// effects: what can still act for an effect keeps its record alive (see `TrackedEffects`).
///
/// The record is also the object behind the effect's `Lifetime` (a subclass of `_LifetimeStorage`),
/// which the start handler receives: one allocation for both.
@usableFromInline
final class EffectRecord<State: Sendable, Input: Sendable>: _LifetimeStorage, ObserverTarget, @unchecked Sendable {
    // Safe: `key`, `policy` and `engine` are set by `init` and never change; `id` is set
    // once, under the engine's lock, before the record is published to any other thread (through that
    // lock or through the effect's observer, created after); `effect` is set by `init` and then read
    // and cleared only by the one thread that starts the effect, which got the record through the
    // engine's lock; every other field is read and written only under the engine's lock. So no two accesses overlap, and the fields skip the run-time
    // exclusivity checks (`@exclusivity(unchecked)`), which cost more than the rest of an effect's
    // bookkeeping.
    @usableFromInline typealias Record = EffectRecord<State, Input>

    @usableFromInline @exclusivity(unchecked) var id: EffectID = 0
    /// The key of a keyed effect; `nil` for an effect of the tree.
    @usableFromInline let key: EffectKey?
    /// The policy of a keyed effect.
    @usableFromInline let policy: EffectPolicy?
    /// The hash and the storage's identity of `key` (0 and the engine's, unused, for an effect of the
    /// tree): plain values, so that the engine finds the key's group without touching the key's
    /// reference count (see `EngineStateMachine.group(forKeyOf:into:)`).
    @usableFromInline let keyHash: Int
    @usableFromInline let keyIdentity: ObjectIdentifier
    /// The producer, until the effect starts (or is dropped or cancelled with the record): kept here
    /// so that the engine passes one reference around, not a producer and a record.
    @usableFromInline @exclusivity(unchecked) var effect: SignalProducer<Input, Never>?
    /// The effect's lifetime: the record itself. The engine ends it when the effect ends or is
    /// cancelled.
    @inlinable
    var lifetime: Lifetime { Lifetime(self) }
    /// Strong, and never cleared, so that reading it from any thread is safe and costs no weak
    /// reference (a weak one gives the engine a side table, and every retain and release of the engine
    /// then takes the slow path: about 450 instructions per effect, at `f06f5f4`). The engine lets go
    /// of a record once
    /// it is forgotten, and of its mapping and its signals' observers once it terminates (see
    /// `AutomatonEngine.mapping`), so no cycle outlives the automaton: an effect that keeps its observer
    /// or its lifetime (this record) after the lifetime has ended (a start handler that ignores its
    /// lifetime) keeps an inert engine (with its last state) until it lets go, never the `Automaton`,
    /// nor what the mapping or an observer captured.
    @usableFromInline let engine: AutomatonEngine<State, Input>

    /// Whether the engine still tracks this effect (it may still emit, or has inputs queued).
    @usableFromInline @exclusivity(unchecked) var isTracked = false
    /// Whether the effect has completed by itself.
    @usableFromInline @exclusivity(unchecked) var hasFinished = false
    /// Whether the effect waits for its key's running effects to end (`.queue`), not started yet.
    @usableFromInline @exclusivity(unchecked) var isWaiting = false
    /// Inputs this effect emitted that are still queued.
    @usableFromInline @exclusivity(unchecked) var pendingInputs = 0
    // Links. Every link between records is unretained (`Unmanaged`), so that following, setting and
    // clearing one costs no reference counting: a tracked record is kept alive by what can still act
    // for its effect (see `TrackedEffects`), and a link only ever leads to a tracked record. A
    // record's links are cleared when it is forgotten, and a link to it is moved on before that: `forgetIfFinished` hands its place in the tree to its heir,
    // `cancelChain` forgets a whole chain and its caller then clears the link that led to it, and a
    // key's group unlinks its records before they are forgotten.

    /// Under `.latest`, the effect whose tracked chain this one belongs to: the effect whose input
    /// started it, or, once that one has been forgotten, its nearest live ancestor; `nil` for the
    /// root (an effect of an outside input, or the heir of one).
    @usableFromInline @exclusivity(unchecked) var parentLink: Unmanaged<Record>?
    /// Under `.latest`, the effect started by this effect's latest successful input, if still tracked
    /// (or, once that one has been forgotten, the effect that inherited its place).
    @usableFromInline @exclusivity(unchecked) var latestChildLink: Unmanaged<Record>?
    /// The neighbours in the list of tracked effects, in the order of their identifiers.
    @usableFromInline @exclusivity(unchecked) var previousLink: Unmanaged<Record>?
    @usableFromInline @exclusivity(unchecked) var nextLink: Unmanaged<Record>?
    /// The neighbours among the running effects of the same key, in start order (see `KeyGroup`).
    @usableFromInline @exclusivity(unchecked) var previousOfKey: Unmanaged<Record>?
    @usableFromInline @exclusivity(unchecked) var nextOfKey: Unmanaged<Record>?
    /// The group of a running keyed effect (`nil` once it has left it, and while it waits), so that its
    /// end reaches the group without looking its key up. Unretained: the key table owns its groups,
    /// and removes a group only once empty (or when the engine terminates, after unlinking every record).
    @usableFromInline @exclusivity(unchecked) var groupLink: Unmanaged<KeyGroup<State, Input>>?

    /// See `parentLink`.
    @inlinable
    var parent: Record? {
        get { parentLink?.takeUnretainedValue() }
        set { parentLink = newValue.map { .passUnretained($0) } }
    }

    /// See `latestChildLink`.
    @inlinable
    var latestChild: Record? {
        get { latestChildLink?.takeUnretainedValue() }
        set { latestChildLink = newValue.map { .passUnretained($0) } }
    }

    /// The record of `effect`, keyed if it carries a key (`SignalProducer.keyed(_:_:)`).
    @inlinable
    init(engine: AutomatonEngine<State, Input>, effect: SignalProducer<Input, Never>) {
        self.engine = engine
        if let directive = effect.directiveBox, let key = directive.key {
            self.key = key
            policy = directive.policy
            (keyHash, keyIdentity) = (key.storage.hash, ObjectIdentifier(key.storage))
        } else {
            (key, policy, keyHash, keyIdentity) = (nil, nil, 0, ObjectIdentifier(engine))
        }
        self.effect = effect
        super.init(sharing: engine.unretainedLifetimesLock)
    }

    /// The effect's observer: every event goes to the engine. Releasing it does not end the effect:
    /// an effect runs until it ends or is cancelled, as a ReactiveSwift run lives until it terminates
    /// or its disposable is disposed (the engine holds that disposable). A `{ send in ... }` closure
    /// effect ends when its `send` is released because its `send` completes it then (see
    /// `SignalProducer.closureEffect(_:)`).
    @inlinable
    func makeObserver() -> Observer<Input, Never> {
        Observer(sendingTo: self)
    }

    @inlinable
    func receive(_ event: Event<Input, Never>) {
        switch event {
        case let .value(input):
            if engine.hold(input, from: self) { return }
            engine.send(input, from: self)
        case .completed, .interrupted:
            effectEnded()
        }
    }

    /// The effect ended, or its observer was released. Once the record's lifetime has ended the engine
    /// is done with the effect (it ends a lifetime only after counting the effect out, or for an effect
    /// it cancelled, dropped or never tracked), so a late end, such as the observer of a cancelled
    /// effect being released, needs neither the engine nor its lock.
    ///
    /// On the thread running this effect's start handler (see `AutomatonEngine.startCommitted(_:)`),
    /// the lifetime's lock is skipped. That thread holds the processing role, so no cancellation or
    /// termination can have ended the lifetime meanwhile (both wait for the input in hand). If the
    /// effect has ended on this thread (`runningHasEnded`), the engine has counted it out: done. If
    /// not, the engine is asked: an end on another thread meanwhile (an observer handed to another
    /// thread) is found out under its lock, and that call changes nothing. A feedback step's completion
    /// and its observer's release then take no lifetime lock each.
    @inlinable
    func effectEnded() {
        let onRunner = engine.isRunnerThread
        if onRunner && engine.isRunning(self) {
            guard !engine.runningHasEnded else { return }
        } else {
            guard !lifetime.hasEnded else { return }
        }
        engine.effectEnded(self, onRunner: onRunner)
    }

    /// The effect's observer was released. If the effect has ended (the usual case: it completed,
    /// then let go), nothing is left to do. If not, nothing can send into it any more, but it still
    /// runs until it is cancelled (its lifetime's cleanup is what it does): the observer was what kept
    /// this record alive, so the record now keeps itself alive until its lifetime ends, which every
    /// cancellation and termination does (see `TrackedEffects`).
    ///
    /// On the thread running this effect's start handler, an effect that ended there is known without
    /// the lifetime's lock (see `effectEnded()`).
    @inlinable
    func observerReleased() {
        if engine.isRunnerThread && engine.isRunning(self) && engine.runningHasEnded { return }
        _ = keepAliveUntilEnded()
    }
}
