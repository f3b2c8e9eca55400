/// A hot stream of events: it delivers whatever is sent into its input to the observers attached at
/// that moment. Observing a signal does not start any work.
///
/// Delivery contract:
/// - Events are delivered **serially**: never two at once, never recursively. A send made while the
///   signal is delivering (from another thread, or from inside one of its own observers) is queued,
///   FIFO, and delivered by the thread that is already delivering, after the current event has
///   reached every observer. `send` never blocks on observer code.
/// - Observers are called in the order they were added. An observer receives exactly the events sent
///   after `observe` was called. Once its disposable's `dispose()` has returned, an observer is called
///   for no event other than the one being delivered at that moment, if any (queued events included).
/// - The grammar is `value* (failed | completed | interrupted)?`. After the terminal event the signal
///   releases its observers, delivers nothing more, and an observer added later receives the terminal
///   event at once, on the thread that adds it.
/// - No internal lock is held while an observer runs.
public final class Signal<Value: Sendable, Error: Swift.Error>: @unchecked Sendable {
    // Safe: every stored `var` below is guarded by `lock`, except `observers`, which belongs to whoever
    // holds `lock` while `isDelivering` is false, and to the single delivering thread while it is true
    // (other threads then queue their additions in `pending` and their removals in `pendingRemovals`).
    // `isDelivering` only changes under `lock`, which orders the hand-overs. Because this protocol, not
    // Swift's access rules, keeps the accesses apart, the properties opt out of the dynamic exclusivity
    // checks (`@exclusivity(unchecked)`), which otherwise cost more than the lock on every send.

    @usableFromInline
    struct Entry {
        @usableFromInline let token: UInt64
        @usableFromInline let observer: Observer<Value, Error>

        @inlinable
        init(token: UInt64, observer: Observer<Value, Error>) {
            self.token = token
            self.observer = observer
        }
    }

    @usableFromInline
    enum Work {
        case event(Event<Value, Error>)
        case add(Entry, initial: Event<Value, Error>?)
    }

    @usableFromInline let lock = Lock()
    @usableFromInline @exclusivity(unchecked) var isDelivering = false
    /// False once a terminal event has been accepted (it may still be waiting in `pending`).
    @usableFromInline @exclusivity(unchecked) var acceptsEvents = true
    /// Set once the terminal event has reached every observer.
    @usableFromInline @exclusivity(unchecked) var terminal: Event<Value, Error>?
    @usableFromInline @exclusivity(unchecked) var pending = FIFOQueue<Work>()
    /// Observers detached while the signal was delivering. The delivering thread drops them before it
    /// delivers anything more, so a detached observer misses the events already queued too. A token
    /// whose `.add` is still in `pending` waits here until that `.add` is dropped.
    @usableFromInline @exclusivity(unchecked) var pendingRemovals: ContiguousArray<UInt64> = []
    @usableFromInline @exclusivity(unchecked) var nextToken: UInt64 = 0
    @usableFromInline @exclusivity(unchecked) var observers: ContiguousArray<Entry> = []

    @usableFromInline
    init() {}

    /// Creates a signal and the observer that sends into it.
    ///
    /// The signal lives as long as something references it or its input. Sending into `input` is thread
    /// safe; see the type's documentation for ordering.
    @inlinable
    public static func pipe() -> (output: Signal, input: Observer<Value, Error>) {
        let signal = Signal()
        let input = Observer<Value, Error> { event in signal.send(event) }
        return (signal, input)
    }

    /// Creates a signal and hands its input observer to `generator`, ReactiveSwift style. The
    /// disposable `generator` returns, if any, is disposed when the signal terminates.
    public convenience init(_ generator: (Observer<Value, Error>) -> Disposable?) {
        self.init()
        let input = Observer<Value, Error> { [self] event in self.send(event) }
        if let disposable = generator(input) {
            observe { event in
                if event.isTerminating { disposable.dispose() }
            }
        }
    }

    // MARK: Sending

    @inlinable
    func send(_ event: Event<Value, Error>) {
        lock.lock()
        sendWithLockHeld(event)
    }

    /// Sends `event` only if `condition`, evaluated under the lock together with the decision to queue
    /// or deliver, returns true. `condition` must be package code, never a user closure. Properties use
    /// it so that a change of value and the order of its notification cannot be separated.
    @inlinable
    package func send(_ event: Event<Value, Error>, if condition: () -> Bool) {
        lock.lock()
        guard acceptsEvents, condition() else {
            lock.unlock()
            return
        }
        sendWithLockHeld(event)
    }

    /// The body of `send`, entered with `lock` held; it releases the lock before delivering.
    @inlinable
    func sendWithLockHeld(_ event: Event<Value, Error>) {
        guard acceptsEvents else {
            lock.unlock()
            return
        }
        if event.isTerminating {
            acceptsEvents = false
        }
        if isDelivering {
            pending.append(.event(event))
            lock.unlock()
            return
        }
        if observers.isEmpty && !event.isTerminating {
            // Nobody to tell, and no delivery to take over: one lock round trip.
            lock.unlock()
            return
        }
        isDelivering = true
        lock.unlock()

        deliver(event)

        lock.lock()
        if pending.isEmpty && pendingRemovals.isEmpty {
            isDelivering = false
            lock.unlock()
            return
        }
        lock.unlock()
        drain()
    }

    /// Delivers one event to every observer. Only the delivering thread calls it.
    @inlinable
    func deliver(_ event: Event<Value, Error>) {
        if event.isTerminating {
            deliverTerminal(event)
            return
        }
        for entry in observers {
            entry.observer.action(event)
        }
    }

