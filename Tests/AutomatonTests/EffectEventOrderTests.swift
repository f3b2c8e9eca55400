import Automaton
import Dispatch
import Foundation
import Signals
import Testing

// Effect events decided on different threads are heard in the order they were decided, and the end of
// `effectEvents` comes after every one of them. Each test holds one thread inside an effect's cleanup
// (which the engine runs after deciding the effect's end and before sending anything) while another
// thread decides what comes next. Found by review; each failed before effect events were queued
// under the engine's lock (see `EngineStateMachine.effectEventOutbox`).

private enum Step: Hashable, Sendable {
    case go, emitted, first, second, stop
}

/// Every event of `effectEvents`, as one line each.
private func lines(of signal: Signal<EffectEvent<Step>, Never>) -> Recording<String> {
    let lines = Recording<String>()
    signal.observe { event in
        switch event {
        case let .value(effectEvent): lines.append(effectEvent.description)
        case .completed: lines.append("completed")
        case .interrupted: lines.append("interrupted")
        }
    }
    return lines
}

/// The input observer a start handler received, kept for the test.
private final class HeldObserver: Sendable {
    private let storage = Locked<Observer<Step, Never>?>(nil)
    var observer: Observer<Step, Never>? {
        get { storage.withCriticalRegion { $0 } }
        set { storage.withCriticalRegion { $0 = newValue } }
    }
}

@Suite("Effect events across threads: decided order, and the end after them all")
struct EffectEventOrderTests {
    @Test("an effect that ends on one thread while another interrupts the input is reported ended, before the end")
    func endBeforeInterruption() {
        let (input, sink) = Signal<Step, Never>.pipe()
        let held = HeldObserver()
        let inCleanup = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let effect = SignalProducer<Step, Never> { observer, lifetime in
            held.observer = observer
            lifetime.observeEnded {
                inCleanup.signal()
                _ = proceed.wait(timeout: .now() + 60)
            }
        }
        let automaton = Automaton(
            state: 0, input: input, mapping: { state, step in step == .go ? (state + 1, effect) : nil })
        let events = lines(of: automaton.effectEvents)
        sink.send(value: .go)
        let ending = DispatchSemaphore(value: 0)
        let observer = held.observer
        Thread.detachNewThread {
            observer?.sendCompleted()  // the effect ends on this thread
            ending.signal()
        }
        #expect(inCleanup.wait(timeout: .now() + 60) == .success)
        sink.sendInterrupted()
        proceed.signal()
        #expect(ending.wait(timeout: .now() + 60) == .success)
        held.observer = nil
        #expect(events.values == ["effect 0 started by go", "effect 0 ended", "interrupted"])
        withExtendedLifetime(automaton) {}
    }

