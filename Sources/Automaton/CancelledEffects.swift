import Signals

/// Why the engine cancels an effect, as an input's commit decides it (termination reports its own).
@usableFromInline
enum CancellationCause: UInt8, Sendable {
    /// Replaced: under `.latest`, or by a newer `.latest` effect of its key.
    case replaced
    /// By a `.cancel(key)` row.
    case cancelRow
    /// The machine left the states of its state-scoped declaration (`.during`, `.after`).
    case exit
}

/// An effect cancelled by the engine: its record (whose lifetime to end, and whose identifier and key
/// to report), and why.
@usableFromInline
struct CancelledEffect<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let record: EffectRecord<State, Input>
    @usableFromInline let cause: CancellationCause

    @inlinable
    init(_ record: EffectRecord<State, Input>, cause: CancellationCause) {
        self.record = record
        self.cause = cause
    }
}

/// What `CancelledEffects` keeps to be released after the engine's lock.
@usableFromInline
enum Leftover<State: Sendable, Input: Sendable>: Sendable {
    case waiting(WaitingEffect<State, Input>)
    case key(EffectKey)
    case inputs(FIFOQueue<PendingInput<State, Input>>)
}

/// The effects one input cancels: usually none or one, kept inline; an array only beyond one.
@usableFromInline
struct CancelledEffects<State: Sendable, Input: Sendable>: Sendable, Sequence {
    // The arrays are optional so that the usual input, which cancels one effect or none, neither makes
    // nor releases one.
    @usableFromInline var first: CancelledEffect<State, Input>?
    @usableFromInline var rest: [CancelledEffect<State, Input>]?
    /// What must not be released under the engine's lock, so goes out with the rest: the producers of
    /// waiting effects cancelled with them, the keys the key table let go of (a key is a user's
    /// value), and a termination's queued inputs. One array for all, so that the usual input releases
    /// one `nil`, not three.
    @usableFromInline var leftovers: [Leftover<State, Input>]?

    @inlinable
    init() {}

    /// No effect was cancelled (`rest` is only made after `first`; `leftovers` are released with this
    /// value in any case).
    @inlinable
    var isEmpty: Bool { first == nil }

    @inlinable
    mutating func append(_ effect: CancelledEffect<State, Input>) {
        if first == nil {
            first = effect
        } else if rest == nil {
            rest = [effect]
        } else {
            rest!.append(effect)
        }
    }

    /// Keeps `effect`'s producer until these effects are let go of.
    @inlinable
    mutating func keep(_ effect: WaitingEffect<State, Input>) {
        if leftovers == nil { leftovers = [.waiting(effect)] } else { leftovers!.append(.waiting(effect)) }
    }

    /// Keeps the inputs of `queue` until these effects are let go of.
    @inlinable
    mutating func keep(_ queue: FIFOQueue<PendingInput<State, Input>>) {
        guard !queue.isEmpty else { return }
        if leftovers == nil { leftovers = [.inputs(queue)] } else { leftovers!.append(.inputs(queue)) }
    }

    /// Keeps `pending`, the input a termination aborted while it was being processed, ahead of the
    /// inputs that termination dropped from the queue (see `EngineStateMachine.dropAborted(_:)`).
    @inlinable
    mutating func keepFirst(_ pending: PendingInput<State, Input>) {
        var queue = FIFOQueue<PendingInput<State, Input>>()
        queue.append(pending)
        if leftovers == nil { leftovers = [.inputs(queue)] } else { leftovers!.insert(.inputs(queue), at: 0) }
    }

    /// Keeps the keys of `entries` until these effects are let go of, and gives back the table's
    /// reference to each entry's group (a group holds nothing of the user's once it is out of the table).
    @inlinable
    mutating func keepKeys(of entries: [EffectKeyTable<Unmanaged<KeyGroup<State, Input>>>.Entry]) {
        guard !entries.isEmpty else { return }
        if leftovers == nil { leftovers = [] }
        for entry in entries {
            leftovers!.append(.key(entry.key))
            entry.value.release()
        }
    }

    @inlinable
    func makeIterator() -> Iterator {
        Iterator(first: first, rest: rest?.makeIterator())
    }

    @usableFromInline
    struct Iterator: IteratorProtocol {
        @usableFromInline var first: CancelledEffect<State, Input>?
        @usableFromInline var rest: IndexingIterator<[CancelledEffect<State, Input>]>?

        @inlinable
        init(first: CancelledEffect<State, Input>?, rest: IndexingIterator<[CancelledEffect<State, Input>]>?) {
            self.first = first
            self.rest = rest
        }

        @inlinable
        mutating func next() -> CancelledEffect<State, Input>? {
            if let effect = first {
                first = nil
                return effect
            }
            return rest?.next()
        }
    }
}
