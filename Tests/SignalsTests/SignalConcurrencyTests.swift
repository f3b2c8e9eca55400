import Dispatch
import Foundation
import Signals
import Testing

@Suite("Signal delivery under concurrent senders, observers and disposals")
struct SignalConcurrencyTests {
    @Test("Four threads sending 100,000 values each: every value delivered once, one at a time, in one order")
    func concurrentSendersAreSerialized() {
        let threads = 4
        let perThread = 100_000
        let total = threads * perThread
        let (signal, input) = Signal<Int, Never>.pipe()
        let probe = InFlightProbe()
        let first = LockedTestValue<[Int]>([])
        let second = LockedTestValue<[Int]>([])
        first.withValue { $0.reserveCapacity(total) }
        second.withValue { $0.reserveCapacity(total) }
        signal.observeValues { value in
            probe.run { first.withValue { $0.append(value) } }
        }
        signal.observeValues { value in
            probe.run { second.withValue { $0.append(value) } }
        }

        Watchdog.runOnThreads(threads, timeout: .seconds(60)) { thread in
            for index in 0..<perThread {
                input.send(value: thread * perThread + index)
            }
        }

        let delivered = first.value
        #expect(delivered.count == total)
        #expect(delivered.sorted() == Array(0..<total))
        #expect(second.value == delivered, "every observer sees the same order")
        #expect(probe.maximum == 1, "no two deliveries ever overlap")
        for thread in 0..<threads {
            let fromThread = delivered.filter { $0 / perThread == thread }
            #expect(
                fromThread == Array(thread * perThread..<(thread + 1) * perThread),
                "each sender's values arrive in the order it sent them")
        }
    }

    @Test("Concurrent observe, dispose and send never lose a terminal event nor break the grammar")
    func concurrentObserveDisposeSend() {
        for _ in 0..<200 {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let kept = LockedTestValue<[EventRecorder<Int, TestError>]>([])
            let disposed = LockedTestValue<[EventRecorder<Int, TestError>]>([])

            Watchdog.runOnThreads(6) { thread in
                switch thread {
                case 0, 1:
                    for value in 0..<100 { input.send(value: value) }
                case 2, 3:
                    for _ in 0..<20 {
                        let recorder = EventRecorder<Int, TestError>()
                        signal.observe(recorder.observer)
                        kept.withValue { $0.append(recorder) }
                    }
                default:
                    for _ in 0..<20 {
                        let recorder = EventRecorder<Int, TestError>()
                        signal.observe(recorder.observer).dispose()
                        disposed.withValue { $0.append(recorder) }
                    }
                }
            }
            input.sendCompleted()

            for recorder in kept.value {
                #expect(recorder.followsGrammar)
                #expect(recorder.events.last == .completed)
                #expect(recorder.terminalCount == 1)
            }
            for recorder in disposed.value {
                #expect(recorder.followsGrammar)
                #expect(recorder.terminalCount == 0)
            }
        }
    }

    @Test("A terminal event racing with observe and dispose reaches every observer still attached, once")
    func terminalRacingWithObservers() {
        for _ in 0..<300 {
            let (signal, input) = Signal<Int, TestError>.pipe()
            let kept = LockedTestValue<[EventRecorder<Int, TestError>]>([])
            let disposed = LockedTestValue<[EventRecorder<Int, TestError>]>([])

            Watchdog.runOnThreads(5) { thread in
                switch thread {
                case 0:
                    for value in 0..<20 { input.send(value: value) }
                    input.send(error: .boom)
                case 1:
                    for value in 100..<120 { input.send(value: value) }
                    input.sendCompleted()
                case 2, 3:
                    for _ in 0..<10 {
                        let recorder = EventRecorder<Int, TestError>()
                        signal.observe(recorder.observer)
                        kept.withValue { $0.append(recorder) }
                    }
                default:
                    for _ in 0..<10 {
                        let recorder = EventRecorder<Int, TestError>()
                        let disposable = signal.observe(recorder.observer)
                        disposable.dispose()
                        disposed.withValue { $0.append(recorder) }
                    }
                }
            }

            // Exactly one of the two terminal events won, and every attached observer got that one.
            let winners = Set(kept.value.compactMap { $0.events.last })
            #expect(winners.count == 1)
            for recorder in kept.value {
                #expect(recorder.followsGrammar)
                #expect(recorder.terminalCount == 1)
            }
            for recorder in disposed.value {
                #expect(recorder.followsGrammar)
                #expect(recorder.terminalCount <= 1)
            }
        }
    }

    @Test("A send made while another thread delivers never waits for the observer; the deliverer delivers it")
    func sendNeverBlocksOnObserver() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let log = LockedTestValue<[String]>([])
        let delivererID = LockedTestValue<UInt?>(nil)
        signal.observeValues { value in
            let thread = Watchdog.currentThreadID == delivererID.value ? "deliverer" : "another thread"
            log.withValue { $0.append("\(value) on \(thread)") }
            if value == 1 {
                entered.signal()
                // Held until the other thread's send has returned: if that send waited for this observer,
                // both would wait for each other and this wait would time out.
                Watchdog.wait(release, "the second sender to return from send")
            }
        }

        Watchdog.startThread {
            delivererID.withValue { $0 = Watchdog.currentThreadID }
            input.send(value: 1)
            finished.signal()
        }
        guard Watchdog.wait(entered, "the first delivery to begin") else { return }
        Watchdog.startThread {
            input.send(value: 2)
            log.withValue { $0.append("second returned") }
            release.signal()
        }
        Watchdog.wait(finished, "the deliverer to finish")

        #expect(log.value == ["1 on deliverer", "second returned", "2 on deliverer"])
    }

    @Test("An observer added from another thread during delivery is called serially with the others")
    func observeFromAnotherThreadDuringDelivery() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let log = LockedTestValue<[String]>([])
        signal.observeValues { value in
            log.withValue { $0.append("first \(value)") }
            if value == 1 {
                entered.signal()
                Watchdog.wait(release, "the other thread to add its observer")
            }
        }

        Watchdog.startThread {
            input.send(value: 1)
            input.send(value: 2)
            finished.signal()
        }
        guard Watchdog.wait(entered, "the first delivery to begin") else { return }
        Watchdog.startThread {
            signal.observeValues { value in log.withValue { $0.append("added \(value)") } }
            log.withValue { $0.append("observe returned") }
            release.signal()
        }
        Watchdog.wait(finished, "the deliverer to finish")

        #expect(log.value == ["first 1", "observe returned", "first 2", "added 2"])
    }
}