    @Test("after the input completed, the last effect's end is reported before effectEvents completes")
    func endBeforeCompletion() {
        let (input, sink) = Signal<Step, Never>.pipe()
        let held = HeldObserver()
        let emittedInputProcessing = DispatchSemaphore(value: 0)
        let inCleanup = DispatchSemaphore(value: 0)
        let repliesCompleted = DispatchSemaphore(value: 0)
        let effect = SignalProducer<Step, Never> { observer, lifetime in
            held.observer = observer
            lifetime.observeEnded {
                inCleanup.signal()
                _ = repliesCompleted.wait(timeout: .now() + 60)
            }
        }
        let automaton = Automaton(
            state: 0, input: input,
            mapping: { state, step in
                switch step {
                case .go: (state + 1, effect)
                case .emitted: (state + 10, .empty)
                default: nil
                }
            })
        let events = lines(of: automaton.effectEvents)
        automaton.replies.observe { event in
            switch event {
            case let .value(reply) where reply.input == .emitted:
                // This thread holds the processing role: the effect ends on another one meanwhile.
                emittedInputProcessing.signal()
                _ = inCleanup.wait(timeout: .now() + 60)
            case .completed:
                repliesCompleted.signal()
            default:
                break
            }
        }
        sink.send(value: .go)
        sink.sendCompleted()
        let observer = held.observer
        let ending = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = emittedInputProcessing.wait(timeout: .now() + 60)
            observer?.sendCompleted()
            ending.signal()
        }
        observer?.send(value: .emitted)
        #expect(ending.wait(timeout: .now() + 60) == .success)
        held.observer = nil
        #expect(events.values == ["effect 0 started by go", "effect 0 ended", "completed"])
        withExtendedLifetime(automaton) {}
    }

    @Test("a .queue effect cancelled as its turn comes is reported started, then cancelled, and never runs")
    func queuedStartBeforeCancellation() {
        let held = HeldObserver()
        let inCleanup = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let secondRuns = Recording<Void>()
        let first = SignalProducer<Step, Never> { observer, lifetime in
            held.observer = observer
            lifetime.observeEnded {
                inCleanup.signal()
                _ = proceed.wait(timeout: .now() + 60)
            }
        }.keyed("k", .queue)
        let second = SignalProducer<Step, Never> { _, _ in secondRuns.append(()) }.keyed("k", .queue)
        let automaton = Automaton(
            state: 0,
            mapping: { (state: Int, step: Step) -> (Int, SignalProducer<Step, Never>)? in
                switch step {
                case .first: (state, first)
                case .second: (state, second)
                case .stop: (state, .cancel("k"))
                default: nil
                }
            })
        let events = lines(of: automaton.effectEvents)
        automaton.send(.first)
        automaton.send(.second)
        let observer = held.observer
        let ending = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            observer?.sendCompleted()  // the first ends: the second's turn comes, on this thread
            ending.signal()
        }
        #expect(inCleanup.wait(timeout: .now() + 60) == .success)
        automaton.send(.stop)  // cancels the second before that thread starts it
        proceed.signal()
        #expect(ending.wait(timeout: .now() + 60) == .success)
        held.observer = nil
        #expect(
            events.values == [
                "effect 0 [k] started by first",
                "effect 0 [k] ended",
                "effect 1 [k] started by second",
                "effect 1 [k] cancelled by stop",
            ])
        #expect(secondRuns.count == 0)
        #expect(automaton.runningEffectCount == 0)
        #expect(automaton.trackedEffectCount == 0)
    }

    @Test("an effect's cleanup, run as it ends, does not hold up the effect events other threads decide meanwhile")
    func cleanupDoesNotHoldUpOtherThreadsEvents() {
        let held = HeldObserver()
        let inCleanup = DispatchSemaphore(value: 0)
        let heardSecondStart = DispatchSemaphore(value: 0)
        let cleanupWaited = Recording<DispatchTimeoutResult>()
        let first = SignalProducer<Step, Never> { observer, lifetime in
            held.observer = observer
            lifetime.observeEnded {
                inCleanup.signal()
                // A cleanup that waits until the app has heard of the next effect, started elsewhere.
                cleanupWaited.append(heardSecondStart.wait(timeout: .now() + 60))
            }
        }
        let second = SignalProducer<Step, Never>.never  // runs until the automaton is released
        let automaton = Automaton(
            state: 0,
            mapping: { (state: Int, step: Step) -> (Int, SignalProducer<Step, Never>)? in
                step == .first ? (state, first) : (state, second)
            })
        let events = lines(of: automaton.effectEvents)
        automaton.effectEvents.observeValues { event in
            if event.description == "effect 1 started by second" { heardSecondStart.signal() }
        }
        automaton.send(.first)
        let observer = held.observer
        let ending = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            observer?.sendCompleted()  // the first ends here; its cleanup waits for the second's start
            ending.signal()
        }
        #expect(inCleanup.wait(timeout: .now() + 60) == .success)
        automaton.send(.second)
        let heardWhenSendReturned = events.values
        #expect(ending.wait(timeout: .now() + 60) == .success)
        held.observer = nil
        #expect(heardWhenSendReturned == ["effect 0 started by first", "effect 0 ended", "effect 1 started by second"])
        #expect(cleanupWaited.values == [.success])
        withExtendedLifetime(automaton) {}
    }
}
