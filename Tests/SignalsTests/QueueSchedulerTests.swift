import Dispatch
import Foundation
import Signals
import Testing

/// A thread-safe record of what the actions saw.
private final class QueueSchedulerLog<Entry: Sendable>: @unchecked Sendable {
    // Safe: every stored property is only touched with `lock` held.
    private let lock = NSLock()
    private var entries: [Entry] = []
    private var running = 0
    private var maximumRunning = 0

    func append(_ entry: Entry) {
        lock.lock()
        entries.append(entry)
        lock.unlock()
    }

    var all: [Entry] {
        lock.lock()
        defer { lock.unlock() }
        return entries
    }

    /// Records that an action started; `maximumConcurrency` is the most that ever ran at once.
    func enter() {
        lock.lock()
        running += 1
        maximumRunning = max(maximumRunning, running)
        lock.unlock()
    }

    func leave() {
        lock.lock()
        running -= 1
        lock.unlock()
    }

    var maximumConcurrency: Int {
        lock.lock()
        defer { lock.unlock() }
        return maximumRunning
    }
}

/// Signals its semaphore when released, to prove a closure that captured it was let go.
private final class ReleaseProbe: Sendable {
    let released: DispatchSemaphore

    init(_ released: DispatchSemaphore) {
        self.released = released
    }

    deinit {
        released.signal()
    }
}

@Suite("QueueScheduler")
struct QueueSchedulerTests {
    @Test("actions run on the scheduler's queue, one at a time, in the order they were scheduled")
    func serialAndInOrder() {
        let scheduler = QueueScheduler(label: "test.serial")
        let key = DispatchSpecificKey<String>()
        scheduler.queue.setSpecific(key: key, value: "test.serial")
        let log = QueueSchedulerLog<Int>()
        let onQueue = QueueSchedulerLog<Bool>()
        let done = DispatchSemaphore(value: 0)
        let count = 2_000

        for index in 0..<count {
            scheduler.schedule {
                log.enter()
                onQueue.append(DispatchQueue.getSpecific(key: key) == "test.serial")
                log.append(index)
                log.leave()
                if index == count - 1 { done.signal() }
            }
        }

        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(log.all == Array(0..<count))
        #expect(onQueue.all == Array(repeating: true, count: count))
        #expect(log.maximumConcurrency == 1)
    }

    @Test("actions scheduled from many threads run serially, each thread's in its own order")
    func serialUnderConcurrentScheduling() {
        let scheduler = QueueScheduler(label: "test.concurrent")
        let log = QueueSchedulerLog<Int>()
        let threads = 4
        let perThread = 1_000
        let allScheduled = DispatchGroup()
        let finished = DispatchSemaphore(value: 0)

        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for index in 0..<perThread {
                allScheduled.enter()
                scheduler.schedule {
                    log.enter()
                    log.append(thread * perThread + index)
                    log.leave()
                    allScheduled.leave()
                }
            }
        }
        allScheduled.notify(queue: .global()) { finished.signal() }

