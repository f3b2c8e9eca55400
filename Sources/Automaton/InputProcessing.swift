import Signals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Android)
    import Android
#elseif canImport(Darwin)
    import Darwin
#else
    import Dispatch
#endif

/// What an automaton did with one input, for instrumentation: logging, metrics and tracing (see
/// `Automaton.observeProcessing(_:)`).
///
/// It tells what `replies` does not: which effect sent the input, which effect the transition made,
/// and how long processing took.
public struct InputProcessing<State: Sendable, Input: Sendable>: Sendable {
    /// The input's reply, as `replies` sent it.
    public let reply: Reply<State, Input>
    /// The effect that sent the input (its `EffectEvent.id`), or `nil` for an outside input (`send`,
    /// `sender`, the `input` signal, a binding).
    public let sentByEffect: UInt64?
    /// The effect the transition made (its `EffectEvent.id`): started, waiting for its key (`.queue`) or
    /// dropped (`.first`), as `effectEvents` reports. `nil` for a failure, a transition without an
    /// effect, and a `.cancel(key)` row. For an `.effects(...)` row (`SignalProducer.effects(_:)`), the
    /// first effect it made.
    public let effect: UInt64?
    /// How long the input took: from the mapping's call to the end of the reply's delivery to the
    /// `replies` observers, the effects it cancelled included. The effect it starts is not included.
    public let duration: Duration
    /// The input's number in its automaton: 1 for the first input it processed, then one more for each,
    /// in processing order (the order of `replies`), whoever sent it. With it, logs, traces and screens
    /// can tell apart two equal inputs and match a reply to its input.
    public let number: UInt64

    /// Makes a record, for tests of code that consumes them.
    @inlinable
    public init(
        reply: Reply<State, Input>, sentByEffect: UInt64?, effect: UInt64?, duration: Duration, number: UInt64 = 0
    ) {
        self.reply = reply
        self.sentByEffect = sentByEffect
        self.effect = effect
        self.duration = duration
        self.number = number
    }
}

extension Automaton {
    /// Calls `observer` with an `InputProcessing` record for every input whose processing ends from now
    /// on (the record is made when the input's reply has been delivered).
    ///
    /// For instrumentation (the `AutomatonLogging`, `AutomatonMetrics` and `AutomatonTracing`
    /// integrations use it). An automaton with no processing observer reads no clock and builds no
    /// record: it pays one atomic load per input. (A child automaton's run hears its replies the same
    /// way, after this observer, without reading the clock: see `ChildAutomata`.)
    ///
    /// - Threads and order: called on the thread processing the input, with no lock held, one input at
    ///   a time, in processing order: after the input's reply has been delivered to the `replies`
    ///   observers, and before the transition's effect starts (so an observer sees the record of the
    ///   input that made an effect before any of that effect's inputs, and, unless the effect waited
    ///   for its key (`.queue`: it may start, and even end, on another thread as soon as the
    ///   transition is committed), before `effectEvents` reports its start or end). Like a `replies`
    ///   observer, it holds up processing while it runs; an input it sends is queued.
    /// - Termination: never called after `replies` has ended. The automaton lets go of `observer` when
    ///   `replies` ends (the automaton released, its input interrupted, or its input completed and
    ///   every effect ended) or when the returned disposable is disposed, whichever comes first.
    ///   Attaching after `replies` has ended returns a disposed disposable and keeps nothing.
    /// - Disposal: once `dispose()` has returned, `observer` is not called for inputs whose processing
    ///   starts afterwards; a call already under way on another thread may still finish.
    ///
    /// The returned disposable keeps the automaton's internal engine, not the automaton.
    @discardableResult
    public func observeProcessing(
        _ observer: @escaping @Sendable (InputProcessing<State, Input>) -> Void
    ) -> Disposable {
        engine.addProcessingObserver(observer)
    }
}

