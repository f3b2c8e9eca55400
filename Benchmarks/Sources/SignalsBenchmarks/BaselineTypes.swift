import BaselineLock

// What the baseline machines of W2-W5 and the chain share with the automaton's workloads: the login
// machine's types, the reply counter and the mutex. The machines are in `TightMachines.swift` and
// `CarefulEffectsMachine.swift`.

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

/// Sendable when its values are: a continuation is resumed with one (`CarefulAskingMachine`).
extension HandWrittenReply: Sendable where State: Sendable, Input: Sendable {}

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

/// The lock the baseline machines hold around their state: `baseline_lock_t` (BaselineLock.h), a futex
/// lock on Linux, one atomic operation to take and one to release when uncontended.
final class Mutex: @unchecked Sendable {
    // Safe: the pointer is allocated once and only used through the lock's C functions.
    private let pointer: UnsafeMutablePointer<baseline_lock_t>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: baseline_lock_t())
        baseline_lock_init(pointer)
    }

    deinit {
        baseline_lock_destroy(pointer)
        pointer.deallocate()
    }

    @inline(__always) func lock() { baseline_lock_lock(pointer) }
    @inline(__always) func unlock() { baseline_lock_unlock(pointer) }
}
