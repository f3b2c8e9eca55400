import Dispatch
import Signals
import Testing

// The behaviours of ReactiveSwift's SchedulerSpec, written against our API. Each test names the spec
// case it follows.

@Suite("Conformance: SchedulerSpec")
struct SchedulerConformanceTests {
    @Test("SchedulerSpec: ImmediateScheduler should run enqueued actions immediately")
    func immediate() {
        let ran = LockedTestValue(false)
        let disposable = ImmediateScheduler().schedule { ran.withValue { $0 = true } }
        #expect(ran.value)
        #expect(disposable == nil)
    }

    @Test("SchedulerSpec: QueueScheduler should run enqueued actions on its queue, in order")
    func queue() {
        let scheduler = QueueScheduler(label: "conformance")
        let log = TestLog<Int>()
        let done = DispatchSemaphore(value: 0)
        for index in 0..<100 {
            scheduler.schedule {
                dispatchPrecondition(condition: .onQueue(scheduler.queue))
                log.append(index)
                if index == 99 { done.signal() }
            }
        }
        Watchdog.wait(done, "the queue scheduler's actions")
        #expect(log.entries == Array(0..<100))
    }

    @Test("SchedulerSpec: QueueScheduler should run enqueued actions after a given delay, and not run disposed ones")
    func queueDelayed() {
        let scheduler = QueueScheduler(label: "conformance")
        let log = TestLog<String>()
        let done = DispatchSemaphore(value: 0)
        let start = scheduler.now
        scheduler.schedule(after: .milliseconds(50)) {
            log.append(scheduler.now - start >= .milliseconds(50) ? "late enough" : "too early")
            done.signal()
        }
        scheduler.schedule(after: .milliseconds(10)) { log.append("disposed one ran") }?.dispose()
        Watchdog.wait(done, "the delayed action")
        #expect(log.entries == ["late enough"])
    }

    @Test("SchedulerSpec: QueueScheduler should repeatedly run actions after a given delay until disposed")
    func queueRepeating() {
        let scheduler = QueueScheduler(label: "conformance")
        let count = LockedTestValue(0)
        let done = DispatchSemaphore(value: 0)
        let disposable = scheduler.schedule(after: .milliseconds(5), interval: .milliseconds(5)) {
            if count.withValue({
                $0 += 1; return $0
            }) == 3 {
                done.signal()
            }
        }
        Watchdog.wait(done, "three occurrences")
        disposable?.dispose()
        let afterDisposal = count.value
        // Let the queue drain: an action scheduled behind the timer runs after any occurrence in flight.
        let drained = DispatchSemaphore(value: 0)
        scheduler.schedule { drained.signal() }
        Watchdog.wait(drained, "the queue to drain")
        #expect(count.value <= afterDisposal + 1)
    }

    @Test("SchedulerSpec: TestScheduler should run immediately enqueued actions upon advancement")
    func testSchedulerAdvance() {
        let scheduler = TestScheduler()
        let log = TestLog<Int>()
        scheduler.schedule { log.append(1) }
        scheduler.schedule { log.append(2) }
        #expect(log.entries == [])
        scheduler.advance()
        #expect(log.entries == [1, 2])
        #expect(scheduler.now == .zero)
    }

    @Test("SchedulerSpec: TestScheduler should run actions when advanced past the target date")
    func testSchedulerDelayed() {
        let scheduler = TestScheduler()
        let log = TestLog<String>()
        scheduler.schedule(after: .seconds(15)) { log.append("15") }
        scheduler.schedule(after: .seconds(5)) { log.append("5") }
        scheduler.advance(by: .seconds(10))
        #expect(log.entries == ["5"])
        #expect(scheduler.now == .seconds(10))
        scheduler.advance(to: .seconds(15))
        #expect(log.entries == ["5", "15"])
    }

    @Test("SchedulerSpec: TestScheduler should run all remaining actions in order")
    func testSchedulerRun() {
        let scheduler = TestScheduler()
        let log = TestLog<Int>()
        scheduler.schedule(after: .seconds(15)) { log.append(3) }
        scheduler.schedule(after: .seconds(5)) { log.append(1) }
        scheduler.schedule(after: .seconds(5)) { log.append(2) }
        scheduler.run()
        #expect(log.entries == [1, 2, 3])
        #expect(scheduler.now == .seconds(15))
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("SchedulerSpec: TestScheduler should run repeating actions at each interval until disposed")
    func testSchedulerRepeating() {
        let scheduler = TestScheduler()
        let log = TestLog<Duration>()
        let disposable = scheduler.schedule(after: .seconds(1), interval: .seconds(2)) { log.append(scheduler.now) }
        scheduler.advance(by: .seconds(5))
        #expect(log.entries == [.seconds(1), .seconds(3), .seconds(5)])
        disposable?.dispose()
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test(
        "SchedulerSpec: TestScheduler scheduling from an action or another thread while advancing (difference: never blocks)"
    )
    func testSchedulerReentrant() {
        let scheduler = TestScheduler()
        let log = TestLog<String>()
        scheduler.schedule {
            log.append("outer")
            Watchdog.runOnThreads(1) { _ in scheduler.schedule { log.append("from another thread") } }
            scheduler.schedule { log.append("from the action") }
        }
        scheduler.advance()
        #expect(log.entries == ["outer", "from another thread", "from the action"])
    }
}
