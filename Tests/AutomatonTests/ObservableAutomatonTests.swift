import Automaton
import Observation
import Testing

/// One input of the concurrency test: which thread sent it, and its number on that thread.
struct Tick: Sendable, Hashable {
    let thread: Int
    let index: Int
}

/// What a view saw when it was drawn: the model's state and last reply, read together.
struct Snapshot<State: Sendable & Equatable, Input: Sendable & Equatable>: Equatable {
    let state: State
    let lastReply: Reply<State, Input>?
}

@MainActor
@Suite("ObservableAutomaton: an automaton observed from SwiftUI through Observation")
struct ObservableAutomatonTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("a read of state registers, and each transition fires onChange once, applied later on the main actor")
    func readRegistersTransitionFires() async {
        let model = makeLoginMachine(loginOK: .empty, logoutOK: .empty).observable()
        var seen: [Snapshot<State, Input>] = [Snapshot(state: model.state, lastReply: model.lastReply)]
        var changes: [Int] = []

        for input: Input in [.login, .loginOK, .logout, .logoutOK] {
            let count = ChangeCount()
            let read = withObservationTracking {
                model.state
            } onChange: {
                count.increment()
            }
            #expect(read == seen.last?.state)
            model.send(input)
            #expect(model.state == read)  // processed now, applied later: never within send
            #expect(count.value == 0)
            await waitUntil { model.lastReply?.input == input }
            changes.append(count.value)
            seen.append(Snapshot(state: model.state, lastReply: model.lastReply))
        }

        #expect(changes == [1, 1, 1, 1])
        #expect(
            seen == [
                Snapshot(state: .loggedOut, lastReply: nil),
                Snapshot(state: .loggingIn, lastReply: .success(.login, .loggedOut, .loggingIn)),
                Snapshot(state: .loggedIn, lastReply: .success(.loginOK, .loggingIn, .loggedIn)),
                Snapshot(state: .loggingOut, lastReply: .success(.logout, .loggedIn, .loggingOut)),
                Snapshot(state: .loggedOut, lastReply: .success(.logoutOK, .loggingOut, .loggedOut)),
            ])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("ask returns the reply to its input once the model has applied it, for each of a sequence")
    func askReturnsAppliedReply() async throws {
        let model = makeLoginMachine(loginOK: .empty, logoutOK: .empty).observable()
        var seen: [Snapshot<State, Input>] = []
        for input: Input in [.login, .logout, .loginOK, .logout, .logoutOK] {
            let reply = try await model.ask(input)
            #expect(model.lastReply == reply)
            seen.append(Snapshot(state: model.state, lastReply: reply))
        }
        #expect(
            seen == [
                Snapshot(state: .loggingIn, lastReply: .success(.login, .loggedOut, .loggingIn)),
                Snapshot(state: .loggingIn, lastReply: .failure(.logout, .loggingIn)),
                Snapshot(state: .loggedIn, lastReply: .success(.loginOK, .loggingIn, .loggedIn)),
                Snapshot(state: .loggingOut, lastReply: .success(.logout, .loggedIn, .loggingOut)),
                Snapshot(state: .loggedOut, lastReply: .success(.logoutOK, .loggingOut, .loggedOut)),
            ])
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("two transitions applied in one main-actor job fire a one-shot tracking once")
    func batchFiresOnce() async {
        let model = makeLoginMachine(loginOK: .empty, logoutOK: .empty).observable()
        let count = ChangeCount()
        _ = withObservationTracking {
            (model.state, model.lastReply)
        } onChange: {
            count.increment()
        }
        model.send(.login)
        model.send(.loginOK)
        await waitUntil { model.state == .loggedIn }
        #expect(count.value == 1)
        #expect(model.lastReply == .success(.loginOK, .loggingIn, .loggedIn))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("unrelated properties do not fire: a refusal leaves state alone, a transition leaves the count alone")
    func unrelatedPropertiesDoNotFire() async {
        let model = makeLoginMachine(loginOK: .empty, logoutOK: .empty).observable()
        let stateChanges = ChangeCount()
        let replyChanges = ChangeCount()
        let otherChanges = ChangeCount()
        _ = withObservationTracking {
            model.state
        } onChange: {
            stateChanges.increment()
        }
        _ = withObservationTracking {
            model.lastReply
        } onChange: {
            replyChanges.increment()
        }
        _ = withObservationTracking {
            (model.runningEffectCount, model.isTerminated)
        } onChange: {
            otherChanges.increment()
        }

        model.send(.logout)  // refused in loggedOut
        await waitUntil { model.lastReply != nil }
        #expect(model.lastReply == .failure(.logout, .loggedOut))
        #expect(model.state == .loggedOut)
        #expect(stateChanges.value == 0)
        #expect(replyChanges.value == 1)

        model.send(.login)  // a transition whose effect is .empty: no effect, no effect event
        await waitUntil { model.state == .loggingIn }
        #expect(stateChanges.value == 1)
        #expect(otherChanges.value == 0)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("runningEffectCount follows the effects: started, then replaced under .latest")
    func runningEffectCount() async {
        let model = makeLoginMachine(loginOK: .never, logoutOK: .empty).observable()
        var counts = [model.runningEffectCount]

        model.send(.login)  // starts .never
        await waitUntil { model.runningEffectCount == 1 }
        counts.append(model.runningEffectCount)
        model.send(.forceLogout)  // .latest disposes it; logoutOK is .empty
        await waitUntil { model.runningEffectCount == 0 && model.state == .loggingOut }
        counts.append(model.runningEffectCount)

        #expect(counts == [0, 1, 0])
        #expect(model.lastReply == .success(.forceLogout, .loggingIn, .loggingOut))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("when the input signal completes, the model applies the last reply, then isTerminated, once")
    func terminates() async {
        let (inputs, input) = Signal<Input, Never>.pipe()
        let automaton = Automaton<State, Input>(
            state: .loggedOut, input: inputs,
            mapping: { (state: State, input: Input) -> State? in
                state == .loggedOut && input == .login ? .loggingIn : nil
            })
        let model = automaton.observable()
        let terminations = ChangeCount()
        _ = withObservationTracking {
            model.isTerminated
        } onChange: {
            terminations.increment()
        }

        input.send(value: .login)
        input.sendCompleted()
        model.send(.login)  // ignored: the automaton's input has ended
        await waitUntil { model.isTerminated }
        #expect(terminations.value == 1)
        #expect(model.state == .loggingIn)
        #expect(model.lastReply == .success(.login, .loggedOut, .loggingIn))
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test("releasing the model disposes its observations; the automaton stays alive only while someone keeps it")
    func releasingTheModel() async {
        let automaton = makeLoginMachine(loginOK: .never, logoutOK: .empty)
        weak var released: ObservableAutomaton<State, Input>?
        do {
            let model = automaton.observable()
            released = model
            #expect(automaton.replies.observerCount == 1)
            #expect(automaton.effectEvents.observerCount == 1)
            model.send(.login)  // its reply and effect event are queued for the main actor
        }
        #expect(released == nil)  // neither the automaton's signals nor the queued deliveries keep it
        #expect(automaton.replies.observerCount == 0)
        #expect(automaton.effectEvents.observerCount == 0)
        await Task { @MainActor in }.value  // the dropped deliveries' task runs, and does nothing

        weak var releasedAutomaton: Automaton<State, Input>?
        let effectEnded = ChangeCount()
        do {
            let model = makeLoginMachine(loginOK: .never, logoutOK: .empty).observable()
            releasedAutomaton = model.automaton
            model.automaton.effectEvents.observeValues { event in
                if case .cancelled(.released) = event.kind { effectEnded.increment() }
            }
            model.send(.login)
            #expect(model.automaton.runningEffectCount == 1)
        }
        #expect(releasedAutomaton == nil)  // the model kept it, and nothing else did
        #expect(effectEnded.value == 1)  // so it terminated, and its effect was disposed
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test(
        "10,000 transitions sent from 4 threads reach the model in reply order, each state with its reply",
        .timeLimit(.minutes(2)))
    func concurrentTransitionsInOrder() async {
        let automaton = Automaton<Int, Tick>(state: 0, mapping: { state, _ in state + 1 })
        let direct = Recording<Reply<Int, Tick>>()
        automaton.replies.observeValues { direct.append($0) }
        let model = automaton.observable()

        // Every pair the model publishes, read just after each reply was applied.
        var published: [Snapshot<Int, Tick>] = []
        model.didApplyReply = { [weak model] _ in
            if let model { published.append(Snapshot(state: model.state, lastReply: model.lastReply)) }
        }
        // What a view sees: drawn again on the main actor after each change it tracked.
        let views = ViewRecorder(model)
        views.draw()

        await runOnThreads(4) { thread in
            for index in 0..<2_500 { automaton.send(Tick(thread: thread, index: index)) }
        }
        await waitUntil { published.count == 10_000 }
        await waitUntil { views.seen.last?.state == 10_000 }

        let replies = direct.values
        #expect(replies.count == 10_000)
        #expect(published.map(\.lastReply) == replies)
        #expect(published.map(\.state) == Array(1...10_000))
        for thread in 0..<4 {  // each thread's inputs in the order it sent them
            #expect(replies.compactMap { $0.input.thread == thread ? $0.input.index : nil } == Array(0..<2_500))
        }
        // Every drawing was consistent (the state with the reply that made it) and later than the last.
        #expect(views.seen.allSatisfy { $0.state == ($0.lastReply?.toState ?? 0) })
        #expect(zip(views.seen, views.seen.dropFirst()).allSatisfy { $0.state < $1.state })
        #expect(model.state == 10_000)
    }
}

extension ObservableAutomatonTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @Test(
        "models made while other threads transition miss no transition: their first reply starts at or before their state",
        .timeLimit(.minutes(2)))
    func modelsMadeDuringTransitions() async {
        let automaton = Automaton<Int, Tick>(state: 0, mapping: { state, _ in state + 1 })
        let stop = Locked(false)
        /// Each model's first state and first reply; the model, until that reply is applied.
        var firsts: [(state: Int, reply: Reply<Int, Tick>?)] = []
        var models: [ObservableAutomaton<Int, Tick>?] = []

        async let senders: Void = runOnThreads(2) { thread in
            var index = 0
            while !stop.withCriticalRegion({ $0 }) && index < 200_000 {
                automaton.send(Tick(thread: thread, index: index))
                index += 1
            }
        }
        for position in 0..<20 {
            let seen = automaton.state.value
            for _ in 0..<100_000 where automaton.state.value == seen {}  // the senders go on meanwhile
            let model = automaton.observable()
            firsts.append((model.state, nil))
            models.append(model)
            model.didApplyReply = { reply in
                if firsts[position].reply == nil { firsts[position].reply = reply }
                models[position] = nil  // released: its later replies are dropped
            }
        }
        stop.withCriticalRegion { $0 = true }
        await senders
        let last = automaton.state.value
        await waitUntil { firsts.allSatisfy { $0.reply != nil || $0.state == last } }

        // No transition is missed: the first reply applied starts at the first state or, if its
        // transition was already in the state read when the model was made, before it; a model made
        // after the last transition has the last state.
        let missing = firsts.filter { first in
            first.reply.map { $0.fromState > first.state } ?? (first.state != last)
        }
        #expect(missing.isEmpty, "\(missing)")
        models.removeAll()  // the models' closures keep `models`
    }
}

/// Reads the model's state and last reply as a view does: inside `withObservationTracking`, and again
/// on the main actor after each change.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor
final class ViewRecorder {
    /// Weak: the model's observation registrar keeps the tracking closure, which keeps the recorder.
    private weak var model: ObservableAutomaton<Int, Tick>?
    private(set) var seen: [Snapshot<Int, Tick>] = []

    init(_ model: ObservableAutomaton<Int, Tick>) { self.model = model }

    func draw() {
        guard let model else { return }
        let snapshot = withObservationTracking {
            Snapshot(state: model.state, lastReply: model.lastReply)
        } onChange: {
            Task { @MainActor [weak self] in self?.draw() }
        }
        seen.append(snapshot)
    }
}
