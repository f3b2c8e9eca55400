import Dispatch
import Foundation
import Signals
import Testing

/// What ran, and when.
private struct Stamp: Equatable, Sendable, CustomStringConvertible {
    let time: Duration
    let name: String

    init(_ time: Duration, _ name: String) {
        self.time = time
        self.name = name
    }

    var description: String { "\(name)@\(time)" }
}

@Suite("TestScheduler")
struct TestSchedulerTests {
    @Test("the clock starts at zero and schedule(_:) waits for the next advance")
    func scheduleWaitsForAdvance() {
        let scheduler = TestScheduler()
        let log = TestLog<Stamp>()
        scheduler.schedule { log.append(Stamp(scheduler.now, "a")) }

        #expect(scheduler.now == .zero)
        #expect(log.entries == [])
        #expect(scheduler.pendingActionCount == 1)

        scheduler.advance()
        #expect(log.entries == [Stamp(.zero, "a")])
        #expect(scheduler.now == .zero)
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("actions due at the same instant run in the order they were scheduled")
    func sameInstantInSchedulingOrder() {
        let scheduler = TestScheduler()
        let log = TestLog<Stamp>()
        scheduler.schedule(after: .seconds(1)) { log.append(Stamp(scheduler.now, "a")) }
        scheduler.schedule(after: .seconds(2)) { log.append(Stamp(scheduler.now, "x")) }
        scheduler.schedule(after: .seconds(1)) { log.append(Stamp(scheduler.now, "b")) }
        scheduler.advance(by: .milliseconds(500))
        scheduler.schedule(after: .milliseconds(500)) { log.append(Stamp(scheduler.now, "c")) }
        for index in 0..<20 {
            scheduler.schedule(after: .milliseconds(500)) { log.append(Stamp(scheduler.now, "d\(index)")) }
        }

        scheduler.advance(by: .milliseconds(500))

        let expected =
            [Stamp(.seconds(1), "a"), Stamp(.seconds(1), "b"), Stamp(.seconds(1), "c")]
            + (0..<20).map { Stamp(.seconds(1), "d\($0)") }
        #expect(log.entries == expected)
        #expect(scheduler.pendingActionCount == 1)

        // Run what is left: a pending action holds the scheduler, so leaving one would be a cycle.
        scheduler.run()
        #expect(log.entries == expected + [Stamp(.seconds(2), "x")])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("advance(by:) runs only the actions that are due, in time order, and moves the clock")
    func advanceByRunsOnlyWhatIsDue() {
        let scheduler = TestScheduler()
        let log = TestLog<Stamp>()
        scheduler.schedule(after: .seconds(3)) { log.append(Stamp(scheduler.now, "c")) }
        scheduler.schedule(after: .seconds(1)) { log.append(Stamp(scheduler.now, "a")) }
        scheduler.schedule(after: .seconds(5)) { log.append(Stamp(scheduler.now, "e")) }
        scheduler.schedule(after: .seconds(2)) { log.append(Stamp(scheduler.now, "b")) }
        scheduler.schedule(after: .seconds(-4)) { log.append(Stamp(scheduler.now, "now")) }

        scheduler.advance(by: .seconds(3))
        #expect(
            log.entries == [
                Stamp(.zero, "now"), Stamp(.seconds(1), "a"), Stamp(.seconds(2), "b"), Stamp(.seconds(3), "c"),
            ])
        #expect(scheduler.now == .seconds(3))

        scheduler.advance(by: .seconds(1))
        #expect(log.entries.count == 4)
        #expect(scheduler.now == .seconds(4))

        scheduler.advance(to: .seconds(6))
        #expect(
            log.entries == [
                Stamp(.zero, "now"), Stamp(.seconds(1), "a"), Stamp(.seconds(2), "b"), Stamp(.seconds(3), "c"),
                Stamp(.seconds(5), "e"),
            ])
        #expect(scheduler.now == .seconds(6))
    }

