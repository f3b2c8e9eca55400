// The workloads W2-W5 and the chain, run on `Automaton`, written against the API of BRIEF §5.
// Compiled only when the engine exists (see `Package.swift`: the `AUTOMATON_ENGINE` condition).
#if AUTOMATON_ENGINE
    import Automaton
    import Signals

    /// The login table as one closure with a `switch` (the DSL's table is in `DSLWorkloads.swift`).
    @Sendable
    func loginSwitchMapping(_ state: LoginState, _ input: LoginInput) -> LoginState? {
        switch (state, input) {
        case (.loggedOut, .login): return .loggingIn
        case (.loggingIn, .loginOK): return .loggedIn
        case (.loggedIn, .logout): return .loggingOut
        case (.loggingOut, .logoutOK): return .loggedOut
        default: return nil
        }
    }

    /// Observes `replies` into `counts`.
    func countReplies<State, Input>(of automaton: Automaton<State, Input>, into counts: ReplyCounts) {
        automaton.replies.observeValues { reply in
            if reply.isSuccess { counts.successes &+= 1 } else { counts.failures &+= 1 }
        }
    }

    func automatonW2(name: String, count: Int, mapping: @escaping Automaton<LoginState, LoginInput>.Mapping) -> Workload
    {
        automatonW2(name: name, count: count) { Automaton(state: .loggedOut, mapping: mapping) }
    }

    /// W2 on the automaton `make` builds (in the login machine's initial state, without effects).
    func automatonW2(name: String, count: Int, make: @escaping () -> Automaton<LoginState, LoginInput>) -> Workload {
        Workload(name: name, events: count) {
            let counts = ReplyCounts()
            let automaton = make()
            countReplies(of: automaton, into: counts)
            let count = opaque(count)
            let cycle = opaque(loginCycle)
            return {
                let (successes, failures) = (counts.successes, counts.failures)
                for index in 0..<count {
                    automaton.send(cycle[index & 3])
                }
                try check(counts.successes - successes, count, "\(name) successes")
                try check(counts.failures - failures, 0, "\(name) failures")
                try check(automaton.state.value, .loggedOut, "\(name) final state")
            }
        }
    }

    /// W3's table: `login` and `logout` each carry an effect that emits `loginOK` / `logoutOK` at once.
    func w3Mapping() -> Automaton<LoginState, LoginInput>.EffectMapping {
        let loginOK = SignalProducer<LoginInput, Never>(value: .loginOK)
        let logoutOK = SignalProducer<LoginInput, Never>(value: .logoutOK)
        return { state, input in
            switch (state, input) {
            case (.loggedOut, .login): return (.loggingIn, loginOK)
            case (.loggingIn, .loginOK): return (.loggedIn, .empty)
            case (.loggedIn, .logout): return (.loggingOut, logoutOK)
            case (.loggingOut, .logoutOK): return (.loggedOut, .empty)
            default: return nil
            }
        }
    }

    /// W3's table with keyed effects: the same producers, each keyed once, when the table is made (as a
    /// mapping table does), under `.merge` for its key: what keys add to an effect's start and end.
    func w3KeyedMapping() -> Automaton<LoginState, LoginInput>.EffectMapping {
        let loginOK = SignalProducer<LoginInput, Never>(value: .loginOK).keyed("login", .merge)
        let logoutOK = SignalProducer<LoginInput, Never>(value: .logoutOK).keyed("logout", .merge)
        return { state, input in
            switch (state, input) {
            case (.loggedOut, .login): return (.loggingIn, loginOK)
            case (.loggingIn, .loginOK): return (.loggedIn, .empty)
            case (.loggedIn, .logout): return (.loggingOut, logoutOK)
            case (.loggingOut, .logoutOK): return (.loggedOut, .empty)
            default: return nil
            }
        }
    }

    func automatonW3(
        name: String = "W3 Automaton", count: Int,
        mapping: @escaping Automaton<LoginState, LoginInput>.EffectMapping = w3Mapping()
    ) -> Workload {
        automatonW3(name: name, count: count) { Automaton(state: .loggedOut, mapping: mapping, strategy: .merge) }
    }

    /// W3 on the automaton `make` builds (W3's table, in the login machine's initial state, `.merge`).
    func automatonW3(name: String, count: Int, make: @escaping () -> Automaton<LoginState, LoginInput>) -> Workload {
        Workload(name: name, events: count) {
            let counts = ReplyCounts()
            let automaton = make()
            countReplies(of: automaton, into: counts)
            let count = opaque(count)
            return {
                let (successes, failures) = (counts.successes, counts.failures)
                for index in 0..<count {
                    automaton.send(index & 1 == 0 ? .login : .logout)
                }
                try check(counts.successes - successes, 2 * count, "\(name) successes")
                try check(counts.failures - failures, 0, "\(name) failures")
                try check(automaton.state.value, .loggedOut, "\(name) final state")
            }
        }
    }

    /// An asynchronous effect that never ends by itself: it keeps its observer (as if it would emit later
    /// from elsewhere) until its run is disposed. It counts its starts and disposals in `counts`.
    func neverEndingEffect(_ counts: ReplyCounts) -> SignalProducer<LoginInput, Never> {
        SignalProducer<LoginInput, Never> { observer, lifetime in
            counts.started &+= 1
            lifetime.observeEnded {
                counts.disposed &+= 1
                withExtendedLifetime(observer) {}
            }
        }
    }

    func automatonW4(count: Int) -> Workload {
        Workload(name: "W4 Automaton", events: count) {
            let counts = ReplyCounts()
            let running = neverEndingEffect(counts)
            let automaton = Automaton<LoginState, LoginInput>(
                state: .loggedOut,
                mapping: { state, input in loginSwitchMapping(state, input).map { ($0, running) } },
                strategy: .latest)
            countReplies(of: automaton, into: counts)
            let count = opaque(count)
            let cycle = opaque(loginCycle)
            return {
                let (successes, started) = (counts.successes, counts.started)
                for index in 0..<count {
                    automaton.send(cycle[index & 3])
                }
                try check(counts.successes - successes, count, "W4 Automaton successes")
                try check(counts.started - started, count, "W4 Automaton effects started")
                try check(counts.started - counts.disposed, 1, "W4 Automaton effects still running")
                try check(automaton.state.value, .loggedOut, "W4 Automaton final state")
            }
        }
    }

    /// W4 in the state-scoped form (issue 43): the login cycle as a table, one `.during` per state, so
    /// that every success leaves one state (its effect exited) and enters the next (its effect started):
    /// one effect started and one cancelled per input, as W4's `.latest` replacement.
    func automatonW4Scoped(count: Int) -> Workload {
        Workload(name: "W4 Automaton, leaving a state", events: count) {
            let counts = ReplyCounts()
            let running = neverEndingEffect(counts)
            let automaton = Automaton<LoginState, LoginInput>(
                state: .loggedOut,
                table: [
                    .login | .loggedOut => .loggingIn,
                    .loginOK | .loggingIn => .loggedIn,
                    .logout | .loggedIn => .loggingOut,
                    .logoutOK | .loggingOut => .loggedOut,
                    .during(.loggedOut) { _ in running },
                    .during(.loggingIn) { _ in running },
                    .during(.loggedIn) { _ in running },
                    .during(.loggingOut) { _ in running },
                ])
            countReplies(of: automaton, into: counts)
            let count = opaque(count)
            let cycle = opaque(loginCycle)
            return {
                let (successes, started) = (counts.successes, counts.started)
                for index in 0..<count {
                    automaton.send(cycle[index & 3])
                }
                try check(counts.successes - successes, count, "W4 Automaton, leaving a state successes")
                try check(counts.started - started, count, "W4 Automaton, leaving a state effects started")
                try check(counts.started - counts.disposed, 1, "W4 Automaton, leaving a state effects still running")
                try check(automaton.state.value, .loggedOut, "W4 Automaton, leaving a state final state")
            }
        }
    }

    func automatonW5(count: Int) -> Workload {
        Workload(name: "W5 Automaton", events: count) {
            let counts = ReplyCounts()
            let automaton = Automaton<LoginState, LoginInput>(state: .loggedOut, mapping: loginSwitchMapping)
            countReplies(of: automaton, into: counts)
            let count = opaque(count)
            let input = opaque(LoginInput.logout)
            return {
                let (successes, failures) = (counts.successes, counts.failures)
                for _ in 0..<count {
                    automaton.send(input)
                }
                try check(counts.successes - successes, 0, "W5 Automaton successes")
                try check(counts.failures - failures, count, "W5 Automaton failures")
                try check(automaton.state.value, .loggedOut, "W5 Automaton final state")
            }
        }
    }

    /// An automaton over `Int` whose every step's effect synchronously emits the next input, until the
    /// state reaches `limit`; `probe`, if given, runs inside each effect.
    func makeChainAutomaton(limit: ChainLimit, probe: (@Sendable () -> Void)? = nil) -> Automaton<Int, Int> {
        Automaton<Int, Int>(
            state: 0,
            mapping: { state, input in
                guard state < limit.value else { return nil }
                let next = SignalProducer<Int, Never> { observer, _ in
                    probe?()
                    observer.send(value: input)
                    observer.sendCompleted()
                }
                return (state + 1, next)
            },
            strategy: .merge)
    }

    /// The chain's automaton with each step's effect written as a value: `SignalProducer(value:)`, what
    /// a user writes for an effect that sends one input back at once (W3's effects are such values).
    func makeValueChainAutomaton(limit: ChainLimit) -> Automaton<Int, Int> {
        Automaton<Int, Int>(
            state: 0,
            mapping: { state, input in
                guard state < limit.value else { return nil }
                return (state + 1, SignalProducer(value: input))
            },
            strategy: .merge)
    }

    func automatonChain(steps: Int) -> Workload {
        automatonChain(name: "chain Automaton", steps: steps, make: { makeChainAutomaton(limit: $0) })
    }

    /// The chain with value effects (`makeValueChainAutomaton`).
    func automatonValueChain(steps: Int) -> Workload {
        automatonChain(name: "chain Automaton, value effects", steps: steps, make: makeValueChainAutomaton)
    }

    func automatonChain(name: String, steps: Int, make: @escaping (ChainLimit) -> Automaton<Int, Int>) -> Workload {
        Workload(name: name, events: steps) {
            let counts = ReplyCounts()
            let limit = ChainLimit()
            let automaton = make(limit)
            countReplies(of: automaton, into: counts)
            let steps = opaque(steps)
            return {
                let (start, successes, failures) = (automaton.state.value, counts.successes, counts.failures)
                limit.value = start + steps
                automaton.send(1)
                try check(automaton.state.value, start + steps, "\(name) final state")
                try check(counts.successes - successes, steps, "\(name) successes")
                try check(counts.failures - failures, 1, "\(name) failures (the step past the limit)")
            }
        }
    }

    /// Runs a chain of `steps` on a thread with a small stack and reports how far the stack pointer moved
    /// between the effects of the first and of every later step. Constant stack: the span stays bounded,
    /// whatever the length (a recursive engine needs at least a frame per step and overflows).
    func automatonChainStack(steps: Int, stackSize: Int) throws -> StackReport {
        let probe = StackProbe()
        let limit = ChainLimit()
        let counts = ReplyCounts()
        let outcome = try runOnThread(stackSize: stackSize) { () -> Int in
            let automaton = makeChainAutomaton(limit: limit, probe: { probe.record() })
            countReplies(of: automaton, into: counts)
            limit.value = steps
            automaton.send(1)
            return automaton.state.value
        }
        try check(outcome, steps, "chain on a \(stackSize / 1024) KiB stack: final state")
        try check(counts.successes, steps, "chain on a small stack: successes")
        return StackReport(steps: steps, stackSize: stackSize, span: probe.span, samples: probe.samples)
    }

    /// The table the memory figure uses: the DSL's when the DSL exists, else the `switch`.
    #if AUTOMATON_DSL
        let memoryMapping: Automaton<LoginState, LoginInput>.Mapping = reduce(loginMappings)
    #else
        let memoryMapping: Automaton<LoginState, LoginInput>.Mapping = loginSwitchMapping
    #endif

    /// Runs `inputs` inputs of W2 and reads the resident set size after the first tenth and
    /// at the end.
    func automatonMemory(inputs: Int) throws -> MemoryReport {
        let counts = ReplyCounts()
        let automaton = Automaton<LoginState, LoginInput>(state: .loggedOut, mapping: memoryMapping)
        countReplies(of: automaton, into: counts)
        let cycle = opaque(loginCycle)
        let start = ResidentMemory.read()
        let tenth = inputs / 10
        for index in 0..<tenth {
            automaton.send(cycle[index & 3])
        }
        let early = ResidentMemory.read()
        for index in tenth..<inputs {
            automaton.send(cycle[index & 3])
        }
        let end = ResidentMemory.read()
        try check(counts.successes, inputs, "memory workload successes")
        try check(automaton.state.value, .loggedOut, "memory workload final state")
        return MemoryReport(inputs: inputs, earlyInputs: tenth, start: start, early: early, end: end)
    }

    /// A `.latest` polling loop on virtual time: each tick's effect sends the next tick a second later,
    /// then completes. Reads the resident set size after the first tenth of the ticks and at the end.
    func pollingLoopMemory(ticks: Int) throws -> MemoryReport {
        let scheduler = TestScheduler()
        let tick = SignalProducer<Int, Never> { observer, lifetime in
            lifetime += scheduler.schedule(after: .seconds(1)) {
                observer.send(value: 0)
                observer.sendCompleted()
            }
        }
        let automaton = Automaton(
            state: 0,
            mapping: { (state: Int, _: Int) in
                (state + 1, state < ticks ? tick : .empty)
            }, strategy: .latest)
        let start = ResidentMemory.read()
        let tenth = ticks / 10
        automaton.send(0)
        scheduler.advance(by: .seconds(tenth - 1))
        let early = ResidentMemory.read()
        scheduler.run()
        let end = ResidentMemory.read()
        try check(automaton.state.value, ticks + 1, "polling loop final state")
        return MemoryReport(inputs: ticks, earlyInputs: tenth, start: start, early: early, end: end)
    }
#endif
