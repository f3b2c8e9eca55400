/// The bits of the atomic word a `SignalCore` keeps with its lock.
///
/// - `delivering`: one thread owns `observers` and the delivering role. An uncontended send takes
///   it with one compare-and-swap from 0 and gives it back with another, without the lock.
/// - `pending`: work was queued (`pending` or `pendingRemovals`) while delivering. Set with `lock`
///   held, only while `delivering` is set; cleared with `lock` held by the delivering thread when
///   it gives up the role with nothing left queued. It makes the lock-free give-back fail, so the
///   deliverer takes the lock and drains.
/// - `closed`: a terminal event was accepted; set with `lock` held, never cleared.
/// - `unobserved`: no observer is attached (`observers` is empty). Set and cleared together with
///   `observers`, by its owner, with `lock` held; meaningful only while `closed` is clear (the
///   terminal delivery empties `observers` without the lock and leaves the bit as it was). A word of
///   this bit alone means that a value reaches nobody: a send drops it after one load, with no
///   compare-and-swap (an automaton's `effectEvents` that nobody observes costs two atomic operations
///   fewer per event).
@usableFromInline
enum DeliveryState {
    @inlinable static var delivering: UInt { 1 }
    @inlinable static var pending: UInt { 2 }
    @inlinable static var closed: UInt { 4 }
    @inlinable static var unobserved: UInt { 8 }
}

