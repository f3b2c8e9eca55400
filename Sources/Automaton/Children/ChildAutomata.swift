import Signals

/// A kind of child automaton that a parent runs many of, each under an id: one download machine per
/// URL in a download manager.
///
/// It is a description (a name and how to make a child), not a container: the children live in the
/// parent's effects, so one `ChildAutomata` can serve a table shared by many parents, and each parent
/// has its own children. A parent's rows start, address and remove them:
///
/// ```swift
/// let transfers = ChildAutomata<String, Transfer, TransferInput>("transfers") { _ in makeTransfer() }
/// let downloads = Automaton<Int, DownloadsInput>(
///     state: 0,
///     table: [
///         \.added | { count, _ in count } | { _, id in
///             transfers.start(id, states: { state in state == .done ? .finished(id) : nil })
///         },
///         \.paused | { count, _ in count } | { _, id in transfers.send(.pause, to: id) },
///         \.removed | { count, _ in count } | { _, id in transfers.remove(id) },
///         \.finishedID | { count, _ in count + 1 } | { _, id in transfers.remove(id) },
///     ])
/// ```
///
/// Each case with an id is matched through a computed property of the input
/// (`var added: String? { if case let .add(id) = self { id } else { nil } }`), and its rows take the
/// state and the id: `\.added | { state, id in nextState } | { state, id in effect }`.
///
/// - A child is an effect keyed by ``key(_:)`` (`transfers[a.zip]`): the parent's effect events and an
///   `AutomatonTester` say which child started, ended or was cancelled, and its policy decides what a
///   second start with a running id does (`.latest`, the default, replaces the running child).
/// - It lives while its effect lives: ``remove(_:)`` (or `.cancel(key)`), a `.latest` start of its id,
///   the parent's interruption or release cancel the effect and release the child, which goes through
///   its own release. It ends by itself only if its `replies` end.
/// - Parent and child each process one input at a time, never interleaved; see
///   `SignalProducer.child(_:replies:)` for the order of their replies.
///
/// Give each kind a name unique within its parent: children are found by name and id.
public struct ChildAutomata<ID: Hashable & Sendable, State: Sendable, Input: Sendable>: Sendable {
    /// The kind's name: the first part of each child's key.
    public let name: String
    /// Makes the child of an id, on the thread that starts its effect.
    @usableFromInline let make: @Sendable (ID) -> Automaton<State, Input>

    /// A kind named `name` whose child of `id` is `make(id)`.
    @inlinable
    public init(_ name: String, make: @escaping @Sendable (ID) -> Automaton<State, Input>) {
        self.name = name
        self.make = make
    }

    /// The effect key of the child `id`: what its effect events carry, and what `.cancel` takes.
    @inlinable
    public func key(_ id: ID) -> ChildKey<ID> {
        ChildKey(name, id)
    }

    /// An effect that starts the child `id` and feeds each of its replies through `replies` to the
    /// parent (`nil` ignores a reply). Keyed by ``key(_:)`` under `policy`.
    ///
    /// Return it from a row, unchanged: an operator applied to it (`map`, `delay`) hides its key and its
    /// parent, and then it stops the process with a precondition failure when it starts.
    @inlinable
    public func start<ParentInput: Sendable>(
        _ id: ID,
        _ policy: EffectPolicy = .latest,
        replies: @escaping @Sendable (Reply<State, Input>) -> ParentInput?
    ) -> SignalProducer<ParentInput, Never> {
        let key = EffectKey(key(id))
        let make = make
        return SignalProducer<ParentInput, Never> { observer, lifetime in
            ChildRun.start({ make(id) }, key: key, observer: observer, lifetime: lifetime, replies: replies)
        }
        .keyed(key, policy)
    }

    /// An effect that starts the child `id` and feeds each state it enters (not its initial state)
    /// through `states` to the parent. See ``start(_:_:replies:)``.
    @inlinable
    public func start<ParentInput: Sendable>(
        _ id: ID,
        _ policy: EffectPolicy = .latest,
        states: @escaping @Sendable (State) -> ParentInput?
    ) -> SignalProducer<ParentInput, Never> {
        start(id, policy, replies: ChildRun.successes(states))
    }

    /// An effect that starts the child `id` and tells the parent nothing of it.
    @inlinable
    public func start<ParentInput: Sendable>(_ id: ID, _ policy: EffectPolicy = .latest) -> SignalProducer<
        ParentInput, Never
    > {
        start(id, policy, replies: { _ in nil })
    }

