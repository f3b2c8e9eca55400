import Signals

/// Runs an automaton: the FIFO input queue, drained by one thread at a time, and the effects.
///
/// The engine is the only writer of the state property and the replies signal, and only the thread
/// currently processing inputs writes to them, so they emit in processing order. The user's mapping,
/// the effects and every observer run with no lock held.
final class AutomatonEngine<State: Sendable, Input: Sendable>: Sendable {
    /// The mapping with "no effect" spelled as `nil`, so that effect-free transitions start nothing.
    typealias Transition = @Sendable (State, Input) -> (State, SignalProducer<Input, Never>?)?

    private let mapping: Transition
    private let machine: Locked<EngineStateMachine<State, Input>>
    let stateStorage: PropertyStorage<State>
    let replies: Signal<Reply<State, Input>, Never>
    private let repliesInput: Observer<Reply<State, Input>, Never>

    init(state: State, mapping: @escaping Transition, strategy: FlattenStrategy) {
        precondition(
            strategy == .merge || strategy == .latest,
            "Automaton supports the .merge and .latest strategies, not \(strategy). Use .latest to replace running effects, or .merge to keep them all."
        )
        self.mapping = mapping
        machine = Locked(EngineStateMachine(state: state, isLatest: strategy == .latest))
        stateStorage = PropertyStorage(state)
        (replies, repliesInput) = Signal<Reply<State, Input>, Never>.pipe()
    }

    // MARK: Inputs

    /// Processes `input` now if no other input is being processed, or queues it behind the current one.
    func send(_ input: Input, from origin: EffectID?) {
        let action = machine.withCriticalRegion { $0.send(input, from: origin) }
        guard case let .process(pending, from) = action else { return }
        process(pending, from: from)
        drain()
    }

    /// Processes queued inputs until the queue is empty. Only the processing thread calls it.
    private func drain() {
        while true {
            switch machine.withCriticalRegion({ $0.next() }) {
            case let .process(pending, from):
                process(pending, from: from)
            case let .idle(completeReplies):
                if completeReplies { repliesInput.sendCompleted() }
                return
            }
        }
    }

    /// Steps 1-3 of the automaton contract for one input.
    private func process(_ pending: PendingInput<Input>, from: State) {
        let result = mapping(from, pending.input)
        let effect = result?.1
        var prepared: (lifetime: Lifetime, token: Lifetime.Token)?
        if effect != nil {
            prepared = Lifetime.make()
        }
        let action = machine.withCriticalRegion {
            $0.commit(pending, toState: result?.0, effectToken: prepared?.token)
        }
        switch action {
        case .aborted:
            prepared?.token.dispose()
        case .failure:
            repliesInput.send(value: .failure(pending.input, from))
        case let .success(toState, cancelled, effectID):
            for token in cancelled {
                token.dispose()
            }
            stateStorage.set(toState)
            repliesInput.send(value: .success(pending.input, from, toState))
            if let effect, let effectID, let prepared {
                start(effect, as: effectID, lifetime: prepared.lifetime)
            }
        }
    }

    // MARK: Effects

    private func start(_ effect: SignalProducer<Input, Never>, as id: EffectID, lifetime: Lifetime) {
        // The lifetime has already ended if the effect was cancelled before it could start.
        guard !lifetime.hasEnded else { return }
        effect.run(Observer { [self] event in
            switch event {
            case let .value(input):
                send(input, from: id)
            case .completed, .interrupted:
                effectEnded(id)
            }
        }, lifetime: lifetime)
    }

    private func effectEnded(_ id: EffectID) {
        let (token, completeReplies) = machine.withCriticalRegion { $0.effectEnded(id) }
        token?.dispose()
        if completeReplies { repliesInput.sendCompleted() }
    }

    // MARK: Termination

    /// The input signal completed: outside inputs stop; replies complete once every effect has ended.
    func inputCompleted() {
        if machine.withCriticalRegion({ $0.inputCompleted() }) {
            repliesInput.sendCompleted()
        }
    }

    /// The input signal was interrupted: effects are disposed, then replies are interrupted.
    func inputInterrupted() {
        guard let tokens = machine.withCriticalRegion({ $0.terminate() }) else { return }
        for token in tokens { token.dispose() }
        repliesInput.sendInterrupted()
    }

    /// The automaton was released: replies complete, then effects are disposed, then state completes.
    func release() {
        let tokens = machine.withCriticalRegion { $0.terminate() }
        repliesInput.sendCompleted()
        for token in tokens ?? [] { token.dispose() }
        stateStorage.complete()
    }
}
