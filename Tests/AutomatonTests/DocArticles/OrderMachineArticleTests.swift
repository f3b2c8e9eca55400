import Automaton
import AutomatonTesting
import Testing

// The order machine of the article "Effects and strategies" (section "Effects that follow the state")
// and of the README, verbatim between the markers (checked by .ci/check-docc-snippets and
// .ci/check-readme).

// DOCC-ORDER-BEGIN
// README-ORDER-BEGIN
enum Order: Sendable, Equatable {
    case cart, paying(attempt: Int), failed(attempt: Int), paid, shipped, cancelled

    var payingAttempt: Int? { if case let .paying(attempt) = self { attempt } else { nil } }
    var failedAttempt: Int? { if case let .failed(attempt) = self { attempt } else { nil } }
    var isPaying: Bool { payingAttempt != nil }
}

enum OrderInput: Sendable, Equatable {
    case checkout, paid, declined, timedOut, retry, cancel, ship
}

enum OrderEffect: Hashable, Sendable {
    case payment, timeout
}

/// An order: `charge(attempt)` is the payment, which answers `.paid` or `.declined`.
func makeOrderMachine(
    charge: @escaping @Sendable (_ attempt: Int) -> SignalProducer<OrderInput, Never>,
    scheduler: some TimeScheduler
) -> Automaton<Order, OrderInput> {
    Automaton(
        state: .cart,
        table: [
            .checkout | .cart => .paying(attempt: 1),
            .paid | \.isPaying => .paid,
            .declined | { order, _ in order.payingAttempt.map { .failed(attempt: $0) } },
            .timedOut | { order, _ in order.payingAttempt.map { .failed(attempt: $0) } },
            .retry | { order, _ in order.failedAttempt.flatMap { $0 < 3 ? .paying(attempt: $0 + 1) : nil } },
            .cancel | [.cart, .failed(attempt: 1), .failed(attempt: 2), .failed(attempt: 3)] => .cancelled,
            .cancel | \.isPaying => .cancelled,
            .ship | .paid => .shipped,
            // The payment runs while the order is paying: started on entering, with the attempt;
            // cancelled on leaving, whichever row leaves (paid, declined, timed out, cancelled).
            .during(\.payingAttempt, key: OrderEffect.payment) { attempt in charge(attempt) },
            // Each attempt has 10 seconds; leaving paying cancels the timer.
            .after(.seconds(10), in: \.isPaying, send: .timedOut, on: scheduler, key: OrderEffect.timeout),
        ])
}
// README-ORDER-END
// DOCC-ORDER-END

@Suite("Article: the order machine, with state-scoped effects")
struct OrderMachineArticleTests {
    @Test("a timed-out attempt, a declined one and a paid one; no cancel row anywhere")
    func orderMachine() {
        // DOCC-ORDER-USE-BEGIN
        let scheduler = TestScheduler()
        // Attempt 1 never answers, attempt 2 is declined after 1 s, attempt 3 is paid after 1 s.
        let charge: @Sendable (Int) -> SignalProducer<OrderInput, Never> = { attempt in
            if attempt == 1 { return .never }
            return SignalProducer(value: attempt == 2 ? .declined : .paid).delay(.seconds(1), on: scheduler)
        }
        let tester = AutomatonTester(makeOrderMachine(charge: charge, scheduler: scheduler), scheduler: scheduler)

        tester.send(.checkout)
        tester.expect([
            .success(.checkout, .cart, .paying(attempt: 1)),
            .started(by: .checkout, key: OrderEffect.payment),
            .started(by: .checkout, key: OrderEffect.timeout),
        ])
        tester.advance(by: .seconds(10))  // attempt 1 times out: leaving `paying` cancels its payment
        tester.expect([
            .cancelled(.exited(by: .timedOut), key: OrderEffect.payment),
            .cancelled(.exited(by: .timedOut), key: OrderEffect.timeout),
            .success(.timedOut, .paying(attempt: 1), .failed(attempt: 1)),
        ])
        tester.send(.retry)
        tester.advance(by: .seconds(1))  // attempt 2 is declined: leaving `paying` cancels its timer
        tester.expect([
            .success(.retry, .failed(attempt: 1), .paying(attempt: 2)),
            .started(by: .retry, key: OrderEffect.payment),
            .started(by: .retry, key: OrderEffect.timeout),
            .cancelled(.exited(by: .declined), key: OrderEffect.payment),
            .cancelled(.exited(by: .declined), key: OrderEffect.timeout),
            .success(.declined, .paying(attempt: 2), .failed(attempt: 2)),
        ])
        tester.send(.retry)
        tester.advance(by: .seconds(1))  // attempt 3 is paid
        tester.send(.ship)
        tester.expect([
            .success(.retry, .failed(attempt: 2), .paying(attempt: 3)),
            .started(by: .retry, key: OrderEffect.payment),
            .started(by: .retry, key: OrderEffect.timeout),
            .cancelled(.exited(by: .paid), key: OrderEffect.payment),
            .cancelled(.exited(by: .paid), key: OrderEffect.timeout),
            .success(.paid, .paying(attempt: 3), .paid),
            .success(.ship, .paid, .shipped),
        ])
        tester.finish()  // nothing runs any more: no cancel row was needed
        // DOCC-ORDER-USE-END
    }
}
