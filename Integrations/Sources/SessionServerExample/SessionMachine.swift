import Automaton
import Dispatch

/// A login session: the socket connects, the credentials are checked, requests are served while it
/// is active, and it closes.
enum SessionState: Sendable, Equatable {
    case connecting, authenticating, active, closed
}

enum SessionInput: Sendable, Equatable {
    /// The socket is connected (sent by the server).
    case connected
    /// The credentials were accepted or rejected (sent by the authentication effect).
    case authenticated, rejected
    /// A request arrived (sent by the server); its response is ready (sent by the request's effect).
    case request, response
    /// The client went away (sent by the server).
    case close

    /// The case's name, for the metrics' `input` dimension: one time series per case.
    var caseName: String {
        switch self {
        case .connected: "connected"
        case .authenticated: "authenticated"
        case .rejected: "rejected"
        case .request: "request"
        case .response: "response"
        case .close: "close"
        }
    }
}

/// Session `id`'s machine. Its effects simulate I/O on `io`: the credential check takes 1 to 7 ms
/// and rejects one session in 13; each request takes 1 to 3 ms and runs under the key `request`,
/// several at once, until it answers or the session closes.
func makeSession(id: Int, io: QueueScheduler) -> Automaton<SessionState, SessionInput> {
    let verdict: SessionInput = id.isMultiple(of: 13) ? .rejected : .authenticated
    let authenticate = SignalProducer<SessionInput, Never>(value: verdict)
        .delay(.milliseconds(1 + id % 7), on: io)
    let serve = SignalProducer<SessionInput, Never>(value: .response)
        .delay(.milliseconds(1 + id % 3), on: io)
        .keyed("request", .merge)
    let isOpen: @Sendable (SessionState) -> Bool = { $0 != .closed }

    // `.latest`: `close` replaces the credential check if it is still running; requests are keyed,
    // so only their key cancels them.
    return Automaton(
        state: .connecting, strategy: .latest,
        table: [
            .connected | .connecting => .authenticating | authenticate,
            .authenticated | .authenticating => .active,
            .rejected | .authenticating => .closed,
            .request | .active => .active | serve,
            .response | .active => .active,
            .close | isOpen => .closed | .cancel("request"),
        ])
}
