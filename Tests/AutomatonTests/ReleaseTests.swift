import Automaton
import Dispatch
import Signals
import Testing

@Suite("Release leaves nothing behind (BRIEF §5.7, §6)", .serialized)
struct ReleaseTests {
    enum Step: Sendable, Equatable { case go, echo }

    @Test("after release no effect runs, every effect's lifetime has ended and no object is alive")
    func releaseFreesEverything() {
        let baseline = LiveObject.count
        let ended = Recording<Int>()
        let scheduler = TestScheduler()
        let (input, inputObserver) = Signal<Step, Never>.pipe()
        weak var weakAutomaton: Automaton<Int, Step>?
        weak var weakReplies: Signal<Reply<Int, Step>, Never>?
        weak var weakStateSignal: Signal<Int, Never>?
        do {
            let automaton = Automaton(
                state: 0, input: input,
                mapping: { (state: Int, step: Step) in
                    guard step == .go else { return (state + 1, .empty) }
                    let tracked = LiveObject()
                    let effect = SignalProducer<Step, Never> { observer, lifetime in
                        let id = state
                        lifetime.observeEnded { withExtendedLifetime(tracked) { ended.append(id) } }
                        lifetime += scheduler.schedule(after: .seconds(1), interval: .seconds(1)) {
                            observer.send(value: .echo)
                        }
                    }
                    return (state + 1, effect)
                }, strategy: .merge)
            let observerObject = LiveObject()
            automaton.replies.observeValues { _ in withExtendedLifetime(observerObject) {} }
            automaton.state.signal.observeValues { _ in withExtendedLifetime(observerObject) {} }
            weakAutomaton = automaton
            weakReplies = automaton.replies
            weakStateSignal = automaton.state.signal

            inputObserver.send(value: .go)
            inputObserver.send(value: .go)
            scheduler.advance(by: .seconds(2))
            #expect(automaton.state.value == 6)
            #expect(LiveObject.count == baseline + 3)
        }

        #expect(weakAutomaton == nil)
        #expect(weakReplies == nil)
        #expect(weakStateSignal == nil)
        #expect(ended.values == [0, 1])
        #expect(scheduler.pendingActionCount == 0)
        #expect(LiveObject.count == baseline)
        inputObserver.send(value: .go)  // the input signal outlives the automaton and holds nothing of it
        #expect(LiveObject.count == baseline)
    }

    @Test("a pipe, a started and finished producer, and an unobserved automaton are freed when dropped")
    func unobservedThingsAreFreed() {
        weak var weakSignal: Signal<Int, Never>?
        weak var weakProducerSignal: Signal<Int, Never>?
        weak var weakAutomaton: Automaton<Int, Int>?
        do {
            let (signal, input) = Signal<Int, Never>.pipe()
            signal.observeValues { _ in }
            input.send(value: 1)
            weakSignal = signal

            SignalProducer<Int, Never>(values: 1, 2, 3).startWithSignal { signal, _ in
                weakProducerSignal = signal
            }

            let automaton = Automaton(state: 0, mapping: { (state: Int, input: Int) in state + input })
            automaton.send(1)
            weakAutomaton = automaton
        }
        #expect(weakSignal == nil)
        #expect(weakProducerSignal == nil)
        #expect(weakAutomaton == nil)
    }

    @Test("concurrent observe, dispose, send and release on automata never crash or hang")
    func concurrentObserveDisposeSendRelease() async {
        for _ in 0..<50 {
            let holder = Locked<Automaton<Int, Step>?>(
                Automaton(
                    state: 0,
                    mapping: { (state: Int, step: Step) in
                        let effect = SignalProducer<Step, Never> { observer, _ in
                            if step == .go { DispatchQueue.global().async { observer.send(value: .echo) } }
                        }
                        return (state + 1, effect)
                    }, strategy: .latest))
            await runOnThreads(4, timeout: 300) { thread in
                for iteration in 0..<200 {
                    guard let automaton = holder.withCriticalRegion({ $0 }) else { return }
                    switch thread {
                    case 0:
                        automaton.send(.go)
                    case 1:
                        automaton.replies.observeValues { _ in }.dispose()
                    case 2:
                        let disposable = automaton.state.producer.startWithValues { _ in }
                        automaton.send(.echo)
                        disposable.dispose()
                    default:
                        if iteration == 100 { holder.withCriticalRegion { $0 = nil } }
                    }
                }
            }
        }
    }

    /// Keeps the observers of the effects it starts, past their cancellation: a start handler that
    /// ignores its lifetime.
    final class ObserverStore: @unchecked Sendable {
        // Safe: only touched under `lock`.
        private let lock = Locked<([Observer<Int, Never>], [Lifetime])>(([], []))
        func keep(_ observer: Observer<Int, Never>) { lock.withCriticalRegion { $0.0.append(observer) } }
        func keep(_ lifetime: Lifetime) { lock.withCriticalRegion { $0.1.append(lifetime) } }
        var observers: [Observer<Int, Never>] { lock.withCriticalRegion { $0.0 } }
        var lifetimes: [Lifetime] { lock.withCriticalRegion { $0.1 } }
    }

