/// One thing that happens on a stream: a value, or one of the three ways a stream ends.
///
/// Every stream follows the grammar `value* (failed | completed | interrupted)?`: any number of
/// values, then at most one terminal event, after which nothing more is delivered.
public enum Event<Value, Error: Swift.Error> {
    /// A value. Any number of these may be delivered before a terminal event.
    case value(Value)
    /// The stream failed with `Error`. Terminal.
    case failed(Error)
    /// The stream finished successfully. Terminal.
    case completed
    /// The stream was cancelled (its producer was disposed) before it finished. Terminal.
    case interrupted

    /// Whether this event ends its stream (`failed`, `completed` or `interrupted`).
    @inlinable
    public var isTerminating: Bool {
        if case .value = self { return false }
        return true
    }

    /// Whether this event is `.completed`.
    @inlinable
    public var isCompleted: Bool {
        if case .completed = self { return true }
        return false
    }

    /// The value carried by a `.value` event, otherwise `nil`.
    @inlinable
    public var value: Value? {
        if case let .value(value) = self { return value }
        return nil
    }

    /// Whether this event is `.completed` or `.interrupted`: how an inner stream of `merge`, `concat`
    /// or `flatMap` ends without ending the combined stream.
    var isCompletedOrInterrupted: Bool {
        switch self {
        case .completed, .interrupted: return true
        case .value, .failed: return false
        }
    }

    /// The error carried by a `.failed` event, otherwise `nil`.
    @inlinable
    public var error: Error? {
        if case let .failed(error) = self { return error }
        return nil
    }

    /// The same event with its value transformed; terminal events are carried over unchanged.
    @inlinable
    public func map<NewValue>(_ transform: (Value) throws -> NewValue) rethrows -> Event<NewValue, Error> {
        switch self {
        case let .value(value): return .value(try transform(value))
        case let .failed(error): return .failed(error)
        case .completed: return .completed
        case .interrupted: return .interrupted
        }
    }

    /// The same event with its error transformed; other events are carried over unchanged.
    @inlinable
    public func mapError<NewError>(_ transform: (Error) throws -> NewError) rethrows -> Event<Value, NewError> {
        switch self {
        case let .value(value): return .value(value)
        case let .failed(error): return .failed(try transform(error))
        case .completed: return .completed
        case .interrupted: return .interrupted
        }
    }
}

extension Event: Sendable where Value: Sendable {}
extension Event: Equatable where Value: Equatable, Error: Equatable {}
extension Event: Hashable where Value: Hashable, Error: Hashable {}

extension Event: CustomStringConvertible {
    /// A short form for logs and test failures: `value(1)`, `failed(E)`, `completed`, `interrupted`.
    public var description: String {
        switch self {
        case let .value(value): return "value(\(value))"
        case let .failed(error): return "failed(\(error))"
        case .completed: return "completed"
        case .interrupted: return "interrupted"
        }
    }
}
