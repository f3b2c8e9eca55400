import Signals

/// The tracked effects, in the order of their identifiers: a list linked through the records.
///
/// The list holds no reference to its records: every tracked record is kept alive by what can still
/// act for its effect, and the engine forgets it, under its lock, while that still holds it:
/// - the frame that commits it (`AutomatonEngine.commit`), until its effect has started, then the
///   held value it sent at once, if any, until that value is processed;
/// - its observer, while the effect keeps it: an end counts the effect out; the observer's release
///   before the effect has ended makes the record keep itself alive until its lifetime ends (see
///   `EffectRecord.observerReleased()`), which the engine does only after counting the effect out;
/// - the inputs it sent that are queued, each counted out as processed (or dropped) while the caller
///   still holds it;
/// - its place among the effects waiting for its key (`WaitingEffect`);
/// - what a cancellation or a termination collects (`CancelledEffects`) before forgetting it.
/// So tracking and forgetting an effect cost no reference counting (two atomic operations per effect
/// fewer), and a record is never freed under the engine's lock.
@usableFromInline
struct TrackedEffects<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline typealias Record = EffectRecord<State, Input>

    /// The first and last tracked records (unretained, as every link).
    @usableFromInline var firstLink: Unmanaged<Record>?
    @usableFromInline var lastLink: Unmanaged<Record>?

    /// How many records are tracked, by a walk (for tests and the invariant checker only). Not
    /// stored: a count was 8 bytes more per automaton, and nothing in the engine reads it (the
    /// running effects are counted by `EngineStateMachine.runningEffects`).
    var count: Int {
        var count = 0
        var current = firstLink
        while let link = current {
            count += 1
            current = link.takeUnretainedValue().nextLink
        }
        return count
    }

    @inlinable
    init() {}

    /// The first tracked record.
    @inlinable
    var first: Record? { firstLink?.takeUnretainedValue() }

    /// Tracks `record` (without a reference to it).
    @inlinable
    mutating func append(_ record: Record) {
        record.isTracked = true
        let link = Unmanaged.passUnretained(record)
        record.previousLink = lastLink
        if let lastLink { lastLink._withUnsafeGuaranteedRef { $0.nextLink = link } } else { firstLink = link }
        lastLink = link
    }

    /// Unlinks `record` and clears its links. The caller holds it.
    @inlinable
    mutating func remove(_ record: Record) {
        // Unlinking an untracked record would rewrite its neighbours' links from stale ones.
        precondition(record.isTracked, "Internal inconsistency: an effect forgotten twice")
        record.isTracked = false
        let (previous, next) = (record.previousLink, record.nextLink)
        if let previous { previous._withUnsafeGuaranteedRef { $0.nextLink = next } } else { firstLink = next }
        if let next { next._withUnsafeGuaranteedRef { $0.previousLink = previous } } else { lastLink = previous }
        record.previousLink = nil
        record.nextLink = nil
        record.parentLink = nil
        record.latestChildLink = nil
    }

    /// The tracked record of `id`, by a walk (for test harnesses only).
    @inlinable
    func record(withID id: EffectID) -> Record? {
        var current = firstLink
        while let link = current {
            let record = link.takeUnretainedValue()
            if record.id == id { return record }
            current = record.nextLink
        }
        return nil
    }
}
