// The model lives in the Automaton module rather than in a target of its own: `Observation` ships with
// the toolchain on every platform (Linux included; on Apple platforms it is part of the OS from macOS 14
// and iOS 17), so importing it adds no dependency, and `automaton.observable()` is then found where the
// automaton is. The module keeps its platforms (macOS 13, iOS 16...): only this file's declarations are
// gated by availability, and their references to Observation are weakly linked, as references to any
// API newer than the deployment target are. (Not verified on an Apple platform here; TCA's observable
// `Store` relies on the same, importing Observation from a library that supports iOS 13.)
import Observation
import Signals

/// An automaton made observable for SwiftUI: its state, its last reply and its running effect count as
/// `@Observable` properties of the main actor, which a view reads and is redrawn when they change.
///
/// ```swift
/// struct LoginScreen: View {
///     let model: ObservableAutomaton<State, Input>
///     var body: some View {
///         Button("Log in") { model.send(.login) }.disabled(model.state != .loggedOut)
///     }
/// }
/// ```
///
/// - Thread: the model belongs to the main actor. It hears the automaton's replies and effect events on
///   whatever thread processes them and applies them on the main actor, asynchronously, through the
///   ordered main-actor delivery of `observeOnMainActor(_:)`: **in reply order**, every one of them.
/// - Never torn: each reply is applied in one main-actor step that sets ``state`` (for a `.success`)
///   and ``lastReply`` together, so code on the main actor (a view's `body`) never sees a state
///   without the reply that made it. A `.failure` changes ``lastReply`` only, so a view that reads
///   only ``state`` is not redrawn by it. Replies that arrive together are applied in one main-actor
///   job, one after the other, and a view redraws once for them, with the last.
/// - The first state: ``state`` starts as the automaton's `state.value`, read just after the model
///   has subscribed to the replies, so no transition is missed: one made before the subscription is
///   in that read, and every one made after it has its reply applied. If another thread is
///   processing inputs while the model is made, the first replies applied may be of transitions that
///   the read already showed, so the model may show a state, then the one before it, again, in order.
///   A model made before other threads send inputs (right after the automaton, as a view's owner
///   does) has no such window.
/// - Ownership: the model keeps its ``automaton`` alive (strongly); the automaton keeps nothing of the
///   model (its observers hold the model weakly). Releasing the model disposes its observations of the
///   automaton at once, on whatever thread releases it, and releases its reference to the automaton:
///   an automaton nobody else keeps is then released and terminates (its running effects are
///   disposed), as the automaton's own contract says.
/// - Termination: while the model keeps its automaton, the automaton's replies end only when its input
///   signal ends (completed and every effect ended, or interrupted). The model then sets
///   ``isTerminated``; later `send`s are ignored, as the automaton ignores them.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
@MainActor
@Observable
public final class ObservableAutomaton<State: Sendable, Input: Sendable> {
    /// The automaton's state, as of the last reply applied on the main actor (or, before any, as read
    /// when the model was made). Changes on the main actor only, for each `.success` reply, in reply
    /// order, together with ``lastReply``: even when the new state equals the old one, as the
    /// automaton's `state` emits for every successful transition.
    public private(set) var state: State

    /// The last reply applied on the main actor: `nil` until the first. Changes on the main actor only,
    /// for every reply, in reply order, together with ``state``.
    public private(set) var lastReply: Reply<State, Input>?

    /// How many effects are running, as of the last effect event applied on the main actor: a snapshot of the
    /// automaton's `runningEffectCount`, refreshed on the main actor after each effect event (started,
    /// ended, cancelled) and when the replies end. Changes only when the count does. Effect events are
    /// delivered in their own order, not interleaved with the replies: a view may see a reply before
    /// or after the count that its effect changed.
    public private(set) var runningEffectCount: Int

    /// Whether the automaton's replies have ended (completed or interrupted): no state or reply will
    /// change any more, and ``send(_:)`` does nothing. Set on the main actor after the last reply was
    /// applied.
    public private(set) var isTerminated = false

    /// The automaton this model shows, kept alive by the model. Use it for what a screen does not
    /// observe (`effectEvents`, `sender`, `graph`); its `state` and `replies` are up to date before the
    /// model's, which follow them on the main actor.
    public let automaton: Automaton<State, Input>

