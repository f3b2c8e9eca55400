#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The hand-written baselines for W2-W5 and the chain: what a careful programmer writes without a
// library. Each is thread safe the way the automaton is (a lock around the state, no user closure
// called under it) and runs feedback through a FIFO queue, so it too runs in constant stack.

enum LoginState: Sendable, Hashable {
    case loggedOut, loggingIn, loggedIn, loggingOut
}

enum LoginInput: Sendable, Hashable {
    case login, loginOK, logout, logoutOK
}

/// The input cycle every login workload sends: each input is mapped in the state the previous one
/// leaves, so four inputs bring the machine back to `.loggedOut`.
let loginCycle: [LoginInput] = [.login, .loginOK, .logout, .logoutOK]

/// The hand-written counterpart of `Reply`.
enum HandWrittenReply<State, Input> {
    case success(Input, State, State)
    case failure(Input, State)
}

/// Counts replies and effects. Safe: each workload drives its machine from one thread. The counts
/// live behind a pointer, not in stored `var`s, to avoid a dynamic exclusivity check per access (see
/// `Total`).
final class ReplyCounts: @unchecked Sendable {
    private struct Counts {
        var successes = 0
        var failures = 0
        var disposed = 0
        var started = 0
    }

    private let storage: UnsafeMutablePointer<Counts>

    init() {
        storage = .allocate(capacity: 1)
        storage.initialize(to: Counts())
    }

    deinit { storage.deallocate() }

    var successes: Int {
        @inline(__always) get { storage.pointee.successes }
        @inline(__always) set { storage.pointee.successes = newValue }
    }
    var failures: Int {
        @inline(__always) get { storage.pointee.failures }
        @inline(__always) set { storage.pointee.failures = newValue }
    }
    var disposed: Int {
        @inline(__always) get { storage.pointee.disposed }
        @inline(__always) set { storage.pointee.disposed = newValue }
    }
    var started: Int {
        @inline(__always) get { storage.pointee.started }
        @inline(__always) set { storage.pointee.started = newValue }
    }

    @inline(__always)
    func record<State, Input>(_ reply: HandWrittenReply<State, Input>) {
        switch reply {
        case .success: successes &+= 1
        case .failure: failures &+= 1
        }
    }
}

/// A `pthread_mutex_t` the machines lock around their state.
final class Mutex: @unchecked Sendable {
    // Safe: the pointer is allocated once and only used through pthread calls.
    private let pointer: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: pthread_mutex_t())
        pthread_mutex_init(pointer, nil)
    }

    deinit {
        pthread_mutex_destroy(pointer)
        pointer.deallocate()
    }

    @inline(__always) func lock() { pthread_mutex_lock(pointer) }
    @inline(__always) func unlock() { pthread_mutex_unlock(pointer) }
}

/// A minimal ring buffer for the baselines' input queues (storage reused once warm).
struct Ring<Element> {
    private var storage: [Element?] = Array(repeating: nil, count: 16)
    private var head = 0
    private(set) var count = 0

    @inline(__always)
    mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        var index = head + count
        if index >= storage.count { index -= storage.count }
        storage[index] = element
        count += 1
    }

    @inline(__always)
    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head].take()
        head += 1
        if head == storage.count { head = 0 }
        count -= 1
        return element
    }

    private mutating func grow() {
        var bigger: [Element?] = Array(repeating: nil, count: storage.count * 2)
        for offset in 0..<count {
            bigger[offset] = storage[(head + offset) % storage.count].take()
        }
        storage = bigger
        head = 0
    }
}

// MARK: W2, W5: no effects

/// The login machine as a `switch` over (state, input) with a reply closure.
final class HandWrittenLoginMachine: @unchecked Sendable {
    // Safe: `state` is only touched with `mutex` held.
    private let mutex = Mutex()
    private var state: LoginState
    private let reply: (HandWrittenReply<LoginState, LoginInput>) -> Void

    init(state: LoginState, reply: @escaping (HandWrittenReply<LoginState, LoginInput>) -> Void) {
        self.state = state
        self.reply = reply
    }

    var currentState: LoginState {
        mutex.lock()
        defer { mutex.unlock() }
        return state
    }

    @inline(__always)
    func send(_ input: LoginInput) {
        mutex.lock()
        let from = state
        let to: LoginState?
        switch (from, input) {
        case (.loggedOut, .login): to = .loggingIn
        case (.loggingIn, .loginOK): to = .loggedIn
        case (.loggedIn, .logout): to = .loggingOut
        case (.loggingOut, .logoutOK): to = .loggedOut
        default: to = nil
        }
        if let to { state = to }
        mutex.unlock()
        if let to {
            reply(.success(input, from, to))
        } else {
            reply(.failure(input, from))
        }
    }
}

