import Signals
import Testing

@Suite("stream(): values buffered from the call that made the sequence")
struct StreamTests {
    @Test("a Task iterating stream() sees the values sent after stream() returned, however late it begins")
    func streamSeesEarlySends() async {
        let (signal, input) = Signal<Int, Never>.pipe()
        let stream = signal.stream()
        input.send(value: 1)
        input.send(value: 2)
        let task = Task {
            var seen: [Int] = []
            for await value in stream { seen.append(value) }
            return seen
        }
        input.send(value: 3)
        input.sendCompleted()
        #expect(await task.value == [1, 2, 3])
    }

    @Test("the documented pitfall: a Task that starts iterating values after two sends sees neither")
    func valuesMissesEarlySends() async {
        let (signal, input) = Signal<Int, Never>.pipe()
        let values = signal.values
        let gate = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in gate.stream {}  // the loop below begins only after the sends
            var seen: [Int] = []
            for await value in values { seen.append(value) }
            return seen
        }
        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()
        gate.continuation.finish()
        #expect(await task.value == [])
    }

    @Test("a producer's stream() starts the run at once and throws its error after the values")
    func producerStream() async {
        let started = LockedTestValue(false)
        let stream = SignalProducer<Int, TestError> { observer, _ in
            started.withValue { $0 = true }
            observer.send(value: 1)
            observer.send(error: .boom)
        }.stream()
        #expect(started.value)
        var seen: [Int] = []
        do {
            for try await value in stream { seen.append(value) }
            Issue.record("the stream should have thrown")
        } catch {
            #expect(error == .boom)
        }
        #expect(seen == [1])
    }

    @Test("cancelling the iterating task disposes the run")
    func streamCancellation() async {
        let ended = EventRecorder<Never, Never>()
        let stream = SignalProducer<Int, Never> { observer, lifetime in
            observer.send(value: 1)
            lifetime.observeEnded {
                withExtendedLifetime(observer) {}
                ended.record(.completed)
            }
        }.stream()
        let task = Task {
            var seen: [Int] = []
            for await value in stream {
                seen.append(value)
                withUnsafeCurrentTask { $0?.cancel() }
            }
            return seen
        }
        #expect(await task.value == [1])
        #expect(await ended.terminated())
    }

    /// An actor that consumes a stream inside its own isolation.
    actor ReplyLog {
        private(set) var entries: [Int] = []

        func consume(_ stream: SignalStream<Int, Never>) async {
            for await value in stream {
                entries.append(value)  // actor state, mutated without leaving the actor
            }
        }
    }

    @Test("an actor consumes a stream with next(isolation:), mutating its own state")
    func actorConsumesStream() async {
        let (signal, input) = Signal<Int, Never>.pipe()
        let log = ReplyLog()
        let stream = signal.stream()
        let consumer = Task { await log.consume(stream) }
        Watchdog.startThread {
            for value in 1...100 { input.send(value: value) }
            input.sendCompleted()
        }
        await consumer.value
        #expect(await log.entries == Array(1...100))
    }
}

@Suite("TestScheduler.clock: async code on virtual time")
struct TestClockTests {
    @Test("clock.sleep returns when the scheduler advances past its deadline, not before")
    func sleepWakesOnAdvance() async throws {
        let scheduler = TestScheduler()
        let clock = scheduler.clock
        let log = TestLog<String>()
        let task = Task {
            try await clock.sleep(for: .seconds(2))
            log.append("woke at \(clock.now)")
        }
        await clock.waitForSleepers(1)
        #expect(clock.sleeperCount == 1)
        await clock.advance(by: .seconds(1))
        #expect(log.entries == [])
        await clock.advance(by: .seconds(1))
        try await task.value
        #expect(log.entries == ["woke at 2.0 seconds"])
        #expect(scheduler.pendingActionCount == 0)
        #expect(clock.sleeperCount == 0)
    }

    @Test("a sleep whose deadline has passed returns at once; a cancelled task's sleep throws CancellationError")
    func sleepDeadlinesAndCancellation() async throws {
        let scheduler = TestScheduler()
        let clock = scheduler.clock
        scheduler.advance(by: .seconds(5))
        try await clock.sleep(until: .init(offset: .seconds(3)))

        let task = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers(1)
        #expect(scheduler.pendingActionCount == 1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(scheduler.pendingActionCount == 0)
        #expect(clock.sleeperCount == 0)
    }

    @Test("disposing an effect written with clock.sleep cancels the sleep and leaves nothing pending")
    func disposingEffectCancelsSleep() async {
        let scheduler = TestScheduler()
        let clock = scheduler.clock
        let recorder = EventRecorder<String, Never>()
        let run = SignalProducer<String, Never>(
            operation: {
                try await clock.sleep(for: .seconds(1))
                return "done"
            }, catch: { _ in "failed" }
        ).start(recorder.observer)
        await clock.waitForSleepers(1)
        run.dispose()
        #expect(scheduler.pendingActionCount == 0)
        #expect(recorder.events == [.interrupted])
    }

