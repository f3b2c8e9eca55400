import Dispatch
import Foundation
import Testing

@testable import Signals

/// A core with a sole sender (`SignalCore.init(soleSender:)`, what an automaton's `replies` and
/// `effectEvents` are built on) keeps the delivery contract of every signal, though its sender takes
/// no atomic read-modify-write: observer changes are queued and applied before the sender's next
/// event.
@Suite("A signal with a sole sender keeps the delivery contract")
struct SoleSenderSignalTests {
    @Test("Values reach exactly the observers attached before they were sent, and none disposed before")
    func observerChangesBetweenSends() {
        let (signal, input) = Signal<Int, TestError>.pipeWithSoleSender()
        let core = signal.core
        let first = EventRecorder<Int, TestError>()
        let second = EventRecorder<Int, TestError>()
        let third = EventRecorder<Int, TestError>()
        core.sendFromSoleSender(.value(1))  // nobody observes
        let firstDisposable = signal.observe(first.observer)
        core.sendFromSoleSender(.value(2))
        signal.observe(second.observer)
        core.sendFromSoleSender(.value(3))
        firstDisposable.dispose()
        core.sendFromSoleSender(.value(4))
        input.sendCompleted()
        signal.observe(third.observer)  // after the end: the terminal event at once
        core.sendFromSoleSender(.value(5))  // ignored

        #expect(first.events == [.value(2), .value(3)])
        #expect(second.events == [.value(3), .value(4), .completed])
        #expect(third.events == [.completed])
    }

    @Test("Observers added and disposed inside an observer take effect from the next event")
    func observerChangesDuringDelivery() {
        let (signal, input) = Signal<Int, TestError>.pipeWithSoleSender()
        let core = signal.core
        let added = EventRecorder<Int, TestError>()
        let selfDisposing = LockedTestValue<[Int]>([])
        let ownDisposable = LockedTestValue<Disposable?>(nil)
        let log = LockedTestValue<[String]>([])
        signal.observeValues { value in
            log.withValue { $0.append("adder \(value)") }
            if value == 1 { signal.observe(added.observer) }
        }
        let disposable = signal.observeValues { value in
            selfDisposing.withValue { $0.append(value) }
            if value == 2 { ownDisposable.value?.dispose() }
        }
        ownDisposable.withValue { $0 = disposable }
        for value in 1...3 { core.sendFromSoleSender(.value(value)) }
        input.sendInterrupted()

        #expect(log.value == ["adder 1", "adder 2", "adder 3"])
        #expect(selfDisposing.value == [1, 2])
        #expect(added.events == [.value(2), .value(3), .interrupted])
    }

    @Test("Observers added while the terminal event is delivered hear it; disposed ones do not")
    func observerChangesAroundTermination() {
        let (signal, input) = Signal<Int, TestError>.pipeWithSoleSender()
        let core = signal.core
        let late = EventRecorder<Int, TestError>()
        let disposedBeforeEnd = EventRecorder<Int, TestError>()
        signal.observe { event in
            if event.isTerminating { signal.observe(late.observer) }
        }
        signal.observe(disposedBeforeEnd.observer).dispose()
        core.sendFromSoleSender(.value(1))
        input.send(error: .boom)
        input.send(value: 2)  // after the end: ignored

        #expect(late.events == [.failed(.boom)])
        #expect(disposedBeforeEnd.events == [])
    }

    @Test("Concurrent observe and dispose: each observer hears a gap-free run, from its attachment to its disposal")
    func concurrentObserversOfOneSender() {
        for _ in 0..<50 {
            let (signal, input) = Signal<Int, Never>.pipeWithSoleSender()
            let core = signal.core
            let count = 2_000
            // started: values whose send has begun; finished: values whose send has returned.
            let progress = LockedTestValue<(started: Int, finished: Int)>((0, 0))
            let outcomes = LockedTestValue<[(received: [Int], before: Int, after: Int, disposedAt: Int?)]>([])

            Watchdog.runOnThreads(3) { thread in
                if thread == 0 {
                    for value in 0..<count {
                        progress.withValue { $0.started = value + 1 }
                        core.sendFromSoleSender(.value(value))
                        progress.withValue { $0.finished = value + 1 }
                    }
                    return
                }
                for round in 0..<40 {
                    let received = LockedTestValue<[Int]>([])
                    let before = progress.value.finished
                    let disposable = signal.observeValues { value in received.withValue { $0.append(value) } }
                    let after = progress.value.started
                    var disposedAt: Int?
                    if round % 2 == 0 {
                        disposable.dispose()
                        disposedAt = progress.value.started
                    }
                    // Read now: a disposed observer hears nothing more; a kept one, a prefix of what it hears.
                    outcomes.withValue { $0.append((received.value, before, after, disposedAt)) }
                }
            }
            input.sendCompleted()

            for outcome in outcomes.value {
                let received = outcome.received
                guard let first = received.first else { continue }
                #expect(received == Array(first..<(first + received.count)), "a gap-free run")
                #expect(first >= outcome.before, "nothing sent before the observer was attached")
                if let disposedAt = outcome.disposedAt {
                    #expect(received.allSatisfy { $0 < disposedAt }, "nothing sent after the disposal returned")
                }
            }
        }
    }

    @Test("Observers attached from other threads hear every value sent after they were attached")
    func concurrentObserversHearEverythingAfterAttaching() {
        for _ in 0..<50 {
            let (signal, input) = Signal<Int, Never>.pipeWithSoleSender()
            let core = signal.core
            let count = 2_000
            let started = LockedTestValue(0)
            let attached = LockedTestValue<[(recorder: EventRecorder<Int, Never>, after: Int)]>([])

            Watchdog.runOnThreads(3) { thread in
                if thread == 0 {
                    for value in 0..<count {
                        started.withValue { $0 = value + 1 }
                        core.sendFromSoleSender(.value(value))
                    }
                    return
                }
                for _ in 0..<20 {
                    let recorder = EventRecorder<Int, Never>()
                    signal.observe(recorder.observer)
                    attached.withValue { $0.append((recorder, started.value)) }
                }
            }
            input.sendCompleted()

            for (recorder, after) in attached.value {
                let values = recorder.events.compactMap { event -> Int? in
                    if case let .value(value) = event { return value }
                    return nil
                }
                #expect(recorder.events.last == .completed)
                #expect(recorder.terminalCount == 1)
                if let first = values.first {
                    #expect(values == Array(first..<count), "a gap-free run to the last value")
                    #expect(first <= after, "every value sent after the attachment returned")
                } else {
                    #expect(after == count, "no value heard: attached once every value had been sent")
                }
            }
        }
    }
}
