/// What a combining state machine (`combineLatest`, `zip`) decides after an event of one source.
enum CombiningAction<Element> {
    /// Nothing to send.
    case none
    /// Send one combined value.
    case send([Element])
    /// Complete the result.
    case complete
    /// Send one combined value, then complete the result.
    case sendThenComplete([Element])
}

/// The bookkeeping of one combination of several sources, numbered from 0. Pure: `CombiningStorage`
/// keeps it under a lock and performs what its methods return.
protocol CombiningStateMachine: Sendable {
    associatedtype Element: Sendable
    /// A machine for `count` sources (at least one).
    init(count: Int)
    /// Source `index` sent `element`.
    ///
    /// - Returns: what to do, and the element that `element` replaced, if any: the caller must release
    ///   it after the lock (it is the user's).
    mutating func value(_ element: Element, at index: Int) -> (action: CombiningAction<Element>, replaced: Element?)
    /// Source `index` completed. Each source completes at most once.
    mutating func completed(at index: Int) -> CombiningAction<Element>
}

/// The state of one combination: the machine, the events it decided and that are not sent yet, and
/// who sends them.
struct CombiningState<Machine: CombiningStateMachine, Error: Swift.Error>: Sendable {
    var machine: Machine
    /// Events decided under the lock, in the order decided, waiting for the sender.
    var outbox = FIFOQueue<Event<[Machine.Element], Error>>()
    /// Whether a thread holds the sender role and is emptying `outbox`.
    var isSending = false
    /// Whether a terminal event has been decided: later source events are ignored.
    var isTerminated = false

    init(count: Int) {
        machine = Machine(count: count)
    }

    /// Records a source event.
    ///
    /// - Returns: whether the caller must now take the sender role, and the element the event replaced,
    ///   if any: the caller must release it after the lock.
    mutating func receive(
        _ event: Event<Machine.Element, Error>,
        at index: Int
    ) -> (mustSend: Bool, replaced: Machine.Element?) {
        guard !isTerminated else { return (false, nil) }
        let action: CombiningAction<Machine.Element>
        var replaced: Machine.Element?
        switch event {
        case let .value(element):
            (action, replaced) = machine.value(element, at: index)
        case .completed:
            action = machine.completed(at: index)
        case let .failed(error):
            isTerminated = true
            outbox.append(.failed(error))
            action = .none
        case .interrupted:
            isTerminated = true
            outbox.append(.interrupted)
            action = .none
        }
        switch action {
        case .none:
            break
        case let .send(elements):
            outbox.append(.value(elements))
        case .complete:
            isTerminated = true
            outbox.append(.completed)
        case let .sendThenComplete(elements):
            isTerminated = true
            outbox.append(.value(elements))
            outbox.append(.completed)
        }
        guard !isSending, !outbox.isEmpty else { return (false, replaced) }
        isSending = true
        return (true, replaced)
    }

    /// The next event to send, or `nil`, in which case the caller has given up the sender role.
    mutating func nextToSend() -> Event<[Machine.Element], Error>? {
        if let event = outbox.removeFirst() { return event }
        isSending = false
        return nil
    }
}

/// One run of a combination: receives the sources' events, lets the machine decide under the lock,
/// and sends the decisions to `output` with no lock held.
///
/// Decisions are sent **in the order they were made**, by one thread at a time: the thread that finds
/// nobody sending takes the sender role and sends until the outbox is empty; a thread (or a reentrant
/// send from an observer of the result) that decides while another sends leaves its events in the
/// outbox for that sender. So sources sending from different threads cannot reorder the result, and a
/// reentrant send never recurses into this storage.
final class CombiningStorage<Machine: CombiningStateMachine, Output: Sendable, Error: Swift.Error>: Sendable {
    private let state: Locked<CombiningState<Machine, Error>>
    private let output: Observer<Output, Error>
    private let makeOutput: @Sendable ([Machine.Element]) -> Output

    init(count: Int, output: Observer<Output, Error>, makeOutput: @escaping @Sendable ([Machine.Element]) -> Output) {
        state = Locked(CombiningState(count: count))
        self.output = output
        self.makeOutput = makeOutput
    }

    /// Source `index` sent `event`.
    func receive(_ event: Event<Machine.Element, Error>, at index: Int) {
        let (mustSend, replaced) = state.withCriticalRegion { $0.receive(event, at: index) }
        if mustSend {
            while let next = state.withCriticalRegion({ $0.nextToSend() }) {
                output.send(next.map(makeOutput))
            }
        }
        withExtendedLifetime(replaced) {}  // released with no lock held
    }

    /// Observes `source` as source `index`, converting its values with `erase`.
    func observe<Source: Sendable>(
        _ source: Signal<Source, Error>,
        at index: Int,
        erase: @escaping @Sendable (Source) -> Machine.Element
    ) -> Disposable {
        source.observe(Observer { [self] event in self.receive(event.map(erase), at: index) })
    }

    /// Starts `source` as source `index` of a producer run whose lifetime is `lifetime`: ending the
    /// lifetime interrupts the source's run. Does nothing if the lifetime has already ended.
    func start<Source: Sendable>(
        _ source: SignalProducer<Source, Error>,
        at index: Int,
        lifetime: Lifetime,
        erase: @escaping @Sendable (Source) -> Machine.Element
    ) {
        if lifetime.hasEnded { return }
        source.startWithSignal { signal, interrupter in
            lifetime += interrupter
            signal.observe(Observer { [self] event in self.receive(event.map(erase), at: index) })
        }
    }
}

/// How a combination attaches to its sources: a list of closures, one per source, each attaching that
/// source to the storage at its index. Used only while the result is being built, then dropped.
struct CombiningSources<Machine: CombiningStateMachine, Error: Swift.Error> {
    typealias Storage<Output: Sendable> = CombiningStorage<Machine, Output, Error>

    /// For signals: observes each source and returns what detaches them all.
    static func signal<Output: Sendable>(
        count: Int,
        makeOutput: @escaping @Sendable ([Machine.Element]) -> Output,
        attach: (Storage<Output>) -> [Disposable]
    ) -> Signal<Output, Error> {
        Signal<Output, Error>.relaying { output in
            guard count > 0 else {
                output.sendCompleted()
                return nil
            }
            let storage = Storage(count: count, output: output, makeOutput: makeOutput)
            return CompositeDisposable(attach(storage))
        }
    }

    /// For producers: each run starts each source in order, until the run ends.
    static func producer<Output: Sendable>(
        count: Int,
        makeOutput: @escaping @Sendable ([Machine.Element]) -> Output,
        start: @escaping @Sendable (Storage<Output>, Lifetime) -> Void
    ) -> SignalProducer<Output, Error> {
        SignalProducer<Output, Error> { observer, lifetime in
            guard count > 0 else {
                observer.sendCompleted()
                return
            }
            start(Storage(count: count, output: observer, makeOutput: makeOutput), lifetime)
        }
    }
}

/// Erases a source's value for a machine that combines sources of different types.
@Sendable
func eraseCombined<Source: Sendable>(_ value: Source) -> any Sendable {
    value
}
