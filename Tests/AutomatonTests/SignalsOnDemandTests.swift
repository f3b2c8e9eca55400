import Automaton
import Dispatch
import Foundation
import Signals
import Testing

/// `replies`, `effectEvents` and `state.signal` are made when first read (issue 31 §3: an automaton
/// nobody observes costs no signal). Nothing an observer can see may depend on when that happened.
@Suite("An automaton's signals, made when first read")
struct SignalsOnDemandTests {
    @Test("an automaton nobody observes makes no signal; each read returns the same signal")
    func madeOnFirstRead() {
        let effect = ControlledEffect<TreeInput>()
        let automaton = Automaton(state: 0, mapping: { state, _ in (state + 1, effect.producer) })
        automaton.send(.start)
        effect.runs[0].observer.sendCompleted()
        #expect(automaton.state.value == 1)
        #expect(automaton.signalsMade == (false, false, false))

        let replies = automaton.replies
        #expect(automaton.signalsMade == (true, false, false))
        let effectEvents = automaton.effectEvents
        let changes = automaton.state.signal
        #expect(automaton.signalsMade == (true, true, true))
        #expect(automaton.replies === replies)
        #expect(automaton.effectEvents === effectEvents)
        #expect(automaton.state.signal === changes)
    }

    @Test("the lifetime is made on first read, the same for every reader, and ends last at the release")
    func lifetimeOnFirstRead() async {
        let order = Recording<String>()
        let lifetimes = Recording<Lifetime>()
        do {
            let automaton = Automaton<Int, TreeInput>(state: 0, mapping: { state, _ in state + 1 })
            automaton.replies.observeCompleted { order.append("replies completed") }
            await runOnThreads(4) { _ in lifetimes.append(automaton.lifetime) }
            #expect(Set(lifetimes.values).count == 1, "four first reads, one lifetime")
            automaton.lifetime.observeEnded { order.append("lifetime ended") }
            #expect(lifetimes.values.allSatisfy { lifetime in !lifetime.hasEnded })
        }
        #expect(lifetimes.values.allSatisfy { lifetime in lifetime.hasEnded })
        #expect(order.values == ["replies completed", "lifetime ended"])
    }

    /// The machine's occasional parts (see `OccasionalState`) are made only by what uses them, so that
    /// an automaton with plain effects, observed replies and effect events heard at once costs none; a
    /// keyed effect, or a processing observer, makes them, and the release frees them (the address
    /// sanitizer job's leak check fails otherwise) with what they hold: here a processing observer.
    @Test("the occasional parts are made only by keyed effects or processing observers, and freed")
    func occasionalPartsOnUse() {
        final class Token: Sendable {}
        let effect = ControlledEffect<TreeInput>()
        weak var heldByObserver: Token?
        do {
            let plain = Automaton(state: 0, mapping: { state, _ in (state + 1, effect.producer) }, strategy: .latest)
            let replies = plain.replies.record()
            let events = plain.effectEvents.record()
            plain.send(.start)
            plain.send(.child)
            effect.runs[1].observer.send(value: .start)
            effect.runs[1].observer.sendCompleted()
            #expect(
                replies.values == [
                    .value(.success(.start, 0, 1)), .value(.success(.child, 1, 2)), .value(.success(.start, 2, 3)),
                ])
            #expect(
                events.values.map { "\($0)" } == [
                    "value(effect 0 started by start)", "value(effect 0 replaced by child)",
                    "value(effect 1 started by child)", "value(effect 2 started by start)", "value(effect 1 ended)",
                ])
            #expect(!plain.occasionalPartsMade)

            let keyed = Automaton(state: 0, mapping: { state, _ in (state + 1, effect.producer.keyed("k", .latest)) })
            #expect(!keyed.occasionalPartsMade)
            keyed.send(.start)
            #expect(keyed.occasionalPartsMade)

