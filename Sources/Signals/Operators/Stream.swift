/// The values of a signal, or of a producer run, buffered **from the moment the sequence was made**:
/// `let replies = automaton.replies.stream()`, then `for await reply in replies { … }` in a `Task`.
///
/// Unlike `values`, which observes when an iterator is made (when the `for await` loop begins, which a
/// new `Task` may do well after the code that created it has gone on sending), `stream()` observes
/// the signal, or starts the producer run, when it is called, on the calling thread. So every value
/// sent after `stream()` returns is buffered, whenever the loop begins.
///
/// - Values are buffered without bound until the iterator takes them; `next()` returns them in order,
///   then `nil` once the stream completed or was interrupted, or throws its error once.
/// - **Iterate it once.** Every iterator made from one stream shares its one buffer, and calling
///   `next()` on two of them at once traps.
/// - Cancelling the iterating task disposes the observation or run and ends the iteration; so does
///   releasing both the stream and its iterator (a stream never iterated stops buffering once it is
///   released).
/// - `next(isolation:)` lets an actor iterate it without leaving its isolation: `for await reply in
///   stream` inside an actor method uses it.
public struct SignalStream<Value: Sendable, Error: Swift.Error>: AsyncSequence, Sendable {
    /// The type of the values.
    public typealias Element = Value
    /// The error `next()` throws when the stream fails.
    public typealias Failure = Error
    /// The iterator: the same as `SignalValues`'.
    public typealias AsyncIterator = SignalValues<Value, Error>.Iterator

    private let buffer: ValuesBuffer<Value, Error>

    init(attach: (Observer<Value, Error>) -> Disposable) {
        buffer = ValuesBuffer()
        buffer.attach(attach)
    }

    /// The iterator over the values buffered since the stream was made, and those to come.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(buffer)
    }
}

extension Signal {
    /// The values this signal sends **from now on**, as an `AsyncSequence` that buffers them until it
    /// is iterated: it observes the signal before returning. Use it, rather than `values`, to hand the
    /// values to a `Task`; see `SignalStream`.
    public func stream() -> SignalStream<Value, Error> {
        SignalStream { observer in observe(observer) }
    }
}

extension SignalProducer {
    /// Starts a run of this producer **now** and returns its values as an `AsyncSequence` that buffers
    /// them until it is iterated. See `SignalStream`. Cancelling the iterating task, or releasing the
    /// stream and its iterator, disposes the run.
    public func stream() -> SignalStream<Value, Error> {
        SignalStream { observer in start(observer) }
    }
}
