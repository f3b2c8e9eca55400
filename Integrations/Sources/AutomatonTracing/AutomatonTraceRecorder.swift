import Automaton
import Tracing
import _AutomatonIntegrationSupport

/// The spans of one traced automaton: it turns processing records into input spans and effect events
/// into the effect spans' events and ends.
///
/// Generic over the tracer only: the entry points (`Automaton.makeTraceRecorder`) turn each
/// `InputProcessing<State, Input>` and `EffectEvent<Input>` into ids, flags and rendering closures,
/// called only for a span that is recording. Everything is inlinable, so that it is specialized for
/// the tracer in the client: run unspecialized, generic code looked up generic metadata at every
/// event (callgrind: a third of the traced W3's instructions). (Holding the tracer and its spans as
/// existentials, compiled here once, cost 7,804 instructions per traced W3 input against 7,220.)
///
/// Two threads call it at once: the processing thread (`record`, one record at a time) and the
/// thread delivering effect events (`handle(_:)`, one event at a time). The contracts order them
/// only partly: the record of the input that makes an effect is told before that effect starts or is
/// dropped, so its span exists before those events; but a `.queue` effect can start, end or be
/// cancelled on another thread as soon as its input committed, before the processing thread has
/// told its record. So the table keeps the events of an effect it has no span for yet (`early`), and
/// every effect span has a mailbox: actions (events, detach) are queued under the lock and applied
/// outside it, in order, by one thread at a time, so that the tracer is never called with the lock
/// held and a span never receives an event after its end.
@usableFromInline
final class AutomatonTraceRecorder<T: Tracer>: Sendable {
    @usableFromInline let tracer: T
    @usableFromInline let inputSpanName: String
    @usableFromInline let effectSpanName: String
    /// Added to every span.
    @usableFromInline let attributes: SpanAttributes
    @usableFromInline let marksFailuresAsErrors: Bool
    /// The parent of every input span.
    @usableFromInline let context: ServiceContext
    @usableFromInline let table: _IntegrationLock<Table>
    /// What `trace(with:options:context:)` returns: it holds this recorder until tracing stops.
    @usableFromInline let disposable: AutomatonTracingDisposable<T>

    @inlinable
    init(
        tracer: T, inputSpanName: String, effectSpanName: String, attributes: SpanAttributes,
        marksFailuresAsErrors: Bool, linkableEndedEffects: Int, context: ServiceContext
    ) {
        self.tracer = tracer
        self.inputSpanName = inputSpanName
        self.effectSpanName = effectSpanName
        self.attributes = attributes
        self.marksFailuresAsErrors = marksFailuresAsErrors
        self.context = context
        table = _IntegrationLock(Table(linkCapacity: max(0, linkableEndedEffects)))
        disposable = AutomatonTracingDisposable()
        // A cycle, broken when tracing stops (`close()`).
        disposable.hold(self)
    }

    /// Something to do to an effect span, in order.
    @usableFromInline
    enum Action: Sendable {
        /// An event from `effectEvents`.
        case event(TraceEffectEvent)
        /// Tracing stops: end the span, `detached`.
        case detach

        @inlinable var isTerminal: Bool {
            switch self {
            case .detach: return true
            case let .event(event): return event.endsSpan
            }
        }
    }

    /// An effect span and its mailbox. A class: the table hands it out, so that a thread applying its
    /// actions reaches it again without a look-up, and a dictionary entry is not copied to be read.
    /// `pending` and `isApplying` are read and written only under the lock; `span` and `context` are
    /// constants.
    @usableFromInline
    final class Slot {
        @usableFromInline let span: T.Span
        /// The span's context, for links: read once, outside the lock.
        @usableFromInline let context: ServiceContext
        /// Whether the span records, read once, when it opened: a `started` event is applied only to
        /// a span that records (the event and the key are all it adds).
        @usableFromInline let isRecording: Bool
        /// Actions not yet applied.
        @usableFromInline var pending: [Action]
        /// Whether a thread is applying actions to the span (outside the lock): others only queue.
        /// While it is not, `pending` is empty.
        @usableFromInline var isApplying = false

        @inlinable init(span: T.Span, context: ServiceContext, isRecording: Bool, pending: [Action] = []) {
            self.span = span
            self.context = context
            self.isRecording = isRecording
            self.pending = pending
        }
    }

    /// Actions that the calling thread must apply to a span, outside the lock.
    @usableFromInline
    struct Work {
        @usableFromInline let id: UInt64
        @usableFromInline let slot: Slot
        @usableFromInline let actions: [Action]
        /// The context the ring of ended effects let go of, to be released outside the lock (releasing
        /// a context may run user code: a `deinit`).
        @usableFromInline var evicted: ServiceContext?

