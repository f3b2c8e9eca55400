/// The values of a signal or of a producer run, as an `AsyncSequence`: `for try await value in
/// producer.values { … }`, or `for await` when `Error` is `Never`.
///
/// - Making an iterator (which `for await` does when the loop begins) observes the signal, or starts
///   a run of the producer, on the calling thread; each iterator has its own observation or run.
/// - **A `Task` that iterates `signal.values` misses what was sent before its loop began**: in
///   `Task { for await reply in automaton.replies.values { … } }` followed by two `send`s, the task
///   usually begins after both sends and sees neither. To hand values to a task, make the sequence
///   first with `stream()`, which observes at once and buffers (see `SignalStream`).
/// - Values are **buffered without bound** until `next()` takes them, so a fast stream and a slow
///   consumer grow the buffer; values are never dropped while the stream runs.
/// - `next()` returns the values in order, then `nil` once the stream completed or was interrupted, or
///   throws the error once the stream failed (the buffered values come first). After that it returns
///   `nil`.
/// - Cancelling the task that iterates disposes the observation or the run (interrupting it) and
///   makes `next()` return `nil` (at once if it is waiting, otherwise at its next call), dropping any
///   buffered values. Releasing the iterator disposes the observation or run too.
public struct SignalValues<Value: Sendable, Error: Swift.Error>: AsyncSequence, Sendable {
    /// The type of the values.
    public typealias Element = Value
    /// The error `next()` throws when the stream fails.
    public typealias Failure = Error

    private let attach: @Sendable (Observer<Value, Error>) -> Disposable

    init(attach: @escaping @Sendable (Observer<Value, Error>) -> Disposable) {
        self.attach = attach
    }

    /// Observes the signal, or starts a run of the producer, and returns the iterator over its values.
    public func makeAsyncIterator() -> Iterator {
        let buffer = ValuesBuffer<Value, Error>()
        buffer.attach(attach)
        return Iterator(buffer)
    }

    /// Iterates the buffered values of one observation or run. Meant to be used by one task at a time
    /// (calling `next()` again while a call is suspended is a programming error and traps).
    public struct Iterator: AsyncIteratorProtocol {
        /// The type of the values.
        public typealias Element = Value
        /// The error `next()` throws when the stream fails.
        public typealias Failure = Error

        private let buffer: ValuesBuffer<Value, Error>

        init(_ buffer: ValuesBuffer<Value, Error>) {
            self.buffer = buffer
        }

        /// The next value, waiting for it if none is buffered; `nil` when the stream has completed or
        /// was interrupted, or when the iterating task is cancelled. Throws the stream's error once if
        /// it failed.
        public mutating func next() async throws(Error) -> Value? {
            try await buffer.next(isolation: nil)
        }

        /// The next value, waiting on `actor`'s isolation. See `next()`.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Error) -> Value? {
            try await buffer.next(isolation: actor)
        }
    }
}

extension Signal {
    /// The values this signal sends from the moment an iterator is made, as an `AsyncSequence`.
    /// See `SignalValues` for buffering, termination and cancellation.
    public var values: SignalValues<Value, Error> {
        SignalValues { observer in self.observe(observer) }
    }
}

extension SignalProducer {
    /// The values of a run of this producer, as an `AsyncSequence`: each iterator starts its own run
    /// when it is made, and cancelling the iterating task disposes that run. See `SignalValues`.
    public var values: SignalValues<Value, Error> {
        SignalValues { observer in self.start(observer) }
    }
}

/// What `next()` hands back.
private enum Outcome<Value: Sendable, Error: Swift.Error>: Sendable {
    case value(Value)
    case finished
    case failed(Error)
}

/// The locked buffer between one observation (which appends) and one iterator (which takes).
///
/// Continuations are resumed and disposables disposed only after the lock is released, and what the
/// buffer lets go of (a value, an error, the observation) is released after it too.
final class ValuesBuffer<Value: Sendable, Error: Swift.Error>: Sendable {
    /// A waiting `next()` and what to resume it with.
    private typealias Resumption = (CheckedContinuation<Outcome<Value, Error>, Never>, Outcome<Value, Error>)

