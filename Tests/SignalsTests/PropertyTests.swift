import Dispatch
import Foundation
import Signals
import Testing

@Suite("Property and MutableProperty")
struct PropertyTests {
    /// A write after the change signal completed takes the lock's early exit: it must change nothing
    /// and leave the lock free (a read after it would otherwise never return), with or without
    /// observers.
    @Test("a write after completion is ignored and leaves the lock free", arguments: [false, true])
    func writeAfterCompletion(observed: Bool) {
        let storage = PropertyStorage.holding(1)
        let recorder = EventRecorder<Int, Never>()
        if observed { storage.signal.observe(recorder.observer) }
        storage.set(2)
        storage.complete()
        storage.set(3)
        #expect(storage.value == 2)
        storage.set(4)
        #expect(storage.value == 2)
        #expect(recorder.events == (observed ? [.value(2), .completed] : []))
    }

    @Test("value shows a change before any observer hears of it")
    func valueBeforeNotification() {
        let property = MutableProperty(0)
        let seen = LockedTestValue<[String]>([])
        // `unowned`: the property's signal holds these observers, so a strong capture would be a
        // cycle. They only run during the writes below, while the property is alive.
        property.signal.observeValues { [unowned property] value in
            seen.withValue { $0.append("signal \(value), value \(property.value)") }
        }
        property.producer.startWithValues { [unowned property] value in
            seen.withValue { $0.append("producer \(value), value \(property.value)") }
        }

        property.value = 1
        property.modify { $0 += 1 }

        #expect(
            seen.value == [
                "producer 0, value 0",
                "signal 1, value 1", "producer 1, value 1",
                "signal 2, value 2", "producer 2, value 2",
            ])
    }

    @Test("producer sends the current value, then each change, then completes when the property goes away")
    func producerCurrentThenChanges() {
        var property: MutableProperty<Int>? = MutableProperty(1)
        property?.value = 2
        let recorder = EventRecorder<Int, Never>()
        property?.producer.start(recorder.observer)

        property?.value = 3
        property?.modify { $0 *= 10 }
        property = nil

        #expect(property == nil)
        #expect(recorder.events == [.value(2), .value(3), .value(30), .completed])
    }

    @Test("Each start of producer begins with the value current at that start")
    func producerStartsAnew() {
        let property = MutableProperty("a")
        let producer = property.producer
        let first = EventRecorder<String, Never>()
        producer.start(first.observer)
        property.value = "b"
        let second = EventRecorder<String, Never>()
        let disposable = producer.start(second.observer)
        property.value = "c"
        disposable.dispose()
        property.value = "d"

        #expect(first.events == [.value("a"), .value("b"), .value("c"), .value("d")])
        #expect(second.events == [.value("b"), .value("c"), .interrupted])
    }

    @Test("signal sends only the changes made after observation starts")
    func signalSendsLaterChanges() {
        let property = MutableProperty(1)
        property.value = 2
        let recorder = EventRecorder<Int, Never>()
        property.signal.observe(recorder.observer)

        property.value = 3
        property.value = 3
        property.modify { $0 += 1 }

        #expect(recorder.events == [.value(3), .value(3), .value(4)])
    }

    @Test("modify is atomic: 4 threads × 10,000 increments, each change seen once and in order")
    func modifyIsAtomic() {
        let threads = 4
        let increments = 10_000
        let property = MutableProperty(0)
        let seen = LockedTestValue<[Int]>([])
        let probe = InFlightProbe()
        property.signal.observeValues { value in
            probe.run { seen.withValue { $0.append(value) } }
        }

        Watchdog.runOnThreads(threads, timeout: .seconds(60)) { _ in
            for _ in 0..<increments {
                property.modify { $0 += 1 }
            }
        }

        #expect(property.value == threads * increments)
        #expect(seen.value == Array(1...(threads * increments)))
        #expect(probe.maximum == 1)
    }

    @Test("modify returns what its action returns, and reruns it if another writer got in first")
    func modifyReturnsResult() {
        let property = MutableProperty(10)
        let result = property.modify { value -> String in
            value += 5
            return "was \(value - 5)"
        }
        #expect(result == "was 10")
        #expect(property.value == 15)

        let runs = LockedTestValue(0)
        property.modify { value in
            runs.withValue { $0 += 1 }
            if runs.value == 1 {
                property.value = 100  // another write lands while the action runs
            }
            value += 1
        }
        #expect(runs.value == 2)
        #expect(property.value == 101)
    }

    @Test("Concurrent writers: observers see the changes in the order value took them")
    func concurrentWritersOrder() {
        let threads = 4
        let writes = 5_000
        let property = MutableProperty(-1)
        let first = LockedTestValue<[Int]>([])
        let second = LockedTestValue<[Int]>([])
        property.signal.observeValues { value in first.withValue { $0.append(value) } }
        property.signal.observeValues { value in second.withValue { $0.append(value) } }

        Watchdog.runOnThreads(threads, timeout: .seconds(60)) { thread in
            for index in 0..<writes {
                property.value = thread * writes + index
            }
        }

        let observed = first.value
        #expect(observed.count == threads * writes)
        #expect(observed.sorted() == Array(0..<(threads * writes)))
        #expect(observed.last == property.value, "the last change observed is the value that stuck")
        #expect(second.value == observed, "every observer sees the same order")
        for thread in 0..<threads {
            let fromThread = observed.filter { $0 / writes == thread }
            #expect(fromThread == Array(thread * writes..<(thread + 1) * writes))
        }
    }

    @Test("A producer started while other threads write misses and repeats nothing")
    func producerStartedDuringWrites() {
        let property = MutableProperty(0)
        let runs = LockedTestValue<[EventRecorder<Int, Never>]>([])
        let total = 4_000

        Watchdog.runOnThreads(3, timeout: .seconds(60)) { thread in
            if thread == 0 {
                for _ in 0..<50 {
                    let recorder = EventRecorder<Int, Never>()
                    property.producer.start(recorder.observer)
                    runs.withValue { $0.append(recorder) }
                }
            } else {
                for _ in 0..<(total / 2) { property.modify { $0 += 1 } }
            }
        }

        #expect(property.value == total)
        for recorder in runs.value {
            let values = recorder.values
            guard let start = values.first else {
                Issue.record("a producer run sent no current value")
                continue
            }
            #expect(values == Array(start...total))
        }
    }

    @Test("Releasing a MutableProperty completes its signal; a read-only view keeps the last value")
    func releaseCompletes() {
        var property: MutableProperty<Int>? = MutableProperty(1)
        let view = Property(property!)
        let recorder = EventRecorder<Int, Never>()
        property?.signal.observe(recorder.observer)

        property?.value = 2
        #expect(view.value == 2)
        property = nil

        #expect(property == nil)
        #expect(recorder.events == [.value(2), .completed])
        #expect(view.value == 2)

        let late = EventRecorder<Int, Never>()
        view.signal.observe(late.observer)
        #expect(late.events == [.completed])

        let producer = EventRecorder<Int, Never>()
        view.producer.start(producer.observer)
        #expect(producer.events == [.value(2), .completed])
    }

    @Test("Property(value:) always holds its value; its signal has completed; its producer sends the value")
    func constantProperty() {
        let property = Property(value: 7)
        #expect(property.value == 7)

        let signal = EventRecorder<Int, Never>()
        property.signal.observe(signal.observer)
        #expect(signal.events == [.completed])

        let producer = EventRecorder<Int, Never>()
        property.producer.start(producer.observer)
        #expect(producer.events == [.value(7), .completed])
    }

    @Test(
        "Property(initial:then:) takes each value of the signal and completes when it terminates",
        arguments: [Event<Int, Never>.completed, .interrupted])
    func propertyFromSignal(terminal: Event<Int, Never>) {
        let (values, input) = Signal<Int, Never>.pipe()
        let property = Property(initial: 0, then: values)
        let producer = EventRecorder<Int, Never>()
        let signal = EventRecorder<Int, Never>()
        property.producer.start(producer.observer)
        property.signal.observe(signal.observer)
        #expect(property.value == 0)

        input.send(value: 1)
        #expect(property.value == 1)
        input.send(value: 2)
        input.send(terminal)
        input.send(value: 3)

        #expect(property.value == 2)
        #expect(producer.events == [.value(0), .value(1), .value(2), .completed])
        #expect(signal.events == [.value(1), .value(2), .completed])
    }

    @Test("Property(_:) is a read-only view that follows its MutableProperty")
    func readOnlyView() {
        let mutable = MutableProperty("x")
        let view = Property(mutable)
        let recorder = EventRecorder<String, Never>()
        view.producer.start(recorder.observer)

        mutable.value = "y"
        #expect(view.value == "y")
        mutable.modify { $0 += "z" }

        #expect(view.value == "yz")
        #expect(recorder.events == [.value("x"), .value("y"), .value("yz")])
    }

    @Test("Property(_:) does not keep its MutableProperty alive")
    func readOnlyViewDoesNotRetain() {
        weak var weakMutable: MutableProperty<Int>?
        let view: Property<Int>
        do {
            let mutable = MutableProperty(5)
            weakMutable = mutable
            view = Property(mutable)
            mutable.value = 6
        }
        #expect(weakMutable == nil)
        #expect(view.value == 6)
    }

    @Test("An observer that writes the property from inside its callback is told of it afterwards, in order")
    func reentrantWrite() {
        let property = MutableProperty(0)
        let log = LockedTestValue<[String]>([])
        let depth = InFlightProbe()
        // `unowned`: the property's signal holds this observer, so a strong capture would be a cycle.
        // It only runs during the write below, while the property is alive.
        property.signal.observeValues { [unowned property] value in
            depth.run {
                log.withValue { $0.append("first \(value) (value \(property.value))") }
                if value < 3 { property.value = value + 1 }
            }
        }
        property.signal.observeValues { value in
            depth.run { log.withValue { $0.append("second \(value)") } }
        }

        property.value = 1

        #expect(
            log.value == [
                "first 1 (value 1)", "second 1",
                "first 2 (value 2)", "second 2",
                "first 3 (value 3)", "second 3",
            ])
        #expect(property.value == 3)
        #expect(depth.maximum == 1)
    }

    @Test("withValue runs its closure on the current value, returns its result, and lets the closure read the property")
    func withValue() {
        let property = MutableProperty(3)
        let changes = LockedTestValue<[Int]>([])
        property.signal.observeValues { value in changes.withValue { $0.append(value) } }
        // Reading the property inside the closure does not deadlock: no lock is held while it runs.
        let result = property.withValue { value in "\(value) \(property.value)" }
        #expect(result == "3 3")
        #expect(property.value == 3)
        #expect(changes.value == [], "withValue writes nothing")
    }

    @Test("withValue sees one consistent snapshot while other threads write")
    func withValueSnapshot() {
        let property = MutableProperty((0, 0))
        Watchdog.runOnThreads(2) { thread in
            for index in 1...10_000 {
                if thread == 0 {
                    property.value = (index, -index)
                } else {
                    #expect(property.withValue { $0.0 + $0.1 } == 0)
                }
            }
        }
    }

    @Test("a MutableProperty's lifetime ends when it is released, after its signal completes, as in ReactiveSwift")
    func lifetimeEndsOnRelease() {
        let log = TestLog<String>()
        do {
            let property = MutableProperty(0)
            property.lifetime.observeEnded { log.append("lifetime ended") }
            property.signal.observeCompleted { log.append("signal completed") }
            #expect(!property.lifetime.hasEnded)
        }
        #expect(log.entries == ["signal completed", "lifetime ended"])
    }

    /// A property's old value is a user's value: its `deinit` runs after the property's lock is
    /// released, so it may read the property (a cache entry that unregisters itself). Under the lock it
    /// would wait for that lock forever; run on a thread of its own, so that a deadlock fails the test.
    @Test("a replaced value's deinit may read the property: set and modify release it after the lock")
    func replacedValueDeinitReadsTheProperty() async {
        final class Entry: Sendable {
            let id: Int
            let onDeinit: @Sendable () -> Void
            init(id: Int, onDeinit: @escaping @Sendable () -> Void) {
                self.id = id
                self.onDeinit = onDeinit
            }
            deinit { onDeinit() }
        }
        let seen = TestLog<String>()
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let property = MutableProperty<Entry?>(nil)
            let weakProperty = WeakBox(property)
            func entry(_ id: Int) -> Entry {
                Entry(id: id) {
                    seen.append("deinit \(id) saw \(weakProperty.object?.value.map { "\($0.id)" } ?? "nil")")
                }
            }
            let observed = property.signal.observeValues { seen.append("observed \($0.map { "\($0.id)" } ?? "nil")") }
            property.value = entry(1)
            property.value = entry(2)
            property.modify { $0 = entry(3) }
            observed.dispose()
            property.value = nil
            finished.signal()
        }
        #expect(await Watchdog.signalled(finished, within: 60), "deadlocked: a value was released under the lock")
        #expect(
            seen.entries == [
                "observed 1", "observed 2", "deinit 1 saw 2", "observed 3", "deinit 2 saw 3", "deinit 3 saw nil",
            ])
    }
}
