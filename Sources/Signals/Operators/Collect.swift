/// The values a `collect` is gathering, and whether it has received any.
private struct Collected<Value: Sendable>: Sendable {
    var values: [Value] = []
    var hasReceivedValues = false
}

extension Signal {
    /// A signal that gathers the values of this signal and sends an array each time
    /// `shouldEmit(collected)` returns true for the values gathered so far (the last one included),
    /// then starts gathering anew. When this signal completes, the values still gathered are sent as
    /// one last array, then the result completes; if this signal sent no value at all, one empty array
    /// is sent, as in ReactiveSwift. A failure or interruption is forwarded at once and the gathered
    /// values are dropped.
    ///
    /// `shouldEmit` runs on the thread that delivers each value, serially, with no lock held.
    public func collect(_ shouldEmit: @escaping @Sendable (_ collected: [Value]) -> Bool) -> Signal<[Value], Error> {
        let state = Locked(Collected<Value>())
        return Signal<[Value], Error>.relaying { output in
            observe(
                Observer { event in
                    switch event {
                    case let .value(value):
                        let collected = state.withCriticalRegion { state -> [Value] in
                            state.hasReceivedValues = true
                            state.values.append(value)
                            return state.values
                        }
                        // Delivery is serial, so nothing changes the gathered values while `shouldEmit` runs.
                        guard shouldEmit(collected) else { return }
                        state.withCriticalRegion { $0.values.removeAll(keepingCapacity: true) }
                        output.send(value: collected)
                    case .completed:
                        let last = state.withCriticalRegion { state -> [Value]? in
                            defer { state.values = [] }
                            return state.values.isEmpty && state.hasReceivedValues ? nil : state.values
                        }
                        if let last { output.send(value: last) }
                        output.sendCompleted()
                    case .failed, .interrupted:
                        // Swapped out, and released after the lock (and the terminal event): they are the user's.
                        let dropped = state.withCriticalRegion { state -> [Value] in
                            defer { state.values = [] }
                            return state.values
                        }
                        if let terminal = event.terminal(as: [Value].self) { output.send(terminal) }
                        withExtendedLifetime(dropped) {}
                    }
                })
        }
    }

    /// A signal that sends every value of this signal as one array when it completes (an empty array
    /// if there were none), then completes, as in ReactiveSwift. See `collect(_:)`.
    public func collect() -> Signal<[Value], Error> {
        collect { _ in false }
    }

    /// A signal that sends the values of this signal in arrays of `count`, and the remaining values
    /// (fewer than `count`, if any) when it completes, as in ReactiveSwift. See `collect(_:)`.
    ///
    /// - Precondition: `count > 0`.
    public func collect(count: Int) -> Signal<[Value], Error> {
        precondition(count > 0, "collect(count:) needs a count of at least 1, got \(count)")
        return collect { $0.count == count }
    }
}

extension SignalProducer {
    /// A producer whose runs gather values and send an array each time `shouldEmit` returns true. See
    /// `Signal.collect(_:)`. Disposing a run disposes the underlying run and drops what was gathered.
    public func collect(
        _ shouldEmit: @escaping @Sendable (_ collected: [Value]) -> Bool
    ) -> SignalProducer<[Value], Error> {
        lift { $0.collect(shouldEmit) }
    }

    /// A producer whose runs send every value of a run of this producer as one array when it completes.
    /// See `Signal.collect()`.
    public func collect() -> SignalProducer<[Value], Error> {
        lift { $0.collect() }
    }

    /// A producer whose runs send the values of a run of this producer in arrays of `count`. See
    /// `Signal.collect(count:)`.
    ///
    /// - Precondition: `count > 0`.
    public func collect(count: Int) -> SignalProducer<[Value], Error> {
        precondition(count > 0, "collect(count:) needs a count of at least 1, got \(count)")
        return lift { $0.collect(count: count) }
    }
}
