/// The bookkeeping of one flattening (`flatMap` / `flatten`): which inner streams run, which wait, which
/// one is current, whether the outer stream has completed, and whether the result has ended.
///
/// It performs no side effect. `FlattenStorage` keeps it in a `Locked` and calls its `mutating` methods
/// under the lock; each returns what must be done next (start inners, dispose something, send a
/// terminal event), which the storage does after releasing the lock. What a method lets go of (an inner
/// producer, which holds the user's closures, or a disposable) is returned too, never released here,
/// so that the storage releases it after the lock.
///
/// Inner streams are numbered: each one gets an id when the outer stream sends it. An event from an inner
/// whose id is no longer running (it completed, was replaced under `.latest`, or the result ended) is
/// ignored, whatever it is.
///
/// Starting inners is a trampoline: one thread at a time holds the starter role (`isStarting`) and
/// starts inners in a loop (`nextInnerToStart`). An inner that completes while an inner is being started,
/// for example synchronously during its own start, does not start the next one itself: it leaves it to
/// the loop, so a chain of synchronous inners runs in constant stack.
struct FlattenStateMachine<Producer: Sendable>: Sendable {
    /// An inner that the outer stream has sent and that has not started yet.
    struct Waiting: Sendable {
        let id: UInt64
        let producer: Producer
    }

    /// An inner that has been started (or is being started) and has not ended.
    struct Running: Sendable {
        /// The disposable that interrupts the inner's run; `nil` until its start has registered it.
        var interrupter: Disposable?
    }

    /// What the storage must do after the outer stream sent an inner.
    enum OuterValueAction {
        /// Nothing: the inner waits, or another thread holds the starter role and will start it.
        case none
        /// The caller now holds the starter role: it must run the start loop.
        case startInners
        /// `.latest`: the caller must dispose `previous` (the replaced inner, if it had registered its
        /// interrupter), then call `enqueueLatest(id:producer:)`, and release `dropped` (the inners that
        /// were waiting, if any) after the lock.
        case replace(previous: Disposable?, id: UInt64, dropped: FIFOQueue<Waiting>?)
    }

    /// What the storage must do after an inner completed or was interrupted.
    enum InnerEndedAction {
        /// Nothing: the event was stale, or the result goes on.
        case none
        /// The caller now holds the starter role: it must run the start loop.
        case startInners
        /// The result must complete: the outer stream and every inner stream have completed.
        case complete
    }

    /// What the storage must do to end the result.
    struct Termination {
        /// The outer stream's disposable, then every running inner's in the order they started: to be
        /// disposed before the terminal event is sent.
        let disposables: [Disposable]
        /// The inners that were waiting, dropped: to be released after the lock.
        let dropped: FIFOQueue<Waiting>
    }

    private let strategy: FlattenStrategy.Kind
    private var nextID: UInt64 = 0
    /// `.latest`: the id of the newest inner the outer stream sent.
    private var latestID: UInt64?
    private var running: [UInt64: Running] = [:]
    private var waiting = FIFOQueue<Waiting>()
    /// Whether a thread holds the starter role.
    private var isStarting = false
    private var isOuterCompleted = false
    /// What ends the outer stream's run or observation; `nil` before it is attached and after the outer
    /// stream ended.
    private var outer: Disposable?
    /// Whether the result has ended (or is about to be sent its terminal event).
    private(set) var isTerminated = false

    init(strategy: FlattenStrategy) {
        self.strategy = strategy.kind
    }

    /// Whether the inner `id` is running, so that its values must be forwarded.
    func isRunning(_ id: UInt64) -> Bool {
        !isTerminated && running[id] != nil
    }

    // MARK: Outer stream

    /// Records what ends the outer stream.
    ///
    /// - Returns: false if the result has already ended: the caller must dispose `disposable` itself.
    mutating func attachOuter(_ disposable: Disposable) -> Bool {
        guard !isTerminated else { return false }
        if !isOuterCompleted { outer = disposable }
        return true
    }

    /// The outer stream sent an inner.
    mutating func outerValue(_ producer: Producer) -> OuterValueAction {
        guard !isTerminated else { return .none }
        let id = nextID
        nextID &+= 1
        switch strategy {
        case .latest:
            latestID = id
            var previous: Disposable?
            for (_, inner) in running {
                previous = inner.interrupter
            }
            running.removeAll(keepingCapacity: true)
            return .replace(previous: previous, id: id, dropped: waiting.isEmpty ? nil : takeWaiting())
        case .merge, .concat:
            waiting.append(Waiting(id: id, producer: producer))
            return becomeStarterIfNeeded() ? .startInners : .none
        }
    }

