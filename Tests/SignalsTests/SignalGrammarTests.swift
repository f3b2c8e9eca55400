import Signals
import Testing

@Suite("Signal event grammar and observers")
struct SignalGrammarTests {
    static let terminals: [Event<Int, TestError>] = [.failed(.boom), .completed, .interrupted]

    @Test("Nothing is delivered after a terminal event", arguments: terminals)
    func nothingAfterTerminal(terminal: Event<Int, TestError>) {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        signal.observe(recorder.observer)

        input.send(value: 1)
        input.send(value: 2)
        input.send(terminal)
        input.send(value: 3)
        input.send(error: .other)
        input.sendCompleted()
        input.sendInterrupted()

        #expect(recorder.events == [.value(1), .value(2), terminal])
    }

    @Test(
        "An observer added after termination gets the terminal event at once, and its disposable is disposed",
        arguments: terminals)
    func lateObserverGetsTerminal(terminal: Event<Int, TestError>) {
        let (signal, input) = Signal<Int, TestError>.pipe()
        input.send(value: 1)
        input.send(terminal)

        let recorder = EventRecorder<Int, TestError>()
        let disposable = signal.observe(recorder.observer)

        #expect(recorder.events == [terminal])
        #expect(disposable.isDisposed)

        input.send(value: 2)
        #expect(recorder.events == [terminal])
    }

    @Test("Observers are called in the order they were added, for every event")
    func observerOrder() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = LockedTestValue<[String]>([])
        for index in 1...5 {
            signal.observe { event in log.withValue { $0.append("o\(index) \(event)") } }
        }

        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()

