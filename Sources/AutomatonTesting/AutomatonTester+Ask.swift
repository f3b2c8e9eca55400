import Automaton
import Signals

extension AutomatonTester {
    /// Asks `input` (see `Automaton.ask(_:onReply:)`) and returns a recorder of the answer: the reply
    /// to this input, as a value followed by `.completed`, or the `AskError` that says why it was not
    /// processed, as `.failed`. The reply is also recorded among the tester's steps, as any reply is.
    ///
    /// An idle automaton processes the input on this thread, so the answer is recorded before `ask`
    /// returns; one that an effect keeps busy on another thread answers when it reaches the input.
    ///
    /// With the order machine of the article "Request and reply on a server" (`makeShopOrder(pay:)`):
    ///
    /// ```swift
    /// let tester = AutomatonTester(makeShopOrder(pay: .never))
    /// tester.send(.add)
    /// let checkout = tester.ask(.checkout)
    /// checkout.expect([.value(.success(.checkout, .cart(items: 1), .paying)), .completed])
    /// tester.expect([
    ///     .success(.add, .cart(items: 0), .cart(items: 1)),
    ///     .success(.checkout, .cart(items: 1), .paying),
    ///     .started(by: .checkout),
    /// ])
    /// ```
    public func ask(_ input: Input) -> TestRecorder<Reply<State, Input>, AskError> {
        let recorder = TestRecorder<Reply<State, Input>, AskError>(scheduler: scheduler)
        automaton.ask(input, onReply: recorder.resultHandler)
        return recorder
    }
}

extension TestRecorder {
    /// A handler that records a `Result` as the stream it stands for: `.success(value)` as
    /// `.value(value)` then `.completed`, `.failure(error)` as `.failed(error)`. Pass it where a
    /// callback takes a `Result` (`automaton.ask(input, onReply: recorder.resultHandler)`) and assert
    /// the answer with `expect(_:)`, as any recorded stream. Thread safe, like `observer`.
    public var resultHandler: @Sendable (Result<Value, Error>) -> Void {
        let observer = self.observer
        return { result in
            switch result {
            case let .success(value):
                observer.send(value: value)
                observer.sendCompleted()
            case let .failure(error):
                observer.send(error: error)
            }
        }
    }
}