    /// A row's effect that sends `input` to the running child `id` of this parent (to each, if several
    /// run under `.merge`), after the parent's reply, on the processing thread. It starts no effect of
    /// the parent (no effect events; it cancels nothing by key).
    ///
    /// If no child `id` runs (it has not started, has ended, waits under `.queue`), the input is
    /// dropped, and not in silence: an `AutomatonTester` recording this kind (`recordReplies(of:)`)
    /// records it as an `.undelivered` step, and in debug builds, with no such tester, one warning line
    /// naming the child and the input goes to standard error. To have the parent learn of it, forward
    /// with ``send(_:to:answer:)``. The child processes it at once if it is idle, on this thread;
    /// otherwise it is queued behind the child's current input. What the child replies reaches the
    /// parent as an input queued behind the one being processed.
    ///
    /// Return it from a row, unchanged: it needs the parent, which an operator applied to it (`map`,
    /// `delay`) hides, and then it stops the process with a precondition failure when it runs.
    // Inlinable, so that the cast and the child's send run specialized for the caller's types (generic,
    // they looked up metadata at each forwarded input; see BENCHMARKS.md, "children specialized").
    @inlinable
    public func send<ParentInput: Sendable>(_ input: Input, to id: ID) -> SignalProducer<ParentInput, Never> {
        let key = EffectKey(key(id))
        return SignalProducer<ParentInput, Never>.forwarding(to: key) { engine in
            var delivered = false
            for child in ChildRegistry.shared.children(of: engine, key: key) {
                guard let automaton = child.automaton as? Automaton<State, Input> else { continue }
                automaton.send(input)
                delivered = true
            }
            if !delivered { ChildRun.undelivered(input, to: key, parent: engine) }
        }
    }

    /// A row's effect that sends `input` to the running child `id` of this parent and feeds what
    /// became of it through `answer` to the parent (`nil` ignores it): the child's reply to **this**
    /// input (`.reply`, a `.success` or a refusal, `.failure`), `.noChild` if no child `id` runs (it
    /// never started, has ended, was removed or replaced, or waits under `.queue`; the input is not
    /// sent), or `.notProcessed` if the child ended before processing it. Nothing is dropped in silence.
    ///
    /// ```swift
    /// \.paused | { count, _ in count } | { _, id in
    ///     transfers.send(.pause, to: id) { answer in answer.isSuccess ? nil : .pauseRefused(id) }
    /// }
    /// ```
    ///
    /// Unlike ``send(_:to:)``, it is an effect of the parent, un-keyed (its events say when it starts
    /// and ends; the state graph labels its edge `effect, send [name[id]]`): it starts after the
    /// parent's reply, asks the child (as `Automaton.ask(_:onReply:)` does), and ends once the answer
    /// has been sent, so the answer's input is processed at this effect's level of the `.latest` tree,
    /// and a `.latest` replacement, the parent's interruption or its release cancel the wait (the child
    /// still processes the input; its answer is dropped, and `answer` is not called).
    ///
    /// - Order: the child processes the input at once if it is idle (on the parent's processing thread,
    ///   while the effect starts), otherwise in its turn behind its current input. Its reply reaches
    ///   the child's observers, then the input the child's own `start(replies:)` made of it, then
    ///   `answer`, on the child's processing thread; the answer's input is queued behind the inputs
    ///   queued before it (so after the reply's input made by `start`), and processed by the parent in
    ///   its turn. `.noChild` is answered at once, while the effect starts, and processed right after
    ///   it, before anything queued later.
    /// - Several children of `id` (`.merge`): the input goes to each, in start order, and `answer` is
    ///   called once per child, as each answers (in the children's order if they are idle); the effect
    ///   ends after the last.
    /// - Threads: `answer` runs on the thread that answers (the child's processing thread, or the thread
    ///   terminating it), with no lock held; it holds up the child while it runs, as a `replies`
    ///   observer does.
    ///
    /// Return it from a row unchanged (or keyed: `.keyed(key, policy)`): an operator such as `map` or
    /// `delay` hides the parent, and the effect stops the process with a precondition failure when it
    /// starts.
    @inlinable
    public func send<ParentInput: Sendable>(
        _ input: Input, to id: ID, answer: @escaping @Sendable (ChildAnswer<State, Input>) -> ParentInput?
    ) -> SignalProducer<ParentInput, Never> {
        let key = EffectKey(key(id))
        return SignalProducer<ParentInput, Never> { observer, lifetime in
            ChildRun.ask(input, key: key, observer: observer, lifetime: lifetime, answer: answer)
        }
        .attaching(EffectDirectiveBox(.answering(forwardsTo: key)))
    }