    @Test(
        "a sleep ends at its deadline, and a sleeper that waitForSleepers counted is woken by the next advance past it, however the clock moved meanwhile"
    )
    func sleepDeadlineIsAbsolute() async {
        for _ in 0..<200 {
            let scheduler = TestScheduler()
            let clock = scheduler.clock
            let task = Task { try await clock.sleep(until: .init(offset: .seconds(1))) }
            scheduler.advance(by: .milliseconds(500))  // before, during or after the task goes to sleep
            await clock.waitForSleepers(1)
            await clock.advance(by: .milliseconds(500))  // now 1 s: the sleep must be over
            #expect(scheduler.pendingActionCount == 0)
            #expect(clock.sleeperCount == 0)
            task.cancel()  // ends the task whatever happened, so a failure cannot hang the test
            _ = try? await task.value
        }
    }

    @Test("many tasks sleeping on one clock wake in deadline order as it advances")
    func manySleepers() async {
        let scheduler = TestScheduler()
        let clock = scheduler.clock
        let (signal, input) = Signal<Int, Never>.pipe()
        let woken = signal.stream()
        for index in 0..<50 {
            Task {
                try await clock.sleep(for: .milliseconds(10 * (50 - index)))
                input.send(value: 50 - index)
            }
        }
        await clock.waitForSleepers(50)
        var iterator = woken.makeAsyncIterator()
        var seen: [Int] = []
        for step in 1...50 {
            await clock.advance(by: .milliseconds(10))
            seen.append(await iterator.next()!)
            #expect(clock.sleeperCount == 50 - step)
        }
        #expect(seen == Array(1...50))
        #expect(scheduler.pendingActionCount == 0)
    }

    // The serialized CI jobs' hang (Verification/HANG.md): before a01144e a sleeper was counted before
    // its wake-up was scheduled, at a delay from a clock read earlier, so a test that saw it asleep could
    // advance first and the wake-up fell after the advance; `manySleepers` then awaited it forever.
    // Fifty sleepers keep both threads of the pool busy, which is what opens that window. Here a late
    // wake-up is still pending after its step, so the test fails instead of hanging.
    @Test("every sleeper waitForSleepers counted is woken by the advance that reaches its deadline, 200 times over")
    func countedSleepersWakeOnTime() async {
        for _ in 0..<200 {
            let scheduler = TestScheduler()
            let clock = scheduler.clock
            let tasks = (1...50).map { index in
                Task { try await clock.sleep(for: .milliseconds(10 * index)) }
            }
            await clock.waitForSleepers(50)
            for step in 1...50 {
                await clock.advance(by: .milliseconds(10))
                #expect(scheduler.pendingActionCount == 50 - step)
            }
            for task in tasks { task.cancel() }  // ends a sleep left over, so a failure cannot hang the test
            for task in tasks { _ = try? await task.value }
        }
    }
}

/// Main-actor state, as a view model holds it.
@MainActor
final class MainActorModel {
    var events: [Event<Int, TestError>] = []
    var values: [Int] = []
}

@Suite("Observing on the main actor")
struct MainActorObservationTests {
    @MainActor
    @Test("observeOnMainActor delivers every event on the main actor, in the order sent from another thread")
    func observeOnMainActorKeepsOrder() async {
        let model = MainActorModel()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let finished = AsyncStream<Void>.makeStream()
        signal.observeOnMainActor { event in
            MainActor.assertIsolated()
            model.events.append(event)
            if event.isTerminating { finished.continuation.finish() }
        }
        Watchdog.startThread {
            for value in 0..<1000 { input.send(value: value) }
            input.send(error: .boom)
        }
        for await _ in finished.stream {}
        #expect(model.events == (0..<1000).map { .value($0) } + [.failed(.boom)])
    }

    @MainActor
    @Test("a send from the main actor is delivered after the current job; disposing drops what is queued")
    func observeOnMainActorIsAsynchronousAndDisposable() async {
        let model = MainActorModel()
        let (signal, input) = Signal<Int, TestError>.pipe()
        let disposable = signal.observeValuesOnMainActor { value in model.values.append(value) }
        input.send(value: 1)
        #expect(model.values == [])
        await Task.yield()
        let marker = Task { @MainActor in model.values.append(-1) }
        await marker.value
        #expect(model.values == [1, -1])
        input.send(value: 2)
        disposable.dispose()
        let second = Task { @MainActor in model.values.append(-2) }
        await second.value
        #expect(model.values == [1, -1, -2])
        #expect(signal.observerCount == 0)
    }

    @MainActor
    @Test("startWithValuesOnMainActor runs a producer and delivers its values on the main actor")
    func producerOnMainActor() async {
        let model = MainActorModel()
        let finished = AsyncStream<Void>.makeStream()
        SignalProducer<Int, TestError>(values: 1, 2, 3).startOnMainActor { event in
            if case let .value(value) = event { model.values.append(value) }
            if event.isTerminating { finished.continuation.finish() }
        }
        for await _ in finished.stream {}
        #expect(model.values == [1, 2, 3])
    }
}