    @usableFromInline
    func deliverTerminal(_ event: Event<Value, Error>) {
        let notified = observers
        observers = []
        for entry in notified {
            entry.observer.action(event)
        }
        lock.withLock { terminal = event }
    }

    /// Delivers queued work until the queue is empty, then gives up the delivering role.
    @usableFromInline
    func drain() {
        while true {
            lock.lock()
            if !pendingRemovals.isEmpty {
                applyPendingRemovals()
            }
            guard let work = pending.removeFirst() else {
                // Nothing queued: a removal still waiting for its `.add` is left over from termination.
                pendingRemovals.removeAll(keepingCapacity: true)
                isDelivering = false
                lock.unlock()
                return
            }
            switch work {
            case let .event(event):
                lock.unlock()
                deliver(event)
            case let .add(entry, initial):
                if let index = pendingRemovals.firstIndex(of: entry.token) {
                    // Detached before it was attached: drop it.
                    pendingRemovals.remove(at: index)
                    lock.unlock()
                } else if let terminal {
                    lock.unlock()
                    if let initial { entry.observer.action(initial) }
                    entry.observer.action(terminal)
                } else {
                    observers.append(entry)
                    lock.unlock()
                    if let initial { entry.observer.action(initial) }
                }
            }
        }
    }

    /// Drops the observers detached during delivery. Called by the delivering thread with `lock` held.
    @usableFromInline
    func applyPendingRemovals() {
        var index = 0
        while index < pendingRemovals.count {
            if let position = observers.firstIndex(where: { $0.token == pendingRemovals[index] }) {
                observers.remove(at: position)
                pendingRemovals.remove(at: index)
            } else {
                index += 1  // its `.add` is still queued
            }
        }
    }

    @usableFromInline
    func removeEntry(_ token: UInt64) {
        if let index = observers.firstIndex(where: { $0.token == token }) {
            observers.remove(at: index)
        }
    }

    // MARK: Observing

    /// Adds `observer`, which receives every event sent from now on.
    ///
    /// - Returns: a disposable that detaches `observer`. After `dispose()` returns, `observer` is called
    ///   for no further event, queued ones included; only an event it was being given at that moment
    ///   may still reach it. If the signal has already terminated, `observer` receives the terminal
    ///   event at once and the returned disposable is already disposed.
    @discardableResult
    public func observe(_ observer: Observer<Value, Error>) -> Disposable {
        observe(observer, initial: nil)
    }

    /// Adds `observer`; if `initial` gives an event, it is delivered to `observer` alone, before any
    /// later event. `initial` runs under the lock: it must be package code, never a user closure.
    package func observe(
        _ observer: Observer<Value, Error>,
        initial: (() -> Event<Value, Error>?)?
    ) -> Disposable {
        lock.lock()
        if let terminal {
            let initialEvent = initial?()
            lock.unlock()
            if let initialEvent { observer.action(initialEvent) }
            observer.action(terminal)
            return AnyDisposable.disposed
        }
        let token = nextToken
        nextToken &+= 1
        let entry = Entry(token: token, observer: observer)
        let initialEvent = initial?()
        if isDelivering {
            pending.append(.add(entry, initial: initialEvent))
            lock.unlock()
        } else {
            observers.append(entry)
            if let initialEvent {
                isDelivering = true
                lock.unlock()
                observer.action(initialEvent)
                drain()
            } else {
                lock.unlock()
            }
        }
        return AnyDisposable { [weak self] in self?.removeObserver(token) }
    }

    /// Whether a terminal event has been accepted.
    package var hasTerminated: Bool {
        lock.withLock { !acceptsEvents }
    }

    func removeObserver(_ token: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        if terminal != nil { return }
        if isDelivering {
            pendingRemovals.append(token)
        } else {
            removeEntry(token)
        }
    }
}

extension Signal {
    /// Observes every event with `action`. See `observe(_:)`.
    @inlinable @discardableResult
    public func observe(_ action: @escaping @Sendable (Event<Value, Error>) -> Void) -> Disposable {
        observe(Observer(action))
    }

    /// Observes values only; terminal events are ignored. See `observe(_:)`.
    @inlinable @discardableResult
    public func observeValues(_ action: @escaping @Sendable (Value) -> Void) -> Disposable {
        observe(Observer { event in
            if case let .value(value) = event { action(value) }
        })
    }

    /// Observes successful completion only. See `observe(_:)`.
    @inlinable @discardableResult
    public func observeCompleted(_ action: @escaping @Sendable () -> Void) -> Disposable {
        observe(Observer { event in
            if case .completed = event { action() }
        })
    }

    /// Observes failure only. See `observe(_:)`.
    @inlinable @discardableResult
    public func observeFailed(_ action: @escaping @Sendable (Error) -> Void) -> Disposable {
        observe(Observer { event in
            if case let .failed(error) = event { action(error) }
        })
    }

    /// Observes interruption only. See `observe(_:)`.
    @inlinable @discardableResult
    public func observeInterrupted(_ action: @escaping @Sendable () -> Void) -> Disposable {
        observe(Observer { event in
            if case .interrupted = event { action() }
        })
    }

    /// Observes the end of the stream, however it ends (failed, completed or interrupted).
    @inlinable @discardableResult
    public func observeTerminated(_ action: @escaping @Sendable () -> Void) -> Disposable {
        observe(Observer { event in
            if event.isTerminating { action() }
        })
    }
}

extension Signal where Error == Never {
    /// A signal that never sends anything and never ends.
    public static var never: Signal { Signal() }
}