    @Test("advance() runs what is due now, including what those actions schedule now, but not later ones")
    func advanceRunsWhatIsDueNow() {
        let scheduler = TestScheduler()
        let log = TestLog<Stamp>()
        scheduler.schedule {
            log.append(Stamp(scheduler.now, "a"))
            scheduler.schedule { log.append(Stamp(scheduler.now, "a.now")) }
            scheduler.schedule(after: .nanoseconds(1)) { log.append(Stamp(scheduler.now, "a.later")) }
        }

        scheduler.advance()
        #expect(log.entries == [Stamp(.zero, "a"), Stamp(.zero, "a.now")])
        #expect(scheduler.now == .zero)
        #expect(scheduler.pendingActionCount == 1)

        // Run what is left: a pending action holds the scheduler, so leaving one would be a cycle.
        scheduler.run()
        #expect(log.entries == [Stamp(.zero, "a"), Stamp(.zero, "a.now"), Stamp(.nanoseconds(1), "a.later")])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("actions scheduled from inside an action run in the same advance when due, in time order")
    func nestedSchedulingRunsInSameAdvance() {
        let scheduler = TestScheduler()
        let log = TestLog<Stamp>()
        scheduler.schedule(after: .seconds(1)) {
            log.append(Stamp(scheduler.now, "a"))
            scheduler.schedule(after: .seconds(1)) { log.append(Stamp(scheduler.now, "a+1")) }
            scheduler.schedule { log.append(Stamp(scheduler.now, "a+0")) }
            scheduler.schedule(after: .milliseconds(300)) {
                log.append(Stamp(scheduler.now, "a+0.3"))
                scheduler.schedule(after: .milliseconds(200)) { log.append(Stamp(scheduler.now, "a+0.5")) }
            }
            scheduler.schedule(after: .seconds(10)) { log.append(Stamp(scheduler.now, "a+10")) }
        }
        scheduler.schedule(after: .milliseconds(1500)) { log.append(Stamp(scheduler.now, "b")) }

        scheduler.advance(to: .seconds(3))

        let expected = [
            Stamp(.seconds(1), "a"),
            Stamp(.seconds(1), "a+0"),
            Stamp(.milliseconds(1300), "a+0.3"),
            Stamp(.milliseconds(1500), "b"),
            Stamp(.milliseconds(1500), "a+0.5"),
            Stamp(.seconds(2), "a+1"),
        ]
        #expect(log.entries == expected)
        #expect(scheduler.now == .seconds(3))
        #expect(scheduler.pendingActionCount == 1)

        // Run what is left: a pending action holds the scheduler, so leaving one would be a cycle.
        scheduler.run()
        #expect(log.entries == expected + [Stamp(.seconds(11), "a+10")])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("an action may advance the clock itself without deadlocking")
    func reentrantAdvance() {
        let scheduler = TestScheduler()
        let log = TestLog<Stamp>()
        scheduler.schedule(after: .seconds(1)) {
            log.append(Stamp(scheduler.now, "a"))
            scheduler.advance(by: .seconds(1))
            log.append(Stamp(scheduler.now, "a.end"))
        }
        scheduler.schedule(after: .milliseconds(1500)) { log.append(Stamp(scheduler.now, "b")) }
        scheduler.schedule(after: .seconds(3)) { log.append(Stamp(scheduler.now, "c")) }

        scheduler.advance(by: .seconds(5))

        #expect(
            log.entries == [
                Stamp(.seconds(1), "a"), Stamp(.milliseconds(1500), "b"), Stamp(.seconds(2), "a.end"),
                Stamp(.seconds(3), "c"),
            ])
        #expect(scheduler.now == .seconds(5))
    }

    @Test("another thread may schedule while an action runs during an advance, without deadlock")
    func schedulingFromAnotherThreadDuringAdvance() {
        let scheduler = TestScheduler()
        let log = TestLog<Stamp>()
        let scheduledByOtherThread = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let waitResults = TestLog<DispatchTimeoutResult>()

        scheduler.schedule(after: .seconds(1)) {
            log.append(Stamp(scheduler.now, "a"))
            Thread.detachNewThread {
                scheduler.schedule { log.append(Stamp(scheduler.now, "from thread, now")) }
                scheduler.schedule(after: .seconds(1)) { log.append(Stamp(scheduler.now, "from thread, +1")) }
                scheduledByOtherThread.signal()
            }
            // The action blocks until the other thread has scheduled: a scheduler that held its lock
            // while running actions would deadlock here.
            waitResults.append(scheduledByOtherThread.wait(timeout: .now() + 10))
        }

        // Advance on a thread of its own so that a deadlock fails the test instead of hanging it.
        Thread.detachNewThread {
            scheduler.advance(by: .seconds(5))
            finished.signal()
        }

        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(waitResults.entries == [.success])
        #expect(
            log.entries == [
                Stamp(.seconds(1), "a"), Stamp(.seconds(1), "from thread, now"), Stamp(.seconds(2), "from thread, +1"),
            ])
        #expect(scheduler.now == .seconds(5))
    }

