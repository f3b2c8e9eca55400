import Automaton
import Signals

/// An event of `effectEvents`, with how many events `replies` had sent before it: the two streams'
/// interleaving (processing order).
struct TimedEffectEvent: Sendable, Equatable, CustomStringConvertible {
    let event: Event<EffectEvent<Int>, Never>
    let afterReplies: Int

    var description: String {
        let text: String
        switch event {
        case let .value(effectEvent): text = "\(effectEvent)"
        case .completed: text = "completed"
        case .interrupted: text = "interrupted"
        }
        return "\(text) (after reply #\(afterReplies))"
    }
}

/// What an automaton run shows from outside: compared whole between the model and the automaton.
struct Outcome: Equatable, CustomStringConvertible {
    /// Every event of `replies` until the case's ending and after it (`.completed` once the input
    /// signal has completed and nothing is queued or running, or on release; `.interrupted` when the
    /// input signal is interrupted).
    var replies: [Event<Reply<Int, Int>, Never>] = []
    /// Every value `state.signal` sent.
    var states: [Int] = []
    /// `state.value` at the end.
    var finalState = 0
    /// How many times the mapping was called (must equal the number of replies).
    var mappingCalls = 0
    /// For each `.scheduled` effect, in start order: whether its lifetime had ended at the end
    /// (completed or disposed).
    var scheduledEffectsEnded: [Bool] = []
    /// Every event of `effectEvents`, each with its place among the replies.
    var effectEvents: [TimedEffectEvent] = []

    /// At most the first 60 replies and states: a case that loops until the fuse blows has 150.
    var description: String {
        func prefix(_ items: [String]) -> String {
            items.prefix(60).joined(separator: ", ") + (items.count > 60 ? ", ... (\(items.count) in all)" : "")
        }
        return """
            replies: \(prefix(replies.map(Self.describe)))
            states: [\(prefix(states.map(String.init)))]
            final state: \(finalState), mapping calls: \(mappingCalls)
            scheduled effects ended: \(scheduledEffectsEnded)
            effect events: \(prefix(effectEvents.map(\.description)))
            """
    }

    /// Where `other` first differs from this outcome, in words.
    func firstDifference(from other: Outcome) -> String {
        let common = min(replies.count, other.replies.count)
        let differing = (0..<common).first { replies[$0] != other.replies[$0] }
        if let index = differing ?? (replies.count != other.replies.count ? common : nil) {
            let mine = index < replies.count ? Self.describe(replies[index]) : "nothing"
            let theirs = index < other.replies.count ? Self.describe(other.replies[index]) : "nothing"
            return "reply #\(index + 1): model \(mine), automaton \(theirs)"
        }
        if states != other.states { return "states: model \(states), automaton \(other.states)" }
        if finalState != other.finalState { return "final state: model \(finalState), automaton \(other.finalState)" }
        if mappingCalls != other.mappingCalls {
            return "mapping calls: model \(mappingCalls), automaton \(other.mappingCalls)"
        }
        if scheduledEffectsEnded != other.scheduledEffectsEnded {
            return "scheduled effects ended: model \(scheduledEffectsEnded), automaton \(other.scheduledEffectsEnded)"
        }
        let eventIndex =
            (0..<min(effectEvents.count, other.effectEvents.count)).first { effectEvents[$0] != other.effectEvents[$0] }
            ?? min(effectEvents.count, other.effectEvents.count)
        let mine = eventIndex < effectEvents.count ? effectEvents[eventIndex].description : "nothing"
        let theirs = eventIndex < other.effectEvents.count ? other.effectEvents[eventIndex].description : "nothing"
        return "effect event #\(eventIndex + 1): model \(mine), automaton \(theirs)"
    }

    static func describe(_ event: Event<Reply<Int, Int>, Never>) -> String {
        switch event {
        case let .value(reply): return "\(reply)"
        case .completed: return "completed"
        case .interrupted: return "interrupted"
        }
    }
}

