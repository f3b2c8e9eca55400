/// The actions an operator has handed to a scheduler and that have not run yet, so that ending the
/// operator cancels every one of them: a `TestScheduler`'s pending count drops to zero and a
/// `QueueScheduler` releases the work.
///
/// Each action runs at most once, and none runs once `cancelAll()` has been called (an action that has
/// already started runs to its end). A scheduler that runs an action before `schedule` returns (an
/// `ImmediateScheduler`) is handled too.
final class ScheduledActions: Sendable {
    private struct State {
        var isCancelled = false
        var nextID: UInt64 = 0
        /// The disposables of the actions scheduled and not run yet.
        var scheduled: [UInt64: Disposable] = [:]
        /// Actions that ran before the scheduler returned their disposable.
        var ranEarly: Set<UInt64> = []
    }

    private let state = Locked(State())

    init() {}

    /// Hands `action` to a scheduler through `schedule` (a call such as `scheduler.schedule(_:)`),
    /// unless `cancelAll()` has been called, and keeps its disposable until it runs.
    ///
    /// - Returns: false if nothing was scheduled because the actions were cancelled.
    @discardableResult
    func schedule(
        _ schedule: (_ action: @escaping @Sendable () -> Void) -> Disposable?,
        _ action: @escaping @Sendable () -> Void
    ) -> Bool {
        let id = state.withCriticalRegion { state -> UInt64? in
            guard !state.isCancelled else { return nil }
            defer { state.nextID += 1 }
            return state.nextID
        }
        guard let id else { return false }
        let disposable = schedule { [self] in
            if self.claim(id) { action() }
        }
        let rejected = state.withCriticalRegion { state -> Disposable? in
            if state.isCancelled { return disposable }
            if state.ranEarly.remove(id) != nil { return nil }
            // A scheduler may return no disposable; a placeholder still marks the action as pending.
            state.scheduled[id] = disposable ?? AnyDisposable()
            return nil
        }
        rejected?.dispose()
        return true
    }

    /// Run by the scheduled action `id`: whether it may go on (nothing was cancelled).
    private func claim(_ id: UInt64) -> Bool {
        let (mayRun, finished) = state.withCriticalRegion { state -> (Bool, Disposable?) in
            guard !state.isCancelled else { return (false, nil) }
            guard let disposable = state.scheduled.removeValue(forKey: id) else {
                state.ranEarly.insert(id)
                return (true, nil)
            }
            return (true, disposable)
        }
        withExtendedLifetime(finished) {}  // released with no lock held
        return mayRun
    }

    /// Whether any action is scheduled and has not run.
    var isEmpty: Bool {
        state.withCriticalRegion { $0.scheduled.isEmpty }
    }

    /// Cancels every action scheduled and not run yet; later calls to `schedule` do nothing.
    func cancelAll() {
        let disposables = state.withCriticalRegion { state -> [Disposable] in
            guard !state.isCancelled else { return [] }
            state.isCancelled = true
            state.ranEarly = []
            defer { state.scheduled = [:] }
            return Array(state.scheduled.values)
        }
        for disposable in disposables {
            disposable.dispose()
        }
    }
}
