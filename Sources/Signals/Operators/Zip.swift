/// `zip`'s bookkeeping: the values of each source not yet paired, and which sources have completed.
struct ZipStateMachine<Element: Sendable>: CombiningStateMachine {
    private var buffers: [FIFOQueue<Element>]
    private var isCompleted: [Bool]

    init(count: Int) {
        buffers = Array(repeating: FIFOQueue(), count: count)
        isCompleted = Array(repeating: false, count: count)
    }

    mutating func value(_ element: Element, at index: Int) -> (action: CombiningAction<Element>, replaced: Element?) {
        buffers[index].append(element)
        guard buffers.allSatisfy({ !$0.isEmpty }) else { return (.none, nil) }
        var elements: [Element] = []
        elements.reserveCapacity(buffers.count)
        for index in buffers.indices {
            elements.append(buffers[index].removeFirst()!)
        }
        return (isFinished ? .sendThenComplete(elements) : .send(elements), nil)
    }

    mutating func completed(at index: Int) -> CombiningAction<Element> {
        isCompleted[index] = true
        return isFinished ? .complete : .none
    }

    /// Whether no more tuple can be formed: every source completed, or one completed with none of its
    /// values left waiting.
    private var isFinished: Bool {
        buffers.indices.contains { isCompleted[$0] && buffers[$0].isEmpty }
    }
}

private typealias Zipped<Error: Swift.Error> = CombiningSources<ZipStateMachine<any Sendable>, Error>
private typealias ZippedOf<Value: Sendable, Error: Swift.Error> = CombiningSources<ZipStateMachine<Value>, Error>

// MARK: Signal

extension Signal {
    /// A signal that pairs the values of `a` and `b` in order: the first value of each, then the second
    /// of each, and so on. A value waits (in an unbounded buffer) until every source has sent its
    /// counterpart.
    ///
    /// As in ReactiveSwift:
    /// - The result **completes when a source has completed and none of its values is left waiting**
    ///   (no further tuple can be formed), or when every source has completed.
    /// - It **fails or is interrupted as soon as any source fails or is interrupted**, dropping the
    ///   waiting values, and then detaches from every source; later events are ignored.
    ///
    /// Order and threads: as for `combineLatest(_:_:)`: tuples are sent one at a time, in the order they
    /// were formed, on the thread of the source event that formed them or on a thread already sending
    /// the result's events; an observer that sends into a source is queued, never recursed into. When
    /// the result terminates it detaches from every source.
    public static func zip<B>(_ a: Signal<Value, Error>, _ b: Signal<B, Error>) -> Signal<(Value, B), Error> {
        Zipped.signal(count: 2, makeOutput: { ($0[0] as! Value, $0[1] as! B) }) { storage in
            [storage.observe(a, at: 0, erase: eraseCombined), storage.observe(b, at: 1, erase: eraseCombined)]
        }
    }

    /// The paired values of `a`, `b` and `c`. See `zip(_:_:)`.
    public static func zip<B, C>(
        _ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>
    ) -> Signal<(Value, B, C), Error> {
        Zipped.signal(count: 3, makeOutput: { ($0[0] as! Value, $0[1] as! B, $0[2] as! C) }) { storage in
            [
                storage.observe(a, at: 0, erase: eraseCombined), storage.observe(b, at: 1, erase: eraseCombined),
                storage.observe(c, at: 2, erase: eraseCombined),
            ]
        }
    }

    /// The paired values of `a`, `b`, `c` and `d`. See `zip(_:_:)`.
    public static func zip<B, C, D>(
        _ a: Signal<Value, Error>, _ b: Signal<B, Error>, _ c: Signal<C, Error>, _ d: Signal<D, Error>
    ) -> Signal<(Value, B, C, D), Error> {
        Zipped.signal(count: 4, makeOutput: { ($0[0] as! Value, $0[1] as! B, $0[2] as! C, $0[3] as! D) }) { storage in
            [
                storage.observe(a, at: 0, erase: eraseCombined), storage.observe(b, at: 1, erase: eraseCombined),
                storage.observe(c, at: 2, erase: eraseCombined), storage.observe(d, at: 3, erase: eraseCombined),
            ]
        }
    }

