import Automaton
import Signals
import Testing

@Suite("Processing order (BRIEF §5.3, §5.4)")
struct ProcessingOrderTests {
    enum Counter: Sendable, Equatable { case increment, decrement, reset }

    @Test("inside a replies observer, state.value is already the new state, and the effect starts after the reply")
    func stateBeforeReplyBeforeEffect() {
        let log = Recording<String>()
        let effect = SignalProducer<LoginInput, Never> { observer, _ in
            log.append("effect started")
            observer.sendCompleted()
        }
        let mappings: [Automaton<LoginState, LoginInput>.EffectMapping] = [
            .login | .loggedOut => .loggingIn | effect
        ]
        let automaton = Automaton(state: LoginState.loggedOut, mapping: reduce(mappings))
        // `unowned`: the automaton's signals hold these observers, so a strong capture would be a
        // cycle. The observers only run during `send`, while the automaton is alive.
        automaton.state.signal.observeValues { [unowned automaton] state in
            log.append("state \(state), value \(automaton.state.value)")
        }
        automaton.replies.observeValues { [unowned automaton] reply in
            log.append("reply \(reply), value \(automaton.state.value)")
        }

        automaton.send(.login)

        #expect(
            log.values == [
                "state loggingIn, value loggingIn",
                "reply success(login, loggedOut => loggingIn), value loggingIn",
                "effect started",
            ])
    }

    @Test("a success to the same state emits on state; a failure emits nothing on state")
    func sameStateSuccessEmits() {
        let mappings: [Automaton<Int, Counter>.Mapping] = [
            .reset | { _ in 0 },
            .increment | { $0 + 1 },
        ]
        let automaton = Automaton(state: 0, mapping: reduce(mappings))
        let states = automaton.state.signal.record()
        let replies = automaton.replies.record()

        automaton.send(.reset)
        automaton.send(.decrement)
        automaton.send(.increment)

        #expect(states.values == [.value(0), .value(1)])
        #expect(
            replies.values == [
                .value(.success(.reset, 0, 0)),
                .value(.failure(.decrement, 0)),
                .value(.success(.increment, 0, 1)),
            ])
    }

    @Test("an effect emitting b, c synchronously, where b's effect emits d, gives replies a, b, c, d")
    func synchronousFeedbackIsFIFO() {
        enum Step: Sendable, Equatable { case a, b, c, d }
        let mapping: Automaton<Int, Step>.EffectMapping = { state, input in
            switch input {
            case .a: return (state + 1, SignalProducer(values: Step.b, .c))
            case .b: return (state + 1, SignalProducer(value: .d))
            case .c, .d: return (state + 1, .empty)
            }
        }
        let automaton = Automaton(state: 0, mapping: mapping)
        let replies = automaton.replies.record()

        automaton.send(.a)

        #expect(
            replies.values == [
                .value(.success(.a, 0, 1)),
                .value(.success(.b, 1, 2)),
                .value(.success(.c, 2, 3)),
                .value(.success(.d, 3, 4)),
            ])
    }

    @Test("an effect built with a start handler that emits two inputs synchronously gets both processed")
    func startHandlerEmittingTwice() {
        let effect = SignalProducer<LoginInput, Never> { observer, _ in
            observer.send(value: .loginOK)
            observer.send(value: .logout)
            observer.sendCompleted()
        }
        let mappings: [Automaton<LoginState, LoginInput>.EffectMapping] = [
            .login | .loggedOut => .loggingIn | effect,
            .loginOK | .loggingIn => .loggedIn | .empty,
            .logout | .loggedIn => .loggingOut | .empty,
        ]
        let automaton = Automaton(
            state: LoginState.loggedOut,
            mapping: reduce(mappings)
        )
        let replies = automaton.replies.record()

        automaton.send(.login)

        #expect(
            replies.values == [
                .value(.success(.login, .loggedOut, .loggingIn)),
                .value(.success(.loginOK, .loggingIn, .loggedIn)),
                .value(.success(.logout, .loggedIn, .loggingOut)),
            ])
    }

    @Test("a replies observer that sends an input makes every observer see the same order")
    func repliesObserverSendingKeepsOneOrder() {
        let mappings: [Automaton<Int, Counter>.Mapping] = [.increment | { $0 + 1 }]
        let automaton = Automaton(state: 0, mapping: reduce(mappings))
        let first = Recording<Reply<Int, Counter>>()
        let second = Recording<Reply<Int, Counter>>()
        let third = Recording<Reply<Int, Counter>>()
        automaton.replies.observeValues { first.append($0) }
        // `unowned`: the replies signal holds this observer, so a strong capture would be a cycle. It
        // only runs during `send`, while the automaton is alive.
        automaton.replies.observeValues { [unowned automaton] reply in
            second.append(reply)
            if reply.toState == 1 { automaton.send(.increment) }
        }
        automaton.replies.observeValues { third.append($0) }

        automaton.send(.increment)
        automaton.send(.increment)

        let expected: [Reply<Int, Counter>] = [
            .success(.increment, 0, 1), .success(.increment, 1, 2), .success(.increment, 2, 3),
        ]
        #expect(first.values == expected)
        #expect(second.values == expected)
        #expect(third.values == expected)
    }

    @Test("the mapping is called exactly once per input and each successful input's effect starts exactly once")
    func mappingAndEffectCalledOnce() {
        let mappingCalls = Recording<LoginInput>()
        let effect = ControlledEffect<LoginInput>()
        let table = reduce(loginMappings(loginOK: effect.producer, logoutOK: .empty, forceLogoutOK: .empty))
        let automaton = Automaton(
            state: LoginState.loggedOut,
            mapping: { state, input in
                mappingCalls.append(input)
                return table(state, input)
            })

        automaton.send(.login)
        automaton.send(.login)
        automaton.send(.loginOK)

        #expect(mappingCalls.values == [.login, .login, .loginOK])
        #expect(effect.startCount == 1)
    }

    @Test("a synchronous feedback chain of 1,000,000 steps runs in constant stack (a 512 KiB thread stack)")
    func deepSynchronousChain() async {
        let steps = 1_000_000
        let checkpoints = await onDedicatedThread(stackSize: 512 * 1024) { () -> [Int] in
            let automaton = Automaton(
                state: 0,
                mapping: { (state: Int, input: Int) in
                    (state + 1, input < steps ? SignalProducer(value: input + 1) : .empty)
                })
            let checkpoints = Recording<Int>()
            automaton.replies.observeValues { reply in
                if reply.input % 100_000 == 0 { checkpoints.append(reply.input) }
            }
            automaton.send(1)
            #expect(automaton.state.value == steps)
            return checkpoints.values
        }
        #expect(checkpoints == Array(stride(from: 100_000, through: steps, by: 100_000)))
    }
}
