import Automaton
import CoreMetrics
import _AutomatonIntegrationSupport

extension Automaton {
    /// Records this automaton's replies, effects and, if asked, input-processing time as swift-metrics
    /// metrics, from now until the returned disposable is disposed or the automaton terminates.
    ///
    /// | metric | type | dimensions | what |
    /// |---|---|---|---|
    /// | `<label>.replies` | `Counter` | `outcome` = `success` or `failure`; `input` = `inputCase(input)`, only if `inputCase` is given | one per reply |
    /// | `<label>.effects` | `Counter` | `event` = `started`, `ended` or `cancelled` | one per effect event |
    /// | `<label>.effects.running` | `Meter` | — | effects running: +1 when one starts, −1 when it ends or is cancelled |
    /// | `<label>.processing.duration` | `Timer` (nanoseconds) | — | each input's processing time (`InputProcessing.duration`), only if `recordProcessingTime` |
    ///
    /// Every metric also has `dimensions`. The metrics are made once, here (and, with `inputCase`, one
    /// replies counter per outcome and input case, when first seen), so metrics of the same label and
    /// dimensions are shared by several automata with backends that share them (most do): a few
    /// hundred session machines recorded under one label give one replies counter per outcome and one
    /// running-effects meter, their sum. The input dimension is left to `inputCase` to bound the
    /// number of time series: return the case's name, never an associated value.
    ///
    /// Costs: without `recordProcessingTime`, replies are observed through `replies` (a counter's
    /// increment per reply); with it, through `observeProcessing(_:)`, which reads a clock per input.
    /// Effect events cost a lock and a set operation each, to tell effects that started from those
    /// that never did.
    ///
    /// The running-effects meter counts the effects started since this call: effects already running
    /// are not counted, nor their end. When recording stops (disposal, or the automaton's
    /// termination), the meter is decremented by the effects still counted, so that an automaton
    /// that stops being recorded leaves the shared meter as if it had never been; at termination
    /// every running effect is cancelled first anyway. Metrics are not destroyed: they may be shared.
    ///
    /// - Threads and order: replies are counted on the thread processing the input, one at a time,
    ///   after the reply has been delivered to the `replies` observers that were there before; effect
    ///   events on the thread that sends them (see `effectEvents`), one at a time. `inputCase` is
    ///   called on the processing thread, once per reply.
    /// - Termination: when the automaton is released or its input interrupted, the last effect
    ///   events are recorded, then nothing more; the automaton and the returned disposable let go of
    ///   the metrics, the factory and `inputCase` then, even if the disposable is still held (the
    ///   same when the input completes and no effect is left running). Recording does not keep the
    ///   automaton alive.
    /// - Disposal: once `dispose()` has returned, no reply of an input whose processing starts
    ///   afterwards is counted, no effect event is recorded, and the meter has been decremented by the
    ///   effects still counted; a reply or an effect event already being recorded on another thread
    ///   may still be (so a shared meter may be off by one for that instant).
    ///
    /// - Parameters:
    ///   - label: The metrics' labels' prefix, e.g. `session`.
    ///   - dimensions: Dimensions added to every metric, e.g. `[("machine", "session")]`.
    ///   - inputCase: The `input` dimension's value for an input, e.g. its case's name; `nil` (the
    ///     default) for no `input` dimension. Keep its values few: each is a time series per outcome.
    ///   - recordProcessingTime: Whether to record each input's processing time in a timer.
    ///   - factory: The metrics backend; by default the one `MetricsSystem` was bootstrapped with.
    /// - Returns: A disposable that stops the recording. It holds nothing once recording has stopped.
    @discardableResult
    public func recordMetrics(
        label: String = "automaton",
        dimensions: [(String, String)] = [],
        inputCase: (@Sendable (Input) -> String)? = nil,
        recordProcessingTime: Bool = false,
        factory: any MetricsFactory = MetricsSystem.factory
    ) -> Disposable {
        let recorder = AutomatonMetricsRecorder<Input>(
            label: label, dimensions: dimensions, inputCase: inputCase, factory: factory)
        let recording = AutomatonMetricsRecording(recorder)
        recording.keep(
            effectEvents.observe { event in
                switch event {
                case let .value(effectEvent): recorder.record(effectEvent)
                case .completed, .interrupted: recording.stop()
                }
            })
        if recordProcessingTime {
            let timer = Timer(label: label + ".processing.duration", dimensions: dimensions, factory: factory)
            recording.keep(
                observeProcessing { record in
                    recorder.recordReply(isSuccess: record.reply.isSuccess, input: record.reply.input)
                    let (seconds, attoseconds) = record.duration.components
                    timer.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
                })
        } else {
            recording.keep(
                replies.observeValues { reply in
                    recorder.recordReply(isSuccess: reply.isSuccess, input: reply.input)
                })
        }
        return recording
    }
}

/// What `recordMetrics` returns: it holds the recorder and the observations until recording stops
/// (the disposal, or the end of `effectEvents`: the automaton's termination), then nothing, so that a
/// disposable kept after the termination keeps neither the factory, the metrics nor `inputCase`.
final class AutomatonMetricsRecording<Input: Sendable>: Disposable {
    private struct State {
        var isDisposed = false
        /// Set when recording stops: an observation kept afterwards is disposed at once.
        var isStopped = false
        var recorder: AutomatonMetricsRecorder<Input>?
        var observations: [Disposable] = []

        /// Stops, and hands over what was held, to be let go of after the lock.
        mutating func stop() -> (AutomatonMetricsRecorder<Input>?, [Disposable]) {
            isStopped = true
            defer {
                recorder = nil
                observations = []
            }
            return (recorder, observations)
        }
    }

