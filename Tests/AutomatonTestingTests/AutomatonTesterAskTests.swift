import Automaton
import AutomatonTesting
import Signals
import Testing

private enum Order: Sendable, Equatable {
    case cart, paying, paid
}

private enum OrderInput: Sendable, Equatable {
    case checkout, paid, cancel
}

/// An order: `.checkout` starts a payment that answers `.paid` after 2 virtual seconds.
private func makeOrder(scheduler: TestScheduler) -> Automaton<Order, OrderInput> {
    let pay = SignalProducer<OrderInput, Never>(value: .paid).delay(.seconds(2), on: scheduler)
    return Automaton(state: .cart) { (state: Order, input: OrderInput) in
        switch (state, input) {
        case (.cart, .checkout): return (.paying, pay)
        case (.paying, .paid): return (.paid, .empty)
        default: return nil
        }
    }
}

@Suite("AutomatonTester and TestRecorder assert awaited replies")
struct AutomatonTesterAskTests {
    @Test("tester.ask records the answer to its input, and the reply among the steps as usual")
    func testerAsk() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(makeOrder(scheduler: scheduler), scheduler: scheduler)
        let checkout = tester.ask(.checkout)
        checkout.expect([.value(.success(.checkout, .cart, .paying)), .completed])
        tester.expect([.success(.checkout, .cart, .paying), .started(by: .checkout)])
        let cancel = tester.ask(.cancel)
        cancel.expect([.value(.failure(.cancel, .paying)), .completed])
        tester.expect([.failure(.cancel, .paying)])
        tester.advance(by: .seconds(2))
        tester.expect([.success(.paid, .paying, .paid), .ended()])
        tester.finish()
    }

    @Test("a recorder's resultHandler records a failure as .failed, and a mismatch is a reported failure")
    func resultHandler() {
        let recorder = TestRecorder<Reply<Order, OrderInput>, AskError>()
        recorder.resultHandler(.failure(.interrupted))
        #expect(recorder.events == [.failed(.interrupted)])
        withKnownIssue {
            recorder.expect([.value(.failure(.cancel, .cart)), .completed])
        }
        #expect(recorder.failures.count == 1)
    }

    @Test("two equal asks each get the answer to their own input")
    func answersAreTheirOwn() {
        let scheduler = TestScheduler()
        let tester = AutomatonTester(makeOrder(scheduler: scheduler), scheduler: scheduler)
        let first = tester.ask(.checkout)
        let second = tester.ask(.checkout)
        first.expect([.value(.success(.checkout, .cart, .paying)), .completed])
        second.expect([.value(.failure(.checkout, .paying)), .completed])
        tester.expect([.success(.checkout, .cart, .paying), .started(by: .checkout), .failure(.checkout, .paying)])
        tester.advance(by: .seconds(2))
        tester.expect([.success(.paid, .paying, .paid), .ended()])
        tester.finish()
    }
}
