import Signals

extension SignalProducer where Error == Never {
    /// An effect that runs a child automaton: each start makes one with `make`, feeds each of its
    /// replies through `replies` to this automaton (a `nil` result is ignored), and releases it when
    /// the effect ends.
    ///
    /// The child lives exactly as long as the effect: the effect is cancelled as any other is (by a
    /// `.latest` replacement, by its key if you key it, by the parent's interruption or release), and
    /// its cancellation releases the child, which then goes through its own release (its `replies`
    /// complete, its running effects are cancelled, its `state` completes). The effect ends by itself
    /// when the child's `replies` end (a child made with an input signal that completes, once its
    /// effects have ended), and never otherwise.
    ///
    /// Order: `make` runs once per start, on the thread that starts the effect, after the parent's
    /// reply to the input that started it. A child's reply reaches every observer of the child (its
    /// `replies` and processing observers, whenever added) before `replies` maps it, so before the
    /// parent processes the input made of it; those inputs are processed in the order of the child's
    /// replies, at this effect's level of the parent's `.latest` tree, and queued behind the parent's
    /// current input when the parent is processing (an idle parent processes them at once, on the
    /// child's thread): the two never interleave their processing.
    ///
    /// This effect has no name: nothing can address the child. To send it inputs from the parent's
    /// rows, or to list the children of a parent, use ``ChildAutomaton`` or ``ChildAutomata``. It
    /// suits a child with its own source of inputs: a quiz hosts a two-factor machine that reads its
    /// codes from a keypad's signal, and hears each state it enters:
    ///
    /// ```swift
    /// .ask | .idle => .asking
    ///     | .child(
    ///         { makeKeypadVerification(code: "42", keypad: keypad) },
    ///         states: { state in state == .accepted ? .passed : .failed })
    /// ```
    @inlinable
    public static func child<ChildState: Sendable, ChildInput: Sendable>(
        _ make: @escaping @Sendable () -> Automaton<ChildState, ChildInput>,
        replies: @escaping @Sendable (Reply<ChildState, ChildInput>) -> Value?
    ) -> SignalProducer {
        SignalProducer { observer, lifetime in
            ChildRun.start(make, key: nil, observer: observer, lifetime: lifetime, replies: replies)
        }
    }

    /// An effect that runs a child automaton and feeds each state it enters (each `.success` reply's
    /// `toState`, not its initial state) through `states` to this automaton. See
    /// ``child(_:replies:)``.
    @inlinable
    public static func child<ChildState: Sendable, ChildInput: Sendable>(
        _ make: @escaping @Sendable () -> Automaton<ChildState, ChildInput>,
        states: @escaping @Sendable (ChildState) -> Value?
    ) -> SignalProducer {
        child(make, replies: ChildRun.successes(states))
    }
}

/// One run of a child effect. Its generic part is inlinable, so that a user's module specializes it
/// for its own child and parent types (unspecialized, a child's start looked up type metadata at run
/// time: about 12,000 of the 91,000 instructions a child's life cost, `Benchmarks/callgrind "children
/// start+input+release"`); its bookkeeping of named children is not generic, and stays here.
@usableFromInline
enum ChildRun {
    /// The mapping of replies that feeds only a `.success`'s `toState` to `states`.
    @inlinable
    static func successes<ChildState, ChildInput, ParentInput>(
        _ states: @escaping @Sendable (ChildState) -> ParentInput?
    ) -> @Sendable (Reply<ChildState, ChildInput>) -> ParentInput? {
        { reply in
            guard case let .success(_, _, toState) = reply else { return nil }
            return states(toState)
        }
    }