/// What happened inside the model, to measure what the random cases exercise.
struct ModelCoverage {
    var successes = 0
    var failures = 0
    /// Effects disposed by a `.latest` replacement.
    var cancelledEffects = 0
    /// Queued inputs skipped because their effect was cancelled.
    var droppedQueuedInputs = 0
    /// Scheduled emissions that never reached the automaton because their effect had been cancelled
    /// or had ended.
    var droppedTimedEmissions = 0
    /// Outside inputs that replaced the root's effect tree while emitted inputs were still queued
    /// (possible only when an observer sends).
    var outsideReplacementsWithQueuedInputs = 0
    /// Replies to inputs processed after the input signal completed (effects outliving it).
    var repliesAfterInputCompleted = 0
    /// Running effects disposed by an interruption of the input signal or a release.
    var effectsDisposedByEnding = 0
    /// Whether the mapping fuse blew.
    var fuseBlew = false
    /// Keyed effects: replaced by their key's `.latest` policy, cancelled by a `.cancel` row, dropped by
    /// `.first`, made to wait by `.queue`, and started after waiting.
    var keyedReplacements = 0
    var keyedCancellations = 0
    var keyedDrops = 0
    var keyedWaits = 0
    var keyedStartsAfterWaiting = 0
}

/// The reference model of the automaton contract (BRIEF §5): a plain fold of the outside inputs
/// through the table, with no Signals and no Automaton, simulating virtual time itself.
///
/// - One FIFO queue of (input, origin), origin `nil` for an outside input or the effect that emitted it.
/// - An item whose origin was cancelled is skipped. Otherwise the table is called once: no match gives
///   `.failure(input, state)` and nothing else; a match (under `.latest`) cancels the latest child of
///   the item's level (the root for an outside input, the origin effect otherwise) and that child's
///   chain of latest children, then sets and emits the state, replies `.success`, and starts the effect.
/// - A level's latest child is the effect started by its latest successful input (`nil` for `.empty`).
///   An ended effect stays in its chain. Under `.merge` nothing is cancelled.
/// - Virtual time: actions run in (instant, scheduling order), like `TestScheduler`.
/// - A `replies` or `state` observer may send an outside input when it sees a reply or a state
///   (before the effect starts).
///   Through `automaton.send` it is queued at once; through the `input` signal it is queued at once
///   unless that signal is delivering, in which case the signal holds it until its delivery (the
///   automaton processing everything queued meanwhile) returns: BRIEF §4's serial delivery.
/// - Keyed effects (§5.9): a keyed effect never joins the tree (its level's latest child becomes none);
///   its key's group, running effects in start order then waiting ones, is cancelled by a `.cancel`
///   row (after the tree's replacement) or by a new `.latest` effect of the key (after the `.cancel`
///   keys); `.first` drops the new effect while the group is not empty; `.queue` makes it wait, and the
///   oldest waiting effect starts when the last running one ends. Cancelling an effect cancels its
///   chain of latest children too.
/// - Effect events: `started` after the reply (a waiting effect: when its turn comes, before it
///   starts), `ended` when it ends by itself, `cancelled` before the cancelling input's state and reply,
///   for effects that neither ended nor were cancelled before (`dropped` for `.first`); on an
///   interruption or release, the live effects in number order.
/// - Endings: once the input signal completes, outside inputs are ignored and `replies` completes when
///   nothing is processing and no effect runs (neither ended nor cancelled); an interruption or a
///   release disposes every effect and interrupts (release: completes) `replies`, and nothing more
///   happens.
struct ReferenceModel {
    private struct Effect {
        let spec: EffectSpec
        /// The input that started it (or will, if it waits).
        let input: Int
        let key: Int?
        var latestChild: Int?
        var cancelled = false
        var ended = false
    }

    /// The effects of one key: started and not ended (in start order), and waiting (FIFO).
    private struct KeyGroup {
        var running: [Int] = []
        var waiting: [Int] = []
    }

