/// `combineLatest`'s bookkeeping: the latest value of each source, and how many have completed.
struct CombineLatestStateMachine<Element: Sendable>: CombiningStateMachine {
    private var latest: [Element?]
    /// How many sources have not sent a value yet.
    private var missing: Int
    private var remaining: Int

    init(count: Int) {
        latest = Array(repeating: nil, count: count)
        missing = count
        remaining = count
    }

    mutating func value(_ element: Element, at index: Int) -> (action: CombiningAction<Element>, replaced: Element?) {
        // Swapped, not overwritten: the previous value is the caller's to release after the lock.
        var replaced: Element? = element
        swap(&latest[index], &replaced)
        if replaced == nil { missing -= 1 }
        guard missing == 0 else { return (.none, replaced) }
        return (.send(latest.map { $0! }), replaced)
    }

    mutating func completed(at index: Int) -> CombiningAction<Element> {
        remaining -= 1
        return remaining == 0 ? .complete : .none
    }
}

private typealias Latest<Error: Swift.Error> = CombiningSources<CombineLatestStateMachine<any Sendable>, Error>
private typealias LatestOf<Value: Sendable, Error: Swift.Error> = CombiningSources<
    CombineLatestStateMachine<Value>, Error
>

// MARK: Signal

extension Signal {
    /// A signal that sends a tuple of the latest values of `a` and `b` each time either sends a value,
    /// once both have sent at least one.
    ///
    /// As in ReactiveSwift:
    /// - The result **completes when every source has completed** (a source that completes keeps its
    ///   latest value in the tuples sent after).
    /// - It **fails or is interrupted as soon as any source fails or is interrupted**, and then detaches
    ///   from every source; later events are ignored.
    ///
    /// Order and threads: sources may send from any threads at once; the tuples are built and sent one
    /// at a time, in the order the sources' values were received, so every observer sees each source's
    /// values in the order it sent them. An event is sent on the thread of the source event that caused
    /// it, or on a thread that is already sending the result's events. An observer of the result that
    /// sends into a source is queued, never recursed into. When the result terminates it detaches from
    /// every source.
    public static func combineLatest<B>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>) -> Signal<(Value, B), Error> {
        Latest.signal(count: 2, makeOutput: { ($0[0] as! Value, $0[1] as! B) }) { storage in
            [storage.observe(a, at: 0, erase: eraseCombined), storage.observe(b, at: 1, erase: eraseCombined)]
        }
    }

    /// The latest values of `a`, `b` and `c`. See `combineLatest(_:_:)`.
    public static func combineLatest<B, C>(
        _ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>
    ) -> Signal<(Value, B, C), Error> {
        Latest.signal(count: 3, makeOutput: { ($0[0] as! Value, $0[1] as! B, $0[2] as! C) }) { storage in
            [
                storage.observe(a, at: 0, erase: eraseCombined), storage.observe(b, at: 1, erase: eraseCombined),
                storage.observe(c, at: 2, erase: eraseCombined),
            ]
        }
    }

    /// The latest values of `a`, `b`, `c` and `d`. See `combineLatest(_:_:)`.
    public static func combineLatest<B, C, D>(
        _ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>, _ d: Signal<D, Error>
    ) -> Signal<(Value, B, C, D), Error> {
        Latest.signal(count: 4, makeOutput: { ($0[0] as! Value, $0[1] as! B, $0[2] as! C, $0[3] as! D) }) { storage in
            [
                storage.observe(a, at: 0, erase: eraseCombined), storage.observe(b, at: 1, erase: eraseCombined),
                storage.observe(c, at: 2, erase: eraseCombined), storage.observe(d, at: 3, erase: eraseCombined),
            ]
        }
    }

    /// An array of the latest values of every signal in `signals`, in the order of `signals`, each time
    /// one sends a value, once all have sent one. See `combineLatest(_:_:)`.
    ///
    /// With no signals, the result completes at once (ReactiveSwift's never sends anything).
    public static func combineLatest<Signals: Sequence>(
        _ signals: Signals
    ) -> Signal<[Value], Error> where Signals.Element == Signal<Value, Error> {
        let signals = Array(signals)
        return LatestOf<Value, Error>.signal(count: signals.count, makeOutput: { $0 }) { storage in
            signals.enumerated().map { index, signal in storage.observe(signal, at: index, erase: { $0 }) }
        }
    }

    /// The latest values of this signal and `other`. See `combineLatest(_:_:)`.
    public func combineLatest<Other>(with other: Signal<Other, Error>) -> Signal<(Value, Other), Error> {
        Signal.combineLatest(self, other)
    }
}