    /// Starts a child for the effect whose run is `observer` and `lifetime`: registered under `key`
    /// (and the parent's engine) when there is one, so that the parent's rows and owner can find it.
    @inlinable
    static func start<ChildState: Sendable, ChildInput: Sendable, ParentInput: Sendable>(
        _ make: @Sendable () -> Automaton<ChildState, ChildInput>,
        key: EffectKey?,
        observer: Observer<ParentInput, Never>,
        lifetime: Lifetime,
        replies toParent: @escaping @Sendable (Reply<ChildState, ChildInput>) -> ParentInput?
    ) {
        guard !lifetime.hasEnded else { return }  // cancelled before it could start: no child made
        let parent = parentEngine(of: lifetime, key: key)
        let child = make()
        let registration = prepare(child, key: key, parent: parent)
        // A reply listener, not a `replies` observer: it hears each reply after every observer of the
        // child (those added later through `child(_:in:)` too), so that the parent processes what it
        // makes of a reply only once they have all heard it; and the child's `replies` is not made
        // for it.
        let listener = child.engine.addReplyListener(
            onReply: { reply in
                if let input = toParent(reply) { observer.send(value: input) }
            },
            onEnd: { observer.sendCompleted() })
        if listener == nil { observer.sendCompleted() }  // `make` returned a child that has ended
        let held = Locked<Automaton<ChildState, ChildInput>?>(child)
        publish(registration, parent: parent)
        lifetime.observeEnded {
            unregister(registration)
            // The child's release (user code) happens here, with no lock held. Someone else may still
            // hold the child (through `child(_:in:)`): it then stops forwarding to this ended effect,
            // and lets go of its observer (and so of the parent's engine).
            let released = held.withCriticalRegion { held in
                defer { held = nil }
                return held
            }
            if let listener { released?.engine.removeProcessingObserver(listener) }
            withExtendedLifetime(released) {}
        }
    }

    /// Sends `input` to the running children of `key` in the parent of the effect whose run is
    /// `observer` and `lifetime` (`ChildAutomata.send(_:to:answer:)`), and sends what `answer` makes of
    /// each child's answer (or of `.noChild`) to the parent, then ends the effect.
    @inlinable
    static func ask<ChildState: Sendable, ChildInput: Sendable, ParentInput: Sendable>(
        _ input: ChildInput,
        key: EffectKey,
        observer: Observer<ParentInput, Never>,
        lifetime: Lifetime,
        answer: @escaping @Sendable (ChildAnswer<ChildState, ChildInput>) -> ParentInput?
    ) {
        guard !lifetime.hasEnded else { return }
        let parent = answeringParent(of: lifetime)
        let children = ChildRegistry.shared.children(of: parent, key: key).compactMap {
            $0.automaton as? Automaton<ChildState, ChildInput>
        }
        // What the children's answers reach, and how many are still to come: emptied when the effect
        // ends (its last answer, or its cancellation while a child has the input queued), so that a
        // child's queued ask keeps neither `answer` nor the observer (and through it the parent's
        // effect record and engine) once nothing can hear it. Let go of after the lock (user values).
        let run = Locked<AnsweringRun<ParentInput, ChildAnswer<ChildState, ChildInput>>?>(
            AnsweringRun(observer: observer, answer: answer, remaining: max(children.count, 1)))
        lifetime.observeEnded {
            let ended = run.withCriticalRegion { run in
                defer { run = nil }
                return run
            }
            withExtendedLifetime(ended) {}
        }
        // Sends the parent's input for `childAnswer`, unless the effect has ended; the last answer
        // ends the effect, after its value (an effect's input sent after its end is dropped).
        let deliver = { @Sendable (childAnswer: ChildAnswer<ChildState, ChildInput>) in
            guard let current = run.withCriticalRegion({ $0 }) else { return }
            if let value = current.answer(childAnswer) { current.observer.send(value: value) }
            let isLast = run.withCriticalRegion { run -> Bool in
                guard run != nil else { return false }
                run!.remaining -= 1
                return run!.remaining == 0
            }
            if isLast { current.observer.sendCompleted() }
        }
        guard !children.isEmpty else { return deliver(.noChild) }
        for child in children {
            child.ask(input) { result in deliver(ChildAnswer(result)) }
        }
    }

