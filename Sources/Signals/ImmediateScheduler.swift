/// A scheduler that runs each action at once, on the calling thread, before `schedule(_:)` returns.
///
/// Use it where an API wants a `Scheduler` but no hop is wanted: `observe(on: ImmediateScheduler())`
/// delivers each event synchronously, on the thread that sent it. Because the action has already run
/// when `schedule(_:)` returns, there is nothing to cancel and the returned disposable is `nil`.
public struct ImmediateScheduler: Scheduler {
    /// An immediate scheduler. All instances behave the same; it holds no state.
    public init() {}

    /// Runs `action` at once on the calling thread and returns `nil` (there is nothing left to cancel).
    @discardableResult
    public func schedule(_ action: @escaping @Sendable () -> Void) -> Disposable? {
        action()
        return nil
    }
}
