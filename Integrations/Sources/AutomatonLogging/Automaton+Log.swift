import Automaton
import Logging

extension Automaton {
    /// Logs every reply and every effect event of this automaton to `logger`, as structured records,
    /// from now until the returned disposable is disposed or the automaton terminates.
    ///
    /// Each reply is one record (a success at `.info`, a failure at `.warning`), and each effect
    /// event one more (at `.debug`), with the states, inputs, outcome and effect ids as metadata;
    /// `options` sets the levels, messages, keys and descriptions (see `AutomatonLogOptions` for the
    /// records and their metadata). The logger's own level filters as usual: a record it does not let
    /// through costs a comparison, and its metadata is not built. Records carry the logger's metadata.
    ///
    /// Replies are taken from `observeProcessing(_:)`, not from `replies`, because its records say
    /// which effect sent each input and which effect its transition made: the ids that tie a reply
    /// to the effect events. This costs a clock read per input, next to which a log record (its
    /// metadata and the handler's work) is far dearer.
    ///
    /// - Threads and order: a reply's record is logged on the thread processing its input, after the
    ///   reply has been delivered to the `replies` observers and before its effect starts; an effect
    ///   event's record on the thread that sends the event (see `effectEvents`). So, for an input, the
    ///   records come in the engine's order: the effects it cancels, its reply, then the effect it
    ///   starts (except an effect that waited for its key, `.queue`: it may start, and end, on another
    ///   thread before its input's reply is logged); an effect's end comes from the thread where it
    ///   ended. Records of one kind are never
    ///   logged concurrently with each other; a reply's record and an effect event's record may be,
    ///   from two threads. The handler must be thread safe, as every `LogHandler` is.
    /// - Termination: when the automaton is released (or its input is interrupted), the cancellations
    ///   of its running effects are logged (`released` or `interrupted`), then nothing more; the
    ///   automaton lets go of `logger` and `options` then. Logging does not keep the automaton alive.
    /// - Disposal: once `dispose()` has returned, no record is logged for an input whose processing
    ///   starts afterwards, nor for an effect event decided afterwards; a record already being logged
    ///   on another thread may still finish.
    ///
    /// - Parameters:
    ///   - logger: Where the records go. Set its metadata (e.g. a session id) before passing it to
    ///     tell automata apart.
    ///   - options: Levels, messages, metadata keys and the descriptions of states and inputs.
    /// - Returns: A disposable that stops the logging.
    @discardableResult
    public func log(to logger: Logger, options: AutomatonLogOptions<State, Input> = .init()) -> Disposable {
        let logging = CompositeDisposable()
        if let level = options.effectEventLevel {
            logging += effectEvents.observeValues { event in
                logger.log(
                    level: level,
                    AutomatonLogRecords.message(of: event, options.messages),
                    metadata: AutomatonLogRecords.metadata(of: event, options))
            }
        }
        if options.successLevel != nil || options.failureLevel != nil {
            logging += observeProcessing { record in
                let isSuccess = record.reply.isSuccess
                guard let level = isSuccess ? options.successLevel : options.failureLevel else { return }
                logger.log(
                    level: level,
                    isSuccess ? options.messages.success : options.messages.failure,
                    metadata: AutomatonLogRecords.metadata(of: record, options))
            }
        }
        return logging
    }
}

/// How a reply or an effect event becomes a record's message and metadata.
enum AutomatonLogRecords {
    static func metadata<State, Input>(
        of record: InputProcessing<State, Input>, _ options: AutomatonLogOptions<State, Input>
    ) -> Logger.Metadata {
        let keys = options.keys
        var metadata: Logger.Metadata = [:]
        switch record.reply {
        case let .success(input, from, to):
            set(&metadata, keys.outcome, "success")
            set(&metadata, keys.input, .string(options.describeInput(input)))
            set(&metadata, keys.from, .string(options.describeState(from)))
            set(&metadata, keys.to, .string(options.describeState(to)))
        case let .failure(input, from):
            set(&metadata, keys.outcome, "failure")
            set(&metadata, keys.input, .string(options.describeInput(input)))
            set(&metadata, keys.from, .string(options.describeState(from)))
        }
        if let effect = record.effect {
            set(&metadata, keys.effect, .stringConvertible(effect))
        }
        if let sender = record.sentByEffect {
            set(&metadata, keys.sentByEffect, .stringConvertible(sender))
        }
        if let key = keys.processingTime {
            let (seconds, attoseconds) = record.duration.components
            metadata[key] = .stringConvertible(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
        return metadata
    }

    static func message<Input>(of event: EffectEvent<Input>, _ messages: AutomatonLogMessages)
        -> Logger.Message
    {
        switch event.kind {
        case .started: return messages.effectStarted
        case .ended: return messages.effectEnded
        case .cancelled: return messages.effectCancelled
        }
    }

    static func metadata<State, Input>(
        of event: EffectEvent<Input>, _ options: AutomatonLogOptions<State, Input>
    ) -> Logger.Metadata {
        let keys = options.keys
        var metadata: Logger.Metadata = [:]
        set(&metadata, keys.effect, .stringConvertible(event.id))
        if let effectKey = event.key {
            set(&metadata, keys.effectKey, .string(effectKey.description))
        }
        switch event.kind {
        case let .started(input):
            set(&metadata, keys.effectEvent, "started")
            set(&metadata, keys.input, .string(options.describeInput(input)))
        case .ended:
            set(&metadata, keys.effectEvent, "ended")
        case let .cancelled(cause):
            set(&metadata, keys.effectEvent, "cancelled")
            let input: Input?
            switch cause {
            case let .replaced(by):
                set(&metadata, keys.cancellation, "replaced")
                input = by
            case let .cancelled(by):
                set(&metadata, keys.cancellation, "cancelled")
                input = by
            case let .dropped(by):
                set(&metadata, keys.cancellation, "dropped")
                input = by
            case let .exited(by):
                set(&metadata, keys.cancellation, "exited")
                input = by
            case .interrupted:
                set(&metadata, keys.cancellation, "interrupted")
                input = nil
            case .released:
                set(&metadata, keys.cancellation, "released")
                input = nil
            }
            if let input {
                set(&metadata, keys.input, .string(options.describeInput(input)))
            }
        }
        return metadata
    }

    @inline(__always)
    private static func set(_ metadata: inout Logger.Metadata, _ key: String?, _ value: Logger.MetadataValue) {
        if let key { metadata[key] = value }
    }
}