/// One processing observer, told apart from the others by its identity: a user's
/// (`observeProcessing(_:)`, `observe`), or the package's own reply listener (`onReply` and `onEnd`:
/// a child automaton's run, which forwards each reply to its parent; see `addReplyListener`). A
/// listener makes the engine read no clock and build no record.
@usableFromInline
final class ProcessingObserver<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let observe: (@Sendable (InputProcessing<State, Input>) -> Void)?
    /// A listener's: called with each reply, after every processing observer has had its record.
    @usableFromInline let onReply: (@Sendable (Reply<State, Input>) -> Void)?
    /// A listener's: called once, when `replies` has ended and the engine lets go of its observers.
    @usableFromInline let onEnd: (@Sendable () -> Void)?

    @usableFromInline
    init(_ observe: @escaping @Sendable (InputProcessing<State, Input>) -> Void) {
        self.observe = observe
        onReply = nil
        onEnd = nil
    }

    @usableFromInline
    init(onReply: @escaping @Sendable (Reply<State, Input>) -> Void, onEnd: @escaping @Sendable () -> Void) {
        observe = nil
        self.onReply = onReply
        self.onEnd = onEnd
    }
}

/// The bits of `AutomatonEngine.processingObserversWord`: what the observers attached need.
@usableFromInline
enum ProcessingObservation {
    /// A processing observer is attached: the clock is read when an input's processing begins, and a
    /// record is made at its end.
    @inlinable static var timed: UInt { 1 }
    /// A reply listener is attached: each reply is handed to it, with no clock read and no record.
    @inlinable static var listened: UInt { 2 }
}

/// The clock of `InputProcessing.duration`: the monotonic clock, in nanoseconds, never 0 (0 stands for
/// "not observed"). Read directly (`clock_gettime`): `DispatchTime.now()` cost five times as much
/// (callgrind, "W2 Automaton, processing observed"). Never inlined: the `timespec` it passes by address
/// gave the function it was inlined into (`process(_:)`) a stack protector, 5 instructions on every
/// input, observed or not (W2 199 -> 204).
@usableFromInline
enum ProcessingClock {
    @usableFromInline @inline(never)
    static var now: UInt64 {
        #if canImport(Glibc) || canImport(Musl) || canImport(Android)
            var time = timespec()
            clock_gettime(CLOCK_MONOTONIC, &time)
            return max(UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec), 1)
        #elseif canImport(Darwin)
            return max(clock_gettime_nsec_np(CLOCK_UPTIME_RAW), 1)
        #else
            return max(DispatchTime.now().uptimeNanoseconds, 1)
        #endif
    }

    /// The start of an input whose processing only reply listeners observe: no clock was read, and no
    /// record is made (a processing observer added meanwhile hears from the next input on).
    @inlinable static var untimed: UInt64 { .max }
}

// The processing observers live in the machine, under its lock; `processingObserversWord` says
// whether there are any, and of which kind (`ProcessingObservation`), so that the processing role
// learns with one atomic load, without the lock, that there are none. It is changed only under the
// machine's lock, with the list.

extension AutomatonEngine {
    /// Whether any processing observer or reply listener is attached (see `observeProcessing(_:)`).
    @inlinable @inline(__always)
    var isProcessingObserved: Bool {
        processingObserversWord.load() != 0
    }

    /// What the attached processing observers need (`ProcessingObservation`): a word of the engine's
    /// group (see `AutomatonEngine.words`).
    @inlinable @inline(__always)
    var processingObserversWord: UnownedAtomicWord { words.word(EngineWord.processingObservers) }

    /// Stores in `processingObserversWord` what `observers` need. Under the machine's lock.
    @inlinable
    func storeObservation(of observers: [ProcessingObserver<State, Input>]) {
        var observation: UInt = 0
        for observer in observers {
            observation |= observer.observe != nil ? ProcessingObservation.timed : ProcessingObservation.listened
        }
        processingObserversWord.store(observation)
    }