    /// An input the parent `parent` forwarded (`ChildAutomata.send(_:to:)`) to the child of `key`,
    /// which does not run, was dropped: the parent's watchers (an `AutomatonTester`) are told, with no
    /// lock held; in debug builds, if none watches that kind, one warning line goes to standard error.
    /// Not generic: it is off the forwarding path.
    @usableFromInline
    static func undelivered(_ input: any Sendable, to key: EffectKey, parent: AnyObject) {
        var watched = false
        for watcher in ChildRegistry.shared.watchers(of: parent) where watcher.parent === parent {
            if watcher.undelivered(key, input) { watched = true }
        }
        #if DEBUG
            if !watched {
                RuntimeWarning.emit(
                    "Automaton: the input \(input) forwarded to the child \(key) was dropped: no child \(key) runs "
                        + "(never started, ended, removed, or waiting under .queue). Forward with "
                        + "send(_:to:answer:) for the parent to learn of it.")
            }
        #endif
    }

    /// The parent's engine of an answered forward; stops the process if the effect was started where
    /// none can be found.
    @usableFromInline
    static func answeringParent(of lifetime: Lifetime) -> AnyObject {
        guard let parent = lifetime.parentEngine else {
            preconditionFailure(
                "ChildAutomata.send(_:to:answer:) (or ChildAutomaton.send(_:answer:)) was started outside an "
                    + "automaton's row, or wrapped in an operator (map, delay, ...), which hides the parent it "
                    + "answers to: return it from the row unchanged")
        }
        return parent
    }

    /// The parent's engine, for a named child (`key` not `nil`); stops the process if the effect was
    /// started where none can be found.
    @usableFromInline
    static func parentEngine(of lifetime: Lifetime, key: EffectKey?) -> AnyObject? {
        let parent = key == nil ? nil : lifetime.parentEngine
        precondition(
            key == nil || parent != nil,
            "ChildAutomata.start (or ChildAutomaton.start) was started outside an automaton's row, or wrapped in "
                + "an operator (map, delay, ...), which hides its key and its parent: return it from the row unchanged")
        return parent
    }

    /// The registration of a named child, made before the child can reply; the watchers (a tester) are
    /// told of it now, before the parent hears of the child.
    @usableFromInline
    static func prepare(_ child: AnyObject, key: EffectKey?, parent: AnyObject?) -> RegisteredChild? {
        guard let key, let parent else { return nil }
        let registration = RegisteredChild(
            key: key, parent: ObjectIdentifier(parent), order: ChildRegistry.shared.nextOrder(), automaton: child)
        for watcher in ChildRegistry.shared.watchers(of: parent) where watcher.parent === parent {
            watcher.action(registration)
        }
        return registration
    }

    /// Registers a named child, found by the parent's rows (`send(_:to:)`) from now on: only once its
    /// replies reach the parent, because a `.queue` child starts on the thread where its predecessor
    /// ended, while the parent may be processing on another, and an input forwarded before would have
    /// had its reply lost.
    @usableFromInline
    static func publish(_ registration: RegisteredChild?, parent: AnyObject?) {
        guard let registration, let parent else { return }
        ChildRegistry.shared.add(registration, to: parent)
    }

    /// Unregisters a named child whose effect has ended, and lets go of the registry's reference to it
    /// (released with no lock held).
    @usableFromInline
    static func unregister(_ registration: RegisteredChild?) {
        guard let registration else { return }
        ChildRegistry.shared.remove(registration)
        withExtendedLifetime(registration.take()) {}
    }
}

/// An answered forward's run (`ChildRun.ask`): where its answers go, and how many are still to come.
@usableFromInline
struct AnsweringRun<ParentInput: Sendable, Answer>: Sendable {
    @usableFromInline let observer: Observer<ParentInput, Never>
    @usableFromInline let answer: @Sendable (Answer) -> ParentInput?
    @usableFromInline var remaining: Int

    @inlinable
    init(observer: Observer<ParentInput, Never>, answer: @escaping @Sendable (Answer) -> ParentInput?, remaining: Int) {
        self.observer = observer
        self.answer = answer
        self.remaining = remaining
    }
}
