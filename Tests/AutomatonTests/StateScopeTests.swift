import Automaton
import Signals
import Testing

// State-scoped effects (`.during`) and delayed inputs (`.after`): started when the machine enters
// their states (after the entering reply, after the row's own effect), cancelled when it leaves them
// (with the leaving input's cancellations, before its reply), kept or restarted through transitions
// that stay inside, as `restart` says.

private enum ScopedOrder: Sendable, Hashable, CustomStringConvertible {
    case cart, paying(attempt: Int), failed(attempt: Int), paid, cancelled

    var isPaying: Bool { attempt != nil }
    var attempt: Int? { if case let .paying(attempt) = self { attempt } else { nil } }
    var failedAttempt: Int? { if case let .failed(attempt) = self { attempt } else { nil } }

    var description: String {
        switch self {
        case .cart: "cart"
        case let .paying(attempt): "paying(\(attempt))"
        case let .failed(attempt): "failed(\(attempt))"
        case .paid: "paid"
        case .cancelled: "cancelled"
        }
    }
}

private enum ScopedOrderInput: String, Sendable, Hashable, CustomStringConvertible {
    case checkout, bump, ping, paid, declined, retry, cancel, timedOut
    var description: String { rawValue }
}

private enum ScopedOrderKey: Hashable, Sendable {
    case payment
}

/// One log of what an automaton tells, in the order it tells it: replies and effect events.
private func log(_ automaton: Automaton<ScopedOrder, ScopedOrderInput>) -> Recording<String> {
    let log = Recording<String>()
    automaton.replies.observeValues { log.append("\($0)") }
    automaton.effectEvents.observeValues { log.append("\($0)") }
    return log
}

/// A payment that runs until it is cancelled, logging its start (with the attempt) and its end.
private func payment(_ order: ScopedOrder, log: Recording<String>) -> SignalProducer<ScopedOrderInput, Never> {
    SignalProducer { _, lifetime in
        log.append("pay \(order.attempt ?? 0)")
        lifetime.observeEnded { log.append("stop paying \(order.attempt ?? 0)") }
    }
}