@inline(never)
func makeReplyCounter<State, Input>(_ counts: ReplyCounts) -> (HandWrittenReply<State, Input>) -> Void {
    { counts.record($0) }
}

// MARK: W3, chain: synchronous feedback effects

/// A machine whose transitions may carry an effect that emits inputs synchronously; emitted inputs
/// go through a FIFO queue and are processed after the current one (no recursion).
final class HandWrittenFeedbackMachine<State, Input>: @unchecked Sendable {
    // Safe: `state`, `queue` and `isProcessing` are only touched with `mutex` held.
    /// An effect receives the machine and sends its inputs into it (synchronously, for these workloads).
    typealias Effect = (_ machine: HandWrittenFeedbackMachine<State, Input>) -> Void
    typealias Transition = (State, Input) -> (State, Effect?)?

    private let mutex = Mutex()
    private var state: State
    private var queue = Ring<Input>()
    private var isProcessing = false
    private let transition: Transition
    private let reply: (HandWrittenReply<State, Input>) -> Void

    init(
        state: State, transition: @escaping Transition,
        reply: @escaping (HandWrittenReply<State, Input>) -> Void
    ) {
        self.state = state
        self.transition = transition
        self.reply = reply
    }

    var currentState: State {
        mutex.lock()
        defer { mutex.unlock() }
        return state
    }

    func send(_ input: Input) {
        mutex.lock()
        queue.append(input)
        if isProcessing {
            mutex.unlock()
            return
        }
        isProcessing = true
        while let next = queue.popFirst() {
            let from = state
            mutex.unlock()
            // The transition is the user's table: it runs without the lock, like the automaton's mapping.
            let result = transition(from, next)
            mutex.lock()
            if let (to, _) = result { state = to }
            mutex.unlock()
            if let (to, effect) = result {
                reply(.success(next, from, to))
                effect?(self)
            } else {
                reply(.failure(next, from))
            }
            mutex.lock()
        }
        isProcessing = false
        mutex.unlock()
    }
}

/// W3's table: `login` and `logout` each carry an effect that emits `loginOK` / `logoutOK` at once.
@inline(never)
func handWrittenW3Transition(_ state: LoginState, _ input: LoginInput)
    -> (LoginState, HandWrittenFeedbackMachine<LoginState, LoginInput>.Effect?)?
{
    switch (state, input) {
    case (.loggedOut, .login): return (.loggingIn, { machine in machine.send(.loginOK) })
    case (.loggingIn, .loginOK): return (.loggedIn, nil)
    case (.loggedIn, .logout): return (.loggingOut, { machine in machine.send(.logoutOK) })
    case (.loggingOut, .logoutOK): return (.loggedOut, nil)
    default: return nil
    }
}

// MARK: W4: `.latest` with never-ending asynchronous effects

/// A started asynchronous effect: it would emit later from elsewhere; here it only waits to be cancelled.
final class RunningEffect: @unchecked Sendable {
    // Safe: only touched by the machine's processing thread.
    let emit: (LoginInput) -> Void
    let counts: ReplyCounts
    private(set) var isCancelled = false

    init(emit: @escaping (LoginInput) -> Void, counts: ReplyCounts) {
        self.emit = emit
        self.counts = counts
        counts.started &+= 1
    }

    func cancel() {
        if !isCancelled {
            isCancelled = true
            counts.disposed &+= 1
        }
    }
}

/// The login machine where every transition starts a never-ending asynchronous effect, and each
/// successful input cancels the effect of the previous one before its reply (`.latest`).
final class HandWrittenLatestMachine: @unchecked Sendable {
    // Safe: `state` and `current` are only touched with `mutex` held.
    private let mutex = Mutex()
    private var state: LoginState
    private var current: RunningEffect?
    private let counts: ReplyCounts
    private let reply: (HandWrittenReply<LoginState, LoginInput>) -> Void

    init(
        state: LoginState, counts: ReplyCounts,
        reply: @escaping (HandWrittenReply<LoginState, LoginInput>) -> Void
    ) {
        self.state = state
        self.counts = counts
        self.reply = reply
    }

    var currentState: LoginState {
        mutex.lock()
        defer { mutex.unlock() }
        return state
    }

