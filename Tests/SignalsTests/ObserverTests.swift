import Signals
import Testing

// A signal calls a value-only observer (`observeValues`, `Observer(value:...)`) with the value itself,
// and every other observer with the event: these tests pin that both reach the same observers, in
// the same order, with the same events.
@Suite("Observers: value closures and event closures hear the same stream")
struct ObserverTests {
    @Test("Observer(value:failed:completed:interrupted:) hears each kind of event with its own closure")
    func perKindClosures() {
        let log = LockedTestValue<[String]>([])
        func observer(_ name: String) -> Observer<Int, TestError> {
            Observer(
                value: { value in log.withValue { $0.append("\(name) value \(value)") } },
                failed: { error in log.withValue { $0.append("\(name) failed \(error)") } },
                completed: { log.withValue { $0.append("\(name) completed") } },
                interrupted: { log.withValue { $0.append("\(name) interrupted") } })
        }
        let (failing, failingInput) = Signal<Int, TestError>.pipe()
        let (completing, completingInput) = Signal<Int, TestError>.pipe()
        let (interrupted, interruptedInput) = Signal<Int, TestError>.pipe()
        failing.observe(observer("a"))
        completing.observe(observer("b"))
        interrupted.observe(observer("c"))

        failingInput.send(value: 1)
        failingInput.send(value: 2)
        failingInput.send(error: .boom)
        failingInput.send(value: 3)
        completingInput.send(value: 4)
        completingInput.sendCompleted()
        interruptedInput.send(value: 5)
        interruptedInput.sendInterrupted()

        #expect(
            log.value == [
                "a value 1", "a value 2", "a failed boom",
                "b value 4", "b completed",
                "c value 5", "c interrupted",
            ])
    }

    @Test("An observer without a value closure ignores values and still hears the end")
    func noValueClosure() {
        let log = LockedTestValue<[String]>([])
        let (signal, input) = Signal<Int, Never>.pipe()
        signal.observe(Observer(completed: { log.withValue { $0.append("completed") } }))
        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()
        #expect(log.value == ["completed"])
    }

    @Test("Value observers and event observers on one signal hear every value in the order they attached")
    func mixedObserversKeepAttachmentOrder() {
        let log = LockedTestValue<[String]>([])
        let (signal, input) = Signal<Int, Never>.pipe()
        signal.observeValues { value in log.withValue { $0.append("values1 \(value)") } }
        signal.observe { event in log.withValue { $0.append("events \(event)") } }
        signal.observe(Observer(value: { value in log.withValue { $0.append("observer \(value)") } }))
        signal.observeValues { value in log.withValue { $0.append("values2 \(value)") } }

        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()

        #expect(
            log.value == [
                "values1 1", "events value(1)", "observer 1", "values2 1",
                "values1 2", "events value(2)", "observer 2", "values2 2",
                "events completed",
            ])
    }

    @Test("A value observer detached by an earlier observer hears the value in delivery, and nothing after")
    func valueObserverDetachedDuringDelivery() {
        let log = LockedTestValue<[String]>([])
        let (signal, input) = Signal<Int, Never>.pipe()
        let later = LockedTestValue<Disposable?>(nil)
        signal.observeValues { value in
            log.withValue { $0.append("first \(value)") }
            if value == 2 { later.value?.dispose() }
        }
        let second = signal.observeValues { value in log.withValue { $0.append("second \(value)") } }
        later.withValue { $0 = second }

        input.send(value: 1)
        input.send(value: 2)
        input.send(value: 3)

        // The delivery in progress goes to the observers attached when it began (as in ReactiveSwift).
        #expect(log.value == ["first 1", "second 1", "first 2", "second 2", "first 3"])
    }

    @Test("Sending into an Observer(value:) directly, and through a producer, runs its value closure")
    func directSends() {
        let log = LockedTestValue<[String]>([])
        let observer = Observer<Int, Never>(
            value: { value in log.withValue { $0.append("value \(value)") } },
            completed: { log.withValue { $0.append("completed") } })
        observer.send(value: 1)
        observer.send(.value(2))
        observer.sendCompleted()
        SignalProducer<Int, Never>(values: 3, 4).startWithValues { value in
            log.withValue { $0.append("started \(value)") }
        }
        #expect(log.value == ["value 1", "value 2", "completed", "started 3", "started 4"])
    }
}
