import Automaton
import Signals

/// Counts mapping calls and answers `false` once `limit` calls have been made (see
/// `GeneratedCase.mappingFuse`).
private final class MappingFuse: Sendable {
    private let calls = Locked(0)
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts one call; whether the table may answer it.
    func holds() -> Bool {
        calls.withCriticalRegion { calls in
            calls += 1
            return calls <= limit
        }
    }

    var count: Int { calls.withCriticalRegion { $0 } }
}

/// Builds the real rows with the DSL, for a case.
private struct RowBuilder {
    let stateCount: Int
    let scheduler: TestScheduler
    /// The lifetimes of the `.scheduled` effects, in start order.
    let scheduledLifetimes: Recording<Lifetime>

    /// The row without its effect, as a `Mapping`: `input | from => to` or `input | { ... }`.
    func mapping(_ row: Row) -> Automaton<Int, Int>.Mapping {
        switch row.target {
        case let .function(offset):
            guard case let .value(input) = row.input else {
                preconditionFailure(
                    "Internal inconsistency: the state-function form needs an input value, got \(row.input)")
            }
            let stateCount = self.stateCount
            return input | { ($0 + offset) % stateCount }
        case let .state(from, to):
            let transition = dslTransition(from: from, to: to)
            switch row.input {
            case let .value(input): return input | transition
            case let .predicate(predicate): return predicate.closure | transition
            case .any: return any | transition
            }
        }
    }

    /// The row with its effect: `mapping | effect`, `mapping | effect.keyed(key, policy)` or
    /// `mapping | .cancel(keys...)`.
    func effectMapping(_ row: Row) -> Automaton<Int, Int>.EffectMapping {
        let mapping = self.mapping(row)
        switch row.keying {
        case nil:
            if case let .closure(inputs) = row.effect {
                // The DSL's closure form itself.
                return mapping | { send in
                    for input in inputs { send(input) }
                }
            }
            return mapping | producer(row.effect ?? .empty)
        case let .keyed(key, policy):
            return mapping | producer(row.effect ?? .empty).keyed(key, policy)
        case let .cancel(keys):
            switch keys.count {
            case 1: return mapping | .cancel(keys[0])
            case 2: return mapping | .cancel(keys[0], keys[1])
            default: preconditionFailure("Internal inconsistency: a cancel row with \(keys.count) keys")
            }
        }
    }

    /// The effect as a producer; a closure effect as the DSL makes it (`SignalProducer.closureEffect`),
    /// whose run completes when its `send` is released.
    func producer(_ spec: EffectSpec) -> SignalProducer<Int, Never> {
        let scheduler = self.scheduler
        switch spec {
        case .empty:
            return .empty
        case let .values(inputs):
            // One even input: `SignalProducer(value:)`, whose value the engine takes without starting
            // it (`SignalProducer.knownValue`); otherwise a start handler that sends the same.
            if inputs.count == 1, inputs[0] % 2 == 0 { return SignalProducer(value: inputs[0]) }
            return SignalProducer(values: inputs)
        case let .closure(inputs):
            return .closureEffect { send in
                for input in inputs { send(input) }
            }
        case let .pending(inputs):
            // Keeps nothing: the run lives until the engine disposes of it (ReactiveSwift's run rule).
            return SignalProducer { observer, _ in
                for input in inputs { observer.send(value: input) }
            }
        case let .scheduled(emissions, completion, interrupts):
            let lifetimes = scheduledLifetimes
            let effect = SignalProducer<Int, Never> { observer, lifetime in
                lifetimes.append(lifetime)
                for emission in emissions {
                    if let delay = emission.delay {
                        lifetime += scheduler.schedule(after: .seconds(delay)) { observer.send(value: emission.input) }
                    } else {
                        observer.send(value: emission.input)
                    }
                }
                let end: @Sendable () -> Void = {
                    if interrupts { observer.sendInterrupted() } else { observer.sendCompleted() }
                }
                if let completion {
                    lifetime += scheduler.schedule(after: .seconds(completion), action: end)
                } else {
                    end()
                }
            }
            return effect
        case let .delayed(inputs, delay):
            return SignalProducer(values: inputs).delay(.seconds(delay), on: scheduler)
        case let .closureScheduled(emissions):
            return .closureEffect { send in
                for emission in emissions {
                    if let delay = emission.delay {
                        scheduler.schedule(after: .seconds(delay)) { send(emission.input) }
                    } else {
                        send(emission.input)
                    }
                }
            }
        }
    }
}

/// Holds the only strong reference to the automaton, so that a case can release it.
private final class AutomatonHolder: Sendable {
    private let stored: Locked<Automaton<Int, Int>?>

    init(_ automaton: Automaton<Int, Int>) {
        stored = Locked(automaton)
    }

    /// `automaton.send`, or nothing once it is released.
    func send(_ input: Int) {
        stored.withCriticalRegion { $0 }?.send(input)
    }