            let observed = Automaton<Int, TreeInput>(state: 0, mapping: { state, _ in state + 1 })
            let token = Token()
            heldByObserver = token
            observed.observeProcessing { _ in withExtendedLifetime(token) {} }
            #expect(observed.occasionalPartsMade)
            observed.send(.start)
            #expect(observed.state.value == 1)
        }
        #expect(heldByObserver == nil, "the released automaton let go of its processing observer")
    }

    /// The effects' lifetimes share the state property's lock (one lock less per automaton), under
    /// which the automaton's lifetime is made. Nothing may take that lock while holding it: effects read and observe the
    /// state and register cleanup, `.latest` ends their lifetimes while the state's changes are
    /// delivered, a state observer reads the automaton's lifetime and registers cleanup on it, on three
    /// threads at once. A self-deadlock hangs the round (the helper's timeout fails it).
    @Test("the lifetimes share the state's lock, and nothing takes it twice")
    func lifetimesShareTheStateLock() async {
        let sends = 50
        for round in 0..<100 {
            let started = Recording<Int>()
            let ended = Recording<Int>()
            let automatonEnded = Recording<Int>()
            let state = Locked<Property<Int>?>(nil)
            let effect = SignalProducer<TreeInput, Never> { _, lifetime in
                lifetime.observeEnded { ended.append(1) }
                if let state = state.withCriticalRegion({ $0 }) {
                    lifetime += state.signal.observeValues { _ in _ = state.value }
                    _ = state.value
                }
                started.append(1)
            }
            do {
                let automaton = Automaton<Int, TreeInput>(
                    state: 0, mapping: { state, _ in (state + 1, effect) }, strategy: .latest)
                state.withCriticalRegion { $0 = automaton.state }
                automaton.state.signal.observeValues { [weak automaton] value in
                    guard value % 10 == 0, let automaton else { return }
                    automaton.lifetime.observeEnded { automatonEnded.append(value) }
                }
                // The threads hold only the sender, so that the automaton is released here, on this
                // thread, and not by a thread still letting go of its closure.
                let send = automaton.sender
                await runOnThreads(3) { _ in
                    for _ in 0..<sends { send(.start) }
                }
                #expect(automaton.state.value == 3 * sends, "round \(round)")
                state.withCriticalRegion { $0 = nil }
            }
            #expect(started.count == 3 * sends, "round \(round): every effect started")
            #expect(ended.count == 3 * sends, "round \(round): every effect's lifetime ended, once")
            #expect(automatonEnded.count == 3 * sends / 10, "round \(round): the automaton's lifetime ended")
        }
    }

    @Test("observers added after earlier inputs hear exactly what follows, in order")
    func observersHearWhatFollows() {
        let effect = ControlledEffect<TreeInput>()
        let automaton = Automaton(state: 0, mapping: { state, _ in (state + 1, effect.producer) })
        automaton.send(.start)
        let replies = automaton.replies.record()
        let events = automaton.effectEvents.record()
        let states = automaton.state.signal.record()
        effect.runs[0].observer.sendCompleted()  // its start was before the observers
        automaton.send(.child)
        effect.runs[1].observer.sendCompleted()

        #expect(replies.values == [.value(.success(.child, 1, 2))])
        #expect(states.values == [.value(2)])
        #expect(
            events.values.map { $0.value.map { "\($0)" } } == [
                "effect 0 ended", "effect 1 started by child", "effect 1 ended",
            ])
    }

    @Test("read first after the automaton ended: each signal has ended as it did, at once")
    func readAfterTheEnd() {
        // Interrupted input: replies and effect events interrupted, state completed.
        let (input, inputObserver) = Signal<TreeInput, Never>.pipe()
        let interrupted = Automaton(state: 0, input: input, mapping: { state, _ in state + 1 })
        inputObserver.send(value: .start)
        inputObserver.sendInterrupted()
        #expect(interrupted.signalsMade == (false, false, false))
        #expect(interrupted.replies.record().values == [.interrupted])
        #expect(interrupted.effectEvents.record().values == [.interrupted])
        #expect(interrupted.state.signal.record().values == [.completed])
        let current = Recording<Event<Int, Never>>()
        interrupted.state.producer.start { current.append($0) }
        #expect(current.values == [.value(1), .completed])

        // Completed input, no effect running: replies and effect events completed, state goes on.
        let (completingInput, completingObserver) = Signal<TreeInput, Never>.pipe()
        let completed = Automaton(state: 0, input: completingInput, mapping: { state, _ in state + 1 })
        completingObserver.sendCompleted()
        #expect(completed.replies.record().values == [.completed])
        #expect(completed.effectEvents.record().values == [.completed])
        let states = completed.state.signal.record()
        #expect(states.values == [])
    }

    @Test("a signal read after release is kept alive by its reader, and has completed")
    func readThenReleased() {
        weak var weakReplies: Signal<Reply<Int, TreeInput>, Never>?
        var replies: Signal<Reply<Int, TreeInput>, Never>?
        do {
            let automaton = Automaton<Int, TreeInput>(state: 0, mapping: { state, _ in state + 1 })
            replies = automaton.replies
            weakReplies = replies
            automaton.send(.start)
        }
        #expect(replies?.record().values == [.completed])
        replies = nil
        #expect(weakReplies == nil)
    }

    /// A thread sends 1...200 inputs, then releases the automaton; two threads read `replies` and
    /// `effectEvents` for the first time and observe them meanwhile. Each observer must hear a
    /// gap-free run of replies up to the last input, then the end, once: what was sent before the
    /// signal existed reached nobody, and nothing after it was lost.
    @Test("first reads race inputs and the release: gap-free runs, one end each")
    func firstReadsRaceInputsAndRelease() async {
        let inputs = 200
        for round in 0..<200 {
            let ends = SignalProducer<TreeInput, Never> { observer, _ in observer.sendCompleted() }
            // The automaton's one strong reference, dropped by the sending thread once it has sent: the
            // observing threads hold it only while they read its signals.
            let holder = Locked<Automaton<Int, TreeInput>?>(
                Automaton(state: 0, mapping: { state, _ in (state + 1, ends) }))
            let replies = [Recording<Event<Reply<Int, TreeInput>, Never>>(), Recording()]
            let events = [Recording<Event<EffectEvent<TreeInput>, Never>>(), Recording()]
            let observed = Recording<Int>()
            await runOnThreads(3) { index in
                if index == 2 {
                    guard let send = holder.withCriticalRegion({ $0?.sender }) else { return }
                    for _ in 0..<inputs { send(.start) }
                    holder.withCriticalRegion { $0 = nil }
                } else if let automaton = holder.withCriticalRegion({ $0 }) {
                    observed.append(index)
                    automaton.replies.observe { replies[index].append($0) }
                    automaton.effectEvents.observe { events[index].append($0) }
                }
            }
            // A thread that came after the release observed nothing.
            for recording in observed.values.map({ replies[$0] }) {
                let values = recording.values
                let states = values.compactMap { event -> Int? in
                    guard case let .success(_, _, to) = event.value else { return nil }
                    return to
                }
                #expect(states == (states.first.map { Array($0...inputs) } ?? []), "round \(round): gap-free replies")
                #expect(values.last == .completed, "round \(round): replies complete, last")
                #expect(values.filter(\.isTerminating).count == 1, "round \(round): once")
            }
            for recording in observed.values.map({ events[$0] }) {
                let values = recording.values
                #expect(values.last?.isTerminating == true, "round \(round): effect events end, last")
                #expect(values.filter(\.isTerminating).count == 1, "round \(round): once")
            }
        }
    }
}
