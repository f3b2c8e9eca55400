/// The actions an operator has handed to a scheduler and that have not run yet, so that ending the
/// operator cancels every one of them: a `TestScheduler`'s pending count drops to zero and a
/// `QueueScheduler` releases the work.
///
/// Each action runs at most once, and none runs once it has been cancelled, by `cancel(_:)` or
/// `cancelAll()` (an action that has already started runs to its end). A scheduler that runs an action
/// before `schedule` returns (an `ImmediateScheduler`) is handled too.
final class ScheduledActions: Sendable {
    /// Where one action stands. An id with no entry has run, or was cancelled.
    private enum Phase {
        /// Handed to the scheduler, whose `schedule` call has not returned yet.
        case registering
        /// The scheduler ran it before its `schedule` call returned.
        case ranEarly
        /// Waiting in the scheduler; the disposable cancels it.
        case pending(Disposable)
    }

    private struct State {
        var isCancelled = false
        var nextID: UInt64 = 0
        var actions: [UInt64: Phase] = [:]
    }

    private let state = Locked(State())

    init() {}

    /// Hands `action` to a scheduler through `schedule` (a call such as `scheduler.schedule(_:)`),
    /// unless `cancelAll()` has been called, and keeps its disposable until it runs.
    ///
    /// - Returns: the action's id, for `cancel(_:)`, or `nil` if nothing was scheduled because the
    ///   actions were cancelled.
    @discardableResult
    func schedule(
        _ schedule: (_ action: @escaping @Sendable () -> Void) -> Disposable?,
        _ action: @escaping @Sendable () -> Void
    ) -> UInt64? {
        let id = state.withCriticalRegion { state -> UInt64? in
            guard !state.isCancelled else { return nil }
            defer { state.nextID += 1 }
            state.actions[state.nextID] = .registering
            return state.nextID
        }
        guard let id else { return nil }
        let disposable = schedule { [self] in
            if self.claim(id) { action() }
        }
        let rejected = state.withCriticalRegion { state -> Disposable? in
            switch state.actions[id] {
            case .registering?:
                // A scheduler may return no disposable; a placeholder still marks the action as pending.
                state.actions[id] = .pending(disposable ?? AnyDisposable())
                return nil
            case .ranEarly?:
                state.actions[id] = nil
                return nil
            case .pending?, nil:
                // Cancelled by `cancelAll()` meanwhile.
                return disposable
            }
        }
        rejected?.dispose()
        return id
    }

    /// Run by the scheduled action `id`: whether it may go on (it was not cancelled).
    private func claim(_ id: UInt64) -> Bool {
        let (mayRun, finished) = state.withCriticalRegion { state -> (Bool, Disposable?) in
            switch state.actions[id] {
            case .registering?:
                state.actions[id] = .ranEarly
                return (true, nil)
            case let .pending(disposable)?:
                state.actions[id] = nil
                return (true, disposable)
            case .ranEarly?, nil:
                return (false, nil)
            }
        }
        withExtendedLifetime(finished) {}  // released with no lock held
        return mayRun
    }

    /// Whether any action is scheduled and has not run.
    var isEmpty: Bool {
        state.withCriticalRegion { $0.actions.isEmpty }
    }

    /// Cancels the action `id` if it has not started yet (it then never runs); does nothing if it has.
    ///
    /// Call it only once the `schedule` call that returned `id` has returned.
    func cancel(_ id: UInt64) {
        let phase = state.withCriticalRegion { $0.actions.removeValue(forKey: id) }
        if case let .pending(disposable)? = phase {
            disposable.dispose()
        }
    }

    /// Cancels every action scheduled and not run yet; later calls to `schedule` do nothing.
    func cancelAll() {
        let disposables = state.withCriticalRegion { state -> [Disposable] in
            guard !state.isCancelled else { return [] }
            state.isCancelled = true
            defer { state.actions = [:] }
            return state.actions.values.compactMap { phase in
                if case let .pending(disposable) = phase { return disposable }
                return nil
            }
        }
        for disposable in disposables {
            disposable.dispose()
        }
    }
}
