import Automaton
import Tracing

/// The spans of one traced automaton: it turns processing records into input spans and effect events
/// into the effect spans' events and ends.
///
/// Two threads call it at once: the processing thread (`record(_:)`, one record at a time) and the
/// thread delivering effect events (`handle(_:)`, one event at a time). The contracts order them
/// only partly: the record of the input that makes an effect is told before that effect starts or is
/// dropped, so its span exists before those events; but a `.queue` effect can start, end or be
/// cancelled on another thread as soon as its input committed, before the processing thread has
/// told its record. So the table keeps the events of an effect it has no span for yet (`early`), and
/// every effect span has a mailbox: actions (events, detach) are queued under the lock and applied
/// outside it, in order, by one thread at a time, so that the tracer is never called with the lock
/// held and a span never receives an event after its end.
final class AutomatonTraceRecorder<T: Tracer, State: Sendable, Input: Sendable>: Sendable {
    let tracer: T
    let options: AutomatonTraceOptions<State, Input>
    /// The parent of every input span.
    let context: ServiceContext
    let table: TracingLock<Table>

    init(tracer: T, options: AutomatonTraceOptions<State, Input>, context: ServiceContext) {
        self.tracer = tracer
        self.options = options
        self.context = context
        table = TracingLock(Table(linkCapacity: max(0, options.linkableEndedEffects)))
    }

    /// Something to do to an effect span, in order.
    enum Action: Sendable {
        /// An event from `effectEvents`.
        case event(EffectEvent<Input>)
        /// Tracing stops: end the span, `detached`.
        case detach

        var isTerminal: Bool {
            switch self {
            case .detach: return true
            case let .event(event):
                if case .started = event.kind { return false }
                return true
            }
        }
    }

    /// An effect span and its mailbox.
    struct Slot {
        let span: T.Span
        /// The span's context, for links: read once, outside the lock.
        let context: ServiceContext
        /// Actions not yet applied.
        var pending: [Action] = []
        /// Whether a thread is applying actions to the span (outside the lock): others only queue.
        var isApplying = false
    }

    /// Actions that the calling thread must apply to a span, outside the lock.
    struct Work {
        let id: UInt64
        let span: T.Span
        let actions: [Action]
        /// What the table let go of meanwhile, to be released outside the lock (releasing a context or
        /// an input may run user code: a `deinit`).
        var released: [Any] = []
    }

    struct Table {
        /// The open effect spans, by effect id.
        var slots: [UInt64: Slot] = [:]
        /// Events of effects whose record has not been told yet (a `.queue` effect's, see the type's
        /// documentation), or never will be (effects made before tracing began): dropped when a later
        /// effect's record shows that theirs will not come.
        var early: [UInt64: [EffectEvent<Input>]] = [:]
        /// The highest effect id a record named: effect ids grow in processing order, so an event of
        /// an effect at or below it, without a slot, belongs to an effect that has no span (made before
        /// tracing began) or whose span has ended; it is ignored.
        var lastRecordedEffect: UInt64?
        /// The contexts of the most recently ended effect spans, for links.
        var ended: RecentContexts
        /// Set by the termination or the disposal: nothing is added any more.
        var isClosed = false
        /// The observations of the automaton, kept for the disposal.
        var observations: [Disposable] = []

        init(linkCapacity: Int) {
            ended = RecentContexts(capacity: linkCapacity)
        }

        /// Takes the slot's pending actions for the caller to apply, if no other thread is applying
        /// some; removes the slot if one of them ends the span.
        mutating func takeWork(for id: UInt64) -> Work? {
            guard let index = slots.index(forKey: id) else { return nil }
            guard !slots.values[index].isApplying, !slots.values[index].pending.isEmpty else { return nil }
            let actions = slots.values[index].pending
            slots.values[index].pending = []
            guard actions.contains(where: \.isTerminal) else {
                slots.values[index].isApplying = true
                return Work(id: id, span: slots.values[index].span, actions: actions)
            }
            let slot = slots.remove(at: index).value
            var work = Work(id: id, span: slot.span, actions: actions)
            if !isClosed, let evicted = ended.insert(slot.context, for: id) {
                work.released.append(evicted)
            }
            return work
        }
    }