    /// `.latest`, after the replaced inner has been disposed: queues the new inner unless a newer one
    /// replaced it meanwhile or the result ended.
    ///
    /// - Returns: true if the caller now holds the starter role and must run the start loop.
    mutating func enqueueLatest(id: UInt64, producer: Producer) -> Bool {
        guard !isTerminated, latestID == id else { return false }
        waiting.append(Waiting(id: id, producer: producer))
        return becomeStarterIfNeeded()
    }

    /// The outer stream completed.
    ///
    /// - Returns: whether the result must complete now (no inner is running or waiting), and what ended
    ///   the outer stream, no longer needed: the caller must release it after the lock.
    mutating func outerCompleted() -> (mustComplete: Bool, outer: Disposable?) {
        guard !isTerminated else { return (false, nil) }
        isOuterCompleted = true
        return (completeIfFinished(), outer.take())
    }

    // MARK: Inner streams

    /// Called by the starter in a loop: the next inner to start, now marked running, or `nil`, in which
    /// case the caller has given up the starter role.
    mutating func nextInnerToStart() -> Waiting? {
        precondition(isStarting, "Internal inconsistency: nextInnerToStart called without the starter role")
        if !isTerminated, canStartNext, let next = waiting.removeFirst() {
            running[next.id] = Running(interrupter: nil)
            return next
        }
        isStarting = false
        return nil
    }

    /// An inner's start registers the disposable that interrupts it.
    ///
    /// - Returns: false if the inner is no longer wanted (replaced, or the result ended): the caller must
    ///   dispose `interrupter` itself.
    mutating func register(_ id: UInt64, interrupter: Disposable) -> Bool {
        guard !isTerminated, running[id] != nil else { return false }
        running[id]?.interrupter = interrupter
        return true
    }

    /// The inner `id` completed or was interrupted: either way it has ended, and the result goes on
    /// without it (an interrupted inner is not the result's interruption).
    ///
    /// - Returns: what to do, and the inner's interrupter, no longer needed: the caller must release it
    ///   after the lock.
    mutating func innerEnded(_ id: UInt64) -> (action: InnerEndedAction, interrupter: Disposable?) {
        guard !isTerminated, let ended = running.removeValue(forKey: id) else { return (.none, nil) }
        if canStartNext, !waiting.isEmpty {
            return (becomeStarterIfNeeded() ? .startInners : .none, ended.interrupter)
        }
        return (completeIfFinished() ? .complete : .none, ended.interrupter)
    }

    /// The inner `id` failed.
    ///
    /// - Returns: how to end the result with the inner's failure (see `terminate()`), or `nil` if the
    ///   event is stale and must be ignored.
    mutating func innerFailed(_ id: UInt64) -> Termination? {
        guard !isTerminated, running[id] != nil else { return nil }
        return terminate()
    }

    // MARK: The result

    /// Ends the result (an outer failure or interruption, an inner failure, or disposal of the result).
    ///
    /// - Returns: what the caller must dispose, then release after the lock, or `nil` if the result had
    ///   already ended.
    mutating func terminate() -> Termination? {
        guard !isTerminated else { return nil }
        isTerminated = true
        var disposables: [Disposable] = []
        disposables.reserveCapacity(running.count + 1)
        if let outer = outer.take() { disposables.append(outer) }
        // In the order the inners started, so that disposal is deterministic.
        for id in running.keys.sorted() {
            if let interrupter = running[id]?.interrupter { disposables.append(interrupter) }
        }
        running = [:]
        return Termination(disposables: disposables, dropped: takeWaiting())
    }

    // MARK: Helpers

    private var canStartNext: Bool {
        switch strategy {
        case .merge: return true
        case .latest, .concat: return running.isEmpty
        }
    }

    private mutating func becomeStarterIfNeeded() -> Bool {
        guard !isStarting else { return false }
        isStarting = true
        return true
    }

    /// Empties the queue of waiting inners and returns what it held, for the caller to release after
    /// the lock.
    private mutating func takeWaiting() -> FIFOQueue<Waiting> {
        var taken = FIFOQueue<Waiting>()
        swap(&taken, &waiting)
        return taken
    }

    private mutating func completeIfFinished() -> Bool {
        guard isOuterCompleted, running.isEmpty, waiting.isEmpty else { return false }
        isTerminated = true
        return true
    }
}