    @Test(
        "effects that keep their observers and lifetimes, in an object the mapping and a state observer capture, keep nothing alive once the automaton is released",
        arguments: [false, true])
    func effectsKeepingTheirObservers(interruptFirst: Bool) {
        weak var weakStore: ObserverStore?
        weak var weakReplies: Signal<Reply<Int, Int>, Never>?
        weak var weakAutomaton: Automaton<Int, Int>?
        let (input, inputObserver) = Signal<Int, Never>.pipe()
        let events = Recording<Event<Reply<Int, Int>, Never>>()
        let states = Recording<Event<Int, Never>>()
        do {
            let store = ObserverStore()
            weakStore = store
            var automaton: Automaton<Int, Int>? = Automaton(
                state: 0, input: input,
                mapping: { (state: Int, value: Int) in
                    guard value > 0 else { return (state + 1, .empty) }
                    return (
                        state + 1,
                        SignalProducer<Int, Never> { observer, lifetime in
                            store.keep(observer)
                            store.keep(lifetime)
                        }
                    )
                }, strategy: .merge)
            weakAutomaton = automaton
            weakReplies = automaton?.replies
            automaton?.replies.observe { events.append($0) }
            automaton?.state.signal.observe { event in withExtendedLifetime(store) { states.append(event) } }
            automaton?.send(1)
            automaton?.send(2)
            if interruptFirst { inputObserver.sendInterrupted() }
            automaton = nil
            #expect(weakAutomaton == nil)
            // The cancelled effects' observers are still held; what they send is ignored.
            #expect(store.observers.count == 2)
            for observer in store.observers { observer.send(value: 0) }
            // Their lifetimes have ended (the effects were cancelled); cleanup added now runs at once.
            #expect(store.lifetimes.map(\.hasEnded) == [true, true])
            let lateCleanup = Recording<Int>()
            for (index, lifetime) in store.lifetimes.enumerated() {
                lifetime.observeEnded { lateCleanup.append(index) }
            }
            #expect(lateCleanup.values == [0, 1])
        }
        #expect(weakStore == nil)
        #expect(weakReplies == nil)
        let end: Event<Reply<Int, Int>, Never> = interruptFirst ? .interrupted : .completed
        #expect(events.values == [.value(.success(1, 0, 1)), .value(.success(2, 1, 2)), end])
        #expect(states.values == [.value(1), .value(2), .completed])
    }

    @Test(
        "released while its input is processed: the input in hand is announced, queued inputs are dropped, replies complete, then the lifetime ends"
    )
    func releaseDuringProcessing() {
        let log = Recording<String>()
        let holder = Locked<Automaton<Int, Int>?>(nil)
        let sender = Locked<(@Sendable (Int) -> Void)?>(nil)
        var automaton: Automaton<Int, Int>? = Automaton(
            state: 0,
            mapping: { (state: Int, input: Int) in
                if input == 1 {
                    // Queue another input, then let the last reference go, while the sender's call is
                    // being processed: the termination comes after this input, and drops the queued one.
                    sender.withCriticalRegion { $0 }?(5)
                    var last = holder.withCriticalRegion { $0.take() }
                    log.append("releasing")
                    last = nil
                    _ = last
                }
                return state + input
            })
        automaton?.lifetime.observeEnded { log.append("lifetime ended") }
        automaton?.replies.observe { event in log.append("\(event)") }
        let send = automaton!.sender
        sender.withCriticalRegion { $0 = send }
        holder.withCriticalRegion { $0 = automaton }
        automaton = nil
        send(1)
        log.append("send returned")
        send(2)  // ignored: the automaton is gone
        #expect(
            log.values == [
                "releasing", "value(success(1, 0 => 1))", "completed", "lifetime ended", "send returned",
            ])
    }

    @Test("disposed observers of replies, effectEvents and state are released at once, though no input follows")
    func disposedObserversAreReleasedAtOnce() {
        final class Owner: Sendable {}
        let automaton = Automaton(state: 0, mapping: { (state: Int, _: Int) in state + 1 })
        let replies = Recording<Int>()
        weak var weakOwner: Owner?
        do {
            let owner = Owner()
            weakOwner = owner
            let observations = [
                automaton.replies.observeValues { reply in
                    withExtendedLifetime(owner) { replies.append(reply.toState ?? -1) }
                },
                automaton.effectEvents.observeValues { _ in withExtendedLifetime(owner) {} },
                automaton.state.signal.observeValues { _ in withExtendedLifetime(owner) {} },
            ]
            automaton.send(1)
            for observation in observations { observation.dispose() }
        }
        #expect(weakOwner == nil, "an idle automaton keeps no disposed observer")
        automaton.send(2)
        #expect(replies.values == [1])
        #expect(automaton.state.value == 2)
    }
}
