// The workloads W2-W5 and the chain, run on the hand-written machines.

func handWrittenW2(count: Int) -> Workload {
    Workload(name: "W2 hand-written", events: count) {
        let counts = ReplyCounts()
        let machine = HandWrittenLoginMachine(state: .loggedOut, reply: makeReplyCounter(counts))
        let count = opaque(count)
        let cycle = opaque(loginCycle)
        return {
            let (successes, failures) = (counts.successes, counts.failures)
            for index in 0..<count {
                machine.send(cycle[index & 3])
            }
            try check(counts.successes - successes, count, "W2 hand-written successes")
            try check(counts.failures - failures, 0, "W2 hand-written failures")
            try check(machine.currentState, .loggedOut, "W2 hand-written final state")
        }
    }
}

func handWrittenW3(count: Int) -> Workload {
    Workload(name: "W3 hand-written", events: count) {
        let counts = ReplyCounts()
        let machine = HandWrittenFeedbackMachine<LoginState, LoginInput>(
            state: .loggedOut, transition: handWrittenW3Transition, reply: makeReplyCounter(counts))
        let count = opaque(count)
        return {
            let (successes, failures) = (counts.successes, counts.failures)
            for index in 0..<count {
                machine.send(index & 1 == 0 ? .login : .logout)
            }
            try check(counts.successes - successes, 2 * count, "W3 hand-written successes")
            try check(counts.failures - failures, 0, "W3 hand-written failures")
            try check(machine.currentState, .loggedOut, "W3 hand-written final state")
        }
    }
}

func handWrittenW4(count: Int) -> Workload {
    Workload(name: "W4 hand-written", events: count) {
        let counts = ReplyCounts()
        let machine = HandWrittenLatestMachine(state: .loggedOut, counts: counts, reply: makeReplyCounter(counts))
        let count = opaque(count)
        let cycle = opaque(loginCycle)
        return {
            let (successes, started) = (counts.successes, counts.started)
            for index in 0..<count {
                machine.send(cycle[index & 3])
            }
            try check(counts.successes - successes, count, "W4 hand-written successes")
            try check(counts.started - started, count, "W4 hand-written effects started")
            try check(counts.started - counts.disposed, 1, "W4 hand-written effects still running")
            try check(machine.currentState, .loggedOut, "W4 hand-written final state")
        }
    }
}

func handWrittenW5(count: Int) -> Workload {
    Workload(name: "W5 hand-written", events: count) {
        let counts = ReplyCounts()
        let machine = HandWrittenLoginMachine(state: .loggedOut, reply: makeReplyCounter(counts))
        let count = opaque(count)
        let input = opaque(LoginInput.logout)
        return {
            let (successes, failures) = (counts.successes, counts.failures)
            for _ in 0..<count {
                machine.send(input)
            }
            try check(counts.successes - successes, 0, "W5 hand-written successes")
            try check(counts.failures - failures, count, "W5 hand-written failures")
            try check(machine.currentState, .loggedOut, "W5 hand-written final state")
        }
    }
}

/// The bound the chain's machines count up to; the body moves it before each run.
final class ChainLimit: @unchecked Sendable {
    // Safe: set before the chain starts, read by the chain on the same thread.
    var value = 0
}

func handWrittenChain(steps: Int) -> Workload {
    Workload(name: "chain hand-written", events: steps) {
        let counts = ReplyCounts()
        let limit = ChainLimit()
        let machine = HandWrittenFeedbackMachine<Int, Int>(
            state: 0,
            transition: { state, input in
                guard state < limit.value else { return nil }
                let effect: HandWrittenFeedbackMachine<Int, Int>.Effect = { machine in machine.send(input) }
                return (state + 1, effect)
            },
            reply: makeReplyCounter(counts))
        let steps = opaque(steps)
        return {
            let (start, successes, failures) = (machine.currentState, counts.successes, counts.failures)
            limit.value = start + steps
            machine.send(1)
            try check(machine.currentState, start + steps, "chain hand-written final state")
            try check(counts.successes - successes, steps, "chain hand-written successes")
            try check(counts.failures - failures, 1, "chain hand-written failures (the step past the limit)")
        }
    }
}

