import Signals
import Testing

// The behaviours of ReactiveSwift's PropertySpec, written against our API. Each test names the spec
// case it follows.

@Suite("Conformance: PropertySpec")
struct PropertyConformanceTests {
    // MARK: MutableProperty

    @Test("PropertySpec: MutableProperty should have the value given at initialization")
    func initialValue() {
        #expect(MutableProperty(1).value == 1)
    }

    @Test("PropertySpec: MutableProperty should yield a producer that sends the current value then all changes")
    func producer() {
        let property = MutableProperty(1)
        let recorder = EventRecorder<Int, Never>()
        property.producer.start(recorder.observer)
        property.value = 2
        property.value = 3
        #expect(recorder.events == [.value(1), .value(2), .value(3)])
    }

    @Test("PropertySpec: MutableProperty should yield a signal that emits subsequent changes to the value")
    func signal() {
        let property = MutableProperty(1)
        let recorder = EventRecorder<Int, Never>()
        property.signal.observe(recorder.observer)
        property.value = 2
        property.value = 2
        #expect(recorder.events == [.value(2), .value(2)])
    }

    @Test("PropertySpec: MutableProperty should complete its producer and signal when deallocated")
    func completesWhenDeallocated() {
        let signalRecorder = EventRecorder<Int, Never>()
        let producerRecorder = EventRecorder<Int, Never>()
        do {
            let property = MutableProperty(1)
            property.signal.observe(signalRecorder.observer)
            property.producer.start(producerRecorder.observer)
        }
        #expect(signalRecorder.events == [.completed])
        #expect(producerRecorder.events == [.value(1), .completed])
    }

    @Test("PropertySpec: MutableProperty's lifetime should end when it is deallocated")
    func lifetime() {
        let ended = LockedTestValue(false)
        do {
            let property = MutableProperty(1)
            property.lifetime.observeEnded { ended.withValue { $0 = true } }
            #expect(!ended.value)
        }
        #expect(ended.value)
    }

    @Test("PropertySpec: modify should modify the value atomically and subsequently send out a value event")
    func modify() {
        let property = MutableProperty(1)
        let recorder = EventRecorder<Int, Never>()
        property.signal.observe(recorder.observer)
        let result = property.modify { value -> String in
            value += 1
            return "done"
        }
        #expect(result == "done")
        #expect(property.value == 2)
        #expect(recorder.events == [.value(2)])
    }

    @Test("PropertySpec: withValue should be able to read the value within the closure, and return its result")
    func withValue() {
        let property = MutableProperty(1)
        let result = property.withValue { value in value + property.value }
        #expect(result == 2)
    }

    @Test("PropertySpec: should have the latest value available before sending any value")
    func latestValueBeforeSending() {
        let property = MutableProperty(1)
        let seen = TestLog<Int>()
        property.producer.startWithValues { [unowned property] _ in seen.append(property.value) }
        property.value = 2
        property.value = 3
        #expect(seen.entries == [1, 2, 3])
    }

    @Test(
        "PropertySpec: setting the value from an observer (difference: queued after the current change; ReactiveSwift deadlocks)"
    )
    func recursiveSet() {
        let property = MutableProperty(0)
        let seen = TestLog<Int>()
        property.signal.observeValues { [unowned property] value in
            seen.append(value)
            if value < 3 { property.value = value + 1 }
        }
        property.value = 1
        #expect(seen.entries == [1, 2, 3])
        #expect(property.value == 3)
    }

    // MARK: Property

    @Test("PropertySpec: Property(value:) should have the value given at initialization")
    func constantValue() {
        #expect(Property(value: 1).value == 1)
    }

    @Test("PropertySpec: Property(value:) should yield a producer that sends the current value then completes")
    func constantProducer() {
        let recorder = EventRecorder<Int, Never>()
        Property(value: 1).producer.start(recorder.observer)
        #expect(recorder.events == [.value(1), .completed])
    }

    @Test(
        "PropertySpec: Property(value:) should yield a signal that interrupts observers without a value (difference: ours completes them)"
    )
    func constantSignal() {
        let recorder = EventRecorder<Int, Never>()
        Property(value: 1).signal.observe(recorder.observer)
        #expect(recorder.events == [.completed])
    }

    @Test("PropertySpec: Property(_ property:) should follow its source and not retain it")
    func readOnlyView() {
        weak var weakSource: MutableProperty<Int>?
        let view: Property<Int>
        let recorder = EventRecorder<Int, Never>()
        do {
            let source = MutableProperty(1)
            weakSource = source
            view = Property(source)
            view.signal.observe(recorder.observer)
            source.value = 2
            #expect(view.value == 2)
        }
        #expect(weakSource == nil)
        #expect(view.value == 2)
        #expect(recorder.events == [.value(2), .completed])
    }

    @Test(
        "PropertySpec: Property(initial:then:) should take the initial value, then the signal's values, and complete with it"
    )
    func initialThen() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let property = Property(initial: 0, then: signal)
        let recorder = EventRecorder<Int, Never>()
        property.producer.start(recorder.observer)
        input.send(value: 1)
        input.sendCompleted()
        #expect(property.value == 1)
        #expect(recorder.events == [.value(0), .value(1), .completed])
    }
}