    private enum Phase {
        case active
        case inputCompleted
        case terminated
    }

    private enum TimedEvent {
        case end
        case outside(Int, throughSignal: Bool)
        case emit(effect: Int, input: Int)
        case complete(effect: Int)
    }

    private struct TimedAction {
        let due: Int
        let sequence: Int
        let event: TimedEvent
    }

    let testCase: GeneratedCase
    private(set) var outcome = Outcome()
    private(set) var coverage = ModelCoverage()
    private var state: Int
    private var queue: [(input: Int, origin: Int?)] = []
    private var queueHead = 0
    private var isProcessing = false
    private var phase = Phase.active
    private var repliesTerminated = false
    private var inputSignalDelivering = false
    private var inputSignalPending: [Int] = []
    private var effects: [Effect] = []
    /// The effects that have started, in start order.
    private var startOrder: [Int] = []
    private var groups: [Int: KeyGroup] = [:]
    private var rootLatestChild: Int?
    private var timeline: [TimedAction] = []
    private var now = 0
    private var nextSequence = 0

    private init(_ testCase: GeneratedCase) {
        self.testCase = testCase
        state = testCase.initialState
    }

    /// Runs `testCase` through the model: the outside inputs, every effect until none is left to
    /// run, and the ending where the case puts it.
    static func run(_ testCase: GeneratedCase) -> (outcome: Outcome, coverage: ModelCoverage) {
        var model = ReferenceModel(testCase)
        let endsBefore: Int? = if case let .beforeInput(index) = testCase.endingPoint { index } else { nil }
        if !testCase.kind.usesVirtualTime {
            for (index, outside) in testCase.inputs.enumerated() {
                if index == endsBefore { model.end() }
                model.sendOutside(outside.input, throughSignal: outside.throughSignal)
            }
            if endsBefore == testCase.inputs.count { model.end() }
        } else {
            switch testCase.delivery {
            case .scheduledUpFront:
                for outside in testCase.inputs {
                    model.schedule(.outside(outside.input, throughSignal: outside.throughSignal), after: outside.time)
                }
                if case let .atTime(time) = testCase.endingPoint {
                    model.schedule(.end, after: time)
                }
            case .advanceThenSend:
                for (index, outside) in testCase.inputs.enumerated() {
                    model.runTimeline(upTo: outside.time)
                    if index == endsBefore { model.end() }
                    model.sendOutside(outside.input, throughSignal: outside.throughSignal)
                }
                if endsBefore == testCase.inputs.count { model.end() }
            }
            model.runTimeline(upTo: nil)
        }
        if testCase.endingPoint == .afterEverything { model.end() }
        model.outcome.finalState = model.state
        model.outcome.scheduledEffectsEnded = model.startOrder.map { model.effects[$0] }.filter {
            if case .scheduled = $0.spec { true } else { false }
        }.map { $0.ended || $0.cancelled }
        return (model.outcome, model.coverage)
    }

    // MARK: The input queue

    /// `automaton.send`, or an effect's emission: queued, then, unless an input is being processed
    /// already, the queue is processed to the end (the model runs one action at a time, so nothing
    /// else can be processing).
    private mutating func send(_ input: Int, from origin: Int?) {
        queue.append((input, origin))
        guard !isProcessing else { return }
        isProcessing = true
        while queueHead < queue.count {
            let (input, origin) = queue[queueHead]
            queueHead += 1
            if let origin, effects[origin].cancelled {
                coverage.droppedQueuedInputs += 1
                continue
            }
            process(input, from: origin)
        }
        queue.removeAll()
        queueHead = 0
        isProcessing = false
        completeRepliesIfFinished()
    }

    // MARK: Termination