// MARK: SignalProducer

extension SignalProducer {
    /// A producer whose runs start a run of `a`, then of `b`, and send a tuple of their latest values
    /// each time either sends a value, once both have sent one.
    ///
    /// Termination is as in `Signal.combineLatest(_:_:)`: a run completes when both inner runs have
    /// completed, and fails or is interrupted as soon as either does, interrupting the other. If `a`
    /// ends the run while starting, `b` is not started. Disposing the run interrupts both inner runs.
    public static func combineLatest<B>(
        _ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>
    ) -> SignalProducer<(Value, B), Error> {
        Latest.producer(count: 2, makeOutput: { ($0[0] as! Value, $0[1] as! B) }) { storage, lifetime in
            storage.start(a, at: 0, lifetime: lifetime, erase: eraseCombined)
            storage.start(b, at: 1, lifetime: lifetime, erase: eraseCombined)
        }
    }

    /// The latest values of runs of `a`, `b` and `c`. See `combineLatest(_:_:)`.
    public static func combineLatest<B, C>(
        _ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>, _ c: SignalProducer<C, Error>
    ) -> SignalProducer<(Value, B, C), Error> {
        Latest.producer(count: 3, makeOutput: { ($0[0] as! Value, $0[1] as! B, $0[2] as! C) }) { storage, lifetime in
            storage.start(a, at: 0, lifetime: lifetime, erase: eraseCombined)
            storage.start(b, at: 1, lifetime: lifetime, erase: eraseCombined)
            storage.start(c, at: 2, lifetime: lifetime, erase: eraseCombined)
        }
    }

    /// The latest values of runs of `a`, `b`, `c` and `d`. See `combineLatest(_:_:)`.
    public static func combineLatest<B, C, D>(
        _ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>,
        _ c: SignalProducer<C, Error>, _ d: SignalProducer<D, Error>
    ) -> SignalProducer<(Value, B, C, D), Error> {
        Latest.producer(count: 4, makeOutput: { ($0[0] as! Value, $0[1] as! B, $0[2] as! C, $0[3] as! D) }) {
            storage, lifetime in
            storage.start(a, at: 0, lifetime: lifetime, erase: eraseCombined)
            storage.start(b, at: 1, lifetime: lifetime, erase: eraseCombined)
            storage.start(c, at: 2, lifetime: lifetime, erase: eraseCombined)
            storage.start(d, at: 3, lifetime: lifetime, erase: eraseCombined)
        }
    }

    /// An array of the latest values of runs of every producer in `producers`, started in order. See
    /// `combineLatest(_:_:)`. With no producers, a run completes at once.
    public static func combineLatest<Producers: Sequence>(
        _ producers: Producers
    ) -> SignalProducer<[Value], Error> where Producers.Element == SignalProducer<Value, Error> {
        let producers = Array(producers)
        return LatestOf<Value, Error>.producer(count: producers.count, makeOutput: { $0 }) { storage, lifetime in
            for (index, producer) in producers.enumerated() {
                storage.start(producer, at: index, lifetime: lifetime, erase: { $0 })
            }
        }
    }

    /// The latest values of runs of this producer and `other`. See `combineLatest(_:_:)`.
    public func combineLatest<Other>(
        with other: SignalProducer<Other, Error>
    ) -> SignalProducer<(Value, Other), Error> {
        SignalProducer.combineLatest(self, other)
    }
}