    // MARK: Observations

    /// Keeps the automaton's observations for the disposal, or disposes them at once if tracing has
    /// already stopped (the automaton had terminated).
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
    func detach() {
        close()
    }

    /// The automaton terminated (`effectEvents` ended, after every effect's last event): lets go of
    /// everything. Any span still open (none, if the automaton kept its contract) is ended, `detached`.
    func finish() {
        close()
    }

    private func close() {
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
    }

    // MARK: Records (processing thread)

    /// Records one input's span, and opens the span of the effect it made.
    func record(_ record: InputProcessing<State, Input>) {
        let now = DefaultTracerClock.now
        let sender = record.sentByEffect
        let (isClosed, senderContext) = table.withLock { table -> (Bool, ServiceContext?) in
            guard let sender else { return (table.isClosed, nil) }
            return (table.isClosed, table.slots[sender]?.context ?? table.ended[sender])
        }
        guard !isClosed else { return }
        let elapsed = nanoseconds(record.duration)
        let start = DefaultTracerClock.Timestamp(
            nanosecondsSinceEpoch: now.nanosecondsSinceEpoch - min(elapsed, now.nanosecondsSinceEpoch))
        let span = tracer.startSpan(options.inputSpanName, context: context, ofKind: .internal, at: start)
        if span.isRecording {
            span.updateAttributes { attributes in
                attributes.merge(options.attributes)
                attributes[TraceKey.input] = options.describeInput(record.reply.input)
                attributes[TraceKey.from] = options.describeState(record.reply.fromState)
                if let toState = record.reply.toState {
                    attributes[TraceKey.to] = options.describeState(toState)
                    attributes[TraceKey.outcome] = "success"
                } else {
                    attributes[TraceKey.outcome] = "failure"
                }
                if let effect = record.effect { attributes[TraceKey.effectID] = attribute(effect) }
                if let sender { attributes[TraceKey.senderEffectID] = attribute(sender) }
            }
        }
        if let sender, let senderContext {
            span.addLink(SpanLink(context: senderContext, attributes: [TraceKey.effectID: attribute(sender)]))
        }
        if options.marksFailuresAsErrors, !record.reply.isSuccess {
            span.setStatus(SpanStatus(code: .error, message: "input rejected"))
        }
        var effectSpan: T.Span?
        if let effect = record.effect {
            let opened = tracer.startSpan(options.effectSpanName, context: span.context, ofKind: .internal, at: now)
            if opened.isRecording {
                opened.updateAttributes { attributes in
                    attributes.merge(options.attributes)
                    attributes[TraceKey.effectID] = attribute(effect)
                }
            }
            effectSpan = opened
        }
        span.end(at: now)
        if let effectSpan, let effect = record.effect {
            open(effectSpan, for: effect)
        }
    }

    /// Puts the span of the effect `id` in the table, and applies the events that came before it.
    private func open(_ span: T.Span, for id: UInt64) {
        let context = span.context
        let work = table.withLock { table -> Work? in
            guard !table.isClosed else {
                return Work(id: id, span: span, actions: [.detach])
            }
            let early = table.early.removeValue(forKey: id) ?? []
            table.lastRecordedEffect = id
            var released: [Any] = []
            if !table.early.isEmpty {
                // Their records will never come: effect ids grow with the records.
                released.append(table.early.filter { $0.key < id })
                table.early = table.early.filter { $0.key > id }
            }
            table.slots[id] = Slot(span: span, context: context, pending: early.map(Action.event))
            var work = table.takeWork(for: id)
            work?.released += released
            return work
        }
        if let work { perform(work) }
    }

    // MARK: Effect events (any thread)

