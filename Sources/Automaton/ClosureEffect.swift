import Signals

extension SignalProducer where Error == Never {
    /// The producer of a `{ send in ... }` closure effect: each run calls `body` with a `send` function
    /// that sends into the run, and the run completes when the last copy of `send` is released.
    ///
    /// So a closure effect lives exactly as long as its `send`, whoever starts it (the automaton, or an
    /// operator applied to it): one that keeps no `send` has ended when `body` returns; one that hands
    /// `send` to a callback or a `Task` ends when that lets go. A producer's run otherwise lives until
    /// it terminates or is disposed, whatever its start handler keeps.
    @inlinable
    package static func closureEffect(
        _ body: @escaping @Sendable (_ send: @escaping @Sendable (Value) -> Void) -> Void
    ) -> SignalProducer {
        SignalProducer { observer, _ in
            let input = ClosureEffectInput(observer)
            body { [input] value in input.send(value) }
        }
    }
}

/// What a closure effect's `send` captures: it sends into the run, and completes the run when the last
/// copy of `send` lets go of it.
@usableFromInline
final class ClosureEffectInput<Value: Sendable>: Sendable {
    @usableFromInline let observer: Observer<Value, Never>

    @inlinable
    init(_ observer: Observer<Value, Never>) {
        self.observer = observer
    }

    deinit {
        observer.sendCompleted()
    }

    @inlinable
    func send(_ value: Value) {
        observer.send(value: value)
    }
}
