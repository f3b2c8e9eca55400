import Automaton
import Dispatch
import Foundation
import Signals
import Testing

/// What observers of an automaton's signals heard, in the order they heard it.
private enum Heard: Sendable, Equatable {
    case state(Int)
    case reply(Reply<Int, Int>)
    case repliesEnded
}

@Suite("Termination and observer order under threads (BRIEF §5.3, §5.8)")
struct TerminationOrderTests {
    @Test(
        "an interruption racing effect-free transitions: each state change is announced by its reply, and none follows the end",
        arguments: [false, true]
    )
    func interruptionRacingTransitions(withEffect: Bool) async {
        await runOnThreads(1) { _ in
            for _ in 0..<400 {
                let (input, inputObserver) = Signal<Int, Never>.pipe()
                let automaton = Automaton(
                    state: 0, input: input,
                    mapping: { (state: Int, _: Int) in
                        (state + 1, withEffect ? SignalProducer<Int, Never>.never : .empty)
                    })
                let heard = Locked<[Heard]>([])
                automaton.state.signal.observeValues { state in heard.withCriticalRegion { $0.append(.state(state)) } }
                automaton.replies.observe { event in
                    heard.withCriticalRegion { heard in
                        switch event {
                        case let .value(reply): heard.append(.reply(reply))
                        case .completed, .interrupted: heard.append(.repliesEnded)
                        }
                    }
                }
                let go = DispatchSemaphore(value: 0)
                let done = DispatchGroup()
                done.enter()
                Thread {
                    go.wait()
                    for value in 0..<50 { automaton.send(value) }
                    done.leave()
                }.start()
                go.signal()
                inputObserver.sendInterrupted()
                done.wait()
                let events = heard.withCriticalRegion { $0 }
                // Every state is followed by its reply, and nothing comes after the end of replies.
                var expectingReplyFor: Int?
                var ended = false
                for event in events {
                    #expect(!ended, "heard \(event) after replies ended: \(events)")
                    switch event {
                    case let .state(state):
                        #expect(expectingReplyFor == nil, "two states without a reply: \(events)")
                        expectingReplyFor = state
                    case let .reply(reply):
                        #expect(reply.toState == expectingReplyFor, "a reply without its state: \(events)")
                        expectingReplyFor = nil
                    case .repliesEnded:
                        #expect(expectingReplyFor == nil, "a state change never announced: \(events)")
                        ended = true
                    }
                }
                #expect(ended)
                let finalState = automaton.state.value
                #expect(events.filter { if case .state = $0 { return true } else { return false } }.count == finalState)
            }
        }
    }

