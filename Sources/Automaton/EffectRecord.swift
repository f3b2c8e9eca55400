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
/// The record is also the effect's `Lifetime`, which the start handler receives: a `CarryingLifetime`
/// carrying the record's constants (`EffectRecordConstants`) and fields (`EffectRecordFields`), so
/// one allocation for both, with no subclass of `Lifetime` outside the Signals module. The engine
/// reaches them through the accessors below (`record.isTracked`), as if the record were a class of
/// its own.
@usableFromInline
typealias EffectRecord<State: Sendable, Input: Sendable> = CarryingLifetime<
    EffectRecordConstants<State, Input>, EffectRecordFields<State, Input>
>

/// What an `EffectRecord` is created with and keeps unchanged: readable from any thread.
@usableFromInline
struct EffectRecordConstants<State: Sendable, Input: Sendable>: Sendable {
    /// The key of a keyed effect; `nil` for an effect of the tree.
    @usableFromInline let key: EffectKey?
    /// The policy of a keyed effect.
    @usableFromInline let policy: EffectPolicy?
    /// The hash and the storage's identity of `key` (0 and the engine's, unused, for an effect of the
    /// tree): plain values, so that the engine finds the key's group without touching the key's
    /// reference count (see `EngineStateMachine.group(forKeyOf:into:)`).
    @usableFromInline let keyHash: Int
    @usableFromInline let keyIdentity: ObjectIdentifier
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

    /// The constants of the record of `effect`, keyed if it carries a key
    /// (`SignalProducer.keyed(_:_:)`).
    @inlinable
    init(engine: AutomatonEngine<State, Input>, effect: borrowing SignalProducer<Input, Never>) {
        self.engine = engine
        if let directive = effect.directiveBox, let key = directive.key {
            self.key = key
            policy = directive.policy
            (keyHash, keyIdentity) = (key.storage.hash, ObjectIdentifier(key.storage))
        } else {
            (key, policy, keyHash, keyIdentity) = (nil, nil, 0, ObjectIdentifier(engine))
        }
    }
}

/// What an `EffectRecord` changes over its effect's life.
@usableFromInline
struct EffectRecordFields<State: Sendable, Input: Sendable>: CarriedFields, @unchecked Sendable {
    // Safe: `id` is set once, under the engine's lock, before the record is published to any other
    // thread (through that lock or through the effect's observer, created after); `effect` is set at
    // creation and then read and cleared only by the one thread that starts the effect, which got the
    // record through the engine's lock; every other field is read and written only under the engine's
    // lock. So no two accesses overlap (the carrier's `fields` skips the run-time exclusivity checks,
    // which cost more than the rest of an effect's bookkeeping).
    @usableFromInline typealias Record = EffectRecord<State, Input>

    @usableFromInline var id: EffectID = 0
    /// The producer, until the effect starts (or is dropped or cancelled with the record): kept here
    /// so that the engine passes one reference around, not a producer and a record.
    @usableFromInline var effect: SignalProducer<Input, Never>?

    /// Whether the engine still tracks this effect (it may still emit, or has inputs queued).
    @usableFromInline var isTracked = false
    /// Whether the effect has completed by itself.
    @usableFromInline var hasFinished = false
    /// Whether the effect waits for its key's running effects to end (`.queue`), not started yet.
    @usableFromInline var isWaiting = false
    /// Inputs this effect emitted that are still queued.
    @usableFromInline var pendingInputs = 0
    // Links. Every link between records is unretained (`Unmanaged`), so that following, setting and
    // clearing one costs no reference counting: a tracked record is kept alive by what can still act
    // for its effect (see `TrackedEffects`), and a link only ever leads to a tracked record. A
    // record's links are cleared when it is forgotten, and a link to it is moved on before that:
    // `forgetIfFinished` hands its place in the tree to its heir, `cancelChain` forgets a whole chain
    // and its caller then clears the link that led to it, and a key's group unlinks its records
    // before they are forgotten.

