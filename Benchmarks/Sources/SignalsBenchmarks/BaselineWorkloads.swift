// The workloads W2-W5 and the chain, run on the three expert baselines (`TightMachines.swift`,
// `CarefulEffectsMachine.swift`). Each checks its own result as the automaton's workloads do.

/// What the login workloads need of a baseline machine. The workload is generic over it, so each
/// machine's `send` is called directly (specialized), as the automaton's is.
protocol LoginBaselineMachine: AnyObject {
    func send(_ input: LoginInput)
    var currentState: LoginState { get }
}

extension TightRawLoginMachine: LoginBaselineMachine {}
extension TightMutexLoginMachine: LoginBaselineMachine {}
extension CarefulEffectsMachine: LoginBaselineMachine where State == LoginState, Input == LoginInput {}

/// The login workloads: what one event is, and what the replies and effects must add up to.
enum LoginWorkload: String {
    /// The login cycle, no effects: one success per input.
    case w2 = "W2"
    /// `login` and `logout` alternately, each with an effect that sends `loginOK` / `logoutOK` back at
    /// once: two successes per outside input.
    case w3 = "W3"
    /// The login cycle under `.latest`, every success starting a never-ending effect that the next one
    /// cancels: one success and one effect started per input, one effect left running.
    case w4 = "W4"
    /// `logout` in `loggedOut`: one failure per input.
    case w5 = "W5"
}

/// `workload` on the machine `make` builds (it receives the counts its replies and effects go to).
func loginBaselineWorkload<Machine: LoginBaselineMachine>(
    _ workload: LoginWorkload, baseline: String, count: Int, make: @escaping (ReplyCounts) -> Machine
) -> Workload {
    let name = "\(workload.rawValue) \(baseline)"
    return Workload(name: name, events: count) {
        let counts = ReplyCounts()
        let machine = make(counts)
        let count = opaque(count)
        let cycle = opaque(loginCycle)
        let unmapped = opaque(LoginInput.logout)
        return {
            let (successes, failures, started) = (counts.successes, counts.failures, counts.started)
            switch workload {
            case .w2, .w4:
                for index in 0..<count { machine.send(cycle[index & 3]) }
            case .w3:
                for index in 0..<count { machine.send(index & 1 == 0 ? .login : .logout) }
            case .w5:
                for _ in 0..<count { machine.send(unmapped) }
            }
            let (expectedSuccesses, expectedFailures) =
                switch workload {
                case .w2, .w4: (count, 0)
                case .w3: (2 * count, 0)
                case .w5: (0, count)
                }
            try check(counts.successes - successes, expectedSuccesses, "\(name) successes")
            try check(counts.failures - failures, expectedFailures, "\(name) failures")
            if workload == .w4 {
                try check(counts.started - started, count, "\(name) effects started")
                try check(counts.started - counts.disposed, 1, "\(name) effects still running")
            }
            try check(machine.currentState, .loggedOut, "\(name) final state")
        }
    }
}

/// The tight raw baseline of a login workload: one thread, no lock, effects as values.
func tightRawLogin(_ workload: LoginWorkload, count: Int) -> Workload {
    loginBaselineWorkload(workload, baseline: "tight raw", count: count) { counts in
        TightRawLoginMachine(
            feedback: workload == .w3, replacesEffects: workload == .w4, counts: counts,
            reply: { counts.record($0) })
    }
}

/// The tight mutex baseline of a login workload: the tight raw machine behind one lock.
func tightMutexLogin(_ workload: LoginWorkload, count: Int) -> Workload {
    loginBaselineWorkload(workload, baseline: "tight mutex", count: count) { counts in
        TightMutexLoginMachine(
            feedback: workload == .w3, replacesEffects: workload == .w4, counts: counts,
            reply: { counts.record($0) })
    }
}

