import Signals
import Testing

@Suite("on(…) side-effect hooks")
struct OnTests {
    /// A signal's `on(…)` with every hook logging into `log`.
    private func hooked(_ signal: Signal<Int, TestError>, _ log: TestLog<String>) -> Signal<Int, TestError> {
        signal.on(
            event: { log.append("event \($0)") },
            value: { log.append("value \($0)") },
            failed: { log.append("failed \($0)") },
            completed: { log.append("completed") },
            interrupted: { log.append("interrupted") },
            terminated: { log.append("terminated") },
            disposed: { log.append("disposed") }
        )
    }

    @Test("Signal.on runs the hooks in event order, before each event is forwarded, and disposed last")
    func signalCompleted() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<String>()
        hooked(signal, log).observe { log.append("observer \($0)") }
        input.send(value: 1)
        input.send(value: 2)
        input.sendCompleted()
        #expect(
            log.entries == [
                "event value(1)", "value 1", "observer value(1)",
                "event value(2)", "value 2", "observer value(2)",
                "event completed", "completed", "terminated", "observer completed",
                "disposed",
            ])
    }

    @Test("Signal.on runs failed, terminated and disposed around a failure")
    func signalFailed() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<String>()
        hooked(signal, log).observe { log.append("observer \($0)") }
        input.send(error: .boom)
        input.send(value: 1)
        #expect(
            log.entries == [
                "event failed(boom)", "failed boom", "terminated", "observer failed(boom)", "disposed",
            ])
    }

    @Test("Signal.on runs interrupted, terminated and disposed around an interruption")
    func signalInterrupted() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let log = TestLog<String>()
        hooked(signal, log).observe { log.append("observer \($0)") }
        input.sendInterrupted()
        #expect(log.entries == ["event interrupted", "interrupted", "terminated", "observer interrupted", "disposed"])
    }

    @Test("Producer on runs starting, the event hooks, started and disposed in order")
    func producerCompleted() {
        let log = TestLog<String>()
        let producer = SignalProducer<Int, TestError> { observer, _ in
            log.append("handler")
            observer.send(value: 1)
            observer.sendCompleted()
        }
        producer
            .on(
                starting: { log.append("starting") },
                started: { log.append("started") },
                event: { log.append("event \($0)") },
                value: { log.append("value \($0)") },
                completed: { log.append("completed") },
                terminated: { log.append("terminated") },
                disposed: { log.append("disposed") }
            )
            .start { log.append("observer \($0)") }
        #expect(
            log.entries == [
                "starting", "handler",
                "event value(1)", "value 1", "observer value(1)",
                "event completed", "completed", "terminated", "observer completed", "disposed",
                "started",
            ])
    }

    @Test("Producer on runs failed, terminated and disposed when the run fails")
    func producerFailed() {
        let log = TestLog<String>()
        SignalProducer<Int, TestError>(error: .boom)
            .on(
                started: { log.append("started") },
                failed: { log.append("failed \($0)") },
                terminated: { log.append("terminated") },
                disposed: { log.append("disposed") }
            )
            .start { log.append("observer \($0)") }
        #expect(log.entries == ["failed boom", "terminated", "observer failed(boom)", "disposed", "started"])
    }

    @Test("Disposing a producer run runs interrupted, terminated and disposed once, and ends the underlying run")
    func producerDisposed() {
        let source = OperatorTestControlledProducer<Int>()
        let log = TestLog<String>()
        let run = source.producer
            .on(
                starting: { log.append("starting") },
                started: { log.append("started") },
                value: { log.append("value \($0)") },
                interrupted: { log.append("interrupted") },
                terminated: { log.append("terminated") },
                disposed: { log.append("disposed") }
            )
            .start { log.append("observer \($0)") }
        source.input().send(value: 1)
        run.dispose()
        run.dispose()
        source.input().send(value: 2)
        #expect(source.hasEnded())
        #expect(
            log.entries == [
                "starting", "started",
                "value 1", "observer value(1)",
                "interrupted", "terminated", "disposed", "observer interrupted",
            ])
    }

    @Test("Each run of an on(…) producer runs its own hooks")
    func producerPerRun() {
        let log = TestLog<String>()
        let producer = SignalProducer<Int, Never>(value: 1).on(
            starting: { log.append("starting") }, disposed: { log.append("disposed") })
        producer.start()
        producer.start()
        #expect(log.entries == ["starting", "disposed", "starting", "disposed"])
    }
}