        let expected = ["value(1)", "value(2)", "completed"].flatMap { event in
            (1...5).map { "o\($0) \(event)" }
        }
        #expect(log.value == expected)
    }

    @Test("Observers disposed anywhere in the list, and added past its growth, keep the order of the rest")
    func observerOrderThroughChurn() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = LockedTestValue<[Int]>([])
        var disposables: [Int: Disposable] = [:]
        func add(_ index: Int) {
            disposables[index] = signal.observeValues { _ in log.withValue { $0.append(index) } }
        }
        var expected: [Int] = []
        for index in 0..<40 { add(index) }  // the list grows past its first capacities
        expected = Array(0..<40)
        for index in [0, 39, 17, 18, 3] {  // the first, the last, two neighbours, and one more
            disposables[index]?.dispose()
            expected.removeAll { $0 == index }
            disposables[index]?.dispose()  // twice: changes nothing
        }
        for index in 40..<45 { add(index) }
        expected += Array(40..<45)
        for index in stride(from: 1, to: 45, by: 4) where expected.contains(index) {
            disposables[index]?.dispose()
            expected.removeAll { $0 == index }
        }

        input.send(value: 1)
        #expect(log.value == expected)
        log.withValue { $0.removeAll() }
        for index in expected { disposables[index]?.dispose() }
        add(100)
        input.send(value: 2)
        #expect(log.value == [100])
        #expect(signal.core.deliveryCapacity >= 40, "the list's storage outlives its observers")
        input.sendCompleted()
        #expect(signal.core.deliveryCapacity == 0, "no observer is attached after the end: the storage is freed")
    }

    @Test("An observer added during delivery receives events from the next one on")
    func addDuringDelivery() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let late = EventRecorder<Int, TestError>()
        let first = EventRecorder<Int, TestError>()
        signal.observe { event in
            first.record(event)
            if event == .value(1) { signal.observe(late.observer) }
        }
        let second = EventRecorder<Int, TestError>()
        signal.observe(second.observer)

        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()

        #expect(first.events == [.value(1), .value(2), .completed])
        #expect(second.events == [.value(1), .value(2), .completed])
        #expect(late.events == [.value(2), .completed])
    }

    /// `SignalCore.sendValue` (the engine's effect events) builds a value only if someone can hear it,
    /// and is otherwise `send(.value(_:))`: delivered in place, or queued behind a delivery in
    /// progress (then built at once, for an observer added meanwhile may hear it).
    @Test("sendValue builds a value only for observers, and orders it like send")
    func sendValueBuildsOnlyForObservers() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let built = Locked<[Int]>([])
        let make = { @Sendable (value: Int) -> Int in
            built.withCriticalRegion { $0.append(value) }
            return value
        }
        signal.core.sendValue { make(1) }  // nobody observes: not built
        let recorder = EventRecorder<Int, TestError>()
        let late = EventRecorder<Int, TestError>()
        signal.observe { event in
            recorder.record(event)
            guard event == .value(2) else { return }
            signal.core.sendValue { make(3) }  // queued behind this delivery
            signal.observe(late.observer)
            signal.core.sendValue { make(4) }
        }
        signal.core.sendValue { make(2) }
        input.sendCompleted()
        signal.core.sendValue { make(5) }  // after the end: nobody can hear it (built or not)
        #expect(built.withCriticalRegion { $0.prefix(3) } == [2, 3, 4])
        #expect(recorder.events == [.value(2), .value(3), .value(4), .completed])
        #expect(late.events == [.value(4), .completed])
    }

    @Test("An observer added during delivery receives exactly the events sent after it was added")
    func addDuringDeliveryAfterQueuedSend() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let before = EventRecorder<Int, TestError>()
        let after = EventRecorder<Int, TestError>()
        signal.observe { event in
            guard event == .value(1) else { return }
            signal.observe(before.observer)
            input.send(value: 2)  // queued: `before` was added first, so it sees it
            signal.observe(after.observer)  // added after 2 was sent: it does not
            input.send(value: 3)
        }

        input.send(value: 1)
        input.sendCompleted()

        #expect(before.events == [.value(2), .value(3), .completed])
        #expect(after.events == [.value(3), .completed])
    }

    @Test("An observer removed during delivery is not called for later events")
    func removeDuringDelivery() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let removed = EventRecorder<Int, TestError>()
        let disposable = LockedTestValue<Disposable?>(nil)
        signal.observe { event in
            if event == .value(1) { disposable.value?.dispose() }
        }
        disposable.withValue { $0 = signal.observe(removed.observer) }
        let kept = EventRecorder<Int, TestError>()
        signal.observe(kept.observer)

        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()

        // The removal takes effect after the event being delivered: it still reaches `removed`, which
        // comes later in the order, and nothing after it does.
        #expect(removed.events == [.value(1)])
        #expect(kept.events == [.value(1), .value(2), .completed])
        #expect(disposable.value?.isDisposed == true)
    }

    @Test("An observer that disposes itself is not called for events that were already queued")
    func selfRemovalSkipsQueuedEvents() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = LockedTestValue<[String]>([])
        let disposable = LockedTestValue<Disposable?>(nil)
        signal.observe { event in
            log.withValue { $0.append("sender \(event)") }
            if event == .value(1) {
                input.send(value: 2)
                input.send(value: 3)
            }
        }
        disposable.withValue {
            $0 = signal.observe { event in
                log.withValue { $0.append("once \(event)") }
                disposable.value?.dispose()
            }
        }
        signal.observe { event in log.withValue { $0.append("last \(event)") } }

        input.send(value: 1)
        input.sendCompleted()

        #expect(
            log.value == [
                "sender value(1)", "once value(1)", "last value(1)",
                "sender value(2)", "last value(2)",
                "sender value(3)", "last value(3)",
                "sender completed", "last completed",
            ])
    }

    @Test("Disposing an observer twice, or after termination, changes nothing")
    func disposeTwiceAndAfterTermination() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let recorder = EventRecorder<Int, TestError>()
        let disposable = signal.observe(recorder.observer)
        let other = EventRecorder<Int, TestError>()
        let otherDisposable = signal.observe(other.observer)

        input.send(value: 1)
        disposable.dispose()
        disposable.dispose()
        input.send(value: 2)
        input.sendCompleted()
        otherDisposable.dispose()

        #expect(recorder.events == [.value(1)])
        #expect(other.events == [.value(1), .value(2), .completed])
    }

    @Test("Each observe convenience sees exactly its kind of event", arguments: terminals)
    func observeConveniences(terminal: Event<Int, TestError>) {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = LockedTestValue<[String]>([])
        signal.observeValues { value in log.withValue { $0.append("values \(value)") } }
        signal.observeCompleted { log.withValue { $0.append("completed") } }
        signal.observeFailed { error in log.withValue { $0.append("failed \(error)") } }
        signal.observeInterrupted { log.withValue { $0.append("interrupted") } }
        signal.observeTerminated { log.withValue { $0.append("terminated") } }

        input.send(value: 1)
        input.send(value: 2)
        input.send(terminal)

        let ending: String
        switch terminal {
        case .failed(let error): ending = "failed \(error)"
        case .completed: ending = "completed"
        case .interrupted: ending = "interrupted"
        case .value: ending = "impossible"
        }
        #expect(log.value == ["values 1", "values 2", ending, "terminated"])
    }

    @Test("The observe conveniences of a terminated signal see its terminal event at once", arguments: terminals)
    func observeConveniencesAfterTermination(terminal: Event<Int, TestError>) {
        let (signal, input) = Signal<Int, TestError>.pipe()
        input.send(terminal)
        let log = LockedTestValue<[String]>([])

        signal.observeValues { value in log.withValue { $0.append("values \(value)") } }
        signal.observeCompleted { log.withValue { $0.append("completed") } }
        signal.observeFailed { error in log.withValue { $0.append("failed \(error)") } }
        signal.observeInterrupted { log.withValue { $0.append("interrupted") } }
        signal.observeTerminated { log.withValue { $0.append("terminated") } }

        let ending: String
        switch terminal {
        case .failed(let error): ending = "failed \(error)"
        case .completed: ending = "completed"
        case .interrupted: ending = "interrupted"
        case .value: ending = "impossible"
        }
        #expect(log.value == [ending, "terminated"])
    }

    @Test("An observer built from per-kind closures calls only the closure for each event")
    func observerWithClosures() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = LockedTestValue<[String]>([])
        signal.observe(
            Observer(
                value: { value in log.withValue { $0.append("value \(value)") } },
                failed: { error in log.withValue { $0.append("failed \(error)") } },
                completed: { log.withValue { $0.append("completed") } },
                interrupted: { log.withValue { $0.append("interrupted") } }
            ))

        input.send(.value(1))
        input.send(value: 2)
        input.send(error: .boom)

        #expect(log.value == ["value 1", "value 2", "failed boom"])
    }

    @Test("A signal made with a generator disposes the generator's disposable when it terminates")
    func generatorDisposable() {
        let cleanups = LockedTestValue(0)
        let captured = LockedTestValue<Observer<Int, TestError>?>(nil)
        let signal = Signal<Int, TestError> { input in
            captured.withValue { $0 = input }
            return AnyDisposable { cleanups.withValue { $0 += 1 } }
        }
        let recorder = EventRecorder<Int, TestError>()
        signal.observe(recorder.observer)

        captured.value?.send(value: 1)
        #expect(cleanups.value == 0)
        captured.value?.sendCompleted()
        captured.value?.sendInterrupted()

        #expect(recorder.events == [.value(1), .completed])
        #expect(cleanups.value == 1)
    }
}
