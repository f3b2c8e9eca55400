import Automaton
import Dispatch
import Foundation
import Signals
import Testing

/// The inputs of a polling loop: each tick's effect sends the next tick, then completes.
private enum Poll: Sendable, Equatable {
    case start, tick, stop
}

@Suite("Effect bookkeeping ends with the effects (BRIEF §5.8)")
struct EffectLifetimeTests {
    /// A polling loop on `scheduler`: every input but `.stop` starts an effect that sends `.tick` a
    /// second later.
    private static func pollingLoop(
        on scheduler: TestScheduler,
        strategy: AutomatonStrategy
    ) -> Automaton<Int, Poll> {
        Automaton(
            state: 0,
            mapping: { (state: Int, input: Poll) in
                switch input {
                case .start, .tick: return (state + 1, SignalProducer(value: .tick).delay(.seconds(1), on: scheduler))
                case .stop: return (state, .empty)
                }
            }, strategy: strategy)
    }

    @Test("a .latest polling loop keeps one tracked effect however many ticks it runs, and .stop cancels it")
    func latestPollingLoopIsBounded() {
        let scheduler = TestScheduler()
        let automaton = Self.pollingLoop(on: scheduler, strategy: .latest)
        automaton.send(.start)
        var tracked: [Int] = []
        for _ in 0..<1_000 {
            scheduler.advance(by: .seconds(1))
            tracked.append(automaton.trackedEffectCount)
        }
        #expect(automaton.state.value == 1_001)
        #expect(tracked == Array(repeating: 1, count: 1_000))
        automaton.send(.stop)
        #expect(automaton.trackedEffectCount == 0)
        #expect(scheduler.pendingActionCount == 0)
        scheduler.advance(by: .seconds(10))
        #expect(automaton.state.value == 1_001)
    }

    @Test("a .merge polling loop keeps one tracked effect too")
    func mergePollingLoopIsBounded() {
        let scheduler = TestScheduler()
        let automaton = Self.pollingLoop(on: scheduler, strategy: .merge)
        automaton.send(.start)
        for _ in 0..<500 { scheduler.advance(by: .seconds(1)) }
        #expect(automaton.trackedEffectCount == 1)
    }

    @Test("half-way through a long synchronous .latest chain, only the live end of the chain is tracked")
    func synchronousLatestChainIsBounded() {
        let automaton = Automaton(
            state: 0,
            mapping: { (state: Int, input: Int) in
                (state + 1, input < 10_000 ? SignalProducer(value: input + 1) : .empty)
            }, strategy: .latest)
        let tracked = Locked<[Int]>([])
        automaton.replies.observeValues { [unowned automaton] reply in
            if reply.input % 1_000 == 0 {
                let count = automaton.trackedEffectCount
                tracked.withCriticalRegion { $0.append(count) }
            }
        }
        automaton.send(1)
        #expect(automaton.state.value == 10_000)
        #expect(tracked.withCriticalRegion { $0 }.allSatisfy { $0 <= 2 })
        #expect(tracked.withCriticalRegion { $0 }.count == 10)
        #expect(automaton.trackedEffectCount == 0)
    }

    @Test("an outside input that replaces a long polling loop cancels only what is live")
    func replacementAfterLongLoopCancelsTheLiveEffect() {
        let scheduler = TestScheduler()
        let ended = Locked(0)
        let automaton = Automaton(
            state: 0,
            mapping: { (state: Int, input: Poll) in
                switch input {
                case .start, .tick:
                    let effect = SignalProducer<Poll, Never> { observer, lifetime in
                        lifetime.observeEnded { ended.withCriticalRegion { $0 += 1 } }
                        lifetime += scheduler.schedule(after: .seconds(1)) {
                            observer.send(value: .tick)
                            observer.sendCompleted()
                        }
                    }
                    return (state + 1, effect)
                case .stop:
                    return (state, .empty)
                }
            }, strategy: .latest)
        automaton.send(.start)
        for _ in 0..<200 { scheduler.advance(by: .seconds(1)) }
        #expect(ended.withCriticalRegion { $0 } == 200)
        automaton.send(.stop)
        #expect(ended.withCriticalRegion { $0 } == 201)
        #expect(automaton.trackedEffectCount == 0)
    }

    // MARK: Closure effects

    @Test("a closure effect that keeps no send ends when it returns: forgotten, and replies complete under .merge")
    func closureEffectWithoutSendEnds() {
        let (input, inputObserver) = Signal<Int, Never>.pipe()
        let increment: Automaton<Int, Int>.Mapping = { state, _ in state + 1 }
        let automaton = Automaton(state: 0, input: input, mapping: increment | { _ in }, strategy: .merge)
        let replies = Locked<[Event<Reply<Int, Int>, Never>]>([])
        automaton.replies.observe { event in replies.withCriticalRegion { $0.append(event) } }
        for value in 0..<1_000 { inputObserver.send(value: value) }
        #expect(automaton.trackedEffectCount == 0)
        inputObserver.sendCompleted()
        let events = replies.withCriticalRegion { $0 }
        #expect(events.count == 1_001)
        #expect(events.last == .completed)
    }

    @Test("a closure effect that keeps send ends when the last copy of send is released")
    func closureEffectKeepingSendEndsWhenReleased() {
        let kept = Locked<[@Sendable (Int) -> Void]>([])
        let (input, inputObserver) = Signal<Int, Never>.pipe()
        let toOne: Automaton<Int, Int>.Mapping = { state, input in input == 0 ? 1 : state + 10 }
        let automaton = Automaton(
            state: 0, input: input,
            mapping: toOne | { send in
                kept.withCriticalRegion { $0.append(send) }
            }, strategy: .merge)
        let replies = Locked<[Event<Reply<Int, Int>, Never>]>([])
        automaton.replies.observe { event in replies.withCriticalRegion { $0.append(event) } }
        inputObserver.send(value: 0)
        inputObserver.sendCompleted()
        #expect(automaton.trackedEffectCount == 1)
        #expect(replies.withCriticalRegion { $0 } == [.value(.success(0, 0, 1))])
        // The effect may still send, then it lets go of send.
        kept.withCriticalRegion { $0 }.first?(5)
        kept.withCriticalRegion { $0 = [] }
        #expect(automaton.trackedEffectCount == 0)
        #expect(
            replies.withCriticalRegion { $0 } == [.value(.success(0, 0, 1)), .value(.success(5, 1, 11)), .completed])
    }

    // MARK: Sending from observers

    @Test("observers that send through automaton.sender do not keep the automaton alive")
    func senderDoesNotRetain() {
        weak var weakAutomaton: Automaton<Int, Int>?
        let replies: Signal<Reply<Int, Int>, Never>
        let log = Locked<[Event<Reply<Int, Int>, Never>]>([])
        do {
            let automaton = Automaton(
                state: 0, mapping: { (state: Int, input: Int) in input == state + 1 ? input : nil })
            weakAutomaton = automaton
            replies = automaton.replies
            let send = automaton.sender
            automaton.replies.observe { event in
                log.withCriticalRegion { $0.append(event) }
                if case let .value(reply) = event, reply.isSuccess, reply.input < 3 { send(reply.input + 1) }
            }
            automaton.send(1)
            #expect(automaton.state.value == 3)
        }
        #expect(weakAutomaton == nil)
        #expect(
            log.withCriticalRegion { $0 } == [
                .value(.success(1, 0, 1)), .value(.success(2, 1, 2)), .value(.success(3, 2, 3)), .completed,
            ])
        withExtendedLifetime(replies) {}
    }
}
