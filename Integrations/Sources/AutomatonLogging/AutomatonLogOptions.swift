import Logging

/// What `Automaton.log(to:options:)` writes: the level of each kind of record, its message, its
/// metadata keys, and how states and inputs are described.
///
/// The defaults follow swift-log's structured-logging practice: a constant message, and the data in
/// metadata under dotted keys (`automaton.input`, `automaton.from`, ...). To tell automata apart,
/// put your own metadata on the logger you pass (`logger[metadataKey: "session.id"] = "42"`): every
/// record carries it.
///
/// | record | level | message | metadata (default keys) |
/// |---|---|---|---|
/// | a success reply | `.info` | `Input accepted` | `automaton.outcome` = `success`, `automaton.input`, `automaton.from`, `automaton.to`, `automaton.effect`¹, `automaton.sent_by_effect`² |
/// | a failure reply | `.warning` | `Input refused` | `automaton.outcome` = `failure`, `automaton.input`, `automaton.from`, `automaton.sent_by_effect`² |
/// | an effect started | `.debug` | `Effect started` | `automaton.effect_event` = `started`, `automaton.effect`, `automaton.effect_key`³, `automaton.input` (the input that started it) |
/// | an effect ended | `.debug` | `Effect ended` | `automaton.effect_event` = `ended`, `automaton.effect`, `automaton.effect_key`³ |
/// | an effect cancelled | `.debug` | `Effect cancelled` | `automaton.effect_event` = `cancelled`, `automaton.effect`, `automaton.effect_key`³, `automaton.cancellation` (`replaced`, `cancelled`, `dropped`, `exited`, `interrupted` or `released`), `automaton.input` (the input that caused it, if any) |
///
/// ¹ The id of the effect the transition made (`EffectEvent.id`), when it made one. ² The id of the
/// effect that sent the input, when an effect sent it. ³ When the effect is keyed. Set
/// `keys.processingTime` to add the input's processing time, in nanoseconds, to reply records.
public struct AutomatonLogOptions<State: Sendable, Input: Sendable>: Sendable {
    /// The level of a success reply's record; `nil` logs no success. Default `.info`.
    public var successLevel: Logger.Level?
    /// The level of a failure reply's record; `nil` logs no failure. Default `.warning`.
    public var failureLevel: Logger.Level?
    /// The level of an effect event's record; `nil` logs no effect event (and `effectEvents` is not
    /// observed). Default `.debug`.
    public var effectEventLevel: Logger.Level?
    /// The records' messages.
    public var messages: AutomatonLogMessages
    /// The records' metadata keys.
    public var keys: AutomatonLogMetadataKeys
    /// Describes an input (of a reply or an effect event) as a metadata value. Called on the thread
    /// that logs the record, only for records the logger's level lets through. Default
    /// `String(describing:)`; replace it to shorten values or to redact secrets.
    public var describeInput: @Sendable (Input) -> String
    /// Describes a state as a metadata value, as `describeInput` does an input. Default
    /// `String(describing:)`.
    public var describeState: @Sendable (State) -> String

    /// Options with the given levels, messages, keys and descriptions; every argument has the
    /// default described on its property.
    public init(
        successLevel: Logger.Level? = .info,
        failureLevel: Logger.Level? = .warning,
        effectEventLevel: Logger.Level? = .debug,
        messages: AutomatonLogMessages = AutomatonLogMessages(),
        keys: AutomatonLogMetadataKeys = AutomatonLogMetadataKeys(),
        describeInput: @escaping @Sendable (Input) -> String = { String(describing: $0) },
        describeState: @escaping @Sendable (State) -> String = { String(describing: $0) }
    ) {
        self.successLevel = successLevel
        self.failureLevel = failureLevel
        self.effectEventLevel = effectEventLevel
        self.messages = messages
        self.keys = keys
        self.describeInput = describeInput
        self.describeState = describeState
    }
}

/// The message of each kind of record `Automaton.log(to:options:)` writes.
public struct AutomatonLogMessages: Sendable {
    /// A success reply's message. Default `Input accepted`.
    public var success: Logger.Message
    /// A failure reply's message. Default `Input refused`.
    public var failure: Logger.Message
    /// An effect's start. Default `Effect started`.
    public var effectStarted: Logger.Message
    /// An effect's end. Default `Effect ended`.
    public var effectEnded: Logger.Message
    /// An effect's cancellation (or its drop, or a `.queue` effect cancelled before it started).
    /// Default `Effect cancelled`.
    public var effectCancelled: Logger.Message

    /// The default messages, or the ones given.
    public init(
        success: Logger.Message = "Input accepted",
        failure: Logger.Message = "Input refused",
        effectStarted: Logger.Message = "Effect started",
        effectEnded: Logger.Message = "Effect ended",
        effectCancelled: Logger.Message = "Effect cancelled"
    ) {
        self.success = success
        self.failure = failure
        self.effectStarted = effectStarted
        self.effectEnded = effectEnded
        self.effectCancelled = effectCancelled
    }
}

/// The metadata key of each value `Automaton.log(to:options:)` writes. A `nil` key leaves its value
/// out.
public struct AutomatonLogMetadataKeys: Sendable {
    /// The reply's outcome: `success` or `failure`. Default `automaton.outcome`.
    public var outcome: String?
    /// The reply's input; in an effect event, the input that started or cancelled the effect.
    /// Default `automaton.input`.
    public var input: String?
    /// The state the input was applied to. Default `automaton.from`.
    public var from: String?
    /// The state after a success. Default `automaton.to`.
    public var to: String?
    /// The effect's id (`EffectEvent.id`): in a reply, the effect the transition made; in an effect
    /// event, the effect it is about. Default `automaton.effect`.
    public var effect: String?
    /// The id of the effect that sent the input. Default `automaton.sent_by_effect`.
    public var sentByEffect: String?
    /// The effect's key, when it is keyed (its description). Default `automaton.effect_key`.
    public var effectKey: String?
    /// What happened to the effect: `started`, `ended` or `cancelled`. Default
    /// `automaton.effect_event`.
    public var effectEvent: String?
    /// Why an effect was cancelled: `replaced`, `cancelled`, `dropped`, `exited`, `interrupted` or
    /// `released` (see `EffectCancellation`). Default `automaton.cancellation`.
    public var cancellation: String?
    /// How long the input took to process (`InputProcessing.duration`), in whole nanoseconds.
    /// Default `nil`: left out (`automaton.processing_ns` is a good name).
    public var processingTime: String?

    /// The default keys, or the ones given.
    public init(
        outcome: String? = "automaton.outcome",
        input: String? = "automaton.input",
        from: String? = "automaton.from",
        to: String? = "automaton.to",
        effect: String? = "automaton.effect",
        sentByEffect: String? = "automaton.sent_by_effect",
        effectKey: String? = "automaton.effect_key",
        effectEvent: String? = "automaton.effect_event",
        cancellation: String? = "automaton.cancellation",
        processingTime: String? = nil
    ) {
        self.outcome = outcome
        self.input = input
        self.from = from
        self.to = to
        self.effect = effect
        self.sentByEffect = sentByEffect
        self.effectKey = effectKey
        self.effectEvent = effectEvent
        self.cancellation = cancellation
        self.processingTime = processingTime
    }
}
