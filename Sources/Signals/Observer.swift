/// Receives the events of a stream.
///
/// An `Observer` is two things, as in ReactiveSwift:
/// - what you hand to `Signal.observe(_:)` or `SignalProducer.start(_:)` to be told of events. The
///   stream calls it serially: never two events at once, never recursively.
/// - what you send into: the `input` of `Signal.pipe()`, or the observer a `SignalProducer`'s start
///   handler receives. Its `send` methods are thread safe and may be called from any thread, including
///   from inside an observer of the same signal: the event is then queued and delivered after the
///   current one, in FIFO order. Events sent after a terminal event are ignored.
///
/// An input observer (the `input` of `Signal.pipe()`, the observer a start handler receives) sends
/// `.interrupted` into its stream when it is released without having sent a terminal event, as
/// ReactiveSwift's input observers do: once nothing can send into a stream any more, the stream ends,
/// so its observers are never left waiting. That interruption is sent on the thread that releases the
/// last reference to the input.
public final class Observer<Value, Error: Swift.Error>: Sendable {
    /// The closure an observer runs for each event.
    public typealias Action = @Sendable (Event<Value, Error>) -> Void

    @usableFromInline let action: Action
    /// For an observer made with a value closure (`Signal.observeValues(_:)`, `Observer(value:...)`,
    /// `SignalProducer.startWithValues(_:)`): that closure, which a signal's delivery calls with each
    /// value instead of `action` (which does the same for a value). `action` stays the entry point for
    /// every other event and for direct sends; this only skips one closure hop per value.
    @usableFromInline package let valueAction: (@Sendable (Value) -> Void)?
    /// Run with `releaseTarget` when this observer is released: an input observer tells its target
    /// (`ObserverTarget.observerReleased()`), which sends `.interrupted` into its stream. A closure of
    /// its own, specialized where it is made, so that a release costs no generic metadata lookup
    /// (building an `Event` in this generic class's `deinit` did). It captures nothing, and is handed
    /// its target instead: a closure that captured the target would retain it once more, and be
    /// retained and released around its call (three atomic operations per observer, about a tenth of
    /// an automaton effect's).
    @usableFromInline let onRelease: (@Sendable (AnyObject & Sendable) -> Void)?
    /// What `onRelease` acts on, unretained. Safe by construction: only `init(sendingTo:)` sets it, and
    /// that initializer builds `action` itself, capturing the target, so `action` (released after
    /// `deinit` has run) keeps the target alive for as long as this observer lives.
    @usableFromInline let releaseTarget: Unmanaged<AnyObject & Sendable>?

    /// An observer that runs `action` for every event.
    @inlinable
    public init(_ action: @escaping Action) {
        self.action = action
        self.valueAction = nil
        self.onRelease = nil
        self.releaseTarget = nil
    }

    /// An observer that a delivery may call through `valueAction` for a value, and through `action`
    /// for everything else. The caller must make `action` do for a value exactly what `valueAction`
    /// does (nothing can check it): which of the two a value goes through is not specified.
    @inlinable
    package init(action: @escaping Action, valueAction: @escaping @Sendable (Value) -> Void) {
        self.action = action
        self.valueAction = valueAction
        self.onRelease = nil
        self.releaseTarget = nil
    }

    /// An input observer: it sends every event to `target` (`receive(_:)`), and tells it when it is
    /// released (`observerReleased()`), where the target sends `.interrupted` into its stream, which
    /// ignores it if it has already terminated. The observer keeps `target` alive: its `action`
    /// captures it.
    @inlinable
    package init<Target: ObserverTarget>(sendingTo target: Target) where Target.Value == Value, Target.Error == Error {
        // The one capture of the target: what keeps it alive for `releaseTarget` (see there).
        self.action = { [target] event in target.receive(event) }
        self.valueAction = nil
        self.onRelease = { unsafeDowncast($0, to: Target.self).observerReleased() }
        self.releaseTarget = .passUnretained(target)
    }

    deinit {
        if let onRelease, let releaseTarget {
            releaseTarget._withUnsafeGuaranteedRef { onRelease($0) }
        }
    }

    /// An observer with one optional closure per kind of event; events without a closure are ignored.
    @inlinable
    public convenience init(
        value: (@Sendable (Value) -> Void)? = nil,
        failed: (@Sendable (Error) -> Void)? = nil,
        completed: (@Sendable () -> Void)? = nil,
        interrupted: (@Sendable () -> Void)? = nil
    ) {
        let action: Action = { event in
            switch event {
            case let .value(newValue): value?(newValue)
            case let .failed(error): failed?(error)
            case .completed: completed?()
            case .interrupted: interrupted?()
            }
        }
        if let value {
            self.init(action: action, valueAction: value)
        } else {
            self.init(action)
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

/// What an input observer made with `Observer(sendingTo:)` sends into: a stream's core, or an
/// automaton's effect record. The observer holds it strongly (through its `action`), so the target
/// outlives the observer, and is told when the observer goes away.
@usableFromInline
package protocol ObserverTarget<Value, Error>: AnyObject, Sendable {
    associatedtype Value
    associatedtype Error: Swift.Error

    /// An event sent into the observer, on the sender's thread.
    func receive(_ event: Event<Value, Error>)

    /// The observer was released, on the thread that released its last reference (and still holds
    /// the target: the observer's `action` is released after this returns).
    func observerReleased()
}