        @inlinable
        init(id: UInt64, slot: Slot, actions: [Action]) {
            self.id = id
            self.slot = slot
            self.actions = actions
        }
    }

    /// What `handle(_:)` does with an event, decided under the lock.
    @usableFromInline
    enum Delivery {
        /// Nothing now: queued for the thread applying actions to the span, kept for a record still
        /// to come, or ignored.
        case none
        /// Apply it to the slot's span; if it ends the span, the slot is already out of the table
        /// and `evicted` is the context the ring of ended effects let go of.
        case apply(Slot, evicted: ServiceContext?)
    }

    @usableFromInline
    struct Table {
        /// The open effect spans, by effect id.
        @usableFromInline var slots: [UInt64: Slot] = [:]
        /// Events of effects whose record has not been told yet (a `.queue` effect's, see the type's
        /// documentation), or never will be (effects made before tracing began): dropped when a later
        /// effect's record shows that theirs will not come.
        @usableFromInline var early: [UInt64: [TraceEffectEvent]] = [:]
        /// The highest effect id a record named: effect ids grow in processing order, so an event of
        /// an effect at or below it, without a slot, belongs to an effect that has no span (made before
        /// tracing began) or whose span has ended; it is ignored.
        @usableFromInline var lastRecordedEffect: UInt64?
        /// The contexts of the most recently ended effect spans, for links.
        @usableFromInline var ended: RecentContexts
        /// Set by the termination or the disposal: nothing is added any more.
        @usableFromInline var isClosed = false
        /// The observations of the automaton, kept for the disposal.
        @usableFromInline var observations: [Disposable] = []

        @inlinable init(linkCapacity: Int) {
            ended = RecentContexts(capacity: linkCapacity)
        }

        /// Hands the slot's pending actions to the caller; removes the slot if one of them ends the
        /// span, else marks it applied.
        @inlinable mutating func hand(_ slot: Slot, id: UInt64) -> Work {
            let actions = slot.pending
            slot.pending = []
            var isTerminal = false
            for action in actions where action.isTerminal {
                isTerminal = true
                break
            }
            var work = Work(id: id, slot: slot, actions: actions)
            guard isTerminal else {
                slot.isApplying = true
                return work
            }
            slots.removeValue(forKey: id)
            if !isClosed { work.evicted = ended.insert(slot.context, for: id) }
            return work
        }

        /// Takes the slot's pending actions for the caller to apply, if no other thread is applying
        /// some; removes the slot if one of them ends the span.
        @inlinable mutating func takeWork(for id: UInt64) -> Work? {
            guard let slot = slots[id], !slot.isApplying, !slot.pending.isEmpty else { return nil }
            return hand(slot, id: id)
        }

        /// The thread applying actions to `slot` is done with them: takes those queued meanwhile, if
        /// any, else marks the slot not applied. (A slot being applied stays in the table.)
        @inlinable mutating func takeMoreWork(for slot: Slot, id: UInt64) -> Work? {
            guard !slot.pending.isEmpty else {
                slot.isApplying = false
                return nil
            }
            return hand(slot, id: id)
        }

        /// Decides what becomes of an effect event (see `Delivery`).
        @inlinable mutating func deliver(_ event: TraceEffectEvent) -> Delivery {
            guard !isClosed else { return .none }
            let id = event.id
            guard let slot = slots[id] else {
                if let last = lastRecordedEffect, id <= last { return .none }
                early[id, default: []].append(event)
                return .none
            }
            guard !slot.isApplying else {
                slot.pending.append(.event(event))
                return .none
            }
            guard event.endsSpan else {
                guard slot.isRecording else { return .none }
                slot.isApplying = true
                return .apply(slot, evicted: nil)
            }
            slots.removeValue(forKey: id)
            return .apply(slot, evicted: ended.insert(slot.context, for: id))
        }
    }

    // MARK: Observations

    /// Keeps the automaton's observations for the disposal, or disposes them at once if tracing has
    /// already stopped (the automaton had terminated).
    @inlinable
    func keep(_ events: Disposable, _ processing: Disposable) {
        let kept = table.withLock { table -> Bool in
            guard !table.isClosed else { return false }
            table.observations = [events, processing]
            return true
        }
        if !kept {
            events.dispose()
            processing.dispose()
        }
    }

    /// Stops tracing (`dispose()`): detaches from the automaton and ends the open effect spans.
    @inlinable
    func detach() {
        close()
    }

    /// The automaton terminated (`effectEvents` ended, after every effect's last event): lets go of
    /// everything. Any span still open (none, if the automaton kept its contract) is ended, `detached`.
    @inlinable
    func finish() {
        close()
    }

