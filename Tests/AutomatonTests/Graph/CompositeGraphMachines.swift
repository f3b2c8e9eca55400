import Automaton
import Signals

// The machines of the composite-diagram tests (issue 33): a sign-in machine that hosts a two-factor
// machine while verifying, whose checking state hosts a request machine; a download manager that runs
// one download machine per URL while running or paused, beside a speed meter. Each graph is explored
// from its table; the effects are built, never started.

enum SignInState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case signedOut, verifying, signedIn
    var description: String { rawValue }
}

enum SignInInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case submitPassword, verified, failed, signOut
    var description: String { rawValue }
}

enum TwoFactorState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case waitingForCode, checking, accepted
    var description: String { rawValue }
}

enum TwoFactorInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case submit, valid, invalid
    var description: String { rawValue }
}

enum RequestState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case sending, waiting
    var description: String { rawValue }
}

enum RequestInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case sent, timeout
    var description: String { rawValue }
}

enum ManagerState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case idle, running, paused
    var description: String { rawValue }
    /// Whether downloads exist: running or paused.
    var hasDownloads: Bool { self != .idle }
}

enum ManagerInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case start, pause, resume, finish
    var description: String { rawValue }
}

enum DownloadState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case queued, downloading, finished, failed
    var description: String { rawValue }
}

enum DownloadInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case begin, complete, fail, retry
    var description: String { rawValue }
}

enum SpeedState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case measuring, stalled
    var description: String { rawValue }
}

enum SpeedInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case stall, recover
    var description: String { rawValue }
}

/// Signs in with a password, then verifies a second factor (the child machine) before signing in.
func signInGraph() -> StateGraph<SignInState, SignInInput> {
    let verify = SignalProducer<SignInInput, Never>(value: .verified)
    return StateGraph(
        from: .signedOut,
        table: [
            .submitPassword | .signedOut => .verifying | verify,
            .verified | .verifying => .signedIn,
            .failed | .verifying => .signedOut,
            .signOut | .signedIn => .signedOut,
        ])
}

/// Waits for a code, checks it (with an effect), and accepts it or waits for another.
func twoFactorGraph() -> StateGraph<TwoFactorState, TwoFactorInput> {
    let check = SignalProducer<TwoFactorInput, Never>(value: .valid)
    return StateGraph(
        from: .waitingForCode,
        table: [
            .submit | .waitingForCode => .checking | check,
            .valid | .checking => .accepted,
            .invalid | .checking => .waitingForCode,
        ])
}

/// Sends a request and waits for it, sending again on a timeout.
func requestGraph() -> StateGraph<RequestState, RequestInput> {
    let resend = SignalProducer<RequestInput, Never>(value: .sent)
    return StateGraph(
        from: .sending,
        table: [
            .sent | .sending => .waiting,
            .timeout | .waiting => .sending | resend,
        ])
}

/// Starts, pauses, resumes and finishes a batch of downloads.
func managerGraph() -> StateGraph<ManagerState, ManagerInput> {
    StateGraph(
        from: .idle,
        table: [
            .start | .idle => .running,
            .pause | .running => .paused,
            .resume | .paused => .running,
            .finish | .running => .idle,
        ])
}

/// One download: begins (with an effect), completes or fails, and retries a failure.
func downloadGraph() -> StateGraph<DownloadState, DownloadInput> {
    let fetch = SignalProducer<DownloadInput, Never>(value: .complete)
    return StateGraph(
        from: .queued,
        table: [
            .begin | .queued => .downloading | fetch,
            .complete | .downloading => .finished,
            .fail | .downloading => .failed,
            .retry | .failed => .downloading | fetch,
        ])
}

/// Measures the transfer speed, noticing stalls.
func speedGraph() -> StateGraph<SpeedState, SpeedInput> {
    StateGraph(
        from: .measuring,
        table: [
            .stall | .measuring => .stalled,
            .recover | .stalled => .measuring,
        ])
}
