// The third expert baseline (issue 31, BRIEF §6 third round): careful effects. Thread safe, and effects
// are what a library's user writes: closures that receive something to send into, can be cancelled, and
// may register what to do when they are. One token is allocated per effect start, and nothing else; a
// cancelled token makes later sends of its effect do nothing, and under `.latest` the inputs it had
// queued are dropped. `TightMachines.swift` has the other two baselines and the shared pieces
// (`InlineQueue`, the login table as a `switch`).
//
// Where it is simpler than the automaton (none of it exercised by the workloads): `.latest` has one
// level (any success replaces the running effect, even one sent by that effect; the automaton keeps a
// tree of levels), and a replaced effect's cancellation runs after the new state is committed (the
// automaton's runs before the new state is emitted, which here means before the reply, as here).

/// Who waits for an outside input's reply, carried with the input through the machine's queue and
/// answered right after the reply is delivered, before the transition's effect starts.
/// `CarefulEffectsMachine` carries `NoReplyWaiter`, which takes no space and compiles to nothing, so
/// that its figures are those of a machine without the feature; `CarefulAskingMachine`
/// (`AskWorkloads.swift`) carries a continuation.
protocol ReplyWaiting: BitwiseCopyable {
    associatedtype State
    associatedtype Input
    /// An input nobody waits for: from an effect, or sent with a plain `send`.
    static var nobody: Self { get }
    func answer(_ reply: HandWrittenReply<State, Input>)
}

/// Nobody ever waits: the careful effects machine as the third round measures it.
struct NoReplyWaiter<State, Input>: ReplyWaiting {
    static var nobody: Self { Self() }
    @inline(__always) func answer(_ reply: HandWrittenReply<State, Input>) {}
}

/// What a started effect holds, and its machine cancels: the one allocation per effect start. Its
/// effect sends through it, so that a send after the cancellation, or after the machine's release,
/// does nothing.
final class EffectToken<State: BitwiseCopyable, Input: BitwiseCopyable, Waiter: ReplyWaiting>: @unchecked Sendable
where Waiter.State == State, Waiter.Input == Input {
    // Safe: `isCancelled` and `cancellation` are only read or written with the core's mutex held;
    // `epoch` is set before the token is shared. The core is kept alive by the token (strong), so a
    // send after the machine's release reaches a core that drops it.
    @exclusivity(unchecked) var isCancelled = false
    /// What the effect registered to run when it is cancelled (`whenCancelled(_:)`).
    @exclusivity(unchecked) var cancellation: (() -> Void)?
    /// Under `.latest`, the number of the effect: its queued inputs are dropped once it is replaced.
    let epoch: UInt64
    let core: CarefulEffectsCore<State, Input, Waiter>

    init(core: CarefulEffectsCore<State, Input, Waiter>, epoch: UInt64) {
        self.core = core
        self.epoch = epoch
    }

    /// Sends `input` into the machine, unless this effect was cancelled.
    @inline(__always)
    func send(_ input: Input) {
        // The token keeps `core` alive for the whole call: no retain of its own.
        Unmanaged.passUnretained(core)._withUnsafeGuaranteedRef { $0.send(input, from: self, waiter: .nobody) }
    }

    /// Runs `handler` when the effect is cancelled (at once, with no lock held, if it already was).
    /// The handler is kept, not copied: a handler made once costs no allocation here.
    func whenCancelled(_ handler: @escaping () -> Void) {
        core.mutex.lock()
        guard !isCancelled else {
            core.mutex.unlock()
            return handler()
        }
        cancellation = handler
        core.mutex.unlock()
    }
}

