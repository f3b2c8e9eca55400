import Dispatch
import Foundation
import Signals
import Testing

@Suite("Disposables: AnyDisposable, CompositeDisposable, SerialDisposable")
struct DisposableTests {
    // MARK: AnyDisposable

    @Test("AnyDisposable runs its action once, however often it is disposed")
    func anyDisposableRunsOnce() {
        let runs = LockedTestValue(0)
        let disposable = AnyDisposable { runs.withValue { $0 += 1 } }
        #expect(!disposable.isDisposed)
        #expect(runs.value == 0)

        disposable.dispose()
        disposable.dispose()

        #expect(disposable.isDisposed)
        #expect(runs.value == 1)
    }

    @Test("AnyDisposable runs its action once when 8 threads dispose it at the same time")
    func anyDisposableConcurrentDispose() {
        let iterations = 300
        let runs = LockedTestValue([Int](repeating: 0, count: iterations))
        let disposables = (0..<iterations).map { index in
            AnyDisposable { runs.withValue { $0[index] += 1 } }
        }

        Watchdog.runOnThreads(8) { _ in
            for disposable in disposables { disposable.dispose() }
        }

        #expect(runs.value == [Int](repeating: 1, count: iterations))
        #expect(disposables.allSatisfy { $0.isDisposed })
    }

    @Test("AnyDisposable without an action, AnyDisposable.disposed and a wrapping AnyDisposable")
    func anyDisposableVariants() {
        let plain = AnyDisposable()
        #expect(!plain.isDisposed)
        plain.dispose()
        #expect(plain.isDisposed)

        #expect(AnyDisposable.disposed.isDisposed)

        let inner = AnyDisposable()
        let wrapper = AnyDisposable(inner)
        #expect(!inner.isDisposed)
        wrapper.dispose()
        #expect(inner.isDisposed)
        #expect(wrapper.isDisposed)
    }

    @Test("AnyDisposable releases its action after running it")
    func anyDisposableReleasesAction() {
        final class Payload: Sendable {}
        weak var weakPayload: Payload?
        let disposable: AnyDisposable
        do {
            let payload = Payload()
            weakPayload = payload
            disposable = AnyDisposable { withExtendedLifetime(payload) {} }
        }
        #expect(weakPayload != nil)
        disposable.dispose()
        #expect(weakPayload == nil)
    }

    // MARK: Disposing observers during delivery

    @Test("Disposing an observer from another thread during delivery stops it before the next event")
    func disposeObserverDuringDeliveryFromAnotherThread() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let log = LockedTestValue<[String]>([])
        signal.observeValues { value in
            log.withValue { $0.append("blocker \(value)") }
            if value == 1 {
                entered.signal()
                Watchdog.wait(release, "the other thread to dispose")
            }
        }
        let disposable = signal.observeValues { value in log.withValue { $0.append("disposed \(value)") } }
        signal.observeValues { value in log.withValue { $0.append("kept \(value)") } }

        Watchdog.startThread {
            input.send(value: 1)
            input.send(value: 3)
            finished.signal()
        }
        guard Watchdog.wait(entered, "the first delivery to begin") else { return }
        Watchdog.startThread {
            input.send(value: 2)  // queued behind 1, before the disposal
            disposable.dispose()
            log.withValue { $0.append("dispose returned") }
            release.signal()
        }
        Watchdog.wait(finished, "the deliverer to finish")

