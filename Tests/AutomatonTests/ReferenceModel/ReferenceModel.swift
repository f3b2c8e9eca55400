import Automaton
import Signals

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
        if mappingCalls != other.mappingCalls { return "mapping calls: model \(mappingCalls), automaton \(other.mappingCalls)" }
        return "scheduled effects ended: model \(scheduledEffectsEnded), automaton \(other.scheduledEffectsEnded)"
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
/// - Endings: once the input signal completes, outside inputs are ignored and `replies` completes when
///   nothing is processing and no effect runs (neither ended nor cancelled); an interruption or a
///   release disposes every effect and interrupts (release: completes) `replies`, and nothing more
///   happens.
struct ReferenceModel {
    private struct Effect {
        let isScheduledKind: Bool
        var latestChild: Int?
        var cancelled = false
        var ended = false
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
        model.outcome.scheduledEffectsEnded = model.effects.filter(\.isScheduledKind).map { $0.ended || $0.cancelled }
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
            for id in effects.indices where !effects[id].cancelled {
                if !effects[id].ended { coverage.effectsDisposedByEnding += 1 }
                effects[id].cancelled = true
            }
            if !repliesTerminated {
                repliesTerminated = true
                outcome.replies.append(testCase.ending == .release ? .completed : .interrupted)
            }
        }
    }

    /// After the input signal completed, `replies` completes once nothing is queued or running.
    private mutating func completeRepliesIfFinished() {
        guard phase == .inputCompleted, !repliesTerminated, !isProcessing,
            !effects.contains(where: { !$0.ended && !$0.cancelled })
        else { return }
        repliesTerminated = true
        outcome.replies.append(.completed)
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
        guard fuseHolds, let (toState, effect) = testCase.transition(state: state, input: input) else {
            coverage.failures += 1
            reply(.failure(input, fromState))
            return
        }
        coverage.successes += 1
        let isLatest = testCase.kind.isLatest
        if isLatest, let previous = origin.map({ effects[$0].latestChild }) ?? rootLatestChild {
            if origin == nil, queueHead < queue.count, !effects[previous].cancelled {
                coverage.outsideReplacementsWithQueuedInputs += 1
            }
            cancelChain(from: previous)
        }
        state = toState
        outcome.states.append(toState)
        let stateCount = outcome.states.count
        for send in testCase.observerSends where send.watchesState && send.after == stateCount {
            sendOutside(send.input, throughSignal: send.throughSignal)
        }
        reply(.success(input, fromState, toState))

        var started: Int?
        if let effect, effect != .empty {
            started = effects.count
            effects.append(Effect(isScheduledKind: { if case .scheduled = effect { true } else { false } }()))
        }
        if isLatest {
            if let origin {
                effects[origin].latestChild = started
            } else {
                rootLatestChild = started
            }
        }
        if let started, let effect {
            start(effect, as: started)
        }
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

    private mutating func cancelChain(from first: Int) {
        var current: Int? = first
        while let id = current {
            if !effects[id].cancelled {
                effects[id].cancelled = true
                coverage.cancelledEffects += 1
            }
            current = effects[id].latestChild
        }
    }

    // MARK: Effects

    /// What the effect's start handler does, in its order: synchronous emissions are queued behind
    /// the current input, delayed ones and the completion are scheduled.
    private mutating func start(_ effect: EffectSpec, as id: Int) {
        switch effect {
        case .empty:
            break
        case let .values(inputs):
            for input in inputs { queue.append((input, id)) }
            effects[id].ended = true
        case let .closure(inputs):
            // It keeps no `send`: once it returns nothing can send into it, so it has ended.
            for input in inputs { queue.append((input, id)) }
            effects[id].ended = true
        case let .scheduled(emissions, completion, _):
            startEmissions(emissions, of: id)
            if let completion {
                schedule(.complete(effect: id), after: completion)
            } else {
                effects[id].ended = true
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
                effects[id].ended = true
            }
        }
    }

    private mutating func startEmissions(_ emissions: [Emission], of id: Int) {
        for emission in emissions {
            if let delay = emission.delay {
                schedule(.emit(effect: id, input: emission.input), after: delay)
            } else {
                queue.append((emission.input, id))
            }
        }
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
                if !effects[effect].cancelled {
                    effects[effect].ended = true
                    completeRepliesIfFinished()
                }
            }
        }
        if let limit { now = max(now, limit) }
    }
}