    @Test("many threads scheduling and cancelling while the clock advances lose nothing and never deadlock")
    func concurrentSchedulingWhileAdvancing() {
        let scheduler = TestScheduler()
        let threads = 4
        let actionsPerThread = 2_000
        let ran = TestLog<Int>()
        let schedulers = DispatchGroup()
        let finished = DispatchSemaphore(value: 0)

        Thread.detachNewThread {
            DispatchQueue.global().async(group: schedulers) {
                DispatchQueue.concurrentPerform(iterations: threads) { thread in
                    for index in 0..<actionsPerThread {
                        let number = thread * actionsPerThread + index
                        if number % 5 == 0 {
                            // Far enough ahead that the clock cannot reach it before it is disposed.
                            scheduler.schedule(after: .seconds(1_000_000)) { ran.append(number) }?.dispose()
                        } else {
                            scheduler.schedule(after: .milliseconds(index % 7)) { ran.append(number) }
                        }
                    }
                }
            }
            while schedulers.wait(timeout: .now()) == .timedOut {
                scheduler.advance(by: .milliseconds(1))
            }
            scheduler.run()
            finished.signal()
        }

        #expect(finished.wait(timeout: .now() + 30) == .success)
        let expected = (0..<(threads * actionsPerThread)).filter { $0 % 5 != 0 }
        #expect(ran.entries.sorted() == expected)
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("disposed actions never run, whether disposed before or during an advance")
    func cancelledActionsDoNotRun() {
        let scheduler = TestScheduler()
        let log = TestLog<Stamp>()
        scheduler.schedule { log.append(Stamp(scheduler.now, "a")) }
        scheduler.schedule { log.append(Stamp(scheduler.now, "b")) }?.dispose()
        scheduler.schedule(after: .seconds(1)) { log.append(Stamp(scheduler.now, "c")) }?.dispose()
        let repeating = scheduler.schedule(after: .seconds(1), interval: .seconds(1)) {
            log.append(Stamp(scheduler.now, "r"))
        }
        repeating?.dispose()
        let late = scheduler.schedule(after: .seconds(2)) { log.append(Stamp(scheduler.now, "late")) }
        let sameInstant = TestLog<Disposable>()
        scheduler.schedule(after: .seconds(1)) {
            log.append(Stamp(scheduler.now, "d"))
            sameInstant.entries.forEach { $0.dispose() }
            late?.dispose()
        }
        if let disposable = scheduler.schedule(after: .seconds(1), action: { log.append(Stamp(scheduler.now, "e")) }) {
            sameInstant.append(disposable)
        }
        #expect(scheduler.pendingActionCount == 4)

        scheduler.advance(by: .seconds(10))

        #expect(log.entries == [Stamp(.zero, "a"), Stamp(.seconds(1), "d")])
        #expect(scheduler.pendingActionCount == 0)
        #expect(late?.isDisposed == true)
    }

    @Test("run() drains every action, those scheduled while running included, and leaves the clock at the last")
    func runDrains() {
        let scheduler = TestScheduler()
        let log = TestLog<Stamp>()
        scheduler.schedule(after: .seconds(100)) { log.append(Stamp(scheduler.now, "c")) }
        scheduler.schedule(after: .seconds(1)) {
            log.append(Stamp(scheduler.now, "a"))
            scheduler.schedule(after: .seconds(150)) { log.append(Stamp(scheduler.now, "d")) }
        }
        scheduler.schedule(after: .seconds(5)) { log.append(Stamp(scheduler.now, "b")) }

        scheduler.run()

        #expect(
            log.entries == [
                Stamp(.seconds(1), "a"), Stamp(.seconds(5), "b"), Stamp(.seconds(100), "c"), Stamp(.seconds(151), "d"),
            ])
        #expect(scheduler.now == .seconds(151))
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("a repeating action fires at each interval, the expected number of times, until disposed")
    func repeatingActions() {
        let scheduler = TestScheduler()
        let log = TestLog<Stamp>()
        let repeating = scheduler.schedule(after: .seconds(1), interval: .seconds(2)) {
            log.append(Stamp(scheduler.now, "r"))
        }
        scheduler.schedule(after: .seconds(3)) { log.append(Stamp(scheduler.now, "once")) }

        scheduler.advance(by: .seconds(6))
        #expect(
            log.entries == [
                Stamp(.seconds(1), "r"), Stamp(.seconds(3), "once"), Stamp(.seconds(3), "r"), Stamp(.seconds(5), "r"),
            ])

        scheduler.advance(by: .seconds(1))
        #expect(log.entries.last == Stamp(.seconds(7), "r"))
        #expect(log.entries.count == 5)

        repeating?.dispose()
        #expect(scheduler.pendingActionCount == 0)
        scheduler.advance(by: .seconds(10))
        #expect(log.entries.count == 5)
    }

    @Test("a repeating action disposed from inside itself does not fire again")
    func repeatingActionDisposedFromInside() {
        let scheduler = TestScheduler()
        let log = TestLog<Stamp>()
        let disposable = TestLog<Disposable>()
        let repeating = scheduler.schedule(after: .zero, interval: .milliseconds(250)) {
            log.append(Stamp(scheduler.now, "r"))
            if log.entries.count == 3 { disposable.entries.forEach { $0.dispose() } }
        }
        if let repeating { disposable.append(repeating) }

        scheduler.advance(by: .seconds(2))

        #expect(log.entries == [Stamp(.zero, "r"), Stamp(.milliseconds(250), "r"), Stamp(.milliseconds(500), "r")])
        #expect(scheduler.pendingActionCount == 0)
        scheduler.run()
        #expect(log.entries.count == 3)
    }
}
