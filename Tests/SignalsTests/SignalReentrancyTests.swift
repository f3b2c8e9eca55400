import Signals
import Testing

@Suite("Signal reentrant sends are queued, never recursive")
struct SignalReentrancyTests {
    @Test("A send from inside delivery reaches every observer after the current event, with no recursion")
    func reentrantSendIsQueuedFIFO() {
        let (signal, input) = Signal<String, Never>.pipe()
        let log = LockedTestValue<[String]>([])
        let depth = InFlightProbe()
        for index in 1...3 {
            signal.observeValues { value in
                depth.run {
                    log.withValue { $0.append("o\(index) \(value)") }
                    if index == 1 && value == "a" { input.send(value: "b") }
                }
            }
        }

        input.send(value: "a")
        // Ending the signal releases its observers, which hold `input`: otherwise a cycle.
        input.sendCompleted()

        #expect(log.value == ["o1 a", "o2 a", "o3 a", "o1 b", "o2 b", "o3 b"])
        #expect(depth.maximum == 1)
    }

    @Test("Several reentrant sends from several observers keep the order they were sent in")
    func severalReentrantSends() {
        let (signal, input) = Signal<String, Never>.pipe()
        let log = LockedTestValue<[String]>([])
        let depth = InFlightProbe()
        signal.observeValues { value in
            depth.run {
                log.withValue { $0.append("o1 \(value)") }
                if value == "a" {
                    input.send(value: "b")
                    input.send(value: "c")
                }
            }
        }
        signal.observeValues { value in
            depth.run {
                log.withValue { $0.append("o2 \(value)") }
                if value == "a" { input.send(value: "d") }
                if value == "b" { input.send(value: "e") }
            }
        }

        input.send(value: "a")
        // Ending the signal releases its observers, which hold `input`: otherwise a cycle.
        input.sendCompleted()

        #expect(
            log.value == [
                "o1 a", "o2 a",
                "o1 b", "o2 b",
                "o1 c", "o2 c",
                "o1 d", "o2 d",
                "o1 e", "o2 e",
            ])
        #expect(depth.maximum == 1)
    }

    @Test("A chain of 1,000,000 reentrant sends completes without growing the stack")
    func millionStepChain() {
        let (signal, input) = Signal<Int, Never>.pipe()
        let limit = 1_000_000
        let received = LockedTestValue<[Int]>([])
        received.withValue { $0.reserveCapacity(limit + 1) }
        let depth = InFlightProbe()
        signal.observeValues { value in
            depth.run {
                received.withValue { $0.append(value) }
                if value < limit { input.send(value: value + 1) }
            }
        }

        input.send(value: 0)
        input.sendCompleted()

        #expect(received.value == Array(0...limit))
        #expect(depth.maximum == 1)
    }

    @Test("A terminal event sent from inside delivery comes after the values queued before it")
    func reentrantTerminalAfterQueuedValues() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let sender = EventRecorder<Int, TestError>()
        signal.observe { event in
            sender.record(event)
            if event == .value(1) {
                input.send(value: 2)
                input.send(value: 3)
                input.send(error: .boom)
                input.send(value: 4)
                input.sendCompleted()
            }
        }
        let other = EventRecorder<Int, TestError>()
        signal.observe(other.observer)

        input.send(value: 1)
        input.send(value: 5)

        let expected: [Event<Int, TestError>] = [.value(1), .value(2), .value(3), .failed(.boom)]
        #expect(sender.events == expected)
        #expect(other.events == expected)
    }

    @Test("An observer added from inside delivery of the terminal event still gets the terminal event")
    func observeDuringTerminalDelivery() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        let late = EventRecorder<Int, TestError>()
        let lateDisposable = LockedTestValue<Disposable?>(nil)
        signal.observe { event in
            if event.isTerminating {
                lateDisposable.withValue { $0 = signal.observe(late.observer) }
            }
        }

        input.send(value: 1)
        input.sendCompleted()

        #expect(late.events == [.completed])
    }

    @Test("Sends from inside a terminal event's delivery are ignored")
    func sendsDuringTerminalDeliveryAreIgnored() {
        let (signal, input) = Signal<Int, TestError>.pipe()
        signal.observe { event in
            if event.isTerminating {
                input.send(value: 9)
                input.send(error: .other)
            }
        }
        let recorder = EventRecorder<Int, TestError>()
        signal.observe(recorder.observer)

        input.send(value: 1)
        input.sendInterrupted()

        #expect(recorder.events == [.value(1), .interrupted])
    }
}