    @inlinable func close() {
        let (observations, work, released) = table.withLock { table -> ([Disposable], [Work], [Any]) in
            guard !table.isClosed else { return ([], [], []) }
            table.isClosed = true
            var work: [Work] = []
            for id in Array(table.slots.keys) {
                table.slots[id]!.pending.append(.detach)
                // A slot another thread is applying actions to is ended by that thread.
                if let taken = table.takeWork(for: id) { work.append(taken) }
            }
            let released: [Any] = [table.early, table.ended]
            table.early = [:]
            table.ended = RecentContexts(capacity: 0)
            defer { table.observations = [] }
            return (table.observations, work, released)
        }
        for observation in observations { observation.dispose() }
        for taken in work { perform(taken) }
        _ = released
        // The disposable lets go of this recorder, and with it of the tracer and the context, once
        // the automaton and the threads still in the recorder let go of it too.
        disposable.letGo()
    }

    // MARK: Records (processing thread)

    /// Records one input's span, and opens the span of the effect it made: the non-generic part of
    /// an `InputProcessing` record (see `Automaton.makeTraceRecorder`). `render` sets the attributes
    /// that render the input and the states; it is called only if the span is recording.
    @inlinable
    func record(
        sender: UInt64?, effect: UInt64?, duration: Duration, isSuccess: Bool,
        render: (inout SpanAttributes) -> Void
    ) {
        let now = DefaultTracerClock.now
        let (isClosed, senderContext) = table.withLock { table -> (Bool, ServiceContext?) in
            guard let sender else { return (table.isClosed, nil) }
            return (table.isClosed, table.slots[sender]?.context ?? table.ended[sender])
        }
        guard !isClosed else { return }
        let elapsed = nanoseconds(duration)
        let start = DefaultTracerClock.Timestamp(
            nanosecondsSinceEpoch: now.nanosecondsSinceEpoch - min(elapsed, now.nanosecondsSinceEpoch))
        let span = tracer.startSpan(inputSpanName, context: context, ofKind: .internal, at: start)
        // A span that is not recording drops attributes, links and status: none is built for it.
        if span.isRecording {
            span.updateAttributes { attributes in
                attributes.merge(self.attributes)
                render(&attributes)
                attributes[TraceKey.outcome] = isSuccess ? "success" : "failure"
                if let effect { attributes[TraceKey.effectID] = attribute(effect) }
                if let sender { attributes[TraceKey.senderEffectID] = attribute(sender) }
            }
            if let sender, let senderContext {
                span.addLink(SpanLink(context: senderContext, attributes: [TraceKey.effectID: attribute(sender)]))
            }
            if marksFailuresAsErrors, !isSuccess {
                span.setStatus(SpanStatus(code: .error, message: "input rejected"))
            }
        }
        guard let effect else {
            span.end(at: now)
            return
        }
        // The effect span starts when the input span ends (`now`), a child of it.
        let parent = span.context
        span.end(at: now)
        let effectSpan = tracer.startSpan(effectSpanName, context: parent, ofKind: .internal, at: now)
        let isRecording = effectSpan.isRecording
        if isRecording {
            effectSpan.updateAttributes { attributes in
                attributes.merge(self.attributes)
                attributes[TraceKey.effectID] = attribute(effect)
            }
        }
        open(effectSpan, recording: isRecording, for: effect)
    }

    /// Puts the span of the effect `id` in the table, and applies the events that came before it.
    /// `isRecording` is the span's, read when it started.
    @inlinable func open(_ span: T.Span, recording isRecording: Bool, for id: UInt64) {
        // Read outside the lock: a span is the tracer's code.
        let context = span.context
        let (work, released) = table.withLock { table -> (Work?, [Any]) in
            guard !table.isClosed else {
                let slot = Slot(span: span, context: context, isRecording: isRecording)
                return (Work(id: id, slot: slot, actions: [.detach]), [])
            }
            table.lastRecordedEffect = id
            guard !table.early.isEmpty else {
                table.slots[id] = Slot(span: span, context: context, isRecording: isRecording)
                return (nil, [])
            }
            let early = table.early.removeValue(forKey: id) ?? []
            var released: [Any] = []
            if !table.early.isEmpty {
                // Their records will never come: effect ids grow with the records.
                released.append(table.early.filter { $0.key < id })
                table.early = table.early.filter { $0.key > id }
            }
            table.slots[id] = Slot(
                span: span, context: context, isRecording: isRecording, pending: early.map(Action.event))
            return (table.takeWork(for: id), released)
        }
        _ = released
        if let work { perform(work) }
    }