    @Test(
        "events before lifetimes: a release or an interruption sends each running effect's cancellation before its cleanup runs",
        arguments: [false, true])
    func cancellationEventsBeforeLifetimes(interrupt: Bool) {
        let log = Locked<[String]>([])
        let effect = SignalProducer<Int, Never> { observer, lifetime in
            lifetime.observeEnded { log.withCriticalRegion { $0.append("cleanup") } }
            lifetime.observeEnded { withExtendedLifetime(observer) {} }
        }
        let (input, inputObserver) = Signal<Int, Never>.pipe()
        var automaton: Automaton<Int, Int>? = Automaton(
            state: 0, input: input, mapping: { state, _ in (state + 1, effect) })
        automaton!.effectEvents.observe { event in
            let line = event.value.map { "\($0)" } ?? (event.isTerminating ? "effect events ended" : "?")
            log.withCriticalRegion { $0.append(line) }
        }
        automaton!.send(1)
        automaton!.send(2)
        if interrupt { inputObserver.sendInterrupted() } else { automaton = nil }
        let cause = interrupt ? "input interrupted" : "automaton released"
        #expect(
            log.withCriticalRegion { $0 } == [
                "effect 0 started by 1", "effect 1 started by 2", "effect 0 cancelled: \(cause)",
                "effect 1 cancelled: \(cause)", "cleanup", "cleanup", "effect events ended",
            ])
        withExtendedLifetime(automaton) {}
    }

    @Test("released while another thread processes: that thread ends replies, then state, then the lifetime")
    func releaseWhileAnotherThreadProcesses() async {
        let inMapping = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        var automaton: Automaton<Int, Int>? = Automaton(
            state: 0,
            mapping: { (state: Int, input: Int) in
                if input == 0 {
                    inMapping.signal()
                    proceed.wait()
                }
                return state + 1
            })
        let heard = Locked<[String]>([])
        automaton?.replies.observe { event in
            let text = if case let .value(reply) = event { "reply \(reply.input)" } else { "replies ended" }
            heard.withCriticalRegion { $0.append(text) }
        }
        automaton?.state.signal.observe { event in
            let text = if case let .value(state) = event { "state \(state)" } else { "state ended" }
            heard.withCriticalRegion { $0.append(text) }
        }
        automaton?.lifetime.observeEnded { heard.withCriticalRegion { $0.append("lifetime ended") } }
        let send = automaton!.sender
        let done = DispatchGroup()
        done.enter()
        Thread {
            send(0)
            done.leave()
        }.start()
        #expect(await Watchdog.signalled(inMapping))
        automaton = nil  // the other thread holds the processing role: it performs the release
        #expect(heard.withCriticalRegion { $0 } == [])
        proceed.signal()
        #expect(await waitOrFail(done, timeout: 300))
        #expect(
            heard.withCriticalRegion { $0 } == ["state 1", "reply 0", "replies ended", "state ended", "lifetime ended"])
    }

    @Test(
        "a state producer started on another thread, whose observer is slow, does not delay old state observers past the reply"
    )
    func slowStateProducerDoesNotReorder() async {
        let automaton = Automaton(state: 0, mapping: { (state: Int, input: Int) in input })
        let heard = Locked<[String]>([])
        automaton.state.signal.observeValues { state in heard.withCriticalRegion { $0.append("state \(state)") } }
        automaton.replies.observeValues { reply in heard.withCriticalRegion { $0.append("reply \(reply.input)") } }

        let insideInitial = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let sawChange = DispatchSemaphore(value: 0)
        let producerSeen = Locked<[Int]>([])
        Thread {
            automaton.state.producer.startWithValues { value in
                producerSeen.withCriticalRegion { $0.append(value) }
                if value == 0 {
                    insideInitial.signal()
                    release.wait()
                } else {
                    sawChange.signal()
                }
            }
        }.start()
        #expect(await Watchdog.signalled(insideInitial))

        let sent = await onThread(timeout: 300) { automaton.send(1) }
        #expect(sent)
        #expect(heard.withCriticalRegion { $0 } == ["state 1", "reply 1"])
        release.signal()
        // The slow observer then catches up: the initial value, then the change, in order.
        #expect(await Watchdog.signalled(sawChange))
        #expect(producerSeen.withCriticalRegion { $0 } == [0, 1])
    }

    @Test("after termination the state no longer changes, whatever the effects send")
    func noStateChangeAfterTermination() {
        let scheduler = TestScheduler()
        let (input, inputObserver) = Signal<Int, Never>.pipe()
        let automaton = Automaton(
            state: 0, input: input,
            mapping: { (state: Int, _: Int) in
                (state + 1, SignalProducer(value: 1).delay(.seconds(1), on: scheduler))
            })
        let states = Locked<[Event<Int, Never>]>([])
        automaton.state.signal.observe { event in states.withCriticalRegion { $0.append(event) } }
        inputObserver.send(value: 0)
        inputObserver.sendInterrupted()
        scheduler.advance(by: .seconds(5))
        automaton.send(9)
        // The interruption completes `state`: it can never change again.
        #expect(states.withCriticalRegion { $0 } == [.value(1), .completed])
        #expect(automaton.state.value == 1)
    }
}

/// Runs `body` on a new thread; false (and a recorded issue) if it has not returned within `timeout`
/// seconds, which here means a deadlock.
private func onThread(timeout: Double, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let done = DispatchGroup()
    done.enter()
    Thread {
        body()
        done.leave()
    }.start()
    return await waitOrFail(done, timeout: Int(timeout))
}
