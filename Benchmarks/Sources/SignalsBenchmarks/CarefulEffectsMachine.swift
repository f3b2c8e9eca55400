// The third expert baseline (issue 31, BRIEF §6 third round): careful effects. Thread safe, and effects
// are what a library's user writes: closures that receive something to send into and can be cancelled.
// One token is allocated per effect start, and nothing else; a cancelled token makes later sends of its
// effect do nothing. `TightMachines.swift` has the other two baselines and the shared pieces
// (`InlineQueue`, the login table as a `switch`).

/// What a started effect holds, and its machine cancels: the one allocation per effect start. Its
/// effect sends through it, so that a send after the cancellation does nothing.
final class EffectToken<State: BitwiseCopyable, Input: BitwiseCopyable>: @unchecked Sendable {
    // Safe: `isCancelled` is only read or written with the machine's mutex held, and `machine` outlives
    // every token of its own (each workload keeps its machine until its last effect is gone).
    @exclusivity(unchecked) var isCancelled = false
    unowned(unsafe) let machine: CarefulEffectsMachine<State, Input>

    init(machine: CarefulEffectsMachine<State, Input>) {
        self.machine = machine
    }

    /// Sends `input` into the machine, unless this effect was cancelled.
    @inline(__always)
    func send(_ input: Input) {
        machine.send(input, from: self)
    }
}

/// A machine whose effects are the user's closures, as a library's user writes them: thread safe (one
/// lock, held around the state, the queue and the running effect only; no user code under it: the
/// table, the replies, the effects and their cancellation all run with no lock held), effects started
/// after their transition's reply, their inputs fed back through the FIFO queue (constant stack), and,
/// when `replacesEffects` (`.latest`), each success cancels the running effect (its `onCancel` runs)
/// before its reply. Generic over the state and the input, as a library is.
final class CarefulEffectsMachine<State: BitwiseCopyable, Input: BitwiseCopyable>: @unchecked Sendable {
    // Safe: every stored `var` is only read or written with `mutex` held, the token's `isCancelled`
    // too; `queue`'s storage is only touched by its owner, this machine, under `mutex`.
    /// An effect: runs once, after its transition's reply, with the token to send through and the input
    /// that started it. A struct around the closure, as a library's effect type is: a bare closure
    /// returned inside an optional tuple would be re-wrapped in a reabstraction thunk, allocated, at
    /// every transition.
    struct Effect {
        let run: (_ token: EffectToken<State, Input>, _ input: Input) -> Void
    }
    /// The table: the next state and the effect, or `nil` for an unmapped input.
    typealias Transition = (_ state: State, _ input: Input) -> (state: State, effect: Effect?)?

    private let mutex = Mutex()
    @exclusivity(unchecked) private var state: State
    @exclusivity(unchecked) private var queue = InlineQueue<Input>()
    @exclusivity(unchecked) private var isProcessing = false
    /// Under `replacesEffects`, the running effect's token.
    @exclusivity(unchecked) private var current: EffectToken<State, Input>?
    private let replacesEffects: Bool
    private let onCancel: () -> Void
    private let transition: Transition
    private let reply: (HandWrittenReply<State, Input>) -> Void

    init(
        state: State, replacesEffects: Bool = false, onCancel: @escaping () -> Void = {},
        transition: @escaping Transition, reply: @escaping (HandWrittenReply<State, Input>) -> Void
    ) {
        self.state = state
        self.replacesEffects = replacesEffects
        self.onCancel = onCancel
        self.transition = transition
        self.reply = reply
    }

    deinit { queue.free() }

    var currentState: State {
        mutex.lock()
        defer { mutex.unlock() }
        return state
    }

    /// An outside input.
    func send(_ input: Input) {
        send(input, from: nil)
    }

    /// An input from the effect `token` started, or from outside if `nil`: processed at once by a thread
    /// that finds the machine idle, queued otherwise (and processed by the thread that is processing).
    func send(_ input: Input, from token: EffectToken<State, Input>?) {
        mutex.lock()
        if let token, token.isCancelled { return mutex.unlock() }
        guard !isProcessing else {
            queue.append(input)
            return mutex.unlock()
        }
        isProcessing = true
        var next = input
        while true {
            let from = state
            mutex.unlock()
            // The table is the user's code: no lock held. Only this thread changes `state` while
            // `isProcessing` is set.
            let result = transition(from, next)
            if let (to, effect) = result {
                mutex.lock()
                var cancelled: EffectToken<State, Input>?
                if replacesEffects {
                    cancelled = current
                    cancelled?.isCancelled = true
                    current = nil
                }
                state = to
                let token = effect.map { _ in EffectToken(machine: self) }
                if replacesEffects { current = token }
                mutex.unlock()
                if cancelled != nil {
                    onCancel()
                    // The replaced token is released here, with no lock held.
                    cancelled = nil
                }
                reply(.success(next, from, to))
                if let effect, let token { effect.run(token, next) }
            } else {
                reply(.failure(next, from))
            }
            mutex.lock()
            guard let queued = queue.popFirst() else { break }
            next = queued
        }
        isProcessing = false
        mutex.unlock()
    }
}
