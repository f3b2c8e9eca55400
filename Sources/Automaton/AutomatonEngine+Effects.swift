import Signals

// Effects: starting one whose turn has come, an outside send as if from an effect (for test
// harnesses), and an effect's end on any thread.

extension AutomatonEngine {
    /// Starts the effect of `record`, unless it was cancelled before it could start (its lifetime has
    /// ended). Its observer is its record's (see `EffectRecord.makeObserver()`).
    @inlinable
    func start(_ record: EffectRecord<State, Input>) {
        run(record, ifNotCancelled: !record.hasEnded)
    }

    /// Takes the producer out of `record` (the thread that starts an effect is the only one that reads
    /// it) and, if `notCancelled`, runs it with the record's observer and the record as its lifetime.
    @inlinable @inline(__always)
    func run(_ record: EffectRecord<State, Input>, ifNotCancelled notCancelled: Bool) {
        guard let effect = record.effect.take(), notCancelled else { return }
        effect.run(record.makeObserver(), lifetimeOf: record)
    }

    /// Sends `input` as if the running effect `id` had sent it; dropped if it is not tracked, has ended
    /// or waits for its key (see `EngineStateMachine.send(_:from:)`).
    @usableFromInline
    func send(_ input: Input, asIfFromEffect id: EffectID) {
        guard let record = critical({ $0.tracked.record(withID: id) }) else { return }
        send(input, from: record)
    }

    /// The effect of `record` ended (or its observer was released), on this thread; `onRunner` is
    /// `isRunnerThread`, read by the caller.
    @inlinable
    func effectEnded(_ record: EffectRecord<State, Input>, onRunner: Bool) {
        if onRunner, isRunning(record) {
            runningHasEnded = true  // its later values are dropped, through the usual path
        }
        let (ended, next, completeReplies, sends) = critical { machine in
            let (ended, next, completeReplies) = machine.effectEnded(record, onRunner: onRunner)
            guard ended, !machine.effectEventsReachNobody() else { return (ended, next, completeReplies, false) }
            // Decided in the critical section that counts the effect out, so that the end of
            // `effectEvents`, decided later, comes after it.
            if machine.claimEmitter() { return (ended, next, completeReplies, true) }
            machine.queue(.value(EffectEvent(id: record.id, key: record.key, kind: .ended)))
            if let next {
                let successor = next.record
                machine.queue(.value(EffectEvent(id: successor.id, key: successor.key, kind: .started(by: next.input))))
            }
            return (ended, next, completeReplies, false)
        }
        guard ended else { return }
        if sends {
            // Sent before the lifetime ends: its cleanup is user code, and must not run while this
            // thread holds the emitter role (see `process(_:)`).
            effectEvents.sendValue { EffectEvent(id: record.id, key: record.key, kind: .ended) }
            if let next {
                let successor = next.record
                effectEvents.sendValue {
                    EffectEvent(id: successor.id, key: successor.key, kind: .started(by: next.input))
                }
            }
            finishEmitting()
        }
        record.lifetime.end()
        if let next {
            // A `.queue` effect whose turn has come starts here, on the thread where its predecessor
            // ended (not at all if a cancellation ended its lifetime meanwhile).
            start(next.record)
        }
        if completeReplies { complete() }
    }

    /// Every input has been processed and every effect has ended after the input completed.
    @inlinable
    func complete() {
        replies.send(.completed)
        endEffectEvents(with: .completed)
        dropProcessingObservers()
    }

    /// The number of effects running now (started, not ended, not cancelled); effects waiting for
    /// their key do not count.
    @usableFromInline
    var runningEffectCount: Int {
        critical { $0.runningEffects - $0.waitingEffects }
    }
}
