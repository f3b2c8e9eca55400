/// The bits of the atomic word a `Signal` keeps with its lock.
///
/// - `delivering`: one thread owns `observers` and the delivering role. An uncontended send takes
///   it with one compare-and-swap from 0 and gives it back with another, without the lock.
/// - `pending`: work was queued (`pending` or `pendingRemovals`) while delivering. Set with `lock`
///   held, only while `delivering` is set; cleared with `lock` held by the delivering thread when
///   it gives up the role with nothing left queued. It makes the lock-free give-back fail, so the
///   deliverer takes the lock and drains.
/// - `closed`: a terminal event was accepted; set with `lock` held, never cleared.
@usableFromInline
enum DeliveryState {
    @inlinable static var delivering: UInt { 1 }
    @inlinable static var pending: UInt { 2 }
    @inlinable static var closed: UInt { 4 }
}

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
    // Safe: the delivery state lives in `lock`'s atomic word (see `DeliveryState`). `pending`,
    // `pendingRemovals`, `terminal` and `nextToken` are only touched with `lock` held. `observers`
    // belongs to whichever thread has set the `delivering` bit (the delivering thread, or a thread
    // changing observers with `lock` held); the bit is set and cleared with acquire/release atomics, so
    // each owner sees the previous owner's writes. Because this protocol, not Swift's access rules,
    // keeps the accesses apart, the properties opt out of the dynamic exclusivity checks, which would
    // cost more than the send itself.

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
    /// Set once the terminal event has reached every observer.
    @usableFromInline @exclusivity(unchecked) var terminal: Event<Value, Error>?
    @usableFromInline @exclusivity(unchecked) var pending = FIFOQueue<Work>()
    /// Observers detached while the signal was delivering. The delivering thread drops them before it
    /// delivers anything more, so a detached observer misses the events already queued too. A token
    /// whose `.add` is still in `pending` waits here until that `.add` is dropped.
    @usableFromInline @exclusivity(unchecked) var pendingRemovals: ContiguousArray<UInt64> = []
    @usableFromInline @exclusivity(unchecked) var nextToken: UInt64 = 0
    @usableFromInline @exclusivity(unchecked) var observers: ContiguousArray<Entry> = []
    /// The observers of `observers`, unretained, in order: what delivery iterates. `observers` keeps
    /// them alive; whoever changes `observers` rebuilds this list (`observersChanged()`), and nobody
    /// changes either while observers run, so delivery touches no reference count.
    @usableFromInline @exclusivity(unchecked) var deliveryList =
        UnsafeMutableBufferPointer<Unmanaged<Observer<Value, Error>>>(start: nil, count: 0)

    @usableFromInline
    init() {}

    deinit {
        deliveryList.deallocate()
    }

    /// Rebuilds `deliveryList` from `observers`. Called by the owner of `observers` after each change.
    @usableFromInline
    func observersChanged() {
        deliveryList.deallocate()
        guard !observers.isEmpty else {
            deliveryList = UnsafeMutableBufferPointer(start: nil, count: 0)
            return
        }
        let list = UnsafeMutableBufferPointer<Unmanaged<Observer<Value, Error>>>.allocate(capacity: observers.count)
        for (index, entry) in observers.enumerated() {
            list.initializeElement(at: index, to: Unmanaged.passUnretained(entry.observer))
        }
        deliveryList = list
    }

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

    /// Sends `event`: delivers it now if nobody is delivering, or queues it behind the current delivery.
    ///
    /// The uncontended path (a value, nobody delivering, nothing queued) takes the delivering role and
    /// gives it back with one compare-and-swap each, and takes no lock.
    @inlinable
    func send(_ event: Event<Value, Error>) {
        if !event.isTerminating,
            lock.compareExchangeWord(expected: 0, desired: DeliveryState.delivering)
        {
            deliver(event)
            if !lock.compareExchangeWord(expected: DeliveryState.delivering, desired: 0) {
                drain()
            }
            return
        }
        lock.lock()
        sendWithLockHeld(event)
    }

    /// Sends `event` only if `condition`, evaluated under the lock together with the decision to queue
    /// or deliver, returns true. `condition` must be package code, never a user closure. Properties use
    /// it so that a change of value and the order of its notification cannot be separated.
    @inlinable
    package func send(_ event: Event<Value, Error>, if condition: () -> Bool) {
        lock.lock()
        guard lock.loadWord() & DeliveryState.closed == 0, condition() else {
            lock.unlock()
            return
        }
        sendWithLockHeld(event)
    }

    /// The slow path of `send`, entered with `lock` held; it releases the lock before delivering.
    @inlinable
    func sendWithLockHeld(_ event: Event<Value, Error>) {
        let closing = event.isTerminating ? DeliveryState.closed : 0
        while true {
            let word = lock.loadWord()
            if word & DeliveryState.closed != 0 {
                lock.unlock()
                return
            }
            if word & DeliveryState.delivering != 0 {
                // Someone is delivering: queue behind it. The `pending` bit makes its lock-free
                // give-back fail, so it will take the lock and find this event.
                guard lock.compareExchangeWord(expected: word, desired: word | DeliveryState.pending | closing) else {
                    continue
                }
                pending.append(.event(event))
                lock.unlock()
                return
            }
            if observers.isEmpty && closing == 0 {
                // Nobody to tell: a value changes nothing.
                lock.unlock()
                return
            }
            guard lock.compareExchangeWord(expected: word, desired: word | DeliveryState.delivering | closing) else {
                continue
            }
            lock.unlock()
            deliver(event)
            drain()
            return
        }
    }

    /// Delivers one event to every observer. Only the delivering thread calls it.
    @inlinable
    func deliver(_ event: Event<Value, Error>) {
        if event.isTerminating {
            deliverTerminal(event)
            return
        }
        // `observers` keeps every observer in the list alive, and neither changes while observers run
        // (changes made meanwhile are queued), so each can be called without retaining it.
        let list = deliveryList
        for index in list.indices {
            list[index]._withUnsafeGuaranteedRef { observer in observer.send(event) }
        }
    }

    @usableFromInline
    func deliverTerminal(_ event: Event<Value, Error>) {
        let notified = observers
        observers = []
        observersChanged()
        for entry in notified {
            entry.observer.action(event)
        }
        lock.withLock { terminal = event }
    }

    /// Delivers queued work until the queue is empty, then gives up the delivering role. Only the
    /// delivering thread calls it.
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
                releaseDeliveringRole()
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
                    observersChanged()
                    lock.unlock()
                    if let initial { entry.observer.action(initial) }
                }
            }
        }
    }

    /// Clears `delivering` and `pending`, keeping `closed`. Called with `lock` held by the thread that
    /// owns the role: nobody else can change the word then (the lock-free path only takes the role
    /// from 0, and everything else changes it under the lock).
    @inlinable
    func releaseDeliveringRole() {
        lock.storeWord(lock.loadWord() & DeliveryState.closed)
    }

    /// Takes the delivering role with `lock` held, to change `observers` directly, if nobody holds it.
    /// Returns false if someone is delivering; then `pending` is set, and the caller must queue its
    /// change for the deliverer before releasing the lock.
    @usableFromInline
    func takeDeliveringRoleOrMarkPending() -> Bool {
        lock.takeWordBit(DeliveryState.delivering, orSet: DeliveryState.pending)
    }

    /// Drops the observers detached during delivery. Called by the delivering thread with `lock` held.
    @usableFromInline
    func applyPendingRemovals() {
        var index = 0
        while index < pendingRemovals.count {
            if let position = observers.firstIndex(where: { $0.token == pendingRemovals[index] }) {
                observers.remove(at: position)
                observersChanged()
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
            observersChanged()
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
        if !takeDeliveringRoleOrMarkPending() {
            pending.append(.add(entry, initial: initialEvent))
            lock.unlock()
        } else {
            observers.append(entry)
            observersChanged()
            if let initialEvent {
                lock.unlock()
                observer.action(initialEvent)
                drain()
            } else {
                releaseDeliveringRole()
                lock.unlock()
            }
        }
        return AnyDisposable { [weak self] in self?.removeObserver(token) }
    }

    /// Whether a terminal event has been accepted.
    package var hasTerminated: Bool {
        lock.loadWord() & DeliveryState.closed != 0
    }

    func removeObserver(_ token: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        if terminal != nil { return }
        if takeDeliveringRoleOrMarkPending() {
            removeEntry(token)
            releaseDeliveringRole()
        } else {
            pendingRemovals.append(token)
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
