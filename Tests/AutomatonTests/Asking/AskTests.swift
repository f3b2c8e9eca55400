import Automaton
import Dispatch
import Foundation
import Signals
import Testing

/// A counter machine for the ask tests: `.add(n)` adds n (any n but 0), `.zero` fails, `.chain(n)`
/// adds 1 and sends `.chain(n - 1)` from a value effect while n > 0.
enum TallyInput: Sendable, Hashable, CustomStringConvertible {
    case add(Int), zero, chain(Int)
    var description: String {
        switch self {
        case let .add(n): return "add(\(n))"
        case .zero: return "zero"
        case let .chain(n): return "chain(\(n))"
        }
    }
}

typealias TallyReply = Reply<Int, TallyInput>

func makeTally(input: Signal<TallyInput, Never>? = nil) -> Automaton<Int, TallyInput> {
    let mapping: Automaton<Int, TallyInput>.EffectMapping = { state, input in
        switch input {
        case let .add(n) where n != 0: return (state + n, .empty)
        case .add, .zero: return nil
        case let .chain(n): return (state + 1, n > 0 ? SignalProducer(value: .chain(n - 1)) : .empty)
        }
    }
    if let input { return Automaton(state: 0, input: input, mapping: mapping) }
    return Automaton(state: 0, mapping: mapping)
}

@Suite("Request and reply: ask returns the reply to its own input")
struct AskTests {
    @Test("ask returns the success or failure reply of its input, as replies sent it")
    func returnsItsReply() async throws {
        let automaton = makeTally()
        let replies = automaton.replies.record()
        let first = try await automaton.ask(.add(2))
        let second = try await automaton.ask(.zero)
        let third = try await automaton.ask(.add(3))
        #expect(first == .success(.add(2), 0, 2))
        #expect(second == .failure(.zero, 2))
        #expect(third == .success(.add(3), 2, 5))
        #expect(replies.values == [.value(first), .value(second), .value(third)])
    }