    @usableFromInline
    func addProcessingObserver(
        _ observe: @escaping @Sendable (InputProcessing<State, Input>) -> Void
    ) -> Disposable {
        let observer = ProcessingObserver(observe)
        let added = critical { machine -> Bool in
            // After the termination, or after `replies` completed (its core is closed then, before the
            // observers are dropped: see `complete()`), the observer could never be called.
            guard machine.phase != .terminated, !replies.hasTerminated else { return false }
            machine.processingObservers.append(observer)
            storeObservation(of: machine.processingObservers)
            return true
        }
        guard added else { return AnyDisposable.disposed }
        // By identity, not by reference, so that the termination lets go of the observer even while the
        // disposable lives (and a weak reference would give it a side table, which slows every retain
        // of it). The identity cannot name another observer: the object is freed only by this
        // disposal, which runs once, or by the termination, after which no observer is added.
        let identity = ObjectIdentifier(observer)
        return AnyDisposable { [self] in
            removeProcessingObserver(identity)
        }
    }

    /// Removes the processing observer or reply listener `identity`, if still attached. The removed
    /// one is let go of here, after the lock: its release is user code.
    @inlinable
    func removeProcessingObserver(_ identity: ObjectIdentifier) {
        let removed = critical { machine -> ProcessingObserver<State, Input>? in
            guard let index = machine.processingObservers.firstIndex(where: { ObjectIdentifier($0) == identity })
            else {
                return nil
            }
            defer { storeObservation(of: machine.processingObservers) }
            return machine.processingObservers.remove(at: index)
        }
        _ = removed
    }

    /// Whether `replies` has ended (`OnDemandSignal.hasTerminated`, which is not inlinable).
    @usableFromInline
    var repliesHaveEnded: Bool { replies.hasTerminated }

    /// Attaches a reply listener: `onReply` is called with each reply from now on, on the processing
    /// thread, with no lock held, after the reply has reached every `replies` observer and every
    /// processing observer (and before the input's waiter, if it was asked, and before the
    /// transition's effect starts); `onEnd` once, after `replies` has ended (completed or interrupted),
    /// when the engine lets go of its observers. No clock is read and no record made for it.
    ///
    /// - Returns: the listener's identity, for `removeProcessingObserver(_:)` (then neither is called
    ///   any more), or `nil` if `replies` has ended already: then neither is ever called.
    @inlinable
    func addReplyListener(
        onReply: @escaping @Sendable (Reply<State, Input>) -> Void, onEnd: @escaping @Sendable () -> Void
    ) -> ObjectIdentifier? {
        let listener = ProcessingObserver(onReply: onReply, onEnd: onEnd)
        let added = critical { machine -> Bool in
            guard machine.phase != .terminated, !repliesHaveEnded else { return false }
            machine.processingObservers.append(listener)
            storeObservation(of: machine.processingObservers)
            return true
        }
        return added ? ObjectIdentifier(listener) : nil
    }

    /// Tells the processing observers what became of an input whose processing began at `start` (the
    /// clock's reading, or `ProcessingClock.untimed` if only reply listeners were attached then), then
    /// hands its reply to the reply listeners. Run by the processing role, with no lock held.
    /// Inlinable (specialized in the caller's module), not inlined: unspecialized, it looked up generic
    /// metadata for the record at every input.
    @inlinable @inline(never)
    func announceProcessing(
        _ reply: Reply<State, Input>, sentBy sender: EffectID?, effect: EffectID?, since start: UInt64
    ) {
        // A copy: the observers run after the lock, and one removed meanwhile is let go of when the
        // copy is, here.
        let observers = critical { $0.processingObservers }
        if start != ProcessingClock.untimed {
            let record = InputProcessing(
                reply: reply, sentByEffect: sender, effect: effect,
                duration: .nanoseconds(ProcessingClock.now &- start), number: processedInputs)
            for observer in observers {
                observer.observe?(record)
            }
        }
        for observer in observers {
            observer.onReply?(reply)
        }
    }

    /// Lets go of the processing observers when `replies` ends (the termination, or `complete()`), after
    /// the lock, and tells the reply listeners.
    @inlinable
    func dropProcessingObservers() {
        guard isProcessingObserved else { return }
        let dropped = critical { machine in
            defer {
                machine.processingObservers = []
                processingObserversWord.store(0)
            }
            return machine.processingObservers
        }
        for observer in dropped {
            observer.onEnd?()
        }
    }
}
