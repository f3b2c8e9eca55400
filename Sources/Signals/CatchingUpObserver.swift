/// Stands in for an observer that must hear an initial event before the signal's later events,
/// without making the signal's other observers wait while it does.
///
/// The signal delivers to `observer`; until `catchUp(after:)` has delivered the initial event and
/// everything that arrived meanwhile, those events are buffered here and delivered by the catching-up
/// thread, in order. After that, events pass straight through, on the signal's delivering thread.
final class CatchingUpObserver<Value: Sendable, Error: Swift.Error>: Sendable {
    private struct State {
        var isCatchingUp = true
        var isCancelled = false
        var buffered = FIFOQueue<Event<Value, Error>>()
    }

    private let state = Locked(State())
    private let target: Observer<Value, Error>

    init(_ target: Observer<Value, Error>) {
        self.target = target
    }

    /// What the signal delivers to.
    var observer: Observer<Value, Error> {
        Observer { [self] event in self.receive(event) }
    }

    private func receive(_ event: Event<Value, Error>) {
        let deliverNow = state.withCriticalRegion { state -> Bool in
            if state.isCancelled { return false }
            if state.isCatchingUp {
                state.buffered.append(event)
                return false
            }
            return true
        }
        if deliverNow { target.action(event) }
    }

    /// Delivers `initial`, then what was buffered meanwhile, then lets events through.
    func catchUp(after initial: Event<Value, Error>) {
        target.action(initial)
        while let event = state.withCriticalRegion({ state -> Event<Value, Error>? in
            if state.isCancelled { return nil }
            if let event = state.buffered.removeFirst() { return event }
            state.isCatchingUp = false
            return nil
        }) {
            target.action(event)
        }
    }

    /// The observation was disposed: nothing more is delivered.
    func cancel() {
        let dropped = state.withCriticalRegion { state -> FIFOQueue<Event<Value, Error>> in
            state.isCancelled = true
            defer { state.buffered = FIFOQueue() }
            return state.buffered
        }
        withExtendedLifetime(dropped) {}
    }
}
