/// Something that happened to one effect: it started, ended, or was cancelled.
///
/// An automaton publishes these on `effectEvents`, sent by the thread that caused them: the events of
/// an input (the effects it cancels, then the one it starts or drops) by the thread processing it, in
/// processing order with the replies (cancellations before the input's state and reply; the start, or
/// the drop of a `.first` effect whose key is running, after them); an effect's end by the thread on
/// which it ended. An un-keyed `.empty` effect is no effect and has no events; a keyed one
/// (`.empty.keyed(key)`) is an effect like any other.
public struct EffectEvent<Input: Sendable>: Sendable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Sendable {
        /// The effect started, because `input` succeeded.
        case started(by: Input)
        /// The effect ended by itself: it completed or was interrupted (a `{ send in ... }` closure
        /// effect: its last `send` was released). A producer effect that lets go of its observer
        /// without ending has not ended: it runs until it is cancelled.
        case ended
        /// The effect was disposed (this event is decided, and sent or queued for the thread sending
        /// effect events, before its lifetime ends); or it never started:
        /// a `.first` effect `.dropped`, or a `.queue` effect cancelled while it waited for its key's
        /// running effects to end (by `.cancel(key)`, a `.latest` effect of its key, or termination).
        /// An effect that never started has this event and no `started` one.
        case cancelled(EffectCancellation<Input>)
    }

    /// The effect's number: effects are numbered from 0, in the order their inputs succeeded.
    public let id: UInt64
    /// The effect's key, if it is keyed.
    public let key: EffectKey?
    /// What happened.
    public let kind: Kind

    /// An event of the effect `id`.
    public init(id: UInt64, key: EffectKey?, kind: Kind) {
        self.id = id
        self.key = key
        self.kind = kind
    }

    /// One line, e.g. `effect 3 [connection] cancelled by disconnect`.
    public var description: String {
        let name = "effect \(id)" + (key.map { " [\($0)]" } ?? "")
        switch kind {
        case let .started(input): return "\(name) started by \(input)"
        case .ended: return "\(name) ended"
        case let .cancelled(cause): return "\(name) \(cause)"
        }
    }
}

/// Why an effect was cancelled.
public enum EffectCancellation<Input: Sendable>: Sendable, CustomStringConvertible {
    /// Replaced by `input`: under `.latest`, by a successful input at its level of the tree, or, for a
    /// keyed effect, by a newer effect of its key whose policy is `.latest`.
    case replaced(by: Input)
    /// Cancelled by `input`, whose row cancels its key (`.cancel(key)`).
    case cancelled(by: Input)
    /// A state-scoped effect (`.during`, `.after`), cancelled because `input` made the machine leave
    /// the states it was declared for (or restart it there: `ScopeRestart`).
    case exited(by: Input)
    /// Never started: `input` would have started it, but its key's policy is `.first` and an effect of
    /// that key was running.
    case dropped(by: Input)
    /// The input signal was interrupted.
    case interrupted
    /// The automaton was released.
    case released

    /// e.g. `cancelled by disconnect`, `replaced by connect`, `dropped by connect`, `exited by paid`,
    /// `cancelled: automaton released`.
    public var description: String {
        switch self {
        case let .replaced(input): return "replaced by \(input)"
        case let .cancelled(input): return "cancelled by \(input)"
        case let .exited(input): return "exited by \(input)"
        case let .dropped(input): return "dropped by \(input)"
        case .interrupted: return "cancelled: input interrupted"
        case .released: return "cancelled: automaton released"
        }
    }
}

extension EffectEvent: Equatable where Input: Equatable {}
extension EffectEvent: Hashable where Input: Hashable {}
extension EffectEvent.Kind: Equatable where Input: Equatable {}
extension EffectEvent.Kind: Hashable where Input: Hashable {}
extension EffectCancellation: Equatable where Input: Equatable {}
extension EffectCancellation: Hashable where Input: Hashable {}