/// Everything a `Signal` is, but the handle users hold: the observers, the delivery queue, and what
/// ends with the signal.
///
/// Who keeps a core alive (ReactiveSwift's ownership rules):
/// - its `Signal` handle, while anyone holds it;
/// - its input observer (`makeInput()`), while anyone holds it. Releasing the input sends
///   `.interrupted`, so a signal nobody can send into ends;
/// - for a signal made on demand (`OnDemandSignal`), its owner's word, which also keeps the handle
///   (through `onDemandHandle`) until the owner lets go (`OnDemandSignalWord.releaseMadeSignal`); the
///   owner ends the signal first, so that its observers hear its end.
/// Observers do not keep it alive (their disposables hold it weakly). When the handle has been
/// released and the last observer is removed, nobody can observe the signal any more, so it ends at
/// once (an `.interrupted` delivered to nobody): `onTermination` runs, which detaches an operator from
/// its upstream, cancels what it scheduled, or ends a producer run's lifetime.
@usableFromInline
package final class SignalCore<Value: Sendable, Error: Swift.Error>: SignalCoreBase, ObserverTarget,
    @unchecked Sendable
{
    // Safe: the delivery state lives in `lock`'s atomic word (see `DeliveryState`). `pending`,
    // `pendingRemovals`, `terminal`, `nextToken`, `observerCount`, `isHandleReleased`,
    // `onTermination` and `hasTakenTermination` are only touched with `lock` held. `observers` and
    // `deliveryList` belong to whichever thread has set the `delivering` bit (the delivering thread,
    // or a thread changing observers with `lock` held); the bit is set and cleared with
    // acquire/release atomics, so each owner sees the previous owner's writes. Because this protocol,
    // not Swift's access rules, keeps the accesses apart, the properties opt out of the dynamic
    // exclusivity checks, which would cost more than the send itself.
    //
    // Releases: an observer (or a closure it captures) may own an input observer whose release sends
    // an event, or a lifetime token whose release runs cleanup. So nothing that held an observer or a
    // disposable is released while `lock` is held: it is moved out and released after unlocking.

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
        case add(Entry)
    }

    @usableFromInline let lock: Lock
    /// Set once the terminal event has reached every observer: `terminal`, without its type
    /// parameters. A stored `Event<Value, Error>?` would cost every core's `deinit` (generic code
    /// that nothing specializes) two generic metadata lookups to destroy it, about 800 instructions
    /// (callgrind, "million create + input + release": three cores per automaton).
    @usableFromInline @exclusivity(unchecked) var ending: SignalEnding?

    /// The terminal event, once it has reached every observer. With `lock` held.
    @inlinable
    var terminal: Event<Value, Error>? {
        get {
            switch ending {
            case nil: return nil
            case .completed: return .completed
            case .interrupted: return .interrupted
            // Stored from an `Error`, so the cast back cannot fail.
            case let .failed(error): return .failed(error as! Error)
            }
        }
        set {
            switch newValue {
            case nil: ending = nil
            case .value: preconditionFailure("Internal inconsistency: a value stored as a signal's terminal event")
            case .completed: ending = .completed
            case .interrupted: ending = .interrupted
            case let .failed(error): ending = .failed(error)
            }
        }
    }
    @usableFromInline @exclusivity(unchecked) var pending = FIFOQueue<Work>()
    /// Observers detached while the signal was delivering. The delivering thread drops them before it
    /// delivers anything more, so a detached observer misses the events already queued too. A token
    /// whose `.add` is still in `pending` waits here until that `.add` is dropped.
    @usableFromInline @exclusivity(unchecked) var pendingRemovals: ContiguousArray<UInt64> = []
    @usableFromInline @exclusivity(unchecked) var nextToken: UInt64 = 0
    /// Observers added and not removed, those whose `.add` is still queued included.
    @usableFromInline @exclusivity(unchecked) var observerCount = 0
    /// Whether the `Signal` handle has been released: nobody can add an observer any more.
    @usableFromInline @exclusivity(unchecked) var isHandleReleased = false
    /// Disposed when the signal terminates, before its observers hear of it.
    @usableFromInline @exclusivity(unchecked) var onTermination: Disposable?
    /// Whether the terminating thread has taken `onTermination`; one set later is disposed at once.
    @usableFromInline @exclusivity(unchecked) var hasTakenTermination = false
    /// The attached observers, in the order they were attached, which is the order of their tokens
    /// (tokens increase, and queued attachments are applied in FIFO order): so a token is found by
    /// binary search. Changed only through `appendObserver(_:)`, `detachObserver(at:)` and
    /// `detachAllObservers()`, which keep `deliveryList` in step.
    @usableFromInline @exclusivity(unchecked) var observers: ContiguousArray<Entry> = []
    /// The observers of `observers`, unretained, in order: what delivery iterates. `observers` keeps
    /// them alive; whoever changes `observers` changes this list with it, in place (its storage holds
    /// `deliveryCapacity` elements and doubles when full, so adding or removing one observer copies no
    /// list), and nobody changes either while observers run, so delivery touches no reference count.
    @usableFromInline @exclusivity(unchecked) var deliveryList =
        UnsafeMutableBufferPointer<Unmanaged<Observer<Value, Error>>>(start: nil, count: 0)
    /// How many elements `deliveryList`'s storage holds (package-visible for the tests).
    @usableFromInline @exclusivity(unchecked) package internal(set) var deliveryCapacity = 0

    @inlinable
    package override init() {
        lock = Lock()
        super.init()
        lock.storeWord(DeliveryState.unobserved)
    }

    /// A core made on first use, for a signal whose sender sent nothing while nobody could observe it
    /// (see `OnDemandSignal` and `PropertyStorage`): it has no observer and nothing queued, and, if
    /// `ending` is set, it has already ended so (its word is `closed`, and an observer added later hears
    /// `ending` at once).
    ///
    /// - Parameter lock: the lock it is to use, and its word, which the caller has set: `unobserved`,
    ///   or `closed` if `ending` is set. A property shares its lock with its change signal this way.
    @inlinable
    package init(sharing lock: Lock, endedWith ending: SignalEnding?) {
        self.lock = lock
        self.ending = ending
        // Ended: what is set to end with it later is disposed at once, as after any termination.
        hasTakenTermination = ending != nil
        super.init()
        assert(
            lock.loadWord() == (ending == nil ? DeliveryState.unobserved : DeliveryState.closed)
                || lock.loadWord() == DeliveryState.unobserved | DeliveryState.closed,
            "Internal inconsistency: an on-demand signal core made with a word that does not match its ending")
    }

    deinit {
        deliveryList.baseAddress?.deallocate()
    }

    /// The observer that sends into this core. Releasing it sends `.interrupted` (ignored if the
    /// signal has already terminated).
    @inlinable
    package func makeInput() -> Observer<Value, Error> {
        Observer(sendingTo: self)
    }

    /// An event sent into `makeInput()`'s observer (see `ObserverTarget`).
    @inlinable
    package func receive(_ event: Event<Value, Error>) {
        send(event)
    }

    /// `makeInput()`'s observer was released: the signal is interrupted, unless it has terminated.
    @inlinable
    package func observerReleased() {
        send(.interrupted)
    }

    /// Registers what to dispose when the signal terminates (at once if it already has).
    package func setOnTermination(_ disposable: Disposable) {
        lock.lock()
        if hasTakenTermination {
            lock.unlock()
            disposable.dispose()
            return
        }
        let previous = onTermination
        onTermination = disposable
        lock.unlock()
        precondition(previous == nil, "Internal inconsistency: a signal's termination disposable was set twice")
    }

    /// The index of the observer attached as `token` in `observers`, if it is there: a binary search,
    /// since `observers` is in token order.
    @inlinable
    func indexOfObserver(_ token: UInt64) -> Int? {
        observers.withUnsafeBufferPointer { entries in
            var (low, high) = (0, entries.count)
            while low < high {
                let middle = low + (high - low) / 2
                let found = entries[middle].token
                if found == token { return middle }
                if found < token { low = middle + 1 } else { high = middle }
            }
            return nil
        }
    }

    /// Attaches `entry` last. Called by the owner of `observers`, with `lock` held.
    @inlinable
    func appendObserver(_ entry: Entry) {
        assert(
            observers.last.map { $0.token < entry.token } ?? true,
            "Internal inconsistency: observers attached out of token order")
        observers.append(entry)
        if observers.count == 1 { changeUnobservedBit(to: false) }
        let count = deliveryList.count
        precondition(count + 1 == observers.count, "Internal inconsistency: the delivery list is out of step")
        var base = deliveryList.baseAddress
        if count == deliveryCapacity {
            let capacity = Swift.max(4, deliveryCapacity * 2)
            let grown = UnsafeMutablePointer<Unmanaged<Observer<Value, Error>>>.allocate(capacity: capacity)
            if let base { grown.moveInitialize(from: base, count: count) }
            base?.deallocate()
            base = grown
            deliveryCapacity = capacity
        }
        let storage = base!
        (storage + count).initialize(to: Unmanaged.passUnretained(entry.observer))
        deliveryList = UnsafeMutableBufferPointer(start: storage, count: count + 1)
    }

    /// Detaches the observer at `index` and returns its entry (to be released with no lock held).
    /// Called by the owner of `observers`, with `lock` held.
    @inlinable
    func detachObserver(at index: Int) -> Entry {
        let entry = observers.remove(at: index)
        if observers.isEmpty { changeUnobservedBit(to: true) }
        let count = deliveryList.count
        precondition(count == observers.count + 1, "Internal inconsistency: the delivery list is out of step")
        let base = deliveryList.baseAddress!
        // The elements are trivial (unretained references): moving them back is a memmove.
        (base + index).moveInitialize(from: base + index + 1, count: count - index - 1)
        deliveryList = UnsafeMutableBufferPointer(start: base, count: count - 1)
        return entry
    }

    /// Detaches every observer and returns them, to be notified of the terminal event: no observer is
    /// attached after it, so the delivery list's storage is freed too. Called by the owner of
    /// `observers`, without `lock`: `unobserved` is left as it is (`closed` is set, and outweighs it).
    @inlinable
    func detachAllObservers() -> ContiguousArray<Entry> {
        let all = observers
        observers = []
        deliveryList.baseAddress?.deallocate()
        deliveryList = UnsafeMutableBufferPointer(start: nil, count: 0)
        deliveryCapacity = 0
        return all
    }

    /// Sets or clears `unobserved`. Called by the owner of `observers`, with `lock` held: nobody else can
    /// change the word then (the lock-free paths only take the role from 0 or give it back, and
    /// everything else changes the word under the lock), so a load and a store suffice.
    @inlinable
    func changeUnobservedBit(to unobserved: Bool) {
        let word = lock.loadWord()
        lock.storeWord(unobserved ? word | DeliveryState.unobserved : word & ~DeliveryState.unobserved)
    }

    /// Whether a value sent now reaches nobody: no observer is attached, nothing is being delivered
    /// or queued, and the signal has not ended. One load, no lock. A snapshot: an observer may attach
    /// at once after it. For a sender that orders its sends by other means and wants to skip the work
    /// of a send nobody hears (see `AutomatonEngine`'s effect events); `send` already drops such a
    /// value after this same load.
    @inlinable @inline(__always)
    package var isUnobserved: Bool {
        lock.loadWord() == DeliveryState.unobserved
    }
}

/// What a `SignalCore` keeps that needs none of its type parameters, so that code that does not know
/// them reaches it without looking up generic metadata: an owner's `deinit`, generic code that
/// nothing specializes (see `OnDemandSignal.releaseMadeSignal(word:)`).
@usableFromInline
package class SignalCoreBase: @unchecked Sendable {
    // Safe: `onDemandHandle` is set before the core is published, and cleared by its owner, once,
    // when nothing can reach the core any more (see `OnDemandSignal`).
    /// For a core made on demand (`OnDemandSignal`), its `Signal` handle, kept by the core itself (a
    /// cycle) until its owner breaks it, in `OnDemandSignal.releaseMadeSignal(word:)`; nil for any
    /// other.
    @usableFromInline @exclusivity(unchecked) final var onDemandHandle: AnyObject?

    @inlinable
    init() {}
}

/// A signal's terminal event without the signal's type parameters (see `SignalCore.ending`).
@usableFromInline
package enum SignalEnding: Sendable {
    case failed(any Swift.Error)
    case completed
    case interrupted
}
