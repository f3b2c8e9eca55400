import Signals

// Step 3 of a transition whose row effect is `.effects(...)` (`SignalProducer.effects(_:)`): the
// elements are sorted and their records made before the lock, the machine commits them all under it
// (`EngineStateMachine.commitSeveral`), and the cancellations, the state, the reply, then the starts
// and forwards, in row order, follow with no lock held. Out of line, entered only from
// `commitStartingNothing` for a producer carrying the `.several` directive: the single effect's path
// is unchanged.

/// One step of an `.effects(...)` row after its reply, in row order.
@usableFromInline
enum SeveralEffectsStep: Sendable {
    /// Start (or drop, or leave waiting) the record at this index.
    case effect(Int)
    /// Forward an input to a child automaton (`EffectDirective.afterReply`).
    case afterReply(@Sendable (AnyObject) -> Void)

    /// One action that runs each of `actions`, in order.
    @usableFromInline
    static func all(_ actions: [@Sendable (AnyObject) -> Void]) -> @Sendable (AnyObject) -> Void {
        { (engine: AnyObject) -> Void in
            for action in actions { action(engine) }
        }
    }
}

extension AutomatonEngine {
    /// One effect that runs `effects`, in order, with the lifetime it is given (the record's, so that
    /// each can find its automaton, as an answered forward to a child does), and ends once every one
    /// has ended: the un-keyed elements of an `.effects(...)` row under `.latest`. Unlike
    /// `SignalProducer.merge`, it neither gives its elements lifetimes of their own nor serializes
    /// their values (the engine takes them from any thread).
    @usableFromInline
    static func mergedInPlace(_ effects: [SignalProducer<Input, Never>]) -> SignalProducer<Input, Never> {
        SignalProducer { observer, lifetime in
            let remaining = Locked(effects.count)
            // One observer per element: an observer may ignore what follows its first terminal event.
            let inner = {
                Observer<Input, Never> { event in
                    switch event {
                    case let .value(input):
                        observer.send(value: input)
                    case .completed, .interrupted:
                        let isLast = remaining.withCriticalRegion { remaining -> Bool in
                            remaining -= 1
                            return remaining == 0
                        }
                        if isLast { observer.sendCompleted() }
                    }
                }
            }
            for effect in effects {
                if lifetime.hasEnded { return }
                effect.run(inner(), lifetime: lifetime)
            }
        }
    }

