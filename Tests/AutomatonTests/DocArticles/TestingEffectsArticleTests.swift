import Automaton
import AutomatonTesting
import Testing

// The code of the article "Testing effects" (Sources/AutomatonTesting/AutomatonTesting.docc/TestingEffects.md),
// verbatim between the markers (checked by .ci/check-docc-snippets). The machines come from
// GettingStartedArticleTests.swift.

// DOCC-TESTING-TESTER-BEGIN
// Swift Testing makes a new instance of the suite for each test: each test has its own scheduler.
@Suite("Article: testing the connection manager with AutomatonTester")
struct ChannelManagerTests {
    let scheduler = TestScheduler()
    /// Every attempt fails after 1 s; the back-off timer fires after 30 s.
    var connect: SignalProducer<ChannelInput, Never> {
        SignalProducer(value: .failed).delay(.seconds(1), on: scheduler)
    }
    var backOff: SignalProducer<ChannelInput, Never> {
        SignalProducer(value: .retry).delay(.seconds(30), on: scheduler)
    }

    @Test("disconnecting cancels the attempt in flight, and nothing it scheduled is left")
    func disconnectCancelsAttempt() {
        let tester = AutomatonTester(makeChannelManager(connect: connect, backOff: backOff), scheduler: scheduler)

        tester.send(.connect)
        tester.send(.disconnect)
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: ChannelKey.attempt),
            .cancelled(.cancelled(by: .disconnect), key: ChannelKey.attempt),
            .success(.disconnect, .connecting, .disconnected),
        ])
        #expect(scheduler.pendingActionCount == 0)  // the attempt's delayed .failed is gone
        tester.finish()  // fails if an effect still runs
    }

    @Test("an unrelated input cancels no keyed effect, even under .latest")
    func foregroundedCancelsNothing() {
        let tester = AutomatonTester(makeChannelManager(connect: connect, backOff: backOff), scheduler: scheduler)

        tester.send(.connect)
        tester.send(.foregrounded)
        tester.advance(by: .seconds(1))  // the attempt still runs, and fails
        tester.expect([
            .success(.connect, .disconnected, .connecting),
            .started(by: .connect, key: ChannelKey.attempt),
            .success(.foregrounded, .connecting, .connecting),
            .success(.failed, .connecting, .backingOff),
            .started(by: .failed, key: ChannelKey.backOff),
            .ended(key: ChannelKey.attempt),
        ])
        tester.finish(skipRunningEffects: true)  // the back-off timer still runs, on purpose
    }
}
// DOCC-TESTING-TESTER-END

@Suite("Article: Testing effects")
struct TestingEffectsArticleTests {
    @Test("disposing a delayed producer leaves nothing pending in the TestScheduler")
    func pendingActionCount() {
        // DOCC-TESTING-PENDING-BEGIN
        let scheduler = TestScheduler()
        let delivery = SignalProducer<Int, Never>(value: 1).delay(.seconds(5), on: scheduler).start()
        #expect(scheduler.pendingActionCount == 2)  // the delayed value and the delayed completion

        delivery.dispose()
        #expect(scheduler.pendingActionCount == 0)  // the cancellation is proven, not assumed
        // DOCC-TESTING-PENDING-END
    }

    @Test("TestRecorder stamps each event with the virtual time it arrived at")
    func recorder() {
        // DOCC-TESTING-RECORDER-BEGIN
        let scheduler = TestScheduler()
        let ticks = TestRecorder(
            starting: SignalProducer.timer(interval: .seconds(1), on: scheduler).take(first: 2),
            scheduler: scheduler
        )
        scheduler.advance(by: .seconds(5))

        #expect(
            ticks.timedEvents == [
                RecordedEvent(.value(.seconds(1)), at: .seconds(1)),
                RecordedEvent(.value(.seconds(2)), at: .seconds(2)),
                RecordedEvent(.completed, at: .seconds(2)),
            ])
        #expect(scheduler.pendingActionCount == 0)  // take(first:) stopped the timer
        // DOCC-TESTING-RECORDER-END
    }

    @Test("TestRecorder asserts the events since its last assertion, as AutomatonTester does")
    func recorderExpect() {
        // DOCC-TESTING-RECORDER-EXPECT-BEGIN
        let (numbers, input) = Signal<Int, Never>.pipe()
        let recorder = TestRecorder(numbers)
        input.send(value: 1)
        input.send(value: 2)
        recorder.expect([.value(1), .value(2)])  // exactly the events since the last assertion
        input.sendCompleted()
        recorder.expect([.completed])
        recorder.expectNothingMore()
        // DOCC-TESTING-RECORDER-EXPECT-END
        #expect(recorder.failures == [])
    }

    @Test(
        "an async back-off that sleeps on TestScheduler.clock wakes when the test advances, and is cancelled by disconnect"
    )
    func asyncEffectOnVirtualTime() async throws {
        // DOCC-TESTING-CLOCK-BEGIN
        let scheduler = TestScheduler()
        let clock = scheduler.clock  // a Clock whose time is the scheduler's
        let backOff = SignalProducer<ChannelInput, Never>(
            operation: {
                try await clock.sleep(for: .seconds(30)); return .retry
            },
            catch: { _ in .disconnect }
        )
        let automaton = makeChannelManager(connect: SignalProducer(value: .failed), backOff: backOff)
        var replies = automaton.replies.stream().makeAsyncIterator()  // made before anything is sent

        automaton.send(.connect)  // the attempt fails at once: back off
        await clock.waitForSleepers(1)  // the back-off task is asleep on the clock
        await clock.advance(by: .seconds(30))  // wakes it; it sends .retry, which fails again
        await clock.waitForSleepers(1)  // the next back-off sleeps
        automaton.send(.disconnect)  // cancels it: its sleep throws

        var seen: [Reply<ChannelState, ChannelInput>] = []
        for _ in 0..<5 { seen.append(try #require(await replies.next())) }
        #expect(
            seen == [
                .success(.connect, .disconnected, .connecting),
                .success(.failed, .connecting, .backingOff),
                .success(.retry, .backingOff, .connecting),
                .success(.failed, .connecting, .backingOff),
                .success(.disconnect, .backingOff, .disconnected),
            ])
        #expect(scheduler.pendingActionCount == 0)  // no wake-up left
        // DOCC-TESTING-CLOCK-END
    }
}
