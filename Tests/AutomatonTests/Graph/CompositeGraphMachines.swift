import Automaton
import Signals

// The machines of the composite-diagram tests (issue 33): a sign-in machine that hosts a two-factor
// machine while verifying, whose checking state hosts a request machine; a download manager that runs
// one download machine per URL while running or paused, beside a speed meter. Each graph is explored
// from its table; the effects are built, never started.

enum DiagramSignInState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case signedOut, verifying, signedIn
    var description: String { rawValue }
}

enum DiagramSignInInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case submitPassword, verified, failed, signOut
    var description: String { rawValue }
}

enum DiagramTwoFactorState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case waitingForCode, checking, accepted
    var description: String { rawValue }
}

enum DiagramTwoFactorInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case submit, valid, invalid
    var description: String { rawValue }
}

enum DiagramRequestState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case sending, waiting
    var description: String { rawValue }
}

enum DiagramRequestInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case sent, timeout
    var description: String { rawValue }
}

enum DiagramManagerState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case idle, running, paused
    var description: String { rawValue }
    /// Whether downloads exist: running or paused.
    var hasDownloads: Bool { self != .idle }
}

enum DiagramManagerInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case start, pause, resume, finish
    var description: String { rawValue }
}

enum DiagramDownloadState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case queued, downloading, finished, failed
    var description: String { rawValue }
}

enum DiagramDownloadInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case begin, complete, fail, retry
    var description: String { rawValue }
}

enum DiagramSpeedState: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case measuring, stalled
    var description: String { rawValue }
}

enum DiagramSpeedInput: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case stall, recover
    var description: String { rawValue }
}

/// Signs in with a password, then verifies a second factor (the child machine) before signing in.
func signInGraph() -> StateGraph<DiagramSignInState, DiagramSignInInput> {
    let verify = SignalProducer<DiagramSignInInput, Never>(value: .verified)
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
func twoFactorGraph() -> StateGraph<DiagramTwoFactorState, DiagramTwoFactorInput> {
    let check = SignalProducer<DiagramTwoFactorInput, Never>(value: .valid)
    return StateGraph(
        from: .waitingForCode,
        table: [
            .submit | .waitingForCode => .checking | check,
            .valid | .checking => .accepted,
            .invalid | .checking => .waitingForCode,
        ])
}

/// Sends a request and waits for it, sending again on a timeout.
func requestGraph() -> StateGraph<DiagramRequestState, DiagramRequestInput> {
    let resend = SignalProducer<DiagramRequestInput, Never>(value: .sent)
    return StateGraph(
        from: .sending,
        table: [
            .sent | .sending => .waiting,
            .timeout | .waiting => .sending | resend,
        ])
}

/// Starts, pauses, resumes and finishes a batch of downloads.
func managerGraph() -> StateGraph<DiagramManagerState, DiagramManagerInput> {
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
func downloadGraph() -> StateGraph<DiagramDownloadState, DiagramDownloadInput> {
    let fetch = SignalProducer<DiagramDownloadInput, Never>(value: .complete)
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
func speedGraph() -> StateGraph<DiagramSpeedState, DiagramSpeedInput> {
    StateGraph(
        from: .measuring,
        table: [
            .stall | .measuring => .stalled,
            .recover | .stalled => .measuring,
        ])
}