    // MARK: Effect events (any thread)

    /// Queues the event for its effect's span, and applies it if no other thread is applying events to
    /// that span.
    @inlinable
    func handle(_ event: TraceEffectEvent) {
        guard case let .apply(slot, evicted) = table.withLock({ $0.deliver(event) }) else { return }
        let ended = apply(event, to: slot.span)
        _ = evicted
        if !ended { applyQueued(to: slot, id: event.id) }
    }

    /// Applies `work`, then any action queued for the same span meanwhile, until none is left or the
    /// span has ended.
    @inlinable func perform(_ work: Work) {
        for action in work.actions where apply(action, to: work.slot.span) {
            return
        }
        applyQueued(to: work.slot, id: work.id)
    }

    /// The calling thread applies actions to `slot`: applies those queued meanwhile, until none is left
    /// or the span has ended.
    @inlinable func applyQueued(to slot: Slot, id: UInt64) {
        while let work = table.withLock({ $0.takeMoreWork(for: slot, id: id) }) {
            for action in work.actions where apply(action, to: slot.span) {
                return
            }
        }
    }

    /// Applies one action to an effect span; returns whether it ended the span.
    @inlinable func apply(_ action: Action, to span: T.Span) -> Bool {
        switch action {
        case .detach:
            if span.isRecording { span.attributes[TraceKey.effectOutcome] = "detached" }
            span.end()
            return true
        case let .event(event):
            return apply(event, to: span)
        }
    }

    /// Applies one effect event to its span; returns whether it ended the span.
    @inlinable func apply(_ event: TraceEffectEvent, to span: T.Span) -> Bool {
        switch event.kind {
        case .started:
            if span.isRecording {
                if let key = event.key { span.attributes[TraceKey.effectKey] = key.description }
                span.addEvent(SpanEvent(name: "started"))
            }
            return false
        case .ended:
            if span.isRecording {
                span.updateAttributes { attributes in
                    if let key = event.key { attributes[TraceKey.effectKey] = key.description }
                    attributes[TraceKey.effectOutcome] = "ended"
                }
            }
            span.end()
            return true
        case let .cancelled(cause, describeInput):
            if span.isRecording {
                var eventAttributes: SpanAttributes = [TraceKey.cancellation: .string(cause)]
                if let describeInput { eventAttributes[TraceKey.input] = describeInput() }
                span.updateAttributes { attributes in
                    if let key = event.key { attributes[TraceKey.effectKey] = key.description }
                    attributes[TraceKey.effectOutcome] = cause
                }
                span.addEvent(SpanEvent(name: "cancelled", attributes: eventAttributes))
            }
            span.end()
            return true
        }
    }

    // MARK: For tests

    /// The table's size: open effect spans, effects whose events came before their record, ended
    /// effects kept for links.
    @inlinable var tableSize: (open: Int, early: Int, ended: Int) {
        table.withLock { ($0.slots.count, $0.early.count, $0.ended.count) }
    }
}

/// What `Automaton.trace(with:options:context:)` returns: it holds the recorder until tracing stops
/// (the disposal, or the automaton's termination), then nothing, so that a disposable kept after the
/// termination keeps neither the tracer nor the context.
@usableFromInline
final class AutomatonTracingDisposable<T: Tracer>: Disposable {
    @usableFromInline
    struct State {
        @usableFromInline var isDisposed = false
        /// Until tracing stops.
        @usableFromInline var recorder: AutomatonTraceRecorder<T>?

        @inlinable init() {}
    }

    @usableFromInline let state = _IntegrationLock(State())

    @inlinable init() {}

    /// Holds `recorder` until tracing stops.
    @inlinable func hold(_ recorder: AutomatonTraceRecorder<T>) {
        state.withLock { $0.recorder = recorder }
    }

    /// Tracing stopped: lets go of the recorder, after the lock (its release may be the last, and
    /// release the user's tracer and context).
    @inlinable func letGo() {
        let recorder = state.withLock { state -> AutomatonTraceRecorder<T>? in
            defer { state.recorder = nil }
            return state.recorder
        }
        _ = recorder
    }

    @inlinable var isDisposed: Bool {
        state.withLock { $0.isDisposed }
    }

    /// Stops tracing (see `trace(with:options:context:)`), once; nothing after the termination.
    @inlinable func dispose() {
        let recorder = state.withLock { state -> AutomatonTraceRecorder<T>? in
            guard !state.isDisposed else { return nil }
            state.isDisposed = true
            defer { state.recorder = nil }
            return state.recorder
        }
        recorder?.detach()
    }
}