    /// The case's ending (BRIEF §5.6, §5.7).
    private mutating func end() {
        switch testCase.ending {
        case .completeInput:
            guard phase == .active else { return }
            phase = .inputCompleted
            completeRepliesIfFinished()
        case .interruptInput, .release:
            guard phase != .terminated else { return }
            phase = .terminated
            let isRelease = testCase.ending == .release
            if isRelease { terminateReplies(.completed) }
            for id in effects.indices where !effects[id].cancelled {
                if !effects[id].ended {
                    coverage.effectsDisposedByEnding += 1
                    effectEvent(id, .cancelled(isRelease ? .released : .interrupted))
                }
                effects[id].cancelled = true
            }
            groups.removeAll()
            if !isRelease { terminateReplies(.interrupted) }
            effectEventsEnd(isRelease ? .completed : .interrupted)
        }
    }

    /// After the input signal completed, `replies` completes once nothing is queued or running.
    private mutating func completeRepliesIfFinished() {
        guard phase == .inputCompleted, !repliesTerminated, !isProcessing,
            !effects.contains(where: { !$0.ended && !$0.cancelled })
        else { return }
        terminateReplies(.completed)
        effectEventsEnd(.completed)
    }

    private mutating func terminateReplies(_ event: Event<Reply<Int, Int>, Never>) {
        guard !repliesTerminated else { return }
        repliesTerminated = true
        outcome.replies.append(event)
    }

    private var effectEventsEnded = false

    private mutating func effectEventsEnd(_ event: Event<EffectEvent<Int>, Never>) {
        guard !effectEventsEnded else { return }
        effectEventsEnded = true
        outcome.effectEvents.append(TimedEffectEvent(event: event, afterReplies: outcome.replies.count))
    }

    private mutating func effectEvent(_ id: Int, _ kind: EffectEvent<Int>.Kind) {
        let event = EffectEvent(id: UInt64(id), key: effects[id].key.map(EffectKey.init), kind: kind)
        outcome.effectEvents.append(TimedEffectEvent(event: .value(event), afterReplies: outcome.replies.count))
    }

    /// A send into the automaton's `input` signal. The signal delivers serially (BRIEF §4): a send
    /// made while it is delivering, for example by a `replies` observer while the automaton processes
    /// an input that came through the signal, waits until that delivery returns, that is until the
    /// automaton has processed everything queued meanwhile.
    private mutating func sendThroughSignal(_ input: Int) {
        inputSignalPending.append(input)
        guard !inputSignalDelivering else { return }
        inputSignalDelivering = true
        defer { inputSignalDelivering = false }
        while !inputSignalPending.isEmpty {
            send(inputSignalPending.removeFirst(), from: nil)
        }
    }

    /// An outside input from the test or an observer, through the signal or `send`. Ignored once the
    /// input signal has ended or the automaton is released.
    private mutating func sendOutside(_ input: Int, throughSignal: Bool) {
        guard phase == .active else { return }
        if throughSignal {
            sendThroughSignal(input)
        } else {
            send(input, from: nil)
        }
    }