// MARK: The raw (lock-free) baselines

func rawW2(count: Int) -> Workload {
    Workload(name: "W2 raw", events: count) {
        let counts = ReplyCounts()
        let machine = RawLoginMachine(state: .loggedOut, reply: makeReplyCounter(counts))
        let count = opaque(count)
        let cycle = opaque(loginCycle)
        return {
            let (successes, failures) = (counts.successes, counts.failures)
            for index in 0..<count {
                machine.send(cycle[index & 3])
            }
            try check(counts.successes - successes, count, "W2 raw successes")
            try check(counts.failures - failures, 0, "W2 raw failures")
            try check(machine.currentState, .loggedOut, "W2 raw final state")
        }
    }
}

func rawW3(count: Int) -> Workload {
    Workload(name: "W3 raw", events: count) {
        let counts = ReplyCounts()
        let machine = RawFeedbackMachine<LoginState, LoginInput>(
            state: .loggedOut, transition: rawW3Transition, reply: makeReplyCounter(counts))
        let count = opaque(count)
        return {
            let (successes, failures) = (counts.successes, counts.failures)
            for index in 0..<count {
                machine.send(index & 1 == 0 ? .login : .logout)
            }
            try check(counts.successes - successes, 2 * count, "W3 raw successes")
            try check(counts.failures - failures, 0, "W3 raw failures")
            try check(machine.currentState, .loggedOut, "W3 raw final state")
        }
    }
}

func rawW4(count: Int) -> Workload {
    Workload(name: "W4 raw", events: count) {
        let counts = ReplyCounts()
        let machine = RawLatestMachine(state: .loggedOut, counts: counts, reply: makeReplyCounter(counts))
        let count = opaque(count)
        let cycle = opaque(loginCycle)
        return {
            let (successes, started) = (counts.successes, counts.started)
            for index in 0..<count {
                machine.send(cycle[index & 3])
            }
            try check(counts.successes - successes, count, "W4 raw successes")
            try check(counts.started - started, count, "W4 raw effects started")
            try check(counts.started - counts.disposed, 1, "W4 raw effects still running")
            try check(machine.currentState, .loggedOut, "W4 raw final state")
        }
    }
}

func rawW5(count: Int) -> Workload {
    Workload(name: "W5 raw", events: count) {
        let counts = ReplyCounts()
        let machine = RawLoginMachine(state: .loggedOut, reply: makeReplyCounter(counts))
        let count = opaque(count)
        let input = opaque(LoginInput.logout)
        return {
            let (successes, failures) = (counts.successes, counts.failures)
            for _ in 0..<count {
                machine.send(input)
            }
            try check(counts.successes - successes, 0, "W5 raw successes")
            try check(counts.failures - failures, count, "W5 raw failures")
            try check(machine.currentState, .loggedOut, "W5 raw final state")
        }
    }
}

func rawChain(steps: Int) -> Workload {
    Workload(name: "chain raw", events: steps) {
        let counts = ReplyCounts()
        let limit = ChainLimit()
        let machine = RawFeedbackMachine<Int, Int>(
            state: 0,
            transition: { state, input in
                guard state < limit.value else { return nil }
                let effect: RawFeedbackMachine<Int, Int>.Effect = { machine in machine.send(input) }
                return (state + 1, effect)
            },
            reply: makeReplyCounter(counts))
        let steps = opaque(steps)
        return {
            let (start, successes, failures) = (machine.currentState, counts.successes, counts.failures)
            limit.value = start + steps
            machine.send(1)
            try check(machine.currentState, start + steps, "chain raw final state")
            try check(counts.successes - successes, steps, "chain raw successes")
            try check(counts.failures - failures, 1, "chain raw failures (the step past the limit)")
        }
    }
}