        #expect(finished.wait(timeout: .now() + 10) == .success)
        let entries = log.all
        #expect(entries.count == threads * perThread)
        for thread in 0..<threads {
            let range = (thread * perThread)..<((thread + 1) * perThread)
            #expect(entries.filter { range.contains($0) } == Array(range))
        }
        #expect(log.maximumConcurrency == 1)
    }

    @Test("now starts near zero and grows; a delayed action runs no earlier than its delay")
    func delayedActionRunsAfterDelay() {
        let scheduler = QueueScheduler(label: "test.delay")
        let start = scheduler.now
        let times = QueueSchedulerLog<Duration>()
        let done = DispatchSemaphore(value: 0)

        scheduler.schedule(after: .milliseconds(10)) {
            times.append(scheduler.now)
            done.signal()
        }

        #expect(start >= .zero)
        #expect(start < .seconds(1))
        #expect(done.wait(timeout: .now() + 10) == .success)
        let elapsed = times.all.map { $0 - start }
        #expect(elapsed.count == 1)
        #expect(elapsed.allSatisfy { $0 >= .milliseconds(10) })
    }

    @Test("a disposed action does not run, whether it was immediate or delayed")
    func disposedActionsDoNotRun() {
        let scheduler = QueueScheduler(label: "test.cancel")
        let log = QueueSchedulerLog<String>()
        let blocker = DispatchSemaphore(value: 0)
        let blocked = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)

        // Hold the queue so that "immediate" is still waiting when it is disposed.
        scheduler.schedule {
            blocked.signal()
            _ = blocker.wait(timeout: .now() + 10)
            log.append("blocker")
        }
        #expect(blocked.wait(timeout: .now() + 10) == .success)
        let immediate = scheduler.schedule { log.append("immediate") }
        immediate?.dispose()
        let delayed = scheduler.schedule(after: .milliseconds(10)) { log.append("delayed") }
        delayed?.dispose()
        scheduler.schedule { log.append("kept") }
        blocker.signal()

        // The sentinel comes due well after the cancelled delayed action would have.
        scheduler.schedule(after: .milliseconds(60)) {
            log.append("sentinel")
            done.signal()
        }

        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(log.all == ["blocker", "kept", "sentinel"])
        #expect(immediate?.isDisposed == true)
        #expect(delayed?.isDisposed == true)
    }

    @Test("a repeating action fires until disposed, then never again")
    func repeatingActionStopsWhenDisposed() {
        let scheduler = QueueScheduler(label: "test.repeat")
        let log = QueueSchedulerLog<Int>()
        let handle = QueueSchedulerLog<Disposable>()
        let stopped = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)

        // Scheduled from the queue itself, so the handle is stored before the first occurrence can run.
        scheduler.schedule {
            let repeating = scheduler.schedule(after: .milliseconds(5), interval: .milliseconds(5)) {
                let count = log.all.count + 1
                log.append(count)
                if count == 3 {
                    // Disposing on the scheduler's own queue guarantees no further occurrence.
                    handle.all.forEach { $0.dispose() }
                    stopped.signal()
                }
            }
            if let repeating { handle.append(repeating) }
        }

        #expect(stopped.wait(timeout: .now() + 10) == .success)
        scheduler.schedule(after: .milliseconds(50)) { done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(log.all == [1, 2, 3])
        #expect(handle.all.count == 1)
        #expect(handle.all.allSatisfy { $0.isDisposed })
    }

    @Test("delayed and repeating actions release their closures once they ran or were disposed")
    func closuresAreReleased() {
        let scheduler = QueueScheduler(label: "test.release")
        let ranReleased = DispatchSemaphore(value: 0)
        let cancelledReleased = DispatchSemaphore(value: 0)
        let repeatingReleased = DispatchSemaphore(value: 0)
        let ran = DispatchSemaphore(value: 0)

        do {
            let probe = ReleaseProbe(ranReleased)
            scheduler.schedule(after: .milliseconds(1)) {
                withExtendedLifetime(probe) {}
                ran.signal()
            }
        }
        do {
            let probe = ReleaseProbe(cancelledReleased)
            scheduler.schedule(after: .seconds(3600)) { withExtendedLifetime(probe) {} }?.dispose()
        }
        do {
            let probe = ReleaseProbe(repeatingReleased)
            scheduler.schedule(after: .seconds(3600), interval: .seconds(1)) { withExtendedLifetime(probe) {} }?
                .dispose()
        }

        #expect(ran.wait(timeout: .now() + 10) == .success)
        #expect(ranReleased.wait(timeout: .now() + 10) == .success)
        #expect(cancelledReleased.wait(timeout: .now() + 10) == .success)
        #expect(repeatingReleased.wait(timeout: .now() + 10) == .success)
    }
}
