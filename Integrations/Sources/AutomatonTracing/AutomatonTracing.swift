import Automaton
import Tracing

extension Automaton {
    /// Traces this automaton with `tracer`: a span per processed input, and a child span per effect that
    /// lasts as long as the effect, until the automaton terminates or the returned disposable is disposed.
    ///
    /// Spans (names and attribute keys are listed in `AutomatonTraceOptions`):
    /// - Input span (`options.inputSpanName`, kind `.internal`): one per processed input, started when
    ///   its processing began and ended when its reply has been delivered (`InputProcessing.duration`).
    ///   A child of `context`'s span, if it has one, otherwise the root of a new trace. Attributes
    ///   `automaton.input`, `automaton.from`, `automaton.to` (success only), `automaton.outcome`
    ///   (`success` or `failure`), `automaton.effect.id` (the effect the transition made) and
    ///   `automaton.sender.effect.id` (the effect that sent the input). A failure is a rejected input,
    ///   not an error: the span's status is left unset unless `options.marksFailuresAsErrors` is set.
    /// - Effect span (`options.effectSpanName`, kind `.internal`): one per effect a transition makes
    ///   (started, waiting for its key, or dropped), a child of the input span that made it, started
    ///   when the input span ends and ended when the effect ends or is cancelled. Attributes
    ///   `automaton.effect.id`, `automaton.effect.key` (keyed effects) and `automaton.effect.outcome`:
    ///   `ended`, or the cancellation's cause (`replaced`, `cancelled`, `dropped`, `exited`, `interrupted`,
    ///   `released`), or `detached` (see Disposal). Events: `started` when the effect starts running
    ///   (none if it never ran: dropped, or cancelled while it waited for its key), and `cancelled`
    ///   with attributes `automaton.effect.cancellation` (the cause) and `automaton.input` (the input
    ///   that caused it, if any).
    /// - Link: the span of an input an effect sent is linked to that effect's span (`SpanLink` with
    ///   attribute `automaton.effect.id`), if the effect is running or is one of the last
    ///   `options.linkableEndedEffects` effects that ended. An effect's inputs can be processed after
    ///   it ended (they were queued before its end); the recent ended effects are kept for them,
    ///   a bounded number, so that tracing never grows with the automaton's history. The
    ///   `automaton.sender.effect.id` attribute is there even when the link is not.
    ///
    /// - Threads and order: input spans are started and ended on the thread processing the input,
    ///   one at a time, in processing order, after the input's reply was delivered to the `replies`
    ///   observers (see `observeProcessing(_:)`); the processing waits for them. An effect span gets
    ///   its events and its end in the order the automaton decided them (see `effectEvents`), never
    ///   before the span exists and never after its end: on the thread delivering the effect's events,
    ///   or, for events delivered before the input's record (a `.queue` effect can start and end on
    ///   another thread as soon as its input committed), on the processing thread, once it has opened
    ///   the span. The tracer is never called with a lock held.
    /// - Termination: when the automaton terminates (released, or its input interrupted) every
    ///   effect is cancelled first, so every effect span is ended with its cause (`released` or
    ///   `interrupted`); then tracing lets go of the tracer, the context and everything it kept, even
    ///   while the returned disposable is held. The same when the input completes and no effect is
    ///   left running (`effectEvents` ends).
    /// - Disposal: once `dispose()` has returned, no span is started for an input processed
    ///   afterwards (one being traced on another thread at that moment may still finish), and every
    ///   effect span still open is ended at once with outcome `detached`: its effect runs on,
    ///   untraced. Disposing after the termination does nothing.
    ///
    /// Attach tracing before sending inputs: an effect made before the call has no span, and the
    /// inputs it sends have no link.
    ///
    /// - Parameters:
    ///   - tracer: the tracer that starts the spans.
    ///   - options: the spans' names, the rendering of inputs and states, extra attributes, the
    ///     status of failures and the number of ended effects kept for links.
    ///   - context: the parent of every input span, read once, now: by default the task's current
    ///     context, if any. Pass `.topLevel` to make every input span the root of its own trace.
    /// - Returns: a disposable that stops tracing (see Disposal). It keeps the tracing alive, not the
    ///   automaton, and only until tracing stops: then it holds nothing (not the tracer, not the
    ///   context). Tracing runs until the termination even if it is discarded.
    @inlinable @discardableResult
    public func trace(
        with tracer: some Tracer,
        options: AutomatonTraceOptions<State, Input> = .init(),
        context: ServiceContext = .current ?? .topLevel
    ) -> Disposable {
        makeTraceRecorder(tracer: tracer, options: options, context: context).disposable
    }

