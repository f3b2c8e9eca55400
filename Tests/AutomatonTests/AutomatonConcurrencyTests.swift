import Automaton
import Dispatch
import Foundation
import Signals
import Testing

@Suite("Automaton under threads (BRIEF §5.4, §6)")
struct AutomatonConcurrencyTests {
    enum Count: Sendable, Equatable { case add(thread: Int, index: Int), echo }

    @Test("6 threads sending 50,000 inputs each: none is lost and every replies observer sees one order")
    func concurrentSendersKeepOneOrder() async {
        let threads = 6
        let perThread = 50_000
        let automaton = Automaton(state: 0, mapping: { (state: Int, _: Count) in state + 1 })
        let observers = (0..<3).map { _ in Recording<Reply<Int, Count>>() }
        for observer in observers {
            automaton.replies.observeValues { observer.append($0) }
        }
        let states = automaton.state.signal.record()

        await runOnThreads(threads) { thread in
            for index in 0..<perThread {
                automaton.send(.add(thread: thread, index: index))
            }
        }

        let total = threads * perThread
        #expect(automaton.state.value == total)
        let first = observers[0].values
        #expect(first.count == total)
        #expect(first.map(\.toState) == (1...total).map { $0 })
        #expect(observers[1].values == first)
        #expect(observers[2].values == first)
        #expect(states.values == (1...total).map { .value($0) })
        // Each thread's inputs keep their own order.
        for thread in 0..<threads {
            let indices = first.compactMap { reply -> Int? in
                guard case let .add(sender, index) = reply.input, sender == thread else { return nil }
                return index
            }
            #expect(indices == Array(0..<perThread))
        }
    }

    @Test("effects emitting from background queues while outside inputs keep arriving never deadlock")
    func backgroundEffectsWithOutsideInputs() async {
        let threads = 4
        let perThread = 5_000
        let effectsDone = DispatchGroup()
        let queues = (0..<4).map { DispatchQueue(label: "effect-\($0)") }
        let automaton = Automaton(
            state: 0,
            mapping: { (state: Int, input: Count) in
                switch input {
                case let .add(thread, index):
                    let effect = SignalProducer<Count, Never> { observer, _ in
                        effectsDone.enter()
                        queues[(thread + index) % queues.count].async {
                            observer.send(value: .echo)
                            observer.sendCompleted()
                            effectsDone.leave()
                        }
                    }
                    return (state + 1, effect)
                case .echo:
                    return (state + 1, .empty)
                }
            }, strategy: .merge)
        let replies = Recording<Reply<Int, Count>>()
        automaton.replies.observeValues { replies.append($0) }

        await runOnThreads(threads) { thread in
            for index in 0..<perThread {
                automaton.send(.add(thread: thread, index: index))
            }
        }
        await waitOrFail(effectsDone)

        let total = threads * perThread * 2
        #expect(automaton.state.value == total)
        #expect(replies.values.map(\.toState) == (1...total).map { $0 })
        #expect(replies.values.filter { $0.input == .echo }.count == threads * perThread)
    }

    @Test("releasing an automaton while effects emit from background threads is safe and frees it")
    func releaseWhileEffectsEmit() async {
        for _ in 0..<200 {
            let effectsDone = DispatchGroup()
            let started = Recording<Int>()
            let ended = Recording<Int>()
            var automaton: Automaton<Int, Count>? = Automaton(
                state: 0,
                mapping: { (state: Int, input: Count) in
                    guard case let .add(_, index) = input else { return (state + 1, .empty) }
                    let effect = SignalProducer<Count, Never> { observer, lifetime in
                        started.append(index)
                        lifetime.observeEnded { ended.append(index) }
                        effectsDone.enter()
                        DispatchQueue.global().async {
                            for _ in 0..<10 { observer.send(value: .echo) }
                            effectsDone.leave()
                        }
                    }
                    return (state + 1, effect)
                }, strategy: .latest)
            weak let weakAutomaton = automaton
            // An outside input that arrives while a background echo is being processed is queued
            // behind it, and the release below may drop it: so count the effects that started.
            for index in 0..<5 { automaton?.send(.add(thread: 0, index: index)) }

            automaton = nil

            #expect(weakAutomaton == nil)
            #expect(started.count >= 1)
            // A background thread that was processing an echo at the release performs the termination
            // once that echo is announced, before its `send` returns: so once every echo was sent,
            // every started effect has ended.
            await waitOrFail(effectsDone)
            #expect(ended.values.sorted() == started.values.sorted())
        }
    }

    @Test("observers of replies and effectEvents attached and disposed while two threads send hear gap-free runs")
    func observersComingAndGoingWhileThreadsSend() async {
        for _ in 0..<8 {
            let (input, inputObserver) = Signal<Count, Never>.pipe()
            // Every input starts an effect that ends at once, so each step has a reply and two effect
            // events; states count the inputs, so a reply's `toState` is its place in the one order.
            let automaton = Automaton(
                state: 0, input: input,
                mapping: { (state: Int, _: Count) in (state + 1, SignalProducer<Count, Never>.empty.keyed(0, .merge)) },
                strategy: .merge
            )
            let perThread = 2_000
            // Half the observers are disposed at once (short runs), half stay to the end (long runs);
            // the recordings are read once every thread is done.
            let replyRuns = Locked<[Recording<Int>]>([])
            let eventRuns = Locked<[Recording<EffectEvent<Count>>]>([])
            // Each sender waits until one observer that stays has been attached (each observer thread
            // signals once, after its first round that keeps its observers), so that some observer
            // hears the sends even when the senders would otherwise finish before the observer threads
            // are scheduled (on two cores, in a release build: a flaky "no observer heard anything").
            let oneStays = DispatchSemaphore(value: 0)

            await runOnThreads(4) { thread in
                if thread < 2 {
                    oneStays.wait()
                    for index in 0..<perThread { automaton.send(.add(thread: thread, index: index)) }
                    return
                }
                for round in 0..<30 {
                    let states = Recording<Int>()
                    let events = Recording<EffectEvent<Count>>()
                    let replies = automaton.replies.observeValues { states.append($0.toState ?? -1) }
                    let effectEvents = automaton.effectEvents.observeValues { events.append($0) }
                    if round % 2 == 0 {
                        replies.dispose()
                        effectEvents.dispose()
                    }
                    replyRuns.withCriticalRegion { $0.append(states) }
                    eventRuns.withCriticalRegion { $0.append(events) }
                    if round == 1 { oneStays.signal() }
                }
            }
            inputObserver.sendCompleted()

            #expect(automaton.state.value == 2 * perThread)
            let replies = replyRuns.withCriticalRegion { $0.map(\.values) }
            let events = eventRuns.withCriticalRegion { $0.map(\.values) }
            #expect(replies.contains { !$0.isEmpty } && events.contains { !$0.isEmpty }, "no observer heard anything")
            for states in replies {
                guard let first = states.first else { continue }
                #expect(states == Array(first..<(first + states.count)), "a gap-free run of replies")
            }
            for run in events {
                // Each step's effect starts, then ends, before the next step's starts.
                for (event, next) in zip(run, run.dropFirst()) {
                    switch (event.kind, next.kind) {
                    case (.started, .ended): #expect(next.id == event.id)
                    case (.ended, .started): #expect(next.id == event.id + 1)
                    default: Issue.record("effect events out of order: \(event), then \(next)")
                    }
                }
            }
        }
    }
}