    private let state: _IntegrationLock<State>

    init(_ recorder: AutomatonMetricsRecorder<Input>) {
        state = _IntegrationLock(State(recorder: recorder))
    }

    /// Keeps `observation` for the disposal, or disposes it at once if recording has stopped (the
    /// automaton had terminated).
    func keep(_ observation: Disposable) {
        let isKept = state.withLock { state in
            guard !state.isStopped else { return false }
            state.observations.append(observation)
            return true
        }
        if !isKept { observation.dispose() }
    }

    var isDisposed: Bool {
        state.withLock { $0.isDisposed }
    }

    /// Stops the recording (see `recordMetrics`), once; nothing after the termination.
    func dispose() {
        let (recorder, observations) = state.withLock { state -> (AutomatonMetricsRecorder<Input>?, [Disposable]) in
            guard !state.isDisposed else { return (nil, []) }
            state.isDisposed = true
            return state.stop()
        }
        for observation in observations { observation.dispose() }
        recorder?.stop()
    }

    /// `effectEvents` ended: takes the effects still counted off the meter (none: every effect has
    /// ended or been cancelled), and lets go of the recorder and the observations, after the lock.
    func stop() {
        let (recorder, observations) = state.withLock { $0.stop() }
        recorder?.stop()
        _ = observations
    }
}

/// The metrics of one `recordMetrics` call, and the effects it counts as running.
final class AutomatonMetricsRecorder<Input: Sendable>: Sendable {
    private struct CaseKey: Hashable {
        var isSuccess: Bool
        var inputCase: String
    }

    private struct Effects {
        /// The effects started, and neither ended nor cancelled, since recording began.
        var running: Set<UInt64> = []
        var isStopped = false
    }

    private let label: String
    private let dimensions: [(String, String)]
    private let factory: any MetricsFactory
    private let inputCase: (@Sendable (Input) -> String)?
    /// The replies counters by outcome alone: without `inputCase` only (with it, a series without
    /// the input dimension would be a wrong zero).
    private let outcomeCounters: (success: Counter, failure: Counter)?
    private let caseCounters = _IntegrationLock<[CaseKey: Counter]>([:])
    private let effectsStarted: Counter
    private let effectsEnded: Counter
    private let effectsCancelled: Counter
    private let runningEffects: Meter
    private let effects = _IntegrationLock(Effects())

    init(
        label: String, dimensions: [(String, String)], inputCase: (@Sendable (Input) -> String)?,
        factory: any MetricsFactory
    ) {
        self.label = label
        self.dimensions = dimensions
        self.factory = factory
        self.inputCase = inputCase
        let replies = label + ".replies"
        if inputCase == nil {
            outcomeCounters = (
                Counter(label: replies, dimensions: dimensions + [("outcome", "success")], factory: factory),
                Counter(label: replies, dimensions: dimensions + [("outcome", "failure")], factory: factory)
            )
        } else {
            outcomeCounters = nil
        }
        let effects = label + ".effects"
        effectsStarted = Counter(label: effects, dimensions: dimensions + [("event", "started")], factory: factory)
        effectsEnded = Counter(label: effects, dimensions: dimensions + [("event", "ended")], factory: factory)
        effectsCancelled = Counter(
            label: effects, dimensions: dimensions + [("event", "cancelled")], factory: factory)
        runningEffects = Meter(label: effects + ".running", dimensions: dimensions, factory: factory)
    }

    func recordReply(isSuccess: Bool, input: Input) {
        if let outcomeCounters {
            (isSuccess ? outcomeCounters.success : outcomeCounters.failure).increment()
            return
        }
        guard let inputCase else { return }
        let key = CaseKey(isSuccess: isSuccess, inputCase: inputCase(input))
        if let counter = caseCounters.withLock({ $0[key] }) {
            counter.increment()
            return
        }
        // Made with the lock released: the factory is the user's backend. Another thread may have made
        // the same counter meanwhile; the first one stored is used, and this one, if unused, is let go
        // of here, after the lock.
        let made = Counter(
            label: label + ".replies",
            dimensions: dimensions + [("outcome", isSuccess ? "success" : "failure"), ("input", key.inputCase)],
            factory: factory)
        let counter = caseCounters.withLock { counters in
            if let existing = counters[key] { return existing }
            counters[key] = made
            return made
        }
        counter.increment()
    }

    func record(_ event: EffectEvent<Input>) {
        switch event.kind {
        case .started:
            let isCounted = effects.withLock { effects in
                guard !effects.isStopped else { return false }
                effects.running.insert(event.id)
                return true
            }
            guard isCounted else { return }
            effectsStarted.increment()
            runningEffects.increment()
        case .ended, .cancelled:
            let (isCounted, wasRunning) = effects.withLock { effects in
                guard !effects.isStopped else { return (false, false) }
                return (true, effects.running.remove(event.id) != nil)
            }
            guard isCounted else { return }
            if case .ended = event.kind {
                effectsEnded.increment()
            } else {
                effectsCancelled.increment()
            }
            if wasRunning {
                runningEffects.decrement()
            }
        }
    }

    /// Stops recording effect events and takes the effects still counted off the meter. Idempotent.
    func stop() {
        let remaining = effects.withLock { effects in
            guard !effects.isStopped else { return 0 }
            effects.isStopped = true
            defer { effects.running = [] }
            return effects.running.count
        }
        if remaining > 0 {
            runningEffects.decrement(by: Double(remaining))
        }
    }
}