    /// An effect that cancels the children `ids` (running, or waiting under `.queue`), which releases
    /// them, before the parent's new state and reply, as `.cancel` does.
    public func remove<ParentInput: Sendable>(_ ids: ID...) -> SignalProducer<ParentInput, Never> {
        // Not `.cancel(keys...)`: an array passed to it would be one key.
        SignalProducer<ParentInput, Never>.empty.attaching(
            EffectDirectiveBox(.cancel(ids.map { EffectKey(key($0)) })))
    }

    /// The ids of `parent`'s running children of this kind, in the order they started (an id once per
    /// running child: twice if two run under `.merge`; not a child waiting under `.queue`). A
    /// snapshot: children may start or end while it is read.
    public func ids<ParentState, ParentInput>(in parent: Automaton<ParentState, ParentInput>) -> [ID] {
        ChildRegistry.shared.allChildren(of: parent.engine).compactMap { child in
            guard let key = child.key.value.base as? ChildKey<ID>, key.name == name else { return nil }
            return key.id
        }
    }

    /// The running child `id` of `parent`, if any (the first started, if several run under `.merge`).
    ///
    /// For reading and observing it. What holds the returned automaton keeps it alive after its effect
    /// has ended (released by the parent, it no longer runs its effects); hold it no longer than needed,
    /// and send to it through the parent's rows (``send(_:to:)``), not directly, so that the parent's
    /// tests see each input. What it hands out holds only its internal parts, not the child: its
    /// `replies`, `effectEvents` (also ``replies(of:in:)``, ``effectEvents(of:in:)``) and `state`
    /// can be kept while the child is released.
    public func child<ParentState, ParentInput>(_ id: ID, in parent: Automaton<ParentState, ParentInput>)
        -> Automaton<State, Input>?
    {
        let key = EffectKey(key(id))
        return ChildRegistry.shared.children(of: parent.engine, key: key).lazy
            .compactMap { $0.automaton as? Automaton<State, Input> }.first
    }

    /// The effect events of `parent`'s running child `id` (the first started, if several run under
    /// `.merge`), or `nil` if none runs: the child's own `effectEvents`, reached without keeping the
    /// child alive.
    ///
    /// The signal holds neither the child nor `parent`: the child is released when its effect ends
    /// (removed, replaced, its parent released) whoever holds the signal, which then sends the
    /// cancellation of the child's running effects (`.cancelled(.released)`) and completes. Its
    /// threads and order are those of `Automaton.effectEvents`: an observer hears the events decided
    /// after it was added.
    public func effectEvents<ParentState, ParentInput>(
        of id: ID, in parent: Automaton<ParentState, ParentInput>
    ) -> Signal<EffectEvent<Input>, Never>? {
        child(id, in: parent)?.effectEvents
    }

    /// The replies of `parent`'s running child `id` (the first started, if several run under
    /// `.merge`), or `nil` if none runs: the child's own `replies`, reached without keeping the child
    /// alive. Each reply reaches its observers before the parent processes the input the child's
    /// `start(replies:)` made of it; the signal completes when the child is released (removed,
    /// replaced, its parent released), whoever holds it. See ``effectEvents(of:in:)``.
    public func replies<ParentState, ParentInput>(
        of id: ID, in parent: Automaton<ParentState, ParentInput>
    ) -> Signal<Reply<State, Input>, Never>? {
        child(id, in: parent)?.replies
    }

    /// The current state of `parent`'s running child `id`, if any.
    public func state<ParentState, ParentInput>(of id: ID, in parent: Automaton<ParentState, ParentInput>)
        -> State?
    {
        child(id, in: parent)?.state.value
    }
}

extension SignalProducer where Error == Never {
    /// A row's effect that starts nothing: `action` runs after the parent's reply, on the processing
    /// thread, with the parent's engine (`EffectDirective.afterReply`).
    ///
    /// The engine never starts it: it reads the directive and calls `action`. Started, it was hidden from
    /// the engine (an operator applied to it, or a start outside a row), and stops the process.
    @usableFromInline
    static func forwarding(to key: EffectKey, _ action: @escaping @Sendable (AnyObject) -> Void) -> SignalProducer {
        SignalProducer { _, _ in
            preconditionFailure(
                "ChildAutomata.send(_:to:) (or ChildAutomaton.send(_:)) was started as an ordinary effect: an "
                    + "operator applied to it (map, delay, ...) or a start outside an automaton's row hides the "
                    + "parent it forwards to; return it from the row unchanged")
        }
        .attaching(EffectDirectiveBox(.afterReply(action, forwardsTo: key)))
    }
}