    @Test(
        "the reply reaches replies observers and processing observers first, then the caller, before the effect starts")
    func answerComesAfterObserversBeforeTheEffect() {
        let log = Recording<String>()
        let automaton = Automaton<Int, TallyInput>(state: 0) { state, input in
            guard case let .add(n) = input else { return nil }
            return (
                state + n,
                SignalProducer { observer, _ in
                    log.append("effect of \(n) started"); observer.sendCompleted()
                }
            )
        }
        automaton.replies.observeValues { log.append("replies: \($0)") }
        automaton.observeProcessing { log.append("processing: \($0.reply) #\($0.number)") }
        automaton.ask(.add(1)) { log.append("answer: \($0)") }
        #expect(
            log.values == [
                "replies: success(add(1), 0 => 1)",
                "processing: success(add(1), 0 => 1) #1",
                "answer: success(success(add(1), 0 => 1))",
                "effect of 1 started",
            ])
    }

    @Test("an input asked while another is processed waits its turn, behind what was queued before it")
    func queuedInputWaitsItsTurn() {
        let automaton = makeTally()
        let log = Recording<String>()
        let once = Locked(false)
        // Weak: the observer lives in the automaton's `replies`, and a strong reference would keep the
        // automaton alive for ever (a leak the address sanitizer's job reports).
        let weak = WeakBox(automaton)
        automaton.replies.observeValues { reply in
            log.append("reply \(reply)")
            let isFirst = once.withCriticalRegion { done in
                defer { done = true }
                return !done
            }
            guard isFirst, let automaton = weak.object else { return }
            // Sent during the first reply: queued, in this order.
            automaton.send(.add(10))
            automaton.ask(.add(100)) { log.append("answer \($0)") }
            automaton.send(.add(1000))
            log.append("ask returned")
        }
        automaton.send(.add(1))
        #expect(
            log.values == [
                "reply success(add(1), 0 => 1)",
                "ask returned",
                "reply success(add(10), 1 => 11)",
                "reply success(add(100), 11 => 111)",
                "answer success(success(add(100), 11 => 111))",
                "reply success(add(1000), 111 => 1111)",
            ])
    }

    @Test("the answer is the reply to the asked input, not to the inputs its effect sends")
    func effectInputsDoNotAnswer() async throws {
        let automaton = makeTally()
        let replies = automaton.replies.record()
        let reply = try await automaton.ask(.chain(2))
        #expect(reply == .success(.chain(2), 0, 1))
        // The effect's inputs were processed after the answer was given, on the same thread, before
        // ask returned (nothing else was processing).
        #expect(
            replies.values == [
                .value(.success(.chain(2), 0, 1)), .value(.success(.chain(1), 1, 2)),
                .value(.success(.chain(0), 2, 3)),
            ])
        #expect(try await automaton.ask(.add(1)) == .success(.add(1), 3, 4))
    }

    @Test("asked after the input signal completed: .inputCompleted, the input not processed")
    func refusedAfterCompletion() async {
        let (input, inputObserver) = Signal<TallyInput, Never>.pipe()
        let automaton = makeTally(input: input)
        let replies = automaton.replies.record()
        #expect(automaton.acceptsInputs)
        inputObserver.sendCompleted()
        #expect(!automaton.acceptsInputs)
        #expect(automaton.isTerminated)
        await #expect(throws: AskError.inputCompleted) { try await automaton.ask(.add(1)) }
        let answers = Recording<Result<TallyReply, AskError>>()
        automaton.ask(.add(1)) { answers.append($0) }
        #expect(answers.values == [.failure(.inputCompleted)])
        #expect(replies.values == [.completed])
    }

    @Test("asked after the input signal was interrupted: .interrupted")
    func refusedAfterInterruption() async {
        let (input, inputObserver) = Signal<TallyInput, Never>.pipe()
        let automaton = makeTally(input: input)
        inputObserver.sendInterrupted()
        #expect(automaton.isTerminated)
        #expect(!automaton.acceptsInputs)
        await #expect(throws: AskError.interrupted) { try await automaton.ask(.add(1)) }
    }

    @Test("queued inputs dropped by an interruption are answered .interrupted, after replies ended")
    func droppedByInterruption() {
        let (input, inputObserver) = Signal<TallyInput, Never>.pipe()
        let automaton = makeTally(input: input)
        let log = Recording<String>()
        automaton.replies.observe { event in
            log.append("replies \(event)")
            guard case .value(.success(.add(1), _, _)) = event else { return }
            automaton.ask(.add(2)) { log.append("answer 2: \($0)") }
            automaton.ask(.add(3)) { log.append("answer 3: \($0)") }
            inputObserver.sendInterrupted()
        }
        automaton.send(.add(1))
        #expect(
            log.values == [
                "replies value(success(add(1), 0 => 1))",
                "replies interrupted",
                "answer 2: failure(not answered: the automaton's input was interrupted)",
                "answer 3: failure(not answered: the automaton's input was interrupted)",
            ])
        #expect(automaton.state.value == 1)
    }

    @Test("queued inputs dropped by the automaton's release are answered .released (callback form)")
    func droppedByRelease() {
        let log = Recording<String>()
        let holder = Locked<Automaton<Int, TallyInput>?>(makeTally())
        let automaton = holder.withCriticalRegion { $0! }
        let send = automaton.sender
        let ask: @Sendable (TallyInput, @escaping @Sendable (Result<TallyReply, AskError>) -> Void) -> Void = {
            [weak automaton] input, onReply in automaton?.ask(input, onReply: onReply)
        }
        automaton.replies.observe { event in
            log.append("replies \(event)")
            guard case .value(.success(.add(1), _, _)) = event else { return }
            ask(.add(2)) { log.append("answer 2: \($0)") }
            // The last reference goes while this thread processes: the termination follows this input.
            let released = holder.withCriticalRegion { held in
                defer { held = nil }; return held
            }
            withExtendedLifetime(released) {}
        }
        _ = consume automaton
        send(.add(1))
        #expect(
            log.values == [
                "replies value(success(add(1), 0 => 1))",
                "replies completed",
                "answer 2: failure(not answered: automaton released)",
            ])
    }

    @Test("a cancelled wait throws .cancelled at once; the input is still processed in its turn")
    func cancellationEndsOnlyTheWait() async throws {
        let automaton = makeTally()
        let replies = automaton.replies.record()
        let secondProcessed = DispatchSemaphore(value: 0)
        automaton.replies.observeValues { reply in
            if reply.input == .add(2) { secondProcessed.signal() }
        }
        let release = try #require(await holdProcessing(automaton, at: .add(1)))
        // The processing thread is held in the observer: the asked input is queued behind it.
        let waiting = Task { try await automaton.ask(.add(2)) }
        waiting.cancel()
        await #expect(throws: AskError.cancelled) { try await waiting.value }
        release()
        #expect(await Watchdog.signalled(secondProcessed))
        #expect(replies.values == [.value(.success(.add(1), 0, 1)), .value(.success(.add(2), 1, 3))])
    }

    @Test("a task cancelled before it asks still sends the input; a reply that came first is returned")
    func alreadyCancelledTask() async throws {
        let automaton = makeTally()
        let replies = automaton.replies.record()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await automaton.ask(.add(5))
        }
        // Nothing else processes: the input is processed on the asking thread, so its reply is there
        // before the wait would begin.
        #expect(try await task.value == .success(.add(5), 0, 5))
        #expect(replies.values == [.value(.success(.add(5), 0, 5))])
    }

    @Test("ask with a timeout: .timedOut on virtual time while the input waits; the input is still processed")
    func timeoutOnVirtualTime() async throws {
        let automaton = makeTally()
        let scheduler = TestScheduler()
        let clock = scheduler.clock
        let secondProcessed = DispatchSemaphore(value: 0)
        let replies = automaton.replies.record()
        automaton.replies.observeValues { reply in
            if reply.input == .add(2) { secondProcessed.signal() }
        }
        let release = try #require(await holdProcessing(automaton, at: .add(1)))
        let waiting = Task { try await automaton.ask(.add(2), timeout: .seconds(2), clock: clock) }
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(1))
        await clock.advance(by: .seconds(1))
        await #expect(throws: AskError.timedOut) { try await waiting.value }
        #expect(scheduler.pendingActionCount == 0)
        release()
        #expect(await Watchdog.signalled(secondProcessed))
        #expect(replies.values == [.value(.success(.add(1), 0, 1)), .value(.success(.add(2), 1, 3))])
    }

    @Test("ask with a timeout returns the reply that comes in time, and leaves no timer behind")
    func replyWithinTimeout() async throws {
        let automaton = makeTally()
        let scheduler = TestScheduler()
        // Processed at once: answered without a timer.
        #expect(
            try await automaton.ask(.add(1), timeout: .seconds(2), clock: scheduler.clock) == .success(.add(1), 0, 1))
        #expect(scheduler.pendingActionCount == 0)
        // Queued behind a held input: answered once it is let go of, before the deadline.
        let release = try #require(await holdProcessing(automaton, at: .add(10)))
        let waiting = Task { try await automaton.ask(.add(100), timeout: .seconds(2), clock: scheduler.clock) }
        await scheduler.clock.waitForSleepers(1)
        release()
        #expect(try await waiting.value == .success(.add(100), 11, 111))
        // The timer's task was cancelled, and its wake-up removed from the scheduler.
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("InputProcessing numbers every processed input from 1, effects' inputs and failures included")
    func inputNumbers() {
        let automaton = makeTally()
        let numbers = Recording<String>()
        automaton.observeProcessing { numbers.append("#\($0.number) \($0.reply)") }
        automaton.send(.add(1))
        automaton.send(.zero)
        automaton.send(.chain(1))
        #expect(
            numbers.values == [
                "#1 success(add(1), 0 => 1)", "#2 failure(zero, 1)", "#3 success(chain(1), 1 => 2)",
                "#4 success(chain(0), 2 => 3)",
            ])
    }

    @Test("isTerminated and acceptsInputs follow the automaton's end: input completed with an effect running")
    func terminationFlags() {
        let (input, inputObserver) = Signal<TallyInput, Never>.pipe()
        let (effect, effectObserver) = Signal<TallyInput, Never>.pipe()
        let automaton = Automaton<Int, TallyInput>(state: 0, input: input) { state, input in
            input == .add(1) ? (state + 1, SignalProducer(effect)) : nil
        }
        #expect(automaton.acceptsInputs && !automaton.isTerminated)
        automaton.send(.add(1))
        inputObserver.sendCompleted()
        #expect(!automaton.acceptsInputs && !automaton.isTerminated)
        effectObserver.sendCompleted()
        #expect(!automaton.acceptsInputs && automaton.isTerminated)
    }
}

/// Holds `automaton`'s processing role on a thread of its own: sends `input` from a new thread, whose
/// `replies` observer of that input's reply waits until the returned function is called, so that
/// inputs sent or asked meanwhile are queued behind it. Returns once the thread is held, or nil (a
/// recorded failure) if it never was.
func holdProcessing<State: Sendable, Input: Sendable & Equatable>(
    _ automaton: Automaton<State, Input>, at input: Input
) async -> (@Sendable () -> Void)? {
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let held = Locked(false)
    automaton.replies.observeValues { reply in
        guard reply.input == input else { return }
        let first = held.withCriticalRegion { held in
            defer { held = true }
            return !held
        }
        guard first else { return }
        entered.signal()
        proceed.wait()
    }
    let send = automaton.sender
    Thread { send(input) }.start()
    guard await Watchdog.signalled(entered) else {
        Issue.record("the processing thread was never held")
        return nil
    }
    return { proceed.signal() }
}