        // `disposed` still gets 1 (being delivered when it was disposed), but nothing after, not even
        // the 2 that was queued before the disposal.
        #expect(
            log.value == [
                "blocker 1", "dispose returned", "disposed 1", "kept 1",
                "blocker 2", "kept 2",
                "blocker 3", "kept 3",
            ])
        #expect(disposable.isDisposed)
    }

    @Test("Observers disposed by other threads while values flow receive no value after dispose returns")
    func concurrentDisposalStopsDelivery() {
        for _ in 0..<50 {
            let (signal, input) = Signal<Int, Never>.pipe()
            let lateDeliveries = LockedTestValue(0)
            let count = 20
            let disposedFlags = (0..<count).map { _ in LockedTestValue(false) }
            let disposables = (0..<count).map { index in
                signal.observeValues { _ in
                    // A delivery that starts after dispose() returned is a contract violation.
                    if disposedFlags[index].value { lateDeliveries.withValue { $0 += 1 } }
                }
            }

            Watchdog.runOnThreads(3) { thread in
                if thread == 0 {
                    for (index, disposable) in disposables.enumerated() {
                        disposable.dispose()
                        disposedFlags[index].withValue { $0 = true }
                    }
                } else {
                    for value in 0..<500 { input.send(value: value) }
                }
            }

            // A delivery already under way when dispose returned may legitimately finish; allow at most
            // one per disposed observer, and none once everything is quiet.
            #expect(lateDeliveries.value <= count)
            lateDeliveries.withValue { $0 = 0 }
            input.send(value: -1)
            #expect(lateDeliveries.value == 0)
        }
    }

    // MARK: CompositeDisposable

    @Test("CompositeDisposable disposes everything it holds, in the order added, once")
    func compositeDisposesInOrder() {
        let log = LockedTestValue<[String]>([])
        let composite = CompositeDisposable([
            AnyDisposable { log.withValue { $0.append("initial 1") } },
            AnyDisposable { log.withValue { $0.append("initial 2") } },
        ])
        composite.add(AnyDisposable { log.withValue { $0.append("added") } })
        composite.add { log.withValue { $0.append("action") } }
        composite += AnyDisposable { log.withValue { $0.append("plus disposable") } }
        composite += { log.withValue { $0.append("plus action") } }
        #expect(composite.add(nil as Disposable?) == nil)
        #expect(!composite.isDisposed)
        #expect(log.value.isEmpty)

        composite.dispose()
        composite.dispose()

        #expect(composite.isDisposed)
        #expect(log.value == ["initial 1", "initial 2", "added", "action", "plus disposable", "plus action"])
    }

    @Test("Adding to a disposed CompositeDisposable disposes the new disposable at once")
    func compositeAddAfterDispose() {
        let composite = CompositeDisposable()
        composite.dispose()
        let late = AnyDisposable()
        let handle = composite.add(late)
        #expect(late.isDisposed)
        #expect(handle == nil)

        let runs = LockedTestValue(0)
        let actionHandle = composite += { runs.withValue { $0 += 1 } }
        #expect(runs.value == 1)
        #expect(actionHandle == nil)
    }

    @Test("The handle returned by add removes the disposable without disposing it")
    func compositeRemovalHandle() {
        let composite = CompositeDisposable()
        let removed = AnyDisposable()
        let kept = AnyDisposable()
        let handle = composite.add(removed)
        composite.add(kept)

        handle?.dispose()
        #expect(!removed.isDisposed)
        #expect(handle?.isDisposed == true)

        composite.dispose()
        #expect(!removed.isDisposed)
        #expect(kept.isDisposed)
    }

    @Test("CompositeDisposable disposes each disposable once when adds race with dispose")
    func compositeConcurrentAddAndDispose() {
        for _ in 0..<100 {
            let composite = CompositeDisposable()
            let counts = LockedTestValue([Int](repeating: 0, count: 400))
            Watchdog.runOnThreads(5) { thread in
                if thread == 4 {
                    composite.dispose()
                    return
                }
                for index in thread * 100..<(thread + 1) * 100 {
                    composite += { counts.withValue { $0[index] += 1 } }
                }
            }
            #expect(composite.isDisposed)
            #expect(counts.value == [Int](repeating: 1, count: 400))
        }
    }

    // MARK: SerialDisposable

    @Test("SerialDisposable disposes the previous inner when a new one is set")
    func serialReplaces() {
        let first = AnyDisposable()
        let second = AnyDisposable()
        let serial = SerialDisposable(first)
        #expect(serial.inner === first)

        serial.inner = second
        #expect(first.isDisposed)
        #expect(!second.isDisposed)
        #expect(serial.inner === second)

        serial.inner = second
        #expect(!second.isDisposed, "setting the same inner again does not dispose it")

        serial.inner = nil
        #expect(second.isDisposed)
        #expect(serial.inner == nil)
        #expect(!serial.isDisposed)
    }

    @Test("Disposing a SerialDisposable disposes its current inner, and any inner set later at once")
    func serialDispose() {
        let current = AnyDisposable()
        let serial = SerialDisposable()
        serial.inner = current

        serial.dispose()
        #expect(serial.isDisposed)
        #expect(current.isDisposed)
        #expect(serial.inner == nil)

        let late = AnyDisposable()
        serial.inner = late
        #expect(late.isDisposed)
        #expect(serial.inner == nil)
    }

    @Test("A SerialDisposable replaced from many threads disposes every inner but the last, each once")
    func serialConcurrentReplacement() {
        let serial = SerialDisposable()
        let counts = LockedTestValue([Int](repeating: 0, count: 4_000))
        Watchdog.runOnThreads(4) { thread in
            for index in thread * 1_000..<(thread + 1) * 1_000 {
                serial.inner = AnyDisposable { counts.withValue { $0[index] += 1 } }
            }
        }
        #expect(counts.value.filter { $0 == 1 }.count == 3_999)
        #expect(counts.value.filter { $0 == 0 }.count == 1)
        serial.dispose()
        #expect(counts.value == [Int](repeating: 1, count: 4_000))
    }
}
