/// A signal without an input observer that is made only when someone asks for it: its sender (the
/// package's own code, such as an automaton's engine for `replies` and `effectEvents`) sends into it
/// whether or not it has been made, and until it is made a value reaches nobody and costs one load.
/// An object that owns several such signals and is often never observed (a million idle automata)
/// saves a handle, a core and a lock per signal: three allocations.
///
/// The word is the whole state (`OnDemandSignalWord`): nothing made yet, the terminal event sent
/// before anything was made, or the made signal's handle. A signal made after the sender ended it has
/// ended so too: an observer added then hears the terminal event at once, as with any signal that
/// has terminated.
///
/// Order: the made signal is published with a compare-and-swap, and every send reads the word first.
/// A value sent by a thread that read no signal there was sent before the signal existed, so before
/// any observer could be added: it reaches nobody, as a value sent to a signal with no observer
/// does. A value sent by a thread that read the signal goes into it, where the signal's own rules
/// order it. So an observer hears exactly the values sent after it was added, as with any signal.
/// The terminal event is recorded by a compare-and-swap on the same word, so exactly one of the
/// sender and the maker sees the other, and the signal ends exactly once.
///
/// Unowned, like the `UnownedAtomicWord` it is made of: its owner keeps the word's group alive, and
/// calls `releaseMadeSignal()` once, when it is freed (the word holds one reference to the signal
/// made). The owner ends the signal before that (the automaton's engine always has, by its
/// termination): a made signal let go of unended would leave its observers without an end. Copies
/// share the same signal.
@usableFromInline
package struct OnDemandSignal<Value: Sendable>: @unchecked Sendable {
    // Safe: the state is the word, read and changed with atomic operations only; the signal it points
    // to is itself thread safe, and the word's reference keeps it alive until the owner releases it.
    @usableFromInline let word: UnownedAtomicWord

    /// An on-demand signal whose state is `word`, which holds 0 (nothing made yet). Its owner keeps
    /// the word alive, and calls `releaseMadeSignal()` once, when it is freed.
    @inlinable
    package init(word: UnownedAtomicWord) {
        self.word = word
    }

    /// The signal, made now (with no observer; ended, if the sender has ended it) unless it was made
    /// before. Every call returns the same signal. Thread safe.
    ///
    /// Inlinable, so that it is specialized where it is read: unspecialized, every read looked up the
    /// signal's generic metadata (callgrind, "children start+input+release": +1,800 instructions).
    @inlinable
    package var signal: Signal<Value, Never> {
        let state = word.load()
        if let made = OnDemandSignalWord.core(state) {
            return Self.handle(of: Unmanaged<SignalCore<Value, Never>>.fromOpaque(made).takeUnretainedValue())
        }
        return make(from: state)
    }

    /// `signal`'s first read: makes the signal, or finds the one another thread made meanwhile.
    @inlinable @inline(never)
    func make(from initial: UInt) -> Signal<Value, Never> {
        var state = initial
        while true {
            if let made = OnDemandSignalWord.core(state) {
                return Self.handle(of: Unmanaged<SignalCore<Value, Never>>.fromOpaque(made).takeUnretainedValue())
            }
            let ending = OnDemandSignalWord.ending(state)
            let lock = Lock()
            lock.storeWord(ending == nil ? DeliveryState.unobserved : DeliveryState.closed)
            let core = SignalCore<Value, Never>(sharing: lock, endedWith: ending)
            let signal = Signal(core: core)
            core.onDemandHandle = signal
            let address = Unmanaged.passRetained(core).toOpaque()
            if word.compareExchange(expected: state, desired: UInt(bitPattern: address)) {
                return signal
            }
            // Another thread made it, or the sender ended it, meanwhile: this one goes (it was never
            // observed, and its release runs no user code).
            core.onDemandHandle = nil
            Unmanaged<SignalCore<Value, Never>>.fromOpaque(address).release()
            state = word.load()
        }
    }

    /// The handle a made core keeps (see `SignalCoreBase.onDemandHandle`).
    @inlinable
    static func handle(of core: SignalCore<Value, Never>) -> Signal<Value, Never> {
        guard let handle = core.onDemandHandle else {
            preconditionFailure("Internal inconsistency: an on-demand signal's core without its handle")
        }
        // Invariant: only `make(from:)` sets `onDemandHandle`, to the `Signal` it made over this very
        // core, before publishing the core (checked in debug builds; `OnDemandSignalTests` checks that
        // every read returns that signal).
        return unsafeDowncast(handle, to: Signal<Value, Never>.self)
    }

    /// The made signal's core, unretained, for `body`; nothing if the signal has not been made. The
    /// word's reference keeps the core alive while `body` runs.
    @inlinable @inline(__always)
    func withMadeCore(_ body: (SignalCore<Value, Never>) -> Void) {
        guard let made = OnDemandSignalWord.core(word.load()) else { return }
        Unmanaged<SignalCore<Value, Never>>.fromOpaque(made)._withUnsafeGuaranteedRef { body($0) }
    }

    /// Sends `event`: a value into the made signal, or nowhere if nothing was made; a terminal event
    /// into the made signal, or, if nothing was made, recorded for the signal made later. A terminal
    /// event after the first is ignored, as by any signal.
    @inlinable @inline(__always)
    package func send(_ event: Event<Value, Never>) {
        switch event {
        case .value: withMadeCore { $0.send(event) }
        case .completed: end(with: OnDemandSignalWord.completed)
        case .interrupted: end(with: OnDemandSignalWord.interrupted)
        }
    }

    /// Sends the value `make()` returns if the signal has been made and someone can hear it (see
    /// `SignalCore.sendValue(_:)`): `make` must be package code, never a user closure.
    @inlinable @inline(__always)
    package func sendValue(_ make: () -> Value) {
        withMadeCore { $0.sendValue(make) }
    }

    /// Sends the value `make()` returns if the signal has been made: `make` must be package code,
    /// never a user closure. For values that cost little to build, on a signal usually observed once
    /// made (`sendValue(_:)` checks for observers once more).
    @inlinable @inline(__always)
    package func sendIfMade(_ make: () -> Value) {
        withMadeCore { $0.send(.value(make())) }
    }

    /// Ends the signal (`tag`: `OnDemandSignalWord.completed` or `.interrupted`): sent into the made
    /// signal, or recorded in the word. Inlinable, and its event made from a tag, so that the owner's
    /// termination, specialized for its types, looks up no generic metadata (an unspecialized call
    /// here cost every automaton's release two lookups, about 1,800 instructions).
    @inlinable
    func end(with tag: UInt) {
        while true {
            let state = word.load()
            if let made = OnDemandSignalWord.core(state) {
                let terminal: Event<Value, Never> = tag == OnDemandSignalWord.completed ? .completed : .interrupted
                Unmanaged<SignalCore<Value, Never>>.fromOpaque(made)._withUnsafeGuaranteedRef { $0.send(terminal) }
                return
            }
            if state != OnDemandSignalWord.nothingMade { return }  // ended already
            if word.compareExchange(expected: state, desired: tag) { return }
        }
    }

    /// Whether a value sent now reaches nobody: nothing has been made, or the signal made has no
    /// observer and nothing to deliver (`SignalCore.isUnobserved`). A snapshot.
    @inlinable @inline(__always)
    package var isUnobserved: Bool {
        guard let made = OnDemandSignalWord.core(word.load()) else { return true }
        return Unmanaged<SignalCore<Value, Never>>.fromOpaque(made)._withUnsafeGuaranteedRef { $0.isUnobserved }
    }

    /// Whether the signal has been made (for tests).
    package var isMade: Bool {
        OnDemandSignalWord.core(word.load()) != nil
    }

    /// Whether the signal has ended (or its terminal event is being delivered).
    package var hasTerminated: Bool {
        let state = word.load()
        guard let made = OnDemandSignalWord.core(state) else {
            return state != OnDemandSignalWord.nothingMade
        }
        return Unmanaged<SignalCore<Value, Never>>.fromOpaque(made)._withUnsafeGuaranteedRef { $0.hasTerminated }
    }

    /// Lets go of the signal made, if any (see `releaseMadeSignal(word:)`).
    @inlinable
    package func releaseMadeSignal() {
        OnDemandSignalWord.releaseMadeSignal(word: word)
    }
}

