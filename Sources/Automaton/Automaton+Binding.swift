extension Automaton: BindingTargetProvider {
    /// The automaton as a binding target: `automaton <~ source` sends each value of `source` as an
    /// outside input, exactly as `send(_:)` does (queued FIFO with every other input, processed one at a
    /// time).
    ///
    /// Bindings end when the automaton is released (its `lifetime` ends), when the source terminates,
    /// or when the binding's disposable is disposed. The source's terminal event is not passed on: it
    /// does not complete or interrupt the automaton. The target holds the automaton's engine, not the
    /// automaton, so a binding never keeps the automaton alive.
    public var bindingTarget: BindingTarget<Input> {
        BindingTarget(lifetime: lifetime) { [engine] input in engine.send(input, from: nil) }
    }
}