    /// `commit(...)` for an `.effects(...)` row, whose elements are the `EffectList` `list`.
    ///
    /// Before the lock (user code is allowed here): the keys of the row that are equal by `==` are made
    /// one storage, so that under the lock no key of the row needs another's `==`; under `.latest`, the
    /// un-keyed elements are merged into one effect of the tree, at the place of the first.
    @inlinable @inline(never)
    func commitSeveral(
        _ pending: PendingInput<State, Input>, from: State, to toState: State, effects list: AnyObject & Sendable,
        observedSince start: UInt64
    ) {
        let elements = unsafeDowncast(list, to: EffectList<Input>.self).elements
        var keys: [EffectKey] = []
        // User code: each key's `==`, with no lock held.
        func canonical(_ key: EffectKey) -> EffectKey {
            if let known = keys.first(where: { $0 == key }) { return known }
            keys.append(key)
            return key
        }
        var cancelKeys: [EffectKey] = []
        var exitKeys: [EffectKey] = []
        var producers: [SignalProducer<Input, Never>?] = []  // `nil`: the merged un-keyed ones' place
        var unkeyed: [SignalProducer<Input, Never>] = []
        var steps: [SeveralEffectsStep] = []
        for element in elements {
            let box = element.directiveBox
            if let action = box?.afterReply {
                steps.append(.afterReply(action))
            } else if let keysOfElement = box?.cancelKeys {
                if box?.exits == true {
                    exitKeys.append(contentsOf: keysOfElement.map(canonical))
                } else {
                    cancelKeys.append(contentsOf: keysOfElement.map(canonical))
                }
            } else if let key = box?.key, let policy = box?.policy {
                let same = canonical(key)
                producers.append(
                    same.storage === key.storage
                        ? element : element.attaching(EffectDirectiveBox(.keyed(same, policy))))
                steps.append(.effect(producers.count - 1))
            } else if isLatest {
                if unkeyed.isEmpty {
                    producers.append(nil)
                    steps.append(.effect(producers.count - 1))
                }
                unkeyed.append(element)
            } else {
                producers.append(element)
                steps.append(.effect(producers.count - 1))
            }
        }
        if producers.isEmpty && exitKeys.isEmpty {
            // Cancellations and forwards only.
            var actions: [@Sendable (AnyObject) -> Void] = []
            for case let .afterReply(action) in steps { actions.append(action) }
            let afterReply = actions.isEmpty ? nil : SeveralEffectsStep.all(actions)
            commitCancelling(
                pending, from: from, to: toState, cancelKeys: cancelKeys, afterReply: afterReply,
                observedSince: start)
            return
        }
        let records = producers.map { producer in
            EffectRecord(
                engine: self, effect: producer ?? (unkeyed.count == 1 ? unkeyed[0] : Self.mergedInPlace(unkeyed)))
        }
        var cancelled = CancelledEffects<State, Input>()
        var decisions: [EffectDecision] = []
        decisions.reserveCapacity(records.count)
        var result = critical {
            $0.commitSeveral(
                pending, records: records, cancelKeys: cancelKeys, exitKeys: exitKeys, equalities: nil,
                mayHaveRootLatest: &mayHaveRootLatest, cancelled: &cancelled, decisions: &decisions)
        }
        if case .compareKeys = result {
            let candidates = critical { machine in
                defer { machine.occasional?.parts.pointee.undecidedKeys = [] }
                return machine.undecidedKeys
            }
            // User code: each key's `==`.
            let equalities = KeyEqualities(comparing: keys, with: candidates)
            result = critical {
                $0.commitSeveral(
                    pending, records: records, cancelKeys: cancelKeys, exitKeys: exitKeys, equalities: equalities,
                    mayHaveRootLatest: &mayHaveRootLatest, cancelled: &cancelled, decisions: &decisions)
            }
            precondition(
                result != .compareKeys,
                "Internal inconsistency: the engine's key table changed while the processing thread compared keys")
        }
        if case .aborted = result {
            for record in records { record.lifetime.end() }
            answerAborted(pending)
            return
        }
        if case .committedSendingCancellations = result {
            for effect in cancelled {
                effectEvents.sendValue { Self.cancellation(of: effect, by: pending.input) }
            }
            finishEmitting()
        }
        for effect in cancelled {
            effect.record.lifetime.end()
        }
        state = toState
        stateStorage.set(toState)
        replies.sendIfMade { .success(pending.input, from, toState) }
        if start != 0 {
            // The first effect the row made (started, waiting or dropped), as `InputProcessing.effect`.
            let first = zip(records, decisions).first { $0.1 != .none }?.0.id
            announceProcessing(
                .success(pending.input, from, toState), sentBy: pending.origin?.id, effect: first, since: start)
        }
        answer(pending, with: .success(pending.input, from, toState))
        // In row order. The first value a start handler sends at once is held (`hold`), the others are
        // queued behind it, and none is processed before the last effect of the row has started.
        var holder: EffectRecord<State, Input>?
        for step in steps {
            switch step {
            case let .afterReply(action):
                action(self)
            case let .effect(index):
                let record = records[index]
                switch decisions[index] {
                case .none, .wait:
                    break
                case .start:
                    // Replaced by a later element of its key in this row: reported cancelled above.
                    guard !record.lifetime.hasEnded else { continue }
                    emit(record, .started(by: pending.input))
                    startCommitted(record)
                    if holder == nil, heldValue != nil { holder = record }
                case .drop:
                    record.lifetime.end()
                    emit(record, .cancelled(.dropped(by: pending.input)))
                }
            }
        }
        assert(heldValue == nil || holder != nil, "Internal inconsistency: a value held by no effect of the row")
        if let value = heldValue.take(), let holder {
            held = HeldInput(input: value, origin: holder)
            if !isProcessingHeldInputs { processHeldInputs() }
        }
    }
}