    /// Traces this automaton with the tracer bootstrapped in `InstrumentationSystem` (a no-op tracer if
    /// there is none). See `trace(with:options:context:)`.
    @inlinable @discardableResult
    public func trace(
        options: AutomatonTraceOptions<State, Input> = .init(),
        context: ServiceContext = .current ?? .topLevel
    ) -> Disposable {
        trace(with: InstrumentationSystem.tracer, options: options, context: context)
    }

    /// Attaches a recorder; the tests read its table through it.
    ///
    /// Inlinable, so that the observers below are specialized for `State` and `Input` in the client:
    /// they turn each record and effect event into what the non-generic recorder needs (ids, flags,
    /// and closures that render inputs and states, called only for a recording span).
    @inlinable
    func makeTraceRecorder<T: Tracer>(
        tracer: T, options: AutomatonTraceOptions<State, Input>, context: ServiceContext
    ) -> AutomatonTraceRecorder<T> {
        let recorder = AutomatonTraceRecorder(
            tracer: tracer, inputSpanName: options.inputSpanName, effectSpanName: options.effectSpanName,
            attributes: options.attributes, marksFailuresAsErrors: options.marksFailuresAsErrors,
            linkableEndedEffects: options.linkableEndedEffects, context: context)
        let describeInput = options.describeInput
        let describeState = options.describeState
        // Effect events first: an effect whose record the recorder sees then has all its events heard.
        let events = effectEvents.observe { [recorder] event in
            switch event {
            case let .value(effectEvent):
                recorder.handle(TraceEffectEvent(effectEvent, describeInput: describeInput))
            case .completed, .interrupted: recorder.finish()
            }
        }
        let processing = observeProcessing { [recorder] record in
            let reply = record.reply
            recorder.record(
                sender: record.sentByEffect, effect: record.effect, duration: record.duration,
                isSuccess: reply.isSuccess
            ) { attributes in
                attributes[TraceKey.input] = describeInput(reply.input)
                attributes[TraceKey.from] = describeState(reply.fromState)
                if let toState = reply.toState { attributes[TraceKey.to] = describeState(toState) }
            }
        }
        recorder.keep(events, processing)
        return recorder
    }
}

/// How `Automaton.trace(with:options:context:)` names its spans and renders inputs and states.
///
/// Attribute keys: `automaton.input`, `automaton.from`, `automaton.to`, `automaton.outcome`,
/// `automaton.effect.id`, `automaton.sender.effect.id` (input spans); `automaton.effect.id`,
/// `automaton.effect.key`, `automaton.effect.outcome` (effect spans); `automaton.effect.cancellation`
/// and `automaton.input` (the `cancelled` event).
public struct AutomatonTraceOptions<State: Sendable, Input: Sendable>: Sendable {
    /// The name of every input span. Default `automaton.input`. A constant, as span names should be:
    /// the input itself is the `automaton.input` attribute.
    public var inputSpanName: String
    /// The name of every effect span. Default `automaton.effect`.
    public var effectSpanName: String
    /// Renders an input for the `automaton.input` attributes. Default `String(describing:)`. Called on
    /// the threads that record spans and their events, only for a span that is recording.
    public var describeInput: @Sendable (Input) -> String
    /// Renders a state for the `automaton.from` and `automaton.to` attributes. Default
    /// `String(describing:)`. Called like `describeInput`.
    public var describeState: @Sendable (State) -> String
    /// Attributes added to every span, input and effect: say which automaton it is (a session's id,
    /// a connection's). Default none.
    public var attributes: SpanAttributes
    /// Whether a failed input's span gets the status `.error`. Default `false`: a failure is an input
    /// the mapping rejected in the current state, part of the machine's normal behaviour; the
    /// `automaton.outcome` attribute says `failure` either way.
    public var marksFailuresAsErrors: Bool
    /// How many of the most recently ended effects keep their span's context, so that the inputs they
    /// sent, still queued when they ended, are linked to their span. Default 1,024; 0 links only the
    /// inputs of effects still running. The memory of tracing is bounded by the running effects plus
    /// this number, plus the events held for effects whose input's record has not come yet (effects
    /// running when tracing began, or made by an input whose processing began before it): each held
    /// until a later record, or the end.
    public var linkableEndedEffects: Int

    /// The default options.
    public init() {
        inputSpanName = "automaton.input"
        effectSpanName = "automaton.effect"
        describeInput = { String(describing: $0) }
        describeState = { String(describing: $0) }
        attributes = [:]
        marksFailuresAsErrors = false
        linkableEndedEffects = 1_024
    }
}
