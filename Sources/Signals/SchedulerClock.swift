/// Reads a scheduler's clock from an action scheduled on that scheduler without keeping it alive: a
/// scheduler that is an object is held weakly, so that its own pending action does not keep it (a
/// reference cycle when a test drops its `TestScheduler` with the action pending). A scheduler that is
/// a value is copied.
struct SchedulerClock: Sendable {
    let now: @Sendable () -> Duration

    /// `fallback` is read if the scheduler is gone (its actions then no longer run anyway).
    init(_ scheduler: some TimeScheduler, otherwise fallback: Duration) {
        if let object = scheduler as? any TimeScheduler & AnyObject {
            now = { [weak object] in object?.now ?? fallback }
        } else {
            now = { scheduler.now }
        }
    }
}