    private mutating func process(_ input: Int, from origin: Int?) {
        outcome.mappingCalls += 1
        let fromState = state
        let fuseHolds = outcome.mappingCalls <= GeneratedCase.mappingFuse
        if !fuseHolds { coverage.fuseBlew = true }
        guard fuseHolds, let (toState, effect, keying) = testCase.transition(state: state, input: input) else {
            coverage.failures += 1
            reply(.failure(input, fromState))
            return
        }
        coverage.successes += 1
        // The effects this input cancels, in order, and whether by a `.cancel` row.
        var cancelled: [(id: Int, byCancelRow: Bool)] = []
        let isLatest = testCase.kind.isLatest
        if isLatest, let previous = origin.map({ effects[$0].latestChild }) ?? rootLatestChild {
            if origin == nil, queueHead < queue.count, !effects[previous].cancelled {
                coverage.outsideReplacementsWithQueuedInputs += 1
            }
            cancelChain(from: previous, byCancelRow: false, into: &cancelled)
        }
        if case let .cancel(keys) = keying {
            for key in keys {
                let before = cancelled.count
                cancelGroup(key, byCancelRow: true, into: &cancelled)
                coverage.keyedCancellations += cancelled.count - before
            }
        }

        enum Decision { case none, start(Int), drop(Int), wait }
        var decision = Decision.none
        // The effect that becomes the level's latest child: only an un-keyed one.
        var treeChild: Int?
        if let effect {
            switch keying {
            case nil where effect != .empty:
                let id = newEffect(effect, input: input, key: nil)
                treeChild = id
                decision = .start(id)
            case nil, .cancel?:
                break
            case let .keyed(key, policy)?:
                // Even `.empty.keyed(...)` is an effect: it starts and ends at once.
                let id = newEffect(effect, input: input, key: key)
                let isBusy = groups[key].map { !$0.running.isEmpty || !$0.waiting.isEmpty } ?? false
                switch policy {
                case .latest:
                    let before = cancelled.count
                    cancelGroup(key, byCancelRow: false, into: &cancelled)
                    coverage.keyedReplacements += cancelled.count - before
                    decision = .start(id)
                case .first where isBusy:
                    coverage.keyedDrops += 1
                    decision = .drop(id)
                case .queue where isBusy:
                    coverage.keyedWaits += 1
                    groups[key, default: KeyGroup()].waiting.append(id)
                    decision = .wait
                default:
                    decision = .start(id)
                }
                if case .start = decision {
                    groups[key, default: KeyGroup()].running.append(id)
                }
            }
        }
        if isLatest {
            if let origin {
                effects[origin].latestChild = treeChild
            } else {
                rootLatestChild = treeChild
            }
        }
        for (id, byCancelRow) in cancelled {
            effectEvent(id, .cancelled(byCancelRow ? .cancelled(by: input) : .replaced(by: input)))
        }

        state = toState
        outcome.states.append(toState)
        let stateCount = outcome.states.count
        for send in testCase.observerSends where send.watchesState && send.after == stateCount {
            sendOutside(send.input, throughSignal: send.throughSignal)
        }
        reply(.success(input, fromState, toState))

        switch decision {
        case .none, .wait:
            break
        case let .start(id):
            effectEvent(id, .started(by: input))
            start(id)
        case let .drop(id):
            effects[id].cancelled = true
            effectEvent(id, .cancelled(.dropped(by: input)))
        }
    }

    private mutating func newEffect(_ spec: EffectSpec, input: Int, key: Int?) -> Int {
        effects.append(Effect(spec: spec, input: input, key: key))
        return effects.count - 1
    }

    /// Sends a reply; the `replies` observer may send an outside input, queued behind everything.
    private mutating func reply(_ reply: Reply<Int, Int>) {
        outcome.replies.append(.value(reply))
        if phase == .inputCompleted { coverage.repliesAfterInputCompleted += 1 }
        let count = outcome.replies.count
        for send in testCase.observerSends where !send.watchesState && send.after == count {
            sendOutside(send.input, throughSignal: send.throughSignal)
        }
    }

    /// Cancels `first` and its chain of latest children, down to the first one cancelled before. Only
    /// effects that are still running get an event.
    private mutating func cancelChain(
        from first: Int, byCancelRow: Bool, into cancelled: inout [(id: Int, byCancelRow: Bool)]
    ) {
        var current: Int? = first
        while let id = current, !effects[id].cancelled {
            effects[id].cancelled = true
            coverage.cancelledEffects += 1
            if !effects[id].ended {
                cancelled.append((id, byCancelRow))
            }
            current = effects[id].latestChild
        }
    }

    /// Cancels every running effect of `key` (with its chain), in start order, then every waiting one.
    private mutating func cancelGroup(
        _ key: Int, byCancelRow: Bool, into cancelled: inout [(id: Int, byCancelRow: Bool)]
    ) {
        guard let group = groups.removeValue(forKey: key) else { return }
        for id in group.running {
            cancelChain(from: id, byCancelRow: byCancelRow, into: &cancelled)
        }
        for id in group.waiting where !effects[id].cancelled {
            effects[id].cancelled = true
            cancelled.append((id, byCancelRow))
        }
    }