    /// Under `.latest`, the effect whose tracked chain this one belongs to: the effect whose input
    /// started it, or, once that one has been forgotten, its nearest live ancestor; `nil` for the
    /// root (an effect of an outside input, or the heir of one).
    @usableFromInline var parentLink: Unmanaged<Record>?
    /// Under `.latest`, the effect started by this effect's latest successful input, if still tracked
    /// (or, once that one has been forgotten, the effect that inherited its place).
    @usableFromInline var latestChildLink: Unmanaged<Record>?
    /// The neighbours in the list of tracked effects, in the order of their identifiers.
    @usableFromInline var previousLink: Unmanaged<Record>?
    @usableFromInline var nextLink: Unmanaged<Record>?
    /// The neighbours among the running effects of the same key, in start order (see `KeyGroup`).
    @usableFromInline var previousOfKey: Unmanaged<Record>?
    @usableFromInline var nextOfKey: Unmanaged<Record>?
    /// The group of a running keyed effect (`nil` once it has left it, and while it waits), so that its
    /// end reaches the group without looking its key up. Unretained: the key table owns its groups,
    /// and removes a group only once empty (or when the engine terminates, after unlinking every record).
    @usableFromInline var groupLink: Unmanaged<KeyGroup<State, Input>>?

    /// The fields of a record just made: not tracked, no link, no producer yet.
    @inlinable @inline(__always)
    init() {}

    /// The record of `effect`, its lifetime guarded by the lock the engine's effects share. The
    /// producer moves into the record: no reference counting for it.
    @inlinable @inline(__always)
    static func makeRecord(
        engine: AutomatonEngine<State, Input>, effect: consuming SignalProducer<Input, Never>
    ) -> Record {
        let record = Record(
            EffectRecordConstants(engine: engine, effect: effect), sharing: engine.unretainedLifetimesLock)
        record.fields.effect = effect
        return record
    }
}

/// The record's own view of its fields' type, so that the extension below can name the record type.
@usableFromInline
protocol EffectRecordPayload: CarriedFields {
    associatedtype State: Sendable
    associatedtype Input: Sendable

    /// `carrier`, typed as the record it is (the identity: `Self` is `EffectRecordFields<State, Input>`).
    static func record(
        _ carrier: CarryingLifetime<EffectRecordConstants<State, Input>, Self>
    ) -> EffectRecord<State, Input>
}

extension EffectRecordFields: EffectRecordPayload {
    @inlinable @inline(__always)
    static func record(_ carrier: Record) -> Record { carrier }
}

