/// Receives the events of a stream.
///
/// An `Observer` is two things, as in ReactiveSwift:
/// - what you hand to `Signal.observe(_:)` or `SignalProducer.start(_:)` to be told of events. The
///   stream calls it serially: never two events at once, never recursively.
/// - what you send into: the `input` of `Signal.pipe()`, or the observer a `SignalProducer`'s start
///   handler receives. Its `send` methods are thread safe and may be called from any thread, including
///   from inside an observer of the same signal: the event is then queued and delivered after the
///   current one, in FIFO order. Events sent after a terminal event are ignored.
public final class Observer<Value, Error: Swift.Error>: Sendable {
    /// The closure an observer runs for each event.
    public typealias Action = @Sendable (Event<Value, Error>) -> Void

    @usableFromInline let action: Action

    /// An observer that runs `action` for every event.
    @inlinable
    public init(_ action: @escaping Action) {
        self.action = action
    }

    /// An observer with one optional closure per kind of event; events without a closure are ignored.
    @inlinable
    public convenience init(
        value: (@Sendable (Value) -> Void)? = nil,
        failed: (@Sendable (Error) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil,
        interrupted: (@Sendable () -> Void)? = nil
    ) {
        self.init { event in
            switch event {
            case let .value(newValue): value?(newValue)
            case let .failed(error): failed?(error)
            case .completed: completed?()
            case .interrupted: interrupted?()
            }
        }
    }

    /// Sends `event`. See the type's documentation for threading and ordering.
    @inlinable
    public func send(_ event: Event<Value, Error>) {
        action(event)
    }

    /// Sends a value.
    @inlinable
    public func send(value: Value) {
        action(.value(value))
    }

    /// Sends a failure, ending the stream.
    @inlinable
    public func send(error: Error) {
        action(.failed(error))
    }

    /// Sends completion, ending the stream.
    @inlinable
    public func sendCompleted() {
        action(.completed)
    }

    /// Sends interruption, ending the stream.
    @inlinable
    public func sendInterrupted() {
        action(.interrupted)
    }
}
