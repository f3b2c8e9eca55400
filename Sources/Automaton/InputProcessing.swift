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
    /// effect, and a `.cancel(key)` row.
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
    /// record: it pays one atomic load per input.
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

/// One processing observer, told apart from the others by its identity.
@usableFromInline
final class ProcessingObserver<State: Sendable, Input: Sendable>: Sendable {
    @usableFromInline let observe: @Sendable (InputProcessing<State, Input>) -> Void

    @usableFromInline
    init(_ observe: @escaping @Sendable (InputProcessing<State, Input>) -> Void) {
        self.observe = observe
    }
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
}

// The processing observers live in the machine, under its lock; `processingObserversWord` counts
// them, so that the processing role learns with one atomic load, without the lock, that there are none. It is changed only under the machine's lock, with the list.

extension AutomatonEngine {
    /// Whether any processing observer is attached (see `observeProcessing(_:)`).
    @inlinable @inline(__always)
    var isProcessingObserved: Bool {
        processingObserversWord.load() != 0
    }

    /// How many processing observers are attached: a word of the engine's group (see
    /// `AutomatonEngine.words`).
    @inlinable @inline(__always)
    var processingObserversWord: UnownedAtomicWord { words.word(EngineWord.processingObservers) }

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
            processingObserversWord.store(UInt(machine.processingObservers.count))
            return true
        }
        guard added else { return AnyDisposable.disposed }
        // By identity, not by reference, so that the termination lets go of the observer even while the
        // disposable lives (and a weak reference would give it a side table, which slows every retain
        // of it). The identity cannot name another observer: the object is freed only by this
        // disposal, which runs once, or by the termination, after which no observer is added.
        let identity = ObjectIdentifier(observer)
        return AnyDisposable { [self] in
            // The removed observer is let go of here, after the lock: its release is user code.
            let removed = critical { machine -> ProcessingObserver<State, Input>? in
                guard let index = machine.processingObservers.firstIndex(where: { ObjectIdentifier($0) == identity })
                else {
                    return nil
                }
                defer { processingObserversWord.store(UInt(machine.processingObservers.count)) }
                return machine.processingObservers.remove(at: index)
            }
            _ = removed
        }
    }

    /// Tells the processing observers what became of an input whose processing began at `start`. Run
    /// by the processing role, with no lock held. Inlinable (specialized in the caller's module), not
    /// inlined: unspecialized, it looked up generic metadata for the record at every input.
    @inlinable @inline(never)
    func announceProcessing(
        _ reply: Reply<State, Input>, sentBy sender: EffectID?, effect: EffectID?, since start: UInt64
    ) {
        let record = InputProcessing(
            reply: reply, sentByEffect: sender, effect: effect, duration: .nanoseconds(ProcessingClock.now &- start),
            number: processedInputs)
        // A copy: the observers run after the lock, and one removed meanwhile is let go of when the
        // copy is, here.
        let observers = critical { $0.processingObservers }
        for observer in observers {
            observer.observe(record)
        }
    }

    /// Lets go of the processing observers when `replies` ends (the termination, or `complete()`), after
    /// the lock.
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
        _ = dropped
    }
}