/// What the word of an `OnDemandSignal` holds: 0 while nothing was made and the signal goes on; 1 or 2
/// once it completed or was interrupted with nothing made; else the address of the made signal's
/// `SignalCore` (an object's address is aligned, so never 1 or 2), retained once; the core keeps its
/// handle (`SignalCoreBase.onDemandHandle`).
@usableFromInline
package enum OnDemandSignalWord {
    @inlinable static var nothingMade: UInt { 0 }
    @inlinable static var completed: UInt { 1 }
    @inlinable static var interrupted: UInt { 2 }

    /// The made signal's core's address, if `state` holds one.
    @inlinable @inline(__always)
    static func core(_ state: UInt) -> UnsafeMutableRawPointer? {
        state > interrupted ? UnsafeMutableRawPointer(bitPattern: state) : nil
    }

    /// How the signal ended with nothing made, if it did.
    @inlinable
    static func ending(_ state: UInt) -> SignalEnding? {
        switch state {
        case completed: return .completed
        case interrupted: return .interrupted
        default: return nil
        }
    }

    /// Lets go of the signal made in `word`, if any: breaks the cycle between its core and its handle
    /// (so the handle's release tells the core that nobody holds it, as any signal's does), and
    /// releases the word's reference to the core. Called once, by the owner, when it is freed; nothing
    /// may send into this signal afterwards. Not generic, and it only touches `SignalCoreBase`: the
    /// owner's `deinit` is generic code that nothing specializes, and would otherwise look up the
    /// signal's generic metadata (two lookups per automaton, about 900 instructions, even with no
    /// signal made).
    @inlinable
    package static func releaseMadeSignal(word: UnownedAtomicWord) {
        guard let made = OnDemandSignalWord.core(word.load()) else { return }
        let core = Unmanaged<SignalCoreBase>.fromOpaque(made)
        core._withUnsafeGuaranteedRef { $0.onDemandHandle = nil }
        core.release()
    }
}
