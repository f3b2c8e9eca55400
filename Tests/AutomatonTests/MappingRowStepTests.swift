import Automaton
import Signals
import Testing

// A row whose next state and effect come from one closure (`.on(.retry) { state, input in ... }`):
// the closure runs once per input its row's input test passes, its `nil` declines the row, and the
// effect it returns starts after the transition, exactly once.

private enum StepOrder: Sendable, Equatable {
    case cart, paying(attempt: Int), failed(attempt: Int), paid(receipt: String), cancelled
}

private enum StepOrderInput: Sendable, Equatable {
    case checkout, paymentFailed, retry, paid(receipt: String), cancel
    var receipt: String? { if case let .paid(receipt) = self { receipt } else { nil } }
}

@Suite("A row's next state and effect from one closure")
struct MappingRowStepTests {
    @Test("the retry computes its attempt once, for the state and the effect; nil declines the row")
    func retryComputesItsAttemptOnce() {
        let charges = Recording<Int>()
        let steps = Recording<String>()
        let charge: @Sendable (Int) -> SignalProducer<StepOrderInput, Never> = { attempt in
            SignalProducer { observer, _ in
                charges.append(attempt)
                observer.send(value: attempt < 3 ? .paymentFailed : .paid(receipt: "r\(attempt)"))
                observer.sendCompleted()
            }
        }
        let automaton = Automaton<StepOrder, StepOrderInput>(
            state: .cart,
            table: [
                .checkout | .cart => .paying(attempt: 1) | charge(1),
                .on(.paymentFailed) { state, _ in
                    guard case let .paying(attempt) = state else { return nil }
                    return (.failed(attempt: attempt), .empty)
                },
                .on(.retry) { state, _ in
                    steps.append("retry in \(state)")
                    guard case let .failed(attempt) = state, attempt < 3 else { return nil }
                    return (.paying(attempt: attempt + 1), charge(attempt + 1))
                },
                .retry | any => .cancelled,
                .on(\.receipt) { state, receipt in
                    guard case .paying = state else { return nil }
                    return (.paid(receipt: receipt), .empty)
                },
            ])
        let replies = automaton.replies.record()
        let events = automaton.effectEvents.record()

        for input: StepOrderInput in [.checkout, .retry, .retry, .retry] {
            automaton.send(input)
        }

        #expect(
            replies.values == [
                .value(.success(.checkout, .cart, .paying(attempt: 1))),
                .value(.success(.paymentFailed, .paying(attempt: 1), .failed(attempt: 1))),
                .value(.success(.retry, .failed(attempt: 1), .paying(attempt: 2))),
                .value(.success(.paymentFailed, .paying(attempt: 2), .failed(attempt: 2))),
                .value(.success(.retry, .failed(attempt: 2), .paying(attempt: 3))),
                .value(.success(.paid(receipt: "r3"), .paying(attempt: 3), .paid(receipt: "r3"))),
                // The guard declines in `.paid`: the next row applies.
                .value(.success(.retry, .paid(receipt: "r3"), .cancelled)),
            ])
        #expect(charges.values == [1, 2, 3])
        #expect(
            steps.values == [
                "retry in failed(attempt: 1)", "retry in failed(attempt: 2)", "retry in paid(receipt: \"r3\")",
            ]
        )
        // Three effects, each started once and ended once; `.empty` steps start none.
        #expect(
            events.values.map { "\($0)" } == [
                "value(effect 0 started by checkout)", "value(effect 0 ended)",
                "value(effect 1 started by retry)", "value(effect 1 ended)",
                "value(effect 2 started by retry)", "value(effect 2 ended)",
            ])
    }

    @Test("a step's keyed effect keeps its key: a cancel row cancels it")
    func aStepsKeyedEffectKeepsItsKey() {
        let (never, keepRunning) = Signal<StepOrderInput, Never>.pipe()
        let automaton = Automaton<StepOrder, StepOrderInput>(
            state: .cart,
            table: [
                .on(.checkout) { _, _ in
                    (.paying(attempt: 1), SignalProducer(never).keyed("payment"))
                },
                .cancel | any => .cancelled | .cancel("payment"),
            ])
        let events = automaton.effectEvents.record()

        automaton.send(.checkout)
        automaton.send(.cancel)
        withExtendedLifetime(keepRunning) {}

        #expect(automaton.state.value == .cancelled)
        #expect(
            events.values.map { "\($0)" } == [
                "value(effect 0 [payment] started by checkout)",
                "value(effect 0 [payment] cancelled by cancel)",
            ])
    }

    @Test("the predicate form: every input the predicate accepts, in the states its step accepts")
    func predicateForm() {
        let isPaid: @Sendable (StepOrderInput) -> Bool = { $0.receipt != nil }
        let automaton = Automaton<StepOrder, StepOrderInput>(
            state: .paying(attempt: 1),
            table: [
                .on(isPaid) { state, input in
                    guard case .paying = state, let receipt = input.receipt else { return nil }
                    return (.paid(receipt: receipt), .empty)
                }
            ])
        let replies = automaton.replies.record()

        automaton.send(.cancel)
        automaton.send(.paid(receipt: "a"))
        automaton.send(.paid(receipt: "b"))

        #expect(
            replies.values == [
                .value(.failure(.cancel, .paying(attempt: 1))),
                .value(.success(.paid(receipt: "a"), .paying(attempt: 1), .paid(receipt: "a"))),
                .value(.failure(.paid(receipt: "b"), .paid(receipt: "a"))),
            ])
    }
}