    private enum Phase: Sendable {
        /// The stream may send more values.
        case running
        /// The stream has ended with this outcome, to report once the buffer is empty.
        case ending(Outcome<Value, Error>)
        /// The end has been reported (or the iteration cancelled): `next()` returns `nil`.
        case finished
    }

    private struct State: Sendable {
        var phase = Phase.running
        /// Buffered values, not taken yet.
        var values = FIFOQueue<Value>()
        var waiter: CheckedContinuation<Outcome<Value, Error>, Never>?
        var observation: Disposable?

        /// Takes what `next()` can return without waiting, or `nil` if it has to wait.
        mutating func takeAvailable() -> Outcome<Value, Error>? {
            if let value = values.removeFirst() {
                return .value(value)
            }
            switch phase {
            case .running:
                return nil
            case let .ending(outcome):
                phase = .finished
                return outcome
            case .finished:
                return .finished
            }
        }
    }

    private let state = Locked(State())

    init() {}

    deinit {
        // The iterator is gone: nobody will take more values, so stop the observation or run.
        state.withCriticalRegion { $0.observation }?.dispose()
    }

    func attach(_ attach: (Observer<Value, Error>) -> Disposable) {
        // Weak, so that releasing the iterator releases this buffer, whose deinit disposes the run.
        let observation = attach(Observer { [weak self] event in self?.receive(event) })
        let isOver = state.withCriticalRegion { state -> Bool in
            if case .running = state.phase {
                state.observation = observation
                return false
            }
            return true
        }
        if isOver { observation.dispose() }
    }

    private func receive(_ event: Event<Value, Error>) {
        // The observation, no longer needed once the stream has ended, is released after the lock.
        let (resumption, observation) = state.withCriticalRegion { state -> (Resumption?, Disposable?) in
            guard case .running = state.phase else { return (nil, nil) }
            switch event {
            case let .value(value):
                if let waiter = state.waiter {
                    state.waiter = nil
                    return ((waiter, .value(value)), nil)
                }
                state.values.append(value)
                return (nil, nil)
            case let .failed(error):
                state.phase = .ending(.failed(error))
            case .completed, .interrupted:
                state.phase = .ending(.finished)
            }
            let observation = state.observation.take()
            guard let waiter = state.waiter else { return (nil, observation) }
            state.waiter = nil
            // A waiter only exists when the buffer is empty, so the end is reported now.
            return (state.takeAvailable().map { (waiter, $0) }, observation)
        }
        withExtendedLifetime(observation) {}
        if let (waiter, outcome) = resumption {
            waiter.resume(returning: outcome)
        }
    }

    private func cancel() {
        // The whole state is swapped out and released after the lock: the buffered values and an error
        // not reported yet are the user's.
        let cancelled = state.withCriticalRegion { state in
            var cancelled = State(phase: .finished)
            swap(&state, &cancelled)
            return cancelled
        }
        cancelled.observation?.dispose()
        cancelled.waiter?.resume(returning: .finished)
    }

    func next(isolation actor: isolated (any Actor)?) async throws(Error) -> Value? {
        if Task.isCancelled {
            cancel()
            return nil
        }
        var outcome = state.withCriticalRegion { $0.takeAvailable() }
        if outcome == nil {
            outcome = await withTaskCancellationHandler {
                await withCheckedContinuation(isolation: actor) {
                    (continuation: CheckedContinuation<Outcome<Value, Error>, Never>) in
                    let available = state.withCriticalRegion { state -> Outcome<Value, Error>? in
                        if let available = state.takeAvailable() { return available }
                        precondition(
                            state.waiter == nil, "SignalValues.Iterator.next() called while another call is waiting")
                        state.waiter = continuation
                        return nil
                    }
                    if let available { continuation.resume(returning: available) }
                }
            } onCancel: {
                cancel()
            }
        }
        switch outcome {
        case let .value(value)?: return value
        case .finished?, nil: return nil
        case let .failed(error)?: throw error
        }
    }
}