    /// Drops the reference; the automaton deinitializes on this thread, after the lock is released.
    func release() {
        let automaton = stored.withCriticalRegion { stored in
            defer { stored = nil }
            return stored
        }
        _ = automaton
    }
}

/// Builds the real automaton for `testCase`, drives it as the case says on one thread, ends it as
/// the case says, and reports what it showed. Nothing runs concurrently: every send is processed to
/// the end before the next action.
func runAutomaton(_ testCase: GeneratedCase) -> Outcome {
    let scheduler = TestScheduler()
    let builder = RowBuilder(stateCount: testCase.stateCount, scheduler: scheduler, scheduledLifetimes: Recording())
    let fuse = MappingFuse(limit: GeneratedCase.mappingFuse)
    let (input, inputObserver) = Signal<Int, Never>.pipe()

    let holder: AutomatonHolder
    let state: Property<Int>
    let replies: Recording<Event<Reply<Int, Int>, Never>>
    let states = Recording<Int>()
    let repliesSeen = Locked(0)
    let effectEvents = Recording<TimedEffectEvent>()
    do {
        let automaton: Automaton<Int, Int>
        if testCase.hasEffects {
            let table = reduce(testCase.rows.map(builder.effectMapping))
            automaton = Automaton(
                state: testCase.initialState,
                input: input,
                mapping: { state, input in fuse.holds() ? table(state, input) : nil },
                strategy: testCase.kind.strategy
            )
        } else {
            let table = reduce(testCase.rows.map(builder.mapping))
            automaton = Automaton(
                state: testCase.initialState,
                input: input,
                mapping: { state, input in fuse.holds() ? table(state, input) : nil }
            )
        }
        // The engine checks its invariants after every critical section (debug builds).
        automaton.checksInvariants = true
        holder = AutomatonHolder(automaton)
        state = automaton.state
        replies = automaton.replies.record()
        // Each effect event with the number of `replies` events before it: their interleaving.
        automaton.replies.observe { _ in repliesSeen.withCriticalRegion { $0 += 1 } }
        automaton.effectEvents.observe { event in
            effectEvents.append(TimedEffectEvent(event: event, afterReplies: repliesSeen.withCriticalRegion { $0 }))
        }
        automaton.state.signal.observeValues { states.append($0) }
        // Observers that send inputs, added after the recording ones.
        for watchesState in [true, false] {
            let observerSends = testCase.observerSends.filter { $0.watchesState == watchesState }
            guard !observerSends.isEmpty else { continue }
            let seen = Locked(0)
            let observer: @Sendable () -> Void = {
                let count = seen.withCriticalRegion { count in
                    count += 1
                    return count
                }
                for send in observerSends where send.after == count {
                    if send.throughSignal {
                        inputObserver.send(value: send.input)
                    } else {
                        holder.send(send.input)
                    }
                }
            }
            if watchesState {
                automaton.state.signal.observeValues { _ in observer() }
            } else {
                automaton.replies.observeValues { _ in observer() }
            }
        }
    }

    let send: @Sendable (OutsideInput) -> Void = { outside in
        if outside.throughSignal {
            inputObserver.send(value: outside.input)
        } else {
            holder.send(outside.input)
        }
    }
    let end: @Sendable () -> Void = {
        switch testCase.ending {
        case .completeInput: inputObserver.sendCompleted()
        case .interruptInput: inputObserver.sendInterrupted()
        case .release: holder.release()
        }
    }
    let endsBefore: Int? = if case let .beforeInput(index) = testCase.endingPoint { index } else { nil }
    if !testCase.kind.usesVirtualTime {
        for (index, outside) in testCase.inputs.enumerated() {
            if index == endsBefore { end() }
            send(outside)
        }
        if endsBefore == testCase.inputs.count { end() }
    } else {
        switch testCase.delivery {
        case .scheduledUpFront:
            for outside in testCase.inputs {
                scheduler.schedule(after: .seconds(outside.time)) { send(outside) }
            }
            if case let .atTime(time) = testCase.endingPoint {
                scheduler.schedule(after: .seconds(time), action: end)
            }
        case .advanceThenSend:
            for (index, outside) in testCase.inputs.enumerated() {
                scheduler.advance(to: .seconds(outside.time))
                if index == endsBefore { end() }
                send(outside)
            }
            if endsBefore == testCase.inputs.count { end() }
        }
        scheduler.run()
    }
    if testCase.endingPoint == .afterEverything { end() }

    let outcome = Outcome(
        replies: replies.values,
        states: states.values,
        finalState: state.value,
        mappingCalls: fuse.count,
        scheduledEffectsEnded: builder.scheduledLifetimes.values.map(\.hasEnded),
        effectEvents: effectEvents.values
    )
    holder.release()
    return outcome
}

/// `from => toState` written with the DSL, in each from-state form of `from`.
func dslTransition(from: FromPattern, to toState: Int) -> Transition<Int> {
    switch from {
    case let .value(state): state => toState
    case let .predicate(predicate): predicate.closure => toState
    case let .array(states): states => toState
    case .any: any => toState
    }
}
