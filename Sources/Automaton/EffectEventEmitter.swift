import Signals

// The emitter role of `effectEvents`: who sends the effect events, in the order they were decided,
// without a lock in the common case (one thread). The word (`eventGate`) is shared by the engine
// (lock-free: `emit`, `finishEmitting`) and its state machine (under the lock: `claimEmitter`,
// `nextQueuedEffectEvent`); the outbox (`EngineStateMachine.effectEventOutbox`) is the machine's,
// under the lock. Checked by `Verification/EffectEventEmitter.pml`.
//
// What it saves: the atomic role keeps effect events in order at no lock (`79ef258`: +3% on W4
// against sending them with no ordering at all); skipping events nobody hears
// (`reachesNobody(gate:events:)`) costs two loads instead of two compare-and-swaps (callgrind at
// `4ec1c5d`: chain 2,625 -> 2,604, W3 2,935 -> 2,914, W4 3,401 -> 3,291 instructions per event).

/// The bits of the engine's effect-event word: who sends the events of `effectEvents`.
///
/// - `emitting`: one thread holds the emitter role: it sends the events it decided itself, then the
///   events queued meanwhile (`EngineStateMachine.effectEventOutbox`), in order.
/// - `pending`: events were queued while the role was held. Set only under the engine's lock; it makes
///   the holder's lock-free give-back fail, so it takes the lock and sends them.
///
/// Every effect event is decided under the engine's lock (or, for an effect's start or a `.first`
/// effect's drop, by the thread holding the processing role, which nothing else can decide about
/// before then). The thread deciding it either takes the role then (a compare-and-swap from 0) and sends it at once,
/// or queues it for the holder. So observers hear effect events in the order they were decided,
/// whichever threads decided them, and the common case (one thread) takes no lock to send them.
///
/// An event decided while the word is 0 and `effectEvents` has no observer reaches nobody, and is
/// neither sent nor queued: it costs two loads, not two compare-and-swaps
/// (`reachesNobody(gate:events:)`). No event decided before it can still be on its way (none is
/// held or queued), and every event decided after it is sent or queued as usual, so an observer that
/// attaches meanwhile hears a gap-free run: whatever follows its `observe`. (An effect's start, which
/// the processing role decides without the lock, counts as decided when that thread takes the role,
/// or finds it free with nobody observing: its earlier check that chose the path orders nothing.)
@usableFromInline
enum EffectEventGate {
    @inlinable static var emitting: UInt { 1 }
    @inlinable static var pending: UInt { 2 }

    /// Whether an effect event decided now would reach nobody: nobody holds the emitter role (so every
    /// event decided before has been sent, and none is queued) and `events` has no observer. Called
    /// where the event is decided: under the engine's lock, or by the thread holding the processing
    /// role for an effect's start. The gate is read first: a holder gives the role back after its
    /// sends, so once the word reads 0 the observer list read next is at least as recent as the one
    /// its last send saw.
    @inlinable @inline(__always)
    static func reachesNobody<Input>(gate: UnownedAtomicWord, events: OnDemandSignal<EffectEvent<Input>>) -> Bool {
        gate.load() == 0 && events.isUnobserved
    }
}

extension EngineStateMachine {
    /// For effect events just decided under the lock: takes the emitter role, so the caller sends them
    /// itself, at once, then calls `AutomatonEngine.finishEmitting()`; or, if another thread holds
    /// it, returns false: the caller must `queue` them, in this same critical section.
    @inlinable
    func claimEmitter() -> Bool {
        eventGate.takeBit(EffectEventGate.emitting, orSet: EffectEventGate.pending)
    }

    /// Whether an effect event decided now would reach nobody, so that it need be neither sent nor
    /// queued (see `EffectEventGate`).
    @inlinable @inline(__always)
    func effectEventsReachNobody() -> Bool {
        EffectEventGate.reachesNobody(gate: eventGate, events: effectEvents)
    }

    /// Queues an effect event for the thread holding the emitter role (after `claimEmitter()` failed).
    @inlinable
    mutating func queue(_ event: Event<EffectEvent<Input>, Never>) {
        effectEventOutbox.append(event)
    }

    /// For the emitter, whose lock-free give-back failed: the next queued event to send, or `nil`, and
    /// then the role is given up.
    @inlinable
    mutating func nextQueuedEffectEvent() -> Event<EffectEvent<Input>, Never>? {
        guard let event = occasional?.parts.pointee.effectEventOutbox.removeFirst() else {
            eventGate.store(0)
            return nil
        }
        eventGate.store(EffectEventGate.emitting)  // clears `pending`: later queuers set it again
        return event
    }
}

extension AutomatonEngine {
    /// Sends the event `kind` of `record`, decided now by the thread holding the processing role (an
    /// effect's start or drop): nowhere if it would reach nobody (see `EffectEventGate`); else at once
    /// if it can take the emitter role (building the event only if `effectEvents` has an observer: an
    /// event retains its key), else queued for the thread that holds it.
    @inlinable
    func emit(_ record: EffectRecord<State, Input>, _ kind: EffectEvent<Input>.Kind) {
        if EffectEventGate.reachesNobody(gate: eventGate, events: effectEvents) { return }
        if eventGate.compareExchange(expected: 0, desired: EffectEventGate.emitting) {
            effectEvents.sendValue { EffectEvent(id: record.id, key: record.key, kind: kind) }
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
            effectEvents.send(event)
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
            effectEvents.send(event)
        }
    }
}