    /// Arrays of the paired values of every signal in `signals`, in the order of `signals`. See
    /// `zip(_:_:)`.
    ///
    /// With no signals, the result completes at once (ReactiveSwift's never sends anything).
    public static func zip<Signals: Sequence>(
        _ signals: Signals
    ) -> Signal<[Value], Error> where Signals.Element == Signal<Value, Error> {
        let signals = Array(signals)
        return ZippedOf<Value, Error>.signal(count: signals.count, makeOutput: { $0 }) { storage in
            signals.enumerated().map { index, signal in storage.observe(signal, at: index, erase: { $0 }) }
        }
    }

    /// The paired values of this signal and `other`. See `zip(_:_:)`.
    public func zip<Other>(with other: Signal<Other, Error>) -> Signal<(Value, Other), Error> {
        Signal.zip(self, other)
    }
}

// MARK: SignalProducer

extension SignalProducer {
    /// A producer whose runs start a run of `a`, then of `b`, and pair their values in order. See
    /// `Signal.zip(_:_:)`.
    ///
    /// A run completes when one inner run has completed and none of its values is left waiting, and
    /// fails or is interrupted as soon as either inner run does; the other inner run is then
    /// interrupted. If `a` ends the run while starting, `b` is not started. Disposing the run interrupts
    /// both inner runs.
    public static func zip<B>(
        _ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>
    ) -> SignalProducer<(Value, B), Error> {
        Zipped.producer(count: 2, makeOutput: { ($0[0] as! Value, $0[1] as! B) }) { storage, lifetime in
            storage.start(a, at: 0, lifetime: lifetime, erase: eraseCombined)
            storage.start(b, at: 1, lifetime: lifetime, erase: eraseCombined)
        }
    }

    /// The paired values of runs of `a`, `b` and `c`. See `zip(_:_:)`.
    public static func zip<B, C>(
        _ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>, _ c: SignalProducer<C, Error>
    ) -> SignalProducer<(Value, B, C), Error> {
        Zipped.producer(count: 3, makeOutput: { ($0[0] as! Value, $0[1] as! B, $0[2] as! C) }) { storage, lifetime in
            storage.start(a, at: 0, lifetime: lifetime, erase: eraseCombined)
            storage.start(b, at: 1, lifetime: lifetime, erase: eraseCombined)
            storage.start(c, at: 2, lifetime: lifetime, erase: eraseCombined)
        }
    }

    /// The paired values of runs of `a`, `b`, `c` and `d`. See `zip(_:_:)`.
    public static func zip<B, C, D>(
        _ a: SignalProducer<Value, Error>, _ b: SignalProducer<B, Error>,
        _ c: SignalProducer<C, Error>, _ d: SignalProducer<D, Error>
    ) -> SignalProducer<(Value, B, C, D), Error> {
        Zipped.producer(count: 4, makeOutput: { ($0[0] as! Value, $0[1] as! B, $0[2] as! C, $0[3] as! D) }) {
            storage, lifetime in
            storage.start(a, at: 0, lifetime: lifetime, erase: eraseCombined)
            storage.start(b, at: 1, lifetime: lifetime, erase: eraseCombined)
            storage.start(c, at: 2, lifetime: lifetime, erase: eraseCombined)
            storage.start(d, at: 3, lifetime: lifetime, erase: eraseCombined)
        }
    }

    /// Arrays of the paired values of runs of every producer in `producers`, started in order. See
    /// `zip(_:_:)`. With no producers, a run completes at once.
    public static func zip<Producers: Sequence>(
        _ producers: Producers
    ) -> SignalProducer<[Value], Error> where Producers.Element == SignalProducer<Value, Error> {
        let producers = Array(producers)
        return ZippedOf<Value, Error>.producer(count: producers.count, makeOutput: { $0 }) { storage, lifetime in
            for (index, producer) in producers.enumerated() {
                storage.start(producer, at: index, lifetime: lifetime, erase: { $0 })
            }
        }
    }

    /// The paired values of runs of this producer and `other`. See `zip(_:_:)`.
    public func zip<Other>(
        with other: SignalProducer<Other, Error>
    ) -> SignalProducer<(Value, Other), Error> {
        SignalProducer.zip(self, other)
    }
}