extension CarryingLifetime
where Fields: EffectRecordPayload, Constants == EffectRecordConstants<Fields.State, Fields.Input> {
    @usableFromInline typealias Record = EffectRecord<Fields.State, Fields.Input>

    /// This record, typed as such.
    @inlinable @inline(__always)
    var record: Record { Fields.record(self) }

    /// See `EffectRecordFields.id`.
    @inlinable var id: EffectID {
        get { record.fields.id }
        set { record.fields.id = newValue }
    }
    /// See `EffectRecordConstants.key`.
    @inlinable var key: EffectKey? { constants.key }
    /// See `EffectRecordConstants.policy`.
    @inlinable var policy: EffectPolicy? { constants.policy }
    /// See `EffectRecordConstants.keyHash`.
    @inlinable var keyHash: Int { constants.keyHash }
    /// See `EffectRecordConstants.keyIdentity`.
    @inlinable var keyIdentity: ObjectIdentifier { constants.keyIdentity }
    /// Takes the producer out of the record (see `EffectRecordFields.effect`), in place.
    @inlinable
    func takeEffect() -> SignalProducer<Fields.Input, Never>? {
        record.fields.effect.take()
    }
    /// See `EffectRecordConstants.engine`.
    @inlinable var engine: AutomatonEngine<Fields.State, Fields.Input> { constants.engine }
    /// See `EffectRecordFields.isTracked`.
    @inlinable var isTracked: Bool {
        get { record.fields.isTracked }
        set { record.fields.isTracked = newValue }
    }
    /// See `EffectRecordFields.hasFinished`.
    @inlinable var hasFinished: Bool {
        get { record.fields.hasFinished }
        set { record.fields.hasFinished = newValue }
    }
    /// See `EffectRecordFields.isWaiting`.
    @inlinable var isWaiting: Bool {
        get { record.fields.isWaiting }
        set { record.fields.isWaiting = newValue }
    }
    /// See `EffectRecordFields.pendingInputs`.
    @inlinable var pendingInputs: Int {
        get { record.fields.pendingInputs }
        set { record.fields.pendingInputs = newValue }
    }
    /// See `EffectRecordFields.parentLink`.
    @inlinable var parentLink: Unmanaged<Record>? {
        get { record.fields.parentLink }
        set { record.fields.parentLink = newValue }
    }
    /// See `EffectRecordFields.latestChildLink`.
    @inlinable var latestChildLink: Unmanaged<Record>? {
        get { record.fields.latestChildLink }
        set { record.fields.latestChildLink = newValue }
    }
    /// See `EffectRecordFields.previousLink`.
    @inlinable var previousLink: Unmanaged<Record>? {
        get { record.fields.previousLink }
        set { record.fields.previousLink = newValue }
    }
    /// See `EffectRecordFields.nextLink`.
    @inlinable var nextLink: Unmanaged<Record>? {
        get { record.fields.nextLink }
        set { record.fields.nextLink = newValue }
    }
    /// See `EffectRecordFields.previousOfKey`.
    @inlinable var previousOfKey: Unmanaged<Record>? {
        get { record.fields.previousOfKey }
        set { record.fields.previousOfKey = newValue }
    }
    /// See `EffectRecordFields.nextOfKey`.
    @inlinable var nextOfKey: Unmanaged<Record>? {
        get { record.fields.nextOfKey }
        set { record.fields.nextOfKey = newValue }
    }
    /// See `EffectRecordFields.groupLink`.
    @inlinable var groupLink: Unmanaged<KeyGroup<Fields.State, Fields.Input>>? {
        get { record.fields.groupLink }
        set { record.fields.groupLink = newValue }
    }

    /// The effect's lifetime: the record itself. The engine ends it when the effect ends or is
    /// cancelled.
    @inlinable
    var lifetime: Lifetime { self }

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
}

extension EffectRecordFields: CarriedObserverTarget {
    @usableFromInline typealias Constants = EffectRecordConstants<State, Input>

    /// The effect's observer's events (see `EffectRecord.makeObserver()`): every event goes to the
    /// engine.
    @inlinable
    static func receive(_ event: Event<Input, Never>, carriedBy record: Record) {
        switch event {
        case let .value(input):
            if record.engine.hold(input, from: record) { return }
            record.engine.send(input, from: record)
        case .completed, .interrupted:
            record.effectEnded()
        }
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
    static func observerReleased(carriedBy record: Record) {
        let engine = record.engine
        if engine.isRunnerThread && engine.isRunning(record) && engine.runningHasEnded { return }
        _ = record.keepAliveUntilEnded()
    }
}

extension CarryingLifetime
where Fields: EffectRecordPayload, Constants == EffectRecordConstants<Fields.State, Fields.Input> {
    /// The effect's observer: every event goes to the engine. Releasing it does not end the effect:
    /// an effect runs until it ends or is cancelled, as a ReactiveSwift run lives until it terminates
    /// or its disposable is disposed (the engine holds that disposable). A `{ send in ... }` closure
    /// effect ends when its `send` is released because its `send` completes it then (see
    /// `SignalProducer.closureEffect(_:)`).
    @inlinable
    func makeObserver() -> Observer<Fields.Input, Never> {
        Observer(sendingTo: record)
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
        let engine = self.engine
        let record = self.record
        let onRunner = engine.isRunnerThread
        if onRunner && engine.isRunning(record) {
            guard !engine.runningHasEnded else { return }
        } else {
            guard !hasEnded else { return }
        }
        engine.effectEnded(record, onRunner: onRunner)
    }
}
