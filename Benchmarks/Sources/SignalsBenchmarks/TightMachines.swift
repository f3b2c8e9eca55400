#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The expert baselines (issue 31, BRIEF §6 third round): the login machine and the chain as a careful
// programmer who knows Swift's costs writes them by hand, in three strengths of guarantee (the third,
// careful effects, is in `CarefulEffectsMachine.swift`). None of them pays for Swift's
// run-time exclusivity checks in its hot path (its state is a `final class`'s stored properties marked
// `@exclusivity(unchecked)`, each written by one owner), none allocates per input, and each feeds
// inputs back through an inline FIFO of plain values, so that feedback runs in constant stack; the
// input that finds the machine idle is processed at once, without a trip through the queue (as the
// automaton's is). Replies are delivered one at a time, in order, whatever the threads (a reply is
// never delivered while another is), as the automaton's are.
//
// - Tight raw: one thread, no lock; an effect is a value (the input it sends back, or "a running
//   effect" counted by number). The physical limit of the workload.
// - Tight mutex: the same, thread safe with one lock, held only around the state and the queue
//   (replies are delivered with no lock held, as the automaton's are).
// - Careful effects: thread safe, and effects are what a library's user writes: closures that receive
//   something to send into and can be cancelled. One token is allocated per effect start, and nothing
//   else; a cancelled token makes later sends of its effect do nothing.

/// An inline FIFO of plain values (no optionals, no copy on growth beyond doubling). Its storage is
/// only ever touched by its owner, which frees it once, from its `deinit`.
struct InlineQueue<Element: BitwiseCopyable> {
    private var storage: UnsafeMutablePointer<Element>
    private var capacity: Int
    private var head = 0
    private(set) var count = 0

    init(capacity: Int = 16) {
        storage = .allocate(capacity: capacity)
        self.capacity = capacity
    }

    /// Frees the storage: the owner calls it once, from its `deinit`.
    func free() { storage.deallocate() }

    @inline(__always)
    mutating func append(_ element: Element) {
        if count == capacity { grow() }
        var index = head &+ count
        if index >= capacity { index &-= capacity }
        storage[index] = element
        count &+= 1
    }

    @inline(__always)
    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        head &+= 1
        if head == capacity { head = 0 }
        count &-= 1
        return element
    }

    @inline(never)
    private mutating func grow() {
        let bigger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        for offset in 0..<count {
            var index = head + offset
            if index >= capacity { index -= capacity }
            bigger[offset] = storage[index]
        }
        storage.deallocate()
        storage = bigger
        capacity *= 2
        head = 0
    }
}

/// The login table as a `switch`: the next state, or `nil` for an unmapped input.
@inline(__always)
func loginTransition(_ state: LoginState, _ input: LoginInput) -> LoginState? {
    switch (state, input) {
    case (.loggedOut, .login): return .loggingIn
    case (.loggingIn, .loginOK): return .loggedIn
    case (.loggedIn, .logout): return .loggingOut
    case (.loggingOut, .logoutOK): return .loggedOut
    default: return nil
    }
}

/// W3's effects as values: the input each transition's effect sends back at once, if any.
@inline(__always)
func loginFeedback(_ input: LoginInput) -> LoginInput? {
    switch input {
    case .login: return .loginOK
    case .logout: return .logoutOK
    default: return nil
    }
}

// MARK: Tight raw

/// The login machine for one thread, with its effects as values: W2, W5, W3 (`feedback`: `login` and
/// `logout` send their answer back) and W4 (`replacesEffects`: every success starts an effect, counted
/// in `counts.started`, and cancels the running one, counted in `counts.disposed`, before its reply).
final class TightRawLoginMachine {
    // Not thread safe: one thread owns every stored `var`, so the exclusivity checks are left out.
    @exclusivity(unchecked) private var state: LoginState = .loggedOut
    @exclusivity(unchecked) private var queue = InlineQueue<LoginInput>()
    @exclusivity(unchecked) private var isProcessing = false
    @exclusivity(unchecked) private var hasRunningEffect = false
    private let feedback: Bool
    private let replacesEffects: Bool
    private let counts: ReplyCounts
    private let reply: (HandWrittenReply<LoginState, LoginInput>) -> Void

    init(
        feedback: Bool = false, replacesEffects: Bool = false, counts: ReplyCounts,
        reply: @escaping (HandWrittenReply<LoginState, LoginInput>) -> Void
    ) {
        self.feedback = feedback
        self.replacesEffects = replacesEffects
        self.counts = counts
        self.reply = reply
    }

    deinit { queue.free() }

    var currentState: LoginState { state }

    func send(_ input: LoginInput) {
        // An input sent from a reply waits its turn.
        guard !isProcessing else { return queue.append(input) }
        isProcessing = true
        process(input)
        while let next = queue.popFirst() { process(next) }
        isProcessing = false
    }