    /// The model's observations of the automaton, disposed when the model is released.
    private let observations = CompositeDisposable()

    /// For tests: called on the main actor just after each reply was applied, so that a test can
    /// record every pair of ``state`` and ``lastReply`` the model publishes.
    @ObservationIgnored package var didApplyReply: (@MainActor (Reply<State, Input>) -> Void)?

    /// A model of `automaton`, whose state it reads now and whose replies and effect events it applies
    /// from now on, on the main actor. The model keeps `automaton` alive; see the type's documentation
    /// for ownership and for the first state.
    ///
    /// - Parameter automaton: the automaton to show and send to, kept alive by the model.
    public init(_ automaton: Automaton<State, Input>) {
        self.automaton = automaton
        state = automaton.state.value
        runningEffectCount = automaton.runningEffectCount
        // Weak: the automaton's signals keep their observers, and must not keep the model. The
        // deliveries hold the model only while they apply an event.
        observations += automaton.replies.observeOnMainActor { [weak self] event in
            self?.apply(event)
        }
        observations += automaton.effectEvents.observeOnMainActor { [weak self] event in
            if case .value = event { self?.refreshRunningEffectCount() }
        }
        // Read again now that the replies are observed, so that no transition is missed: one made
        // before the subscription is in this read, one made after it has a reply to come (see "The
        // first state" above). A lock cannot make the read and the subscription one step: an
        // uncontended reply is delivered without the replies' lock.
        state = automaton.state.value
        runningEffectCount = automaton.runningEffectCount
    }

    deinit {
        // Nonisolated: it may run on any thread. Disposing is thread safe, and drops the replies still
        // queued for the main actor.
        observations.dispose()
    }

    /// Sends `input` to the automaton: exactly `automaton.send(input)`. The input is processed at once
    /// on the main thread, or queued if another thread is processing; its reply reaches ``state`` and
    /// ``lastReply`` later, on the main actor, never within this call. Ignored once the automaton's
    /// input has ended.
    public func send(_ input: Input) {
        automaton.send(input)
    }

    /// Sends `input` to the automaton and returns the reply to **this** input (see
    /// `Automaton.ask(_:)` for its order, its errors and cancellation): for a screen that shows
    /// "saving…" until its own input is answered.
    ///
    /// When it returns, the model has applied that reply (``state`` and ``lastReply`` show it, or a
    /// later one): the reply's main-actor delivery is queued before the reply is handed over, and the
    /// asking task then yields the main actor once, so that it resumes behind that delivery (the main
    /// actor runs its jobs in order).
    ///
    /// ```swift
    /// Button("Pay") {
    ///     Task {
    ///         isSaving = true
    ///         let reply = try? await model.ask(.pay)
    ///         isSaving = false
    ///         if reply?.isSuccess == false { showRefusal = true }
    ///     }
    /// }
    /// ```
    public func ask(_ input: Input) async throws(AskError) -> Reply<State, Input> {
        let reply = try await automaton.ask(input)
        // An input answered at once (on this thread, with no suspension) left its delivery queued.
        await Task.yield()
        return reply
    }

    /// Applies one event of `replies`: one reply's state and reply in one step, or the end.
    private func apply(_ event: Event<Reply<State, Input>, Never>) {
        switch event {
        case let .value(reply):
            if case let .success(_, _, toState) = reply { state = toState }
            lastReply = reply
            didApplyReply?(reply)
        case .completed, .interrupted:
            isTerminated = true
            refreshRunningEffectCount()
        }
    }

    private func refreshRunningEffectCount() {
        let count = automaton.runningEffectCount
        if count != runningEffectCount { runningEffectCount = count }
    }
}

extension Automaton {
    /// A model of this automaton for SwiftUI, on the main actor: see ``ObservableAutomaton``. It keeps
    /// the automaton alive; keep the model where the screen's owner keeps state (a parent view's or an
    /// `App`'s `@State`), made once, before inputs arrive from other threads (see "The first state").
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, visionOS 1, *)
    @MainActor
    public func observable() -> ObservableAutomaton<State, Input> {
        ObservableAutomaton(self)
    }
}