/// The careful effects baseline of a login workload: the table a closure, effects cancellable closures
/// made once with the table (as a user's table holds its effects), one token allocated per start.
func carefulEffectsLogin(_ workload: LoginWorkload, count: Int) -> Workload {
    typealias Machine = CarefulEffectsMachine<LoginState, LoginInput>
    return loginBaselineWorkload(workload, baseline: "careful effects", count: count) { counts in
        switch workload {
        case .w2, .w5:
            return Machine(
                state: .loggedOut, transition: { state, input in loginTransition(state, input).map { ($0, nil) } },
                reply: { counts.record($0) })
        case .w3:
            // `login` and `logout`'s effect: sends the answer back at once.
            let answer = Machine.Effect { token, input in
                if let answer = loginFeedback(input) { token.send(answer) }
            }
            return Machine(
                state: .loggedOut,
                transition: { state, input in
                    loginTransition(state, input).map { ($0, loginFeedback(input) == nil ? nil : answer) }
                },
                reply: { counts.record($0) })
        case .w4:
            // Every success's effect: counts its start and registers what counts its cancellation (made
            // once, as a user's effect's cleanup is; the automaton's effect registers its own with
            // `lifetime.observeEnded`). The machine holds its token meanwhile, as if it would send later
            // from elsewhere.
            let disposed: () -> Void = { counts.disposed &+= 1 }
            let waiting = Machine.Effect { token, _ in
                counts.started &+= 1
                token.whenCancelled(disposed)
            }
            return Machine(
                state: .loggedOut, replacesEffects: true,
                transition: { state, input in loginTransition(state, input).map { ($0, waiting) } },
                reply: { counts.record($0) })
        }
    }
}

/// The bound the chain's machines count up to; the body moves it before each run.
final class ChainLimit: @unchecked Sendable {
    // Safe: set before the chain starts, read by the chain on the same thread.
    var value = 0
}

/// What the chain needs of a baseline machine (see `LoginBaselineMachine`).
protocol ChainBaselineMachine: AnyObject {
    func send(_ input: Int)
    var currentState: Int { get }
    /// Where the chain stops: the step that would pass it is a failure.
    func setLimit(_ limit: Int)
}

extension TightRawChainMachine: ChainBaselineMachine {
    func setLimit(_ limit: Int) { self.limit = limit }
}

extension TightMutexChainMachine: ChainBaselineMachine {
    func setLimit(_ limit: Int) { self.limit = limit }
}

/// The careful effects chain, with the limit its table reads.
final class CarefulEffectsChain: ChainBaselineMachine {
    let machine: CarefulEffectsMachine<Int, Int>
    let limit: ChainLimit

    init(counts: ReplyCounts) {
        let limit = ChainLimit()
        // Each step's effect sends the input that started it back.
        let next = CarefulEffectsMachine<Int, Int>.Effect { token, input in token.send(input) }
        machine = CarefulEffectsMachine(
            state: 0,
            transition: { state, _ in state < limit.value ? (state + 1, next) : nil },
            reply: { counts.record($0) })
        self.limit = limit
    }

    @inline(__always) func send(_ input: Int) { machine.send(input) }
    var currentState: Int { machine.currentState }
    func setLimit(_ limit: Int) { self.limit.value = limit }
}

/// The chain (one outside input, then `steps` synchronous feedback steps) on the machine `make` builds.
func chainBaselineWorkload<Machine: ChainBaselineMachine>(
    baseline: String, steps: Int, make: @escaping (ReplyCounts) -> Machine
) -> Workload {
    let name = "chain \(baseline)"
    return Workload(name: name, events: steps) {
        let counts = ReplyCounts()
        let machine = make(counts)
        let steps = opaque(steps)
        return {
            let (start, successes, failures) = (machine.currentState, counts.successes, counts.failures)
            machine.setLimit(start + steps)
            machine.send(1)
            try check(machine.currentState, start + steps, "\(name) final state")
            try check(counts.successes - successes, steps, "\(name) successes")
            try check(counts.failures - failures, 1, "\(name) failures (the step past the limit)")
        }
    }
}

func tightRawChain(steps: Int) -> Workload {
    chainBaselineWorkload(baseline: "tight raw", steps: steps) { counts in
        TightRawChainMachine(reply: { counts.record($0) })
    }
}

func tightMutexChain(steps: Int) -> Workload {
    chainBaselineWorkload(baseline: "tight mutex", steps: steps) { counts in
        TightMutexChainMachine(reply: { counts.record($0) })
    }
}

func carefulEffectsChain(steps: Int) -> Workload {
    chainBaselineWorkload(baseline: "careful effects", steps: steps) { CarefulEffectsChain(counts: $0) }
}