    // MARK: Effects

    /// What the effect's start handler does, in its order: synchronous emissions are sent (queued
    /// behind the current input if one is being processed, else processed at once), delayed ones and
    /// the end are scheduled.
    private mutating func start(_ id: Int) {
        startOrder.append(id)
        switch effects[id].spec {
        case .empty:
            effectEnded(id)
        case let .values(inputs), let .closure(inputs):
            // A closure keeps no `send`: once it returns nothing can send into it, so it has ended.
            for input in inputs { send(input, from: id) }
            effectEnded(id)
        case let .pending(inputs):
            for input in inputs { send(input, from: id) }
        case let .scheduled(emissions, completion, _):
            startEmissions(emissions, of: id)
            if let completion {
                schedule(.complete(effect: id), after: completion)
            } else {
                effectEnded(id)
            }
        case let .delayed(inputs, delay):
            for input in inputs { schedule(.emit(effect: id, input: input), after: delay) }
            schedule(.complete(effect: id), after: delay)
        case let .closureScheduled(emissions):
            // Its scheduled actions keep `send`: it ends once the last of them has run, or at once if
            // there is none.
            startEmissions(emissions, of: id)
            if let last = emissions.compactMap(\.delay).max() {
                schedule(.complete(effect: id), after: last)
            } else {
                effectEnded(id)
            }
        }
    }

    private mutating func startEmissions(_ emissions: [Emission], of id: Int) {
        for emission in emissions {
            if let delay = emission.delay {
                schedule(.emit(effect: id, input: emission.input), after: delay)
            } else if !effects[id].cancelled {
                send(emission.input, from: id)
            }
        }
    }

    /// The effect ended by itself (unless it was cancelled before): if it was its key's last running
    /// effect, the oldest waiting one of the key starts.
    private mutating func effectEnded(_ id: Int) {
        guard !effects[id].cancelled, !effects[id].ended else { return }
        effects[id].ended = true
        effectEvent(id, .ended)
        if let key = effects[id].key, var group = groups[key] {
            group.running.removeAll { $0 == id }
            var next: Int?
            if group.running.isEmpty, !group.waiting.isEmpty {
                next = group.waiting.removeFirst()
                group.running.append(next!)
            }
            groups[key] = group.running.isEmpty && group.waiting.isEmpty ? nil : group
            if let next {
                coverage.keyedStartsAfterWaiting += 1
                effectEvent(next, .started(by: effects[next].input))
                start(next)
            }
        }
        completeRepliesIfFinished()
    }

    // MARK: Virtual time

    private mutating func schedule(_ event: TimedEvent, after delay: Int) {
        timeline.append(TimedAction(due: now + delay, sequence: nextSequence, event: event))
        nextSequence += 1
    }

    /// Runs the actions due up to `limit` (all of them if `nil`) in (instant, scheduling order),
    /// those they schedule included, then moves the clock to `limit`.
    private mutating func runTimeline(upTo limit: Int?) {
        while let index = timeline.indices.min(by: {
            (timeline[$0].due, timeline[$0].sequence) < (timeline[$1].due, timeline[$1].sequence)
        }), limit.map({ timeline[index].due <= $0 }) ?? true {
            let action = timeline.remove(at: index)
            now = max(now, action.due)
            switch action.event {
            case let .outside(input, throughSignal):
                sendOutside(input, throughSignal: throughSignal)
            case .end:
                end()
            case let .emit(effect, input):
                if effects[effect].cancelled || effects[effect].ended || phase == .terminated {
                    coverage.droppedTimedEmissions += 1
                } else {
                    send(input, from: effect)
                }
            case let .complete(effect):
                effectEnded(effect)
            }
        }
        if let limit { now = max(now, limit) }
    }
}