/// A machine whose effects are the user's closures, as a library's user writes them: thread safe (one
/// lock, held around the state, the queue and the running effect only; no user code under it: the
/// table, the replies, the effects and their cancellation all run with no lock held), effects started
/// after their transition's reply, their inputs fed back through the FIFO queue (constant stack), and,
/// when `replacesEffects` (`.latest`), each success cancels the running effect (its `whenCancelled`
/// handler runs) before its reply. Releasing the machine cancels its running effect. Generic over the
/// state and the input, as a library is.
final class CarefulEffectsMachine<State: BitwiseCopyable, Input: BitwiseCopyable>: Sendable {
    typealias Core = CarefulEffectsCore<State, Input, NoReplyWaiter<State, Input>>
    typealias Effect = Core.Effect
    typealias Transition = Core.Transition

    let core: Core

    init(
        state: State, replacesEffects: Bool = false, transition: @escaping Transition,
        reply: @escaping (HandWrittenReply<State, Input>) -> Void
    ) {
        core = Core(state: state, replacesEffects: replacesEffects, transition: transition, reply: reply)
    }

    /// Cancels the running effect: its tokens keep the core, not this machine, so nothing else does.
    deinit { core.release() }

    var currentState: State { core.currentState }

    /// An outside input.
    @inline(__always)
    func send(_ input: Input) {
        core.send(input, from: nil, waiter: .nobody)
    }
}

/// The machine's state, queue and running effect, kept alive by the machine and by its effects' tokens.
/// Generic over who may wait for an outside input's reply (`ReplyWaiting`), carried in the queue.
final class CarefulEffectsCore<State: BitwiseCopyable, Input: BitwiseCopyable, Waiter: ReplyWaiting>:
    @unchecked Sendable
