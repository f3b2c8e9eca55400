import Signals

/// A keyed effect waiting (`.queue`) for its key's running effects to end.
@usableFromInline
struct WaitingEffect<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let record: EffectRecord<State, Input>
    /// The input that succeeded and will have started it.
    @usableFromInline let input: Input

    @inlinable
    init(record: EffectRecord<State, Input>, input: Input) {
        self.record = record
        self.input = input
    }
}

/// The effects of one key: the value of the engine's key table (`EngineStateMachine.groups`).
///
/// A class, so that an effect that ends reaches its group through its record (`EffectRecord.groupLink`)
/// without looking its key up, and so that a group stays in the table, empty, after its last effect
/// ended: the next effect of the key (usually soon, for a key is a role, like a connection attempt)
/// finds it there, and neither inserts nor removes anything. Empty groups are swept out once they are
/// most of the table (`EngineStateMachine.group(for:into:)`).
///
/// Only ever read and changed under the engine's lock, so its fields skip the run-time exclusivity
/// checks.
@usableFromInline
final class KeyGroup<State: Sendable, Input: Sendable>: @unchecked Sendable {
    // Safe: every access is under the engine's lock (see above).
    @usableFromInline typealias Record = EffectRecord<State, Input>

    /// Started and not ended, in start order: a list linked through the records.
    ///
    /// The links are unretained, so that starting and ending a keyed effect costs no reference counting:
    /// a record joins its group only once tracked, and leaves it (`removeRunning`, or when the group is
    /// cancelled or the engine terminates) before it is forgotten, and a tracked record is alive (see
    /// `TrackedEffects`).
    @usableFromInline @exclusivity(unchecked) var firstRunning: Unmanaged<Record>?
    @usableFromInline @exclusivity(unchecked) var lastRunning: Unmanaged<Record>?
    /// Waiting (`.queue`) for the running ones to end, FIFO.
    @usableFromInline @exclusivity(unchecked) var waiting = FIFOQueue<WaitingEffect<State, Input>>()

    @inlinable
    init() {}

    /// No effect of the key runs or waits: the sweep may remove the group.
    @inlinable
    var isEmpty: Bool { firstRunning == nil && waiting.isEmpty }

    @inlinable
    var hasRunning: Bool { firstRunning != nil }

    /// Links `record` last among the running effects, and links the record to this group.
    @inlinable
    func appendRunning(_ record: Record) {
        let link = Unmanaged.passUnretained(record)
        record.previousOfKey = lastRunning
        if let lastRunning {
            lastRunning._withUnsafeGuaranteedRef { $0.nextOfKey = link }
        } else {
            firstRunning = link
        }
        lastRunning = link
        record.groupLink = Unmanaged.passUnretained(self)
    }

    /// Unlinks `record` from the running effects, and from this group.
    @inlinable
    func removeRunning(_ record: Record) {
        let (previous, next) = (record.previousOfKey, record.nextOfKey)
        if let previous {
            previous._withUnsafeGuaranteedRef { $0.nextOfKey = next }
        } else {
            firstRunning = next
        }
        if let next {
            next._withUnsafeGuaranteedRef { $0.previousOfKey = previous }
        } else {
            lastRunning = previous
        }
        record.previousOfKey = nil
        record.nextOfKey = nil
        record.groupLink = nil
    }
}