    func send(_ input: LoginInput) {
        mutex.lock()
        let from = state
        let to: LoginState?
        switch (from, input) {
        case (.loggedOut, .login): to = .loggingIn
        case (.loggingIn, .loginOK): to = .loggedIn
        case (.loggedIn, .logout): to = .loggingOut
        case (.loggingOut, .logoutOK): to = .loggedOut
        default: to = nil
        }
        guard let to else {
            mutex.unlock()
            reply(.failure(input, from))
            return
        }
        let previous = current
        current = nil
        mutex.unlock()
        previous?.cancel()
        mutex.lock()
        state = to
        mutex.unlock()
        reply(.success(input, from, to))
        let effect = RunningEffect(emit: { [weak self] in self?.send($0) }, counts: counts)
        mutex.lock()
        current = effect
        mutex.unlock()
    }
}

// MARK: The raw baselines: the same machines with no lock

// The physical limit for one thread: a `switch` and, where inputs are fed back, a FIFO ring buffer,
// with no lock and no atomic operation. Not thread safe, so not a fair competitor (every row of the
// automaton is); it shows what the guarantees cost. "× raw" in the table divides by these.

/// W2 and W5's login machine without a lock.
final class RawLoginMachine {
    private var state: LoginState
    private let reply: (HandWrittenReply<LoginState, LoginInput>) -> Void

    init(state: LoginState, reply: @escaping (HandWrittenReply<LoginState, LoginInput>) -> Void) {
        self.state = state
        self.reply = reply
    }

    var currentState: LoginState { state }

    @inline(__always)
    func send(_ input: LoginInput) {
        let from = state
        let to: LoginState?
        switch (from, input) {
        case (.loggedOut, .login): to = .loggingIn
        case (.loggingIn, .loginOK): to = .loggedIn
        case (.loggedIn, .logout): to = .loggingOut
        case (.loggingOut, .logoutOK): to = .loggedOut
        default: to = nil
        }
        if let to {
            state = to
            reply(.success(input, from, to))
        } else {
            reply(.failure(input, from))
        }
    }
}

/// W3 and the chain's feedback machine without a lock: emitted inputs go through the ring buffer and
/// are processed after the current one (no recursion).
final class RawFeedbackMachine<State, Input> {
    typealias Effect = (_ machine: RawFeedbackMachine<State, Input>) -> Void
    typealias Transition = (State, Input) -> (State, Effect?)?

    private var state: State
    private var queue = Ring<Input>()
    private var isProcessing = false
    private let transition: Transition
    private let reply: (HandWrittenReply<State, Input>) -> Void

    init(state: State, transition: @escaping Transition, reply: @escaping (HandWrittenReply<State, Input>) -> Void) {
        self.state = state
        self.transition = transition
        self.reply = reply
    }

    var currentState: State { state }

    func send(_ input: Input) {
        queue.append(input)
        if isProcessing { return }
        isProcessing = true
        while let next = queue.popFirst() {
            let from = state
            if let (to, effect) = transition(from, next) {
                state = to
                reply(.success(next, from, to))
                effect?(self)
            } else {
                reply(.failure(next, from))
            }
        }
        isProcessing = false
    }
}

/// W3's table for the raw machine.
@inline(never)
func rawW3Transition(_ state: LoginState, _ input: LoginInput)
    -> (LoginState, RawFeedbackMachine<LoginState, LoginInput>.Effect?)?
{
    switch (state, input) {
    case (.loggedOut, .login): return (.loggingIn, { machine in machine.send(.loginOK) })
    case (.loggingIn, .loginOK): return (.loggedIn, nil)
    case (.loggedIn, .logout): return (.loggingOut, { machine in machine.send(.logoutOK) })
    case (.loggingOut, .logoutOK): return (.loggedOut, nil)
    default: return nil
    }
}

/// W4's machine without a lock: each successful input cancels the running effect and starts one.
final class RawLatestMachine {
    private var state: LoginState
    private var current: RunningEffect?
    private let counts: ReplyCounts
    private let reply: (HandWrittenReply<LoginState, LoginInput>) -> Void

    init(state: LoginState, counts: ReplyCounts, reply: @escaping (HandWrittenReply<LoginState, LoginInput>) -> Void) {
        self.state = state
        self.counts = counts
        self.reply = reply
    }

    var currentState: LoginState { state }

    func send(_ input: LoginInput) {
        let from = state
        let to: LoginState?
        switch (from, input) {
        case (.loggedOut, .login): to = .loggingIn
        case (.loggingIn, .loginOK): to = .loggedIn
        case (.loggedIn, .logout): to = .loggingOut
        case (.loggingOut, .logoutOK): to = .loggedOut
        default: to = nil
        }
        guard let to else {
            reply(.failure(input, from))
            return
        }
        current?.cancel()
        state = to
        reply(.success(input, from, to))
        current = RunningEffect(emit: { [unowned self] in self.send($0) }, counts: counts)
    }
}