@Suite("State-scoped effects and delayed inputs")
struct StateScopeTests {
    @Test("entering starts the effect after the reply; leaving cancels it before the reply")
    func enterAndLeave() {
        let work = Recording<String>()
        let automaton = Automaton<ScopedOrder, ScopedOrderInput>(
            state: .cart,
            table: [
                .checkout | .cart => .paying(attempt: 1),
                .cancel | \.isPaying => .cancelled,
                .during(\.isPaying) { order in payment(order, log: work) },
            ])
        let events = log(automaton)

        automaton.send(.checkout)
        automaton.send(.cancel)
        automaton.send(.cancel)  // no row: nothing else

        #expect(
            events.values == [
                "success(checkout, cart => paying(1))",
                "effect 0 [during 0] started by checkout",
                "effect 0 [during 0] exited by cancel",
                "success(cancel, paying(1) => cancelled)",
                "failure(cancel, cancelled)",
            ])
        #expect(work.values == ["pay 1", "stop paying 1"])
        #expect(automaton.runningEffectCount == 0)
    }

    @Test("a transition that stays inside keeps the effect (restart: .never)")
    func staysInside() {
        let work = Recording<String>()
        let automaton = Automaton<ScopedOrder, ScopedOrderInput>(
            state: .cart,
            table: [
                .checkout | .cart => .paying(attempt: 1),
                .bump | { order, _ in order.attempt.map { .paying(attempt: $0 + 1) } },
                .ping | \.isPaying => .paying(attempt: 2),
                .paid | \.isPaying => .paid,
                .during(\.isPaying) { order in payment(order, log: work) },
            ])
        let events = log(automaton)

        for input: ScopedOrderInput in [.checkout, .bump, .ping, .paid] { automaton.send(input) }

        #expect(
            events.values == [
                "success(checkout, cart => paying(1))",
                "effect 0 [during 0] started by checkout",
                "success(bump, paying(1) => paying(2))",
                "success(ping, paying(2) => paying(2))",
                "effect 0 [during 0] exited by paid",
                "success(paid, paying(2) => paid)",
            ])
        #expect(work.values == ["pay 1", "stop paying 1"])
    }

    @Test(
        "restart: .onStateChange restarts on another state of the scope; .onEveryTransition on every success inside",
        arguments: [ScopeRestart.onStateChange, .onEveryTransition])
    func restarts(restart: ScopeRestart) {
        let work = Recording<String>()
        let automaton = Automaton<ScopedOrder, ScopedOrderInput>(
            state: .cart,
            table: [
                .checkout | .cart => .paying(attempt: 1),
                .bump | { order, _ in order.attempt.map { .paying(attempt: $0 + 1) } },
                .ping | \.isPaying => .paying(attempt: 2),
                .paid | \.isPaying => .paid,
                .during(\.isPaying, restart: restart) { order in payment(order, log: work) },
            ])
        let events = log(automaton)

        for input: ScopedOrderInput in [.checkout, .bump, .ping, .paid] { automaton.send(input) }

        let ping: [String] =
            restart == .onEveryTransition
            ? [
                "effect 1 [during 0] exited by ping",
                "success(ping, paying(2) => paying(2))",
                "effect 2 [during 0] started by ping",
                "effect 2 [during 0] exited by paid",
            ]
            : [
                "success(ping, paying(2) => paying(2))",
                "effect 1 [during 0] exited by paid",
            ]
        #expect(
            events.values
                == [
                    "success(checkout, cart => paying(1))",
                    "effect 0 [during 0] started by checkout",
                    "effect 0 [during 0] exited by bump",
                    "success(bump, paying(1) => paying(2))",
                    "effect 1 [during 0] started by bump",
                ] + ping + ["success(paid, paying(2) => paid)"])
        #expect(
            work.values
                == ["pay 1", "stop paying 1", "pay 2", "stop paying 2"]
                + (restart == .onEveryTransition ? ["pay 2", "stop paying 2"] : []))
    }

    @Test("the row's own effect starts first, then the scopes entered, in table order")
    func rowEffectThenScopes() {
        let work = Recording<String>()
        let automaton = Automaton<ScopedOrder, ScopedOrderInput>(
            state: .cart,
            table: [
                .checkout | .cart => .paying(attempt: 1) | SignalProducer { _, _ in work.append("row") },
                .during(\.isPaying) { order in payment(order, log: work) },
                .during({ $0 != .cart }) { _ in SignalProducer { _, _ in work.append("checked out") } },
            ])
        let events = log(automaton)

        automaton.send(.checkout)

        #expect(
            events.values == [
                "success(checkout, cart => paying(1))",
                // (Producers that neither complete nor are cancelled: they run on.)
                "effect 0 started by checkout",
                "effect 1 [during 0] started by checkout",
                "effect 2 [during 1] started by checkout",
            ])
        #expect(work.values == ["row", "pay 1", "checked out"])
    }

    @Test("a scope's own key: a `.cancel(key)` row cancels it; its inputs are processed as any effect's")
    func keyedScope() {
        let automaton = Automaton<ScopedOrder, ScopedOrderInput>(
            state: .cart,
            table: [
                .checkout | .cart => .paying(attempt: 1),
                .cancel | \.isPaying => .paying(attempt: 9) | .cancel(ScopedOrderKey.payment),
                .paid | \.isPaying => .paid,
                .during(\.isPaying, key: ScopedOrderKey.payment) { order in
                    order.attempt == 1 ? SignalProducer(value: .ping) : .never
                },
                .ping | \.isPaying => .paying(attempt: 2),
            ])
        let events = log(automaton)

        automaton.send(.checkout)
        automaton.send(.cancel)
        automaton.send(.paid)

        #expect(
            events.values == [
                "success(checkout, cart => paying(1))",
                "effect 0 [payment] started by checkout",
                "effect 0 [payment] ended",
                "success(ping, paying(1) => paying(2))",
                "success(cancel, paying(2) => paying(9))",
                "success(paid, paying(9) => paid)",
            ])
    }

    @Test("after: the input is sent after the delay, on the scheduler's clock, unless the machine has left")
    func afterDelay() {
        let scheduler = TestScheduler()
        let automaton = Automaton<ScopedOrder, ScopedOrderInput>(
            state: .cart,
            table: [
                .checkout | .cart => .paying(attempt: 1),
                .bump | { order, _ in order.attempt.map { .paying(attempt: $0 + 1) } },
                .timedOut | \.isPaying => .failed(attempt: 1),
                .paid | \.isPaying => .paid,
                .retry | { order, _ in order.failedAttempt.map { _ in .paying(attempt: 2) } },
                .after(.seconds(10), in: \.isPaying, send: .timedOut, on: scheduler),
            ])
        let events = log(automaton)

        automaton.send(.checkout)
        scheduler.advance(by: .seconds(6))
        automaton.send(.bump)  // stays inside: the timer keeps its deadline
        scheduler.advance(by: .seconds(3))
        #expect(automaton.state.value == .paying(attempt: 2))
        scheduler.advance(by: .seconds(1))
        #expect(automaton.state.value == .failed(attempt: 1))
        automaton.send(.retry)
        scheduler.advance(by: .seconds(5))
        automaton.send(.paid)  // leaves before the deadline: cancelled
        scheduler.advance(by: .seconds(60))

        #expect(
            events.values == [
                "success(checkout, cart => paying(1))",
                "effect 0 [after 10.0 seconds 0] started by checkout",
                "success(bump, paying(1) => paying(2))",
                // Its input leaves the states: the timer is cancelled as it sends, before it completes.
                "effect 0 [after 10.0 seconds 0] exited by timedOut",
                "success(timedOut, paying(2) => failed(1))",
                "success(retry, failed(1) => paying(2))",
                "effect 1 [after 10.0 seconds 0] started by retry",
                "effect 1 [after 10.0 seconds 0] exited by paid",
                "success(paid, paying(2) => paid)",
            ])
        #expect(automaton.state.value == .paid)
    }

    @Test("a machine made in a scope's states starts its effect as it is made; a value it sends is processed then")
    func initialState() {
        let work = Recording<String>()
        let scheduler = TestScheduler()
        let automaton = Automaton<ScopedOrder, ScopedOrderInput>(
            state: .paying(attempt: 1),
            table: [
                .ping | \.isPaying => .paying(attempt: 2),
                .paid | \.isPaying => .paid,
                .timedOut | \.isPaying => .failed(attempt: 2),
                .during(\.isPaying) { order in payment(order, log: work) },
                .during(.paying(attempt: 1), key: ScopedOrderKey.payment) { _ in SignalProducer(value: .ping) },
                .after(.seconds(5), in: \.isPaying, send: .timedOut, on: scheduler),
            ])
        let events = log(automaton)

        // The `.ping` its second scope sent as it was made has been processed: paying(1) -> paying(2)
        // left that scope, whose effect had ended; the others stay.
        #expect(automaton.state.value == .paying(attempt: 2))
        #expect(work.values == ["pay 1"])
        #expect(automaton.runningEffectCount == 2)
        scheduler.advance(by: .seconds(5))
        automaton.send(.paid)

        #expect(
            events.values == [
                // Every scope left, in table order, before the reply.
                "effect 0 [during 0] exited by timedOut",
                "effect 2 [after 5.0 seconds 2] exited by timedOut",
                "success(timedOut, paying(2) => failed(2))",
                "failure(paid, failed(2))",
            ])
        #expect(work.values == ["pay 1", "stop paying 1"])
        #expect(automaton.runningEffectCount == 0)
    }

    @Test("under .latest, a scoped effect is not in the tree: the next success replaces the row's effect, not it")
    func latestStrategy() {
        let work = Recording<String>()
        let automaton = Automaton<ScopedOrder, ScopedOrderInput>(
            state: .cart,
            strategy: .latest,
            table: [
                .checkout | .cart => .paying(attempt: 1) | SignalProducer { _, _ in work.append("row") },
                .bump | { order, _ in order.attempt.map { .paying(attempt: $0 + 1) } },
                .during(\.isPaying) { order in payment(order, log: work) },
            ])
        let events = log(automaton)

        automaton.send(.checkout)
        automaton.send(.bump)

        #expect(
            events.values == [
                "success(checkout, cart => paying(1))",
                "effect 0 started by checkout",
                "effect 1 [during 0] started by checkout",
                "effect 0 replaced by bump",
                "success(bump, paying(1) => paying(2))",
            ])
        #expect(automaton.runningEffectCount == 1)
    }

    @Test(
        "termination cancels scoped effects and timers as any effect; nothing fires afterwards",
        arguments: ["interrupted", "released"])
    func termination(how: String) {
        let scheduler = TestScheduler()
        let work = Recording<String>()
        let (input, observer) = Signal<ScopedOrderInput, Never>.pipe()
        var automaton: Automaton<ScopedOrder, ScopedOrderInput>? = Automaton(
            state: .cart,
            input: input,
            table: [
                .checkout | .cart => .paying(attempt: 1),
                .timedOut | \.isPaying => .failed(attempt: 1),
                .during(\.isPaying) { order in payment(order, log: work) },
                .after(.seconds(10), in: \.isPaying, send: .timedOut, on: scheduler),
            ])
        let events = log(automaton!)

        observer.send(value: .checkout)
        if how == "interrupted" { observer.sendInterrupted() } else { automaton = nil }
        scheduler.advance(by: .seconds(60))

        #expect(
            events.values == [
                "success(checkout, cart => paying(1))",
                "effect 0 [during 0] started by checkout",
                "effect 1 [after 10.0 seconds 1] started by checkout",
                "effect 0 [during 0] cancelled: \(how == "interrupted" ? "input interrupted" : "automaton released")",
                "effect 1 [after 10.0 seconds 1] cancelled: \(how == "interrupted" ? "input interrupted" : "automaton released")",
            ])
        #expect(work.values == ["pay 1", "stop paying 1"])
        withExtendedLifetime(automaton) {}
    }

    @Test("under four threads, the scope's effect runs exactly while the machine is in its states")
    func threads() async {
        for _ in 0..<50 {
            let running = Locked(0)
            let automaton = Automaton<ScopedOrder, ScopedOrderInput>(
                state: .cart,
                table: [
                    .checkout | .cart => .paying(attempt: 1),
                    .bump | { order, _ in order.attempt.map { .paying(attempt: $0 + 1) } },
                    .paid | \.isPaying => .paid,
                    .cancel | any => .cart,
                    .during(\.isPaying, restart: .onStateChange) { _ in
                        SignalProducer { _, lifetime in
                            running.withCriticalRegion { $0 += 1 }
                            lifetime.observeEnded { running.withCriticalRegion { $0 -= 1 } }
                        }
                    },
                ])
            await runOnThreads(4) { thread in
                let inputs: [ScopedOrderInput] = [.checkout, .bump, .paid, .cancel]
                for step in 0..<200 { automaton.send(inputs[(step + thread) % 4]) }
            }
            let expected = automaton.state.value.isPaying ? 1 : 0
            #expect(running.withCriticalRegion { $0 } == expected)
            #expect(automaton.runningEffectCount == expected)
        }
    }
}