/// The attribute keys.
@usableFromInline
enum TraceKey {
    @usableFromInline static let input = "automaton.input"
    @usableFromInline static let from = "automaton.from"
    @usableFromInline static let to = "automaton.to"
    @usableFromInline static let outcome = "automaton.outcome"
    @usableFromInline static let effectID = "automaton.effect.id"
    @usableFromInline static let senderEffectID = "automaton.sender.effect.id"
    @usableFromInline static let effectKey = "automaton.effect.key"
    @usableFromInline static let effectOutcome = "automaton.effect.outcome"
    @usableFromInline static let cancellation = "automaton.effect.cancellation"
}

/// An effect id as an attribute.
@inlinable func attribute(_ id: UInt64) -> SpanAttribute {
    .int64(Int64(truncatingIfNeeded: id))
}

/// A duration in whole nanoseconds, 0 if negative.
@inlinable func nanoseconds(_ duration: Duration) -> UInt64 {
    if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
        // `components` divides 128-bit numbers (callgrind: 186 instructions); a duration under 18
        // seconds needs one 64-bit division.
        if let attoseconds = UInt64(exactly: duration.attoseconds) { return attoseconds / 1_000_000_000 }
    }
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0, attoseconds >= 0 else { return 0 }
    let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    return overflow ? .max : whole &+ UInt64(attoseconds / 1_000_000_000)
}

/// The span contexts of the last `capacity` ended effects, by effect id: a ring.
///
/// Looked up by a scan, newest first, not through a dictionary: every effect's end inserts (and, once
/// the ring is full, evicts), and two dictionary operations cost more than the whole rest of an
/// effect's bookkeeping (callgrind: 639 instructions an insertion, ring of 1,024); a look-up happens
/// only for an input whose effect has ended, most often just before (found at once), and costs at most
/// `capacity` comparisons.
@usableFromInline
struct RecentContexts {
    @usableFromInline let capacity: Int
    @usableFromInline var entries: [(id: UInt64, context: ServiceContext)] = []
    /// The oldest entry once the ring is full; the next to be replaced.
    @usableFromInline var oldest = 0

    @inlinable init(capacity: Int) {
        self.capacity = capacity
    }

    @inlinable var count: Int { entries.count }

    @inlinable subscript(id: UInt64) -> ServiceContext? {
        for index in (0..<oldest).reversed() where entries[index].id == id {
            return entries[index].context
        }
        for index in (oldest..<entries.count).reversed() where entries[index].id == id {
            return entries[index].context
        }
        return nil
    }

    /// Keeps `context` (an effect ends once: `id` is not in the ring yet); returns the one it let go
    /// of, if the ring was full.
    @inlinable mutating func insert(_ context: ServiceContext, for id: UInt64) -> ServiceContext? {
        guard capacity > 0 else { return context }
        guard entries.count == capacity else {
            entries.append((id, context))
            return nil
        }
        let evicted = entries[oldest].context
        entries[oldest] = (id, context)
        oldest = oldest + 1 == capacity ? 0 : oldest + 1
        return evicted
    }
}

/// An `EffectEvent`, without its type parameter: what an effect span needs of it. The input of a
/// cancellation is rendered only if the span is recording.
@usableFromInline
struct TraceEffectEvent: Sendable {
    @usableFromInline
    enum Kind: Sendable {
        case started
        case ended
        /// The cause (`replaced`, `cancelled`, `dropped`, `exited`, `interrupted`, `released`) and the rendering
        /// of the input that caused it, if any.
        case cancelled(String, (@Sendable () -> String)?)
    }

    @usableFromInline let id: UInt64
    @usableFromInline let key: EffectKey?
    @usableFromInline let kind: Kind

    /// Whether the event ends its effect's span: all but `started`.
    @inlinable var endsSpan: Bool {
        if case .started = kind { return false }
        return true
    }

    @inlinable
    init<Input: Sendable>(_ event: EffectEvent<Input>, describeInput: @escaping @Sendable (Input) -> String) {
        id = event.id
        key = event.key
        switch event.kind {
        case .started: kind = .started
        case .ended: kind = .ended
        case let .cancelled(.replaced(input)): kind = .cancelled("replaced", { describeInput(input) })
        case let .cancelled(.cancelled(input)): kind = .cancelled("cancelled", { describeInput(input) })
        case let .cancelled(.dropped(input)): kind = .cancelled("dropped", { describeInput(input) })
        case let .cancelled(.exited(input)): kind = .cancelled("exited", { describeInput(input) })
        case .cancelled(.interrupted): kind = .cancelled("interrupted", nil)
        case .cancelled(.released): kind = .cancelled("released", nil)
        }
    }
}