where Waiter.State == State, Waiter.Input == Input {
    // Safe: every stored `var` is only read or written with `mutex` held, the tokens' `isCancelled` and
    // `cancellation` too; `queue`'s storage is only touched by its owner, this core, under `mutex`.
    /// An effect: runs once, after its transition's reply, with the token to send through and the input
    /// that started it. A struct around the closure, as a library's effect type is: a bare closure
    /// returned inside an optional tuple would be re-wrapped in a reabstraction thunk, allocated, at
    /// every transition.
    struct Effect {
        let run: (_ token: EffectToken<State, Input, Waiter>, _ input: Input) -> Void
    }
    /// The table: the next state and the effect, or `nil` for an unmapped input.
    typealias Transition = (_ state: State, _ input: Input) -> (state: State, effect: Effect?)?

    /// An input in the queue, with the epoch of the effect that sent it (0: from outside, or not under
    /// `.latest`), and who waits for its reply (no bytes for `NoReplyWaiter`).
    struct Queued {
        let input: Input
        let epoch: UInt64
        let waiter: Waiter
    }

    let mutex = Mutex()
    @exclusivity(unchecked) private var state: State
    @exclusivity(unchecked) private var queue = InlineQueue<Queued>()
    @exclusivity(unchecked) private var isProcessing = false
    @exclusivity(unchecked) private var isReleased = false
    /// Under `replacesEffects`, the running effect's token and the last epoch given out.
    @exclusivity(unchecked) private var current: EffectToken<State, Input, Waiter>?
    @exclusivity(unchecked) private var epoch: UInt64 = 0
    private let replacesEffects: Bool
    private let transition: Transition
    private let reply: (HandWrittenReply<State, Input>) -> Void

    init(
        state: State, replacesEffects: Bool, transition: @escaping Transition,
        reply: @escaping (HandWrittenReply<State, Input>) -> Void
    ) {
        self.state = state
        self.replacesEffects = replacesEffects
        self.transition = transition
        self.reply = reply
    }

    deinit { queue.free() }

    var currentState: State {
        mutex.lock()
        defer { mutex.unlock() }
        return state
    }

    /// The machine was released: cancels the running effect (its handler runs here, with no lock
    /// held) and drops every later send.
    func release() {
        mutex.lock()
        isReleased = true
        let cancelled = current.take()
        cancelled?.isCancelled = true
        let handler = cancelled?.cancellation.take()
        mutex.unlock()
        handler?()
    }

    /// An input from the effect `token` started, or from outside if `nil`: processed at once by a thread
    /// that finds the machine idle, queued otherwise (and processed by the thread that is processing).
    /// `waiter` (outside inputs only) is answered with the input's reply.
    @inline(__always)
    func send(_ input: Input, from token: EffectToken<State, Input, Waiter>?, waiter: Waiter) {
        mutex.lock()
        if let token, token.isCancelled || isReleased { return mutex.unlock() }
        guard !isProcessing else {
            queue.append(Queued(input: input, epoch: token?.epoch ?? 0, waiter: waiter))
            return mutex.unlock()
        }
        isProcessing = true
        let from = state
        mutex.unlock()
        drain(input, from, waiter)
    }

    /// Processes `input` (the machine being in `first`), then everything queued meanwhile, answering
    /// each input's waiter after its reply. Holds the processing role (`isProcessing`); called with no
    /// lock held. The first input is processed before the loop: a loop's entry copied the table's and
    /// the reply's closures out of `self` for every outside input (16 instructions of W5's 112).
    @inline(never)
    private func drain(_ input: Input, _ first: State, _ firstWaiter: Waiter) {
        process(input, from: first, waiter: firstWaiter)
        mutex.lock()
        var waiter = Waiter.nobody
        while let queued = nextQueued(waiter: &waiter) {
            let from = state
            mutex.unlock()
            process(queued, from: from, waiter: waiter)
            mutex.lock()
        }
        isProcessing = false
        mutex.unlock()
    }

    /// Processes one input, the machine being in `from`: the table, then the commit, the reply and the
    /// effect's start. Called by the processing thread, with no lock held.
    @inline(__always)
    private func process(_ next: Input, from: State, waiter: Waiter) {
        // The table is the user's code: no lock held. Only this thread changes `state` while
        // `isProcessing` is set.
        if let (to, effect) = transition(from, next) {
            if effect == nil && !replacesEffects {
                // Nothing to start or cancel: the state alone is committed, and no token, handler or
                // cancelled effect is made, moved or released on the way (they cost W2 47 of its 187
                // instructions when this path shared `commit`'s, at `d0a16f7`).
                mutex.lock()
                state = to
                mutex.unlock()
                reply(.success(next, from, to))
                waiter.answer(.success(next, from, to))
            } else {
                commit(next, from: from, to: to, effect: effect, waiter: waiter)
            }
        } else {
            reply(.failure(next, from))
            waiter.answer(.failure(next, from))
        }
    }

    /// Commits a success that starts an effect or replaces the running one (`replacesEffects`): the
    /// token is allocated before the lock, the replaced effect's handler runs and its token is released
    /// after it, then the reply, then the new effect. Inlined: its variables live in its own scope, so
    /// the effect-free success above never touches them. Called by the processing thread, with no
    /// lock held.
    @inline(__always)
    private func commit(_ input: Input, from: State, to: State, effect: Effect?, waiter: Waiter) {
        // Allocated before the lock is taken.
        var token: EffectToken<State, Input, Waiter>?
        if effect != nil {
            token = EffectToken(core: self, epoch: replacesEffects ? epoch &+ 1 : 0)
        }
        mutex.lock()
        var cancelled: EffectToken<State, Input, Waiter>?
        if replacesEffects {
            cancelled = current.take()
            cancelled?.isCancelled = true
            if token != nil {
                epoch &+= 1
                current = token
            }
        }
        let handler = cancelled?.cancellation.take()
        state = to
        mutex.unlock()
        // The replaced effect's handler runs, and its token is released, with no lock held.
        handler?()
        cancelled = nil
        reply(.success(input, from, to))
        waiter.answer(.success(input, from, to))
        if let token { effect.unsafelyUnwrapped.run(token, input) }
    }

    /// The next queued input, skipping those of replaced effects, its waiter in `waiter`. Called with
    /// `mutex` held.
    @inline(__always)
    private func nextQueued(waiter: inout Waiter) -> Input? {
        while let queued = queue.popFirst() {
            if queued.epoch == 0 || queued.epoch == epoch {
                waiter = queued.waiter
                return queued.input
            }
        }
        return nil
    }
}
