import Signals
import Testing

// The behaviours of ReactiveSwift's UnidirectionalBindingSpec and PropertySpec's binding cases, written
// against our API. Each test names the spec case it follows.

@Suite("Conformance: UnidirectionalBindingSpec")
struct BindingConformanceTests {
    @Test("UnidirectionalBindingSpec: BindingTarget should pass through the lifetime")
    func passesLifetime() {
        let (lifetime, token) = Lifetime.make()
        let target = BindingTarget<Int>(lifetime: lifetime) { _ in }
        #expect(target.lifetime == lifetime)
        #expect(target.bindingTarget.lifetime == lifetime)
        withExtendedLifetime(token) {}
    }

    @Test("UnidirectionalBindingSpec: BindingTarget should trigger the supplied action")
    func triggersAction() {
        let (lifetime, token) = Lifetime.make()
        let values = TestLog<Int>()
        let target = BindingTarget<Int>(lifetime: lifetime) { values.append($0) }
        target.action(1)
        #expect(values.entries == [1])
        withExtendedLifetime(token) {}
    }

    @Test("UnidirectionalBindingSpec: BindingTarget should accept bindings from properties")
    func acceptsProperties() {
        let (lifetime, token) = Lifetime.make()
        let values = TestLog<Int>()
        let target = BindingTarget<Int>(lifetime: lifetime) { values.append($0) }
        let property = MutableProperty(1)
        target <~ property
        #expect(values.entries == [1])
        property.value = 2
        #expect(values.entries == [1, 2])
        withExtendedLifetime(token) {}
    }

    @Test("PropertySpec: binding should update the property with values sent from the signal")
    func bindsSignal() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let property = MutableProperty(0)
        property <~ signal
        input.send(value: 1)
        #expect(property.value == 1)
    }

    @Test("PropertySpec: binding should tear down the binding when disposed")
    func tearDownOnDispose() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let property = MutableProperty(0)
        let disposable = property <~ signal
        disposable.dispose()
        input.send(value: 1)
        #expect(property.value == 0)
    }

    @Test("PropertySpec: binding should tear down the binding when the bound signal is completed")
    func tearDownOnCompletion() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let property = MutableProperty(0)
        let disposable = property <~ signal
        input.sendCompleted()
        #expect(disposable.isDisposed)
        #expect(property.value == 0)
    }

    @Test("PropertySpec: binding should tear down the binding when the property deallocates")
    func tearDownOnDeallocation() {
        let (signal, input) = Signal<Int, Never>.pipe()
        weak var weakProperty: MutableProperty<Int>?
        let disposable: Disposable
        do {
            let property = MutableProperty(0)
            weakProperty = property
            disposable = property <~ signal
        }
        #expect(weakProperty == nil)
        #expect(disposable.isDisposed)
        input.send(value: 1)
    }

    @Test("PropertySpec: binding a producer should start it, and interrupt it when the property deallocates")
    func producerBinding() {
        let log = TestLog<String>()
        let producer = SignalProducer<Int, Never> { observer, lifetime in
            log.append("started")
            observer.send(value: 1)
            lifetime.observeEnded { log.append("ended") }
        }
        do {
            let property = MutableProperty(0)
            property <~ producer
            #expect(property.value == 1)
        }
        #expect(log.entries == ["started", "ended"])
    }

    @Test("PropertySpec: binding from another property should take its value and not retain it")
    func propertyToProperty() {
        let target = MutableProperty(0)
        weak var weakSource: MutableProperty<Int>?
        do {
            let source = MutableProperty(1)
            weakSource = source
            target <~ source
            #expect(target.value == 1)
            source.value = 2
        }
        #expect(weakSource == nil)
        #expect(target.value == 2)
    }

    @Test("UnidirectionalBindingSpec: binding onto an input observer sends each value into it, not the terminal event")
    func observerTarget() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let (source, sourceInput) = Signal<Int, Never>.pipe()
        let recorder = EventRecorder<Int, Never>()
        signal.observe(recorder.observer)
        input <~ source
        sourceInput.send(value: 1)
        sourceInput.sendCompleted()
        #expect(recorder.events == [.value(1)])
    }

    @Test("UnidirectionalBindingSpec: a BindingTarget on a scheduler consumes values on that scheduler")
    func scheduledTarget() {
        let scheduler = TestScheduler()
        let (lifetime, token) = Lifetime.make()
        let values = TestLog<Int>()
        let target = BindingTarget<Int>(on: scheduler, lifetime: lifetime) { values.append($0) }
        let property = MutableProperty(1)
        target <~ property
        property.value = 2
        #expect(values.entries == [])
        scheduler.advance()
        #expect(values.entries == [1, 2])
        token.dispose()
        property.value = 3
        scheduler.run()
        #expect(values.entries == [1, 2])
    }

    @Test("UnidirectionalBindingSpec: a source of non-optional values binds to a target of optional values")
    func optionalTarget() {
        let target = MutableProperty<Int?>(nil)
        let (signal, input) = Signal<Int, Never>.pipe()
        target <~ signal
        input.send(value: 1)
        #expect(target.value == 1)
        target <~ SignalProducer<Int, Never>(value: 2)
        #expect(target.value == 2)
        target <~ Property(value: 3)
        #expect(target.value == 3)
        let source = MutableProperty(4)
        target <~ source
        #expect(target.value == 4)
        let sameType = MutableProperty<Int?>(5)
        target <~ sameType
        #expect(target.value == 5)
    }
}