    /// Queues the event for its effect's span, and applies it if no other thread is applying events to
    /// that span.
    func handle(_ event: EffectEvent<Input>) {
        let work = table.withLock { table -> Work? in
            guard !table.isClosed else { return nil }
            let id = event.id
            if table.slots[id] != nil {
                table.slots[id]!.pending.append(.event(event))
                return table.takeWork(for: id)
            }
            if let last = table.lastRecordedEffect, id <= last { return nil }
            table.early[id, default: []].append(event)
            return nil
        }
        if let work { perform(work) }
    }

    /// Applies `work`, then any action queued for the same span meanwhile, until none is left or the
    /// span has ended.
    private func perform(_ work: Work) {
        var work = work
        while true {
            for action in work.actions where apply(action, to: work.span) {
                return
            }
            let id = work.id
            guard
                let next = table.withLock({ table -> Work? in
                    guard table.slots[id] != nil else { return nil }
                    table.slots[id]!.isApplying = false
                    return table.takeWork(for: id)
                })
            else { return }
            work = next
        }
    }

    /// Applies one action to an effect span; returns whether it ended the span.
    private func apply(_ action: Action, to span: T.Span) -> Bool {
        let event: EffectEvent<Input>
        switch action {
        case .detach:
            if span.isRecording { span.attributes[TraceKey.effectOutcome] = "detached" }
            span.end()
            return true
        case let .event(effectEvent):
            event = effectEvent
        }
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
        case let .cancelled(cancellation):
            if span.isRecording {
                let (cause, input) = Self.cause(of: cancellation)
                var eventAttributes: SpanAttributes = [TraceKey.cancellation: .string(cause)]
                if let input { eventAttributes[TraceKey.input] = options.describeInput(input) }
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

    static func cause(of cancellation: EffectCancellation<Input>) -> (String, Input?) {
        switch cancellation {
        case let .replaced(input): return ("replaced", input)
        case let .cancelled(input): return ("cancelled", input)
        case let .dropped(input): return ("dropped", input)
        case .interrupted: return ("interrupted", nil)
        case .released: return ("released", nil)
        }
    }

    // MARK: For tests

    /// The table's size: open effect spans, effects whose events came before their record, ended
    /// effects kept for links.
    var tableSize: (open: Int, early: Int, ended: Int) {
        table.withLock { ($0.slots.count, $0.early.count, $0.ended.count) }
    }
}

/// The attribute keys.
enum TraceKey {
    static let input = "automaton.input"
    static let from = "automaton.from"
    static let to = "automaton.to"
    static let outcome = "automaton.outcome"
    static let effectID = "automaton.effect.id"
    static let senderEffectID = "automaton.sender.effect.id"
    static let effectKey = "automaton.effect.key"
    static let effectOutcome = "automaton.effect.outcome"
    static let cancellation = "automaton.effect.cancellation"
}

/// An effect id as an attribute.
func attribute(_ id: UInt64) -> SpanAttribute {
    .int64(Int64(truncatingIfNeeded: id))
}

/// A duration in whole nanoseconds, 0 if negative.
func nanoseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0, attoseconds >= 0 else { return 0 }
    let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    return overflow ? .max : whole &+ UInt64(attoseconds / 1_000_000_000)
}

/// The span contexts of the last `capacity` ended effects, by effect id: a ring.
struct RecentContexts {
    let capacity: Int
    private var contexts: [UInt64: ServiceContext] = [:]
    private var order: [UInt64] = []
    private var oldest = 0

    init(capacity: Int) {
        self.capacity = capacity
    }

    var count: Int { contexts.count }

    subscript(id: UInt64) -> ServiceContext? { contexts[id] }

    /// Keeps `context`; returns the one it let go of, if the ring was full.
    mutating func insert(_ context: ServiceContext, for id: UInt64) -> ServiceContext? {
        guard capacity > 0 else { return context }
        contexts[id] = context
        guard order.count == capacity else {
            order.append(id)
            return nil
        }
        let evicted = order[oldest]
        order[oldest] = id
        oldest = (oldest + 1) % capacity
        return contexts.removeValue(forKey: evicted)
    }
}