    @inline(__always)
    private func process(_ input: LoginInput) {
        let from = state
        guard let to = loginTransition(from, input) else { return reply(.failure(input, from)) }
        if replacesEffects && hasRunningEffect { counts.disposed &+= 1 }
        state = to
        reply(.success(input, from, to))
        if replacesEffects {
            hasRunningEffect = true
            counts.started &+= 1
        }
        if feedback, let answer = loginFeedback(input) { queue.append(answer) }
    }
}

/// The chain for one thread: each step's effect sends its input back, until `limit`.
final class TightRawChainMachine {
    // Not thread safe: one thread owns every stored `var`, so the exclusivity checks are left out.
    @exclusivity(unchecked) private var state = 0
    @exclusivity(unchecked) private var queue = InlineQueue<Int>()
    @exclusivity(unchecked) private var isProcessing = false
    @exclusivity(unchecked) var limit = 0
    private let reply: (HandWrittenReply<Int, Int>) -> Void

    init(reply: @escaping (HandWrittenReply<Int, Int>) -> Void) {
        self.reply = reply
    }

    deinit { queue.free() }

    var currentState: Int { state }

    func send(_ input: Int) {
        guard !isProcessing else { return queue.append(input) }
        isProcessing = true
        process(input)
        while let next = queue.popFirst() { process(next) }
        isProcessing = false
    }

    @inline(__always)
    private func process(_ input: Int) {
        let from = state
        guard from < limit else { return reply(.failure(input, from)) }
        state = from &+ 1
        reply(.success(input, from, from &+ 1))
        queue.append(input)
    }
}

// MARK: Tight mutex

/// `TightRawLoginMachine`, thread safe: one lock around the state and the queue. The thread that finds
/// nobody processing processes its input and then drains the queue; the others queue theirs and
/// return. Replies go out with no lock held, one at a time.
final class TightMutexLoginMachine: @unchecked Sendable {
    // Safe: every stored `var` is only read or written with `mutex` held.
    private let mutex = Mutex()
    @exclusivity(unchecked) private var state: LoginState = .loggedOut
    @exclusivity(unchecked) private var queue = InlineQueue<LoginInput>()
    @exclusivity(unchecked) private var isProcessing = false
    @exclusivity(unchecked) private var hasRunningEffect = false
    private let feedback: Bool
    private let replacesEffects: Bool
    private let counts: ReplyCounts
    private let reply: (HandWrittenReply<LoginState, LoginInput>) -> Void

    init(
        feedback: Bool = false, replacesEffects: Bool = false, counts: ReplyCounts,
        reply: @escaping (HandWrittenReply<LoginState, LoginInput>) -> Void
    ) {
        self.feedback = feedback
        self.replacesEffects = replacesEffects
        self.counts = counts
        self.reply = reply
    }

    deinit { queue.free() }

    var currentState: LoginState {
        mutex.lock()
        defer { mutex.unlock() }
        return state
    }

    func send(_ input: LoginInput) {
        mutex.lock()
        guard !isProcessing else {
            queue.append(input)
            return mutex.unlock()
        }
        isProcessing = true
        var next = input
        while true {
            // Locked: commit the transition (and queue the effect's answer), then reply unlocked.
            let from = state
            let to = loginTransition(from, next)
            var cancels = false
            if let to {
                cancels = replacesEffects && hasRunningEffect
                state = to
                hasRunningEffect = hasRunningEffect || replacesEffects
                if feedback, let answer = loginFeedback(next) { queue.append(answer) }
            }
            mutex.unlock()
            if let to {
                if cancels { counts.disposed &+= 1 }
                reply(.success(next, from, to))
                if replacesEffects { counts.started &+= 1 }
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

/// `TightRawChainMachine`, thread safe as `TightMutexLoginMachine` is.
final class TightMutexChainMachine: @unchecked Sendable {
    // Safe: every stored `var` is only read or written with `mutex` held.
    private let mutex = Mutex()
    @exclusivity(unchecked) private var state = 0
    @exclusivity(unchecked) private var queue = InlineQueue<Int>()
    @exclusivity(unchecked) private var isProcessing = false
    @exclusivity(unchecked) private var limitValue = 0
    private let reply: (HandWrittenReply<Int, Int>) -> Void

    init(reply: @escaping (HandWrittenReply<Int, Int>) -> Void) {
        self.reply = reply
    }

    deinit { queue.free() }

    var limit: Int {
        get {
            mutex.lock()
            defer { mutex.unlock() }
            return limitValue
        }
        set {
            mutex.lock()
            limitValue = newValue
            mutex.unlock()
        }
    }

    var currentState: Int {
        mutex.lock()
        defer { mutex.unlock() }
        return state
    }

    func send(_ input: Int) {
        mutex.lock()
        guard !isProcessing else {
            queue.append(input)
            return mutex.unlock()
        }
        isProcessing = true
        var next = input
        while true {
            let from = state
            let applies = from < limitValue
            if applies {
                state = from &+ 1
                queue.append(next)
            }
            mutex.unlock()
            reply(applies ? .success(next, from, from &+ 1) : .failure(next, from))
            mutex.lock()
            guard let queued = queue.popFirst() else { break }
            next = queued
        }
        isProcessing = false
        mutex.unlock()
    }
}
