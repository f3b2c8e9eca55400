import Signals
import Testing

// A signal calls an observer made with a value closure (`observeValues`, `Observer(value:...)`) with
// the value itself, and every other observer with the event: these tests pin that both reach the
// same observers, in the same order, with the same events, on the uncontended path and on the
// queued one.
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

    @Test("Values queued during delivery reach value and event observers in order, with no recursion")
    func queuedValuesReachMixedObservers() {
        let log = LockedTestValue<[String]>([])
        let (signal, input) = Signal<Int, Never>.pipe()
        let depth = InFlightProbe()
        signal.observeValues { value in
            depth.run {
                log.withValue { $0.append("values \(value)") }
                if value == 1 {
                    input.send(value: 2)
                    input.send(value: 3)
                }
            }
        }
        signal.observe { event in depth.run { log.withValue { $0.append("events \(event)") } } }
        signal.observe(Observer(value: { value in depth.run { log.withValue { $0.append("observer \(value)") } } }))

        input.send(value: 1)
        // Ending the signal releases its observers, which hold `input`: otherwise a cycle.
        input.sendCompleted()

        #expect(
            log.value == [
                "values 1", "events value(1)", "observer 1",
                "values 2", "events value(2)", "observer 2",
                "values 3", "events value(3)", "observer 3",
                "events completed",
            ])
        #expect(depth.maximum == 1)
    }

    @Test("Only observers made with a value closure carry one; the others take every event through action")
    func whichObserversCarryAValueClosure() {
        #expect(Observer<Int, Never>(value: { _ in }).valueAction != nil)
        #expect(Observer<Int, Never>(value: { _ in }, completed: {}).valueAction != nil)
        #expect(Observer<Int, Never>(completed: {}).valueAction == nil)
        #expect(Observer<Int, Never> { _ in }.valueAction == nil)
        let (_, input) = Signal<Int, Never>.pipe()
        #expect(input.valueAction == nil)
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
