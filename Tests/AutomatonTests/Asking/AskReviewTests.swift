import Automaton
import Dispatch
import Foundation
import Signals
import Testing

// An adversarial review of `ask` ("Request and reply (`ask`)" in APIContracts.md): each test tries to
// break one rule of the contract, on one path of the engine, and stays as a regression test of it.

/// The probe machine's inputs: each successful one adds its `n` to the state.
enum ProbeInput: Sendable, Hashable, CustomStringConvertible {
    /// No effect.
    case plain(Int)
    /// No row: a `.failure` reply.
    case fail
    /// An effect that runs until `ProbeEffects.end(n)`.
    case effect(Int)
    /// An effect keyed "k" under the policy, running until `ProbeEffects.end(n)`.
    case keyed(Int, EffectPolicy)
    /// A `SignalProducer(value: .plain(n * 10))`: a known value.
    case known(Int)
    /// A `.cancel("k")` row.
    case cancelKey
    /// An effect that sends `.plain(n * 10)` as it starts, then ends.
    case sends(Int)

    var description: String {
        switch self {
        case let .plain(n): return "plain(\(n))"
        case .fail: return "fail"
        case let .effect(n): return "effect(\(n))"
        case let .keyed(n, policy): return "keyed(\(n), \(policy))"
        case let .known(n): return "known(\(n))"
        case .cancelKey: return "cancelKey"
        case let .sends(n): return "sends(\(n))"
        }
    }
}

/// What the probe machine's effects do: each logs its start, and a running one can be ended.
final class ProbeEffects: Sendable {
    let log = Recording<String>()
    private let running = Locked<[Int: Observer<ProbeInput, Never>]>([:])
    /// Called in the mapping, on the processing thread, before it returns (for a test to hold it there).
    let onMapping = Locked<(@Sendable (ProbeInput) -> Void)?>(nil)

    /// An effect that logs its start and runs until `end(n)`.
    func held(_ n: Int) -> SignalProducer<ProbeInput, Never> {
        SignalProducer { observer, _ in
            self.log.append("effect \(n) started")
            self.running.withCriticalRegion { $0[n] = observer }
        }
    }

    /// Ends the running effect of `n`.
    func end(_ n: Int) {
        let observer = running.withCriticalRegion { $0.removeValue(forKey: n) }
        observer?.sendCompleted()
    }

    func mapping() -> Automaton<Int, ProbeInput>.EffectMapping {
        { state, input in
            self.onMapping.withCriticalRegion { $0 }?(input)
            switch input {
            case let .plain(n): return (state + n, .empty)
            case .fail: return nil
            case let .effect(n): return (state + n, self.held(n))
            case let .keyed(n, policy): return (state + n, self.held(n).keyed("k", policy))
            case let .known(n): return (state + n, SignalProducer(value: .plain(n * 10)))
            case .cancelKey: return (state, .cancel("k"))
            case let .sends(n):
                return (
                    state + n,
                    SignalProducer { observer, _ in
                        self.log.append("effect \(n) started")
                        observer.send(value: .plain(n * 10))
                        observer.sendCompleted()
                    }
                )
            }
        }
    }

    func makeAutomaton(
        input: Signal<ProbeInput, Never>? = nil, strategy: AutomatonStrategy = .merge
    ) -> Automaton<Int, ProbeInput> {
        if let input { return Automaton(state: 0, input: input, mapping: mapping(), strategy: strategy) }
        return Automaton(state: 0, mapping: mapping(), strategy: strategy)
    }
}

typealias ProbeAnswer = Result<Reply<Int, ProbeInput>, AskError>

/// Lets go of the automaton `holder` holds: the last reference, if nothing else holds it.
func letGo<Object: Sendable>(_ holder: Locked<Object?>) {
    let released = holder.withCriticalRegion { held in
        defer { held = nil }
        return held
    }
    withExtendedLifetime(released) {}
}

/// One line per answer: `answer <input>: <reply or error>`.
func describe(_ input: ProbeInput, _ answer: ProbeAnswer) -> String {
    switch answer {
    case let .success(reply): return "answer \(input): \(reply)"
    case let .failure(error): return "answer \(input): \(error)"
    }
}

private var rounds: Int { LongTests.isEnabled ? 400 : 40 }

@Suite("Ask, reviewed: every rule of the contract attacked on every path")
struct AskReviewTests {
    // MARK: Order: replies observers, processing observers, the waiter, then the effect's start

    /// Runs `prelude` on a fresh probe automaton, then asks `input` with a callback, and returns what
    /// was logged from the ask on: replies, processing records, effect events, effects' starts, answers.
    private func orderLog(
        observed: Bool = true,
        prelude: (Automaton<Int, ProbeInput>, ProbeEffects) -> Void = { _, _ in },
        asking input: ProbeInput,
        then: (Automaton<Int, ProbeInput>, ProbeEffects) -> Void = { _, _ in }
    ) -> [String] {
        let probe = ProbeEffects()
        let automaton = probe.makeAutomaton()
        automaton.replies.observeValues { probe.log.append("reply \($0)") }
        if observed {
            automaton.observeProcessing { probe.log.append("processing #\($0.number) \($0.reply)") }
            automaton.effectEvents.observeValues { probe.log.append("event \($0)") }
        }
        prelude(automaton, probe)
        let start = probe.log.count
        automaton.ask(input) { probe.log.append(describe(input, $0)) }
        then(automaton, probe)
        return Array(probe.log.values.dropFirst(start))
    }

    @Test("order on the effect-free paths: a failure and a plain success answer after both observers")
    func orderWithoutEffect() {
        #expect(
            orderLog(asking: .fail) == [
                "reply failure(fail, 0)", "processing #1 failure(fail, 0)", "answer fail: failure(fail, 0)",
            ])
        #expect(
            orderLog(asking: .plain(1)) == [
                "reply success(plain(1), 0 => 1)", "processing #1 success(plain(1), 0 => 1)",
                "answer plain(1): success(plain(1), 0 => 1)",
            ])
    }

    @Test("order on the effect path: the answer comes after the observers, before the effect's event and start")
    func orderWithEffect() {
        #expect(
            orderLog(asking: .effect(1)) == [
                "reply success(effect(1), 0 => 1)", "processing #1 success(effect(1), 0 => 1)",
                "answer effect(1): success(effect(1), 0 => 1)", "event effect 0 started by effect(1)",
                "effect 1 started",
            ])
    }

    @Test(
        "order for keyed effects: .latest replacing, .merge and .queue with a free key: cancellation, reply, answer, start",
        arguments: [EffectPolicy.latest, .merge, .queue, .first])
    func orderWithKeyedEffect(policy: EffectPolicy) {
        let log = orderLog(asking: .keyed(1, policy))
        #expect(
            log == [
                "reply success(keyed(1, \(policy)), 0 => 1)", "processing #1 success(keyed(1, \(policy)), 0 => 1)",
                "answer keyed(1, \(policy)): success(keyed(1, \(policy)), 0 => 1)",
                "event effect 0 [k] started by keyed(1, \(policy))", "effect 1 started",
            ])
        // A second one of the key: replaced (.latest), run beside it (.merge), waits (.queue) or dropped (.first).
        let second = orderLog(
            prelude: { automaton, _ in automaton.send(.keyed(1, policy)) }, asking: .keyed(2, policy))
        let head = [
            "reply success(keyed(2, \(policy)), 1 => 3)", "processing #2 success(keyed(2, \(policy)), 1 => 3)",
            "answer keyed(2, \(policy)): success(keyed(2, \(policy)), 1 => 3)",
        ]
        switch policy {
        case .latest:
            #expect(
                second == ["event effect 0 [k] replaced by keyed(2, latest)"] + head + [
                    "event effect 1 [k] started by keyed(2, latest)", "effect 2 started",
                ])
        case .merge:
            #expect(second == head + ["event effect 1 [k] started by keyed(2, merge)", "effect 2 started"])
        case .queue:
            #expect(second == head)
        default:
            #expect(second == head + ["event effect 1 [k] dropped by keyed(2, first)"])
        }
    }

    @Test("order for a .cancel row: the cancellation, then the reply, the record and the answer")
    func orderWithCancelRow() {
        #expect(
            orderLog(
                prelude: { automaton, _ in automaton.send(.keyed(1, .latest)) }, asking: .cancelKey
            ) == [
                "event effect 0 [k] cancelled by cancelKey", "reply success(cancelKey, 1 => 1)",
                "processing #2 success(cancelKey, 1 => 1)", "answer cancelKey: success(cancelKey, 1 => 1)",
            ])
    }

    @Test("order for an effect that sends at once: answered before it starts, its input processed after")
    func orderWithSynchronousEffect() {
        #expect(
            orderLog(asking: .sends(1)) == [
                "reply success(sends(1), 0 => 1)", "processing #1 success(sends(1), 0 => 1)",
                "answer sends(1): success(sends(1), 0 => 1)", "event effect 0 started by sends(1)",
                "effect 1 started", "event effect 0 ended", "reply success(plain(10), 1 => 11)",
                "processing #2 success(plain(10), 1 => 11)",
            ])
    }

    @Test("order for a known value (run with no record: nobody observes processing or effect events)")
    func orderWithKnownValue() {
        #expect(
            orderLog(observed: false, asking: .known(1)) == [
                "reply success(known(1), 0 => 1)", "answer known(1): success(known(1), 0 => 1)",
                "reply success(plain(10), 1 => 11)",
            ])
        // An input asked by the answer's callback is queued before the value, as a start handler's
        // value would be queued behind it.
        let probe = ProbeEffects()
        let automaton = probe.makeAutomaton()
        automaton.replies.observeValues { probe.log.append("reply \($0)") }
        automaton.ask(.known(1)) { answer in
            probe.log.append(describe(.known(1), answer))
            automaton.ask(.plain(2)) { probe.log.append(describe(.plain(2), $0)) }
        }
        #expect(
            probe.log.values == [
                "reply success(known(1), 0 => 1)", "answer known(1): success(known(1), 0 => 1)",
                "reply success(plain(2), 1 => 3)", "answer plain(2): success(plain(2), 1 => 3)",
                "reply success(plain(10), 3 => 13)",
            ])
    }

    @Test("order for a row forwarding to a child: the parent's answer comes before the child processes the input")
    func orderWithForwardingRow() {
        let log = Recording<String>()
        let kids = ChildAutomata<Int, Int, Int>("kids") { _ in
            let child = Automaton<Int, Int>(state: 0) { state, input in state + input }
            child.replies.observeValues { log.append("child reply \($0)") }
            return child
        }
        let parent = Automaton<Int, ProbeInput>(state: 0) { state, input in
            switch input {
            case .effect: return (state, kids.start(1, replies: { .plain($0.toState ?? -1) }))
            case .known: return (state + 1, kids.send(5, to: 1))
            case let .plain(n): return (state + n, .empty)
            default: return nil
            }
        }
        parent.replies.observeValues { log.append("reply \($0)") }
        parent.observeProcessing { log.append("processing #\($0.number) \($0.reply)") }
        parent.send(.effect(0))
        let start = log.count
        parent.ask(.known(0)) { log.append(describe(.known(0), $0)) }
        #expect(
            Array(log.values.dropFirst(start)) == [
                "reply success(known(0), 0 => 1)", "processing #2 success(known(0), 0 => 1)",
                "answer known(0): success(known(0), 0 => 1)", "child reply success(5, 0 => 5)",
                "reply success(plain(5), 1 => 6)", "processing #3 success(plain(5), 1 => 6)",
            ])
    }

    @Test(
        "a .queue effect that waited may start (its predecessor ending meanwhile) before its input's answer: documented"
    )
    func queueWaiterMayStartBeforeTheAnswer() {
        let probe = ProbeEffects()
        let automaton = probe.makeAutomaton()
        automaton.send(.keyed(1, .queue))
        automaton.replies.observeValues { reply in
            probe.log.append("reply \(reply)")
            // The predecessor ends now, during the reply, on this thread: the waiting effect starts here.
            if reply.input == .keyed(2, .queue) { probe.end(1) }
        }
        let start = probe.log.count
        automaton.ask(.keyed(2, .queue)) { probe.log.append(describe(.keyed(2, .queue), $0)) }
        #expect(
            Array(probe.log.values.dropFirst(start)) == [
                "reply success(keyed(2, queue), 1 => 3)", "effect 2 started",
                "answer keyed(2, queue): success(keyed(2, queue), 1 => 3)",
            ])
    }

    // MARK: Inputs never processed: answered, after replies ended, never twice, never hanging

    @Test("an input whose commit an interruption aborts (it came during the mapping) is answered after replies ended")
    func abortedCommitAnsweredAfterRepliesEnded() async {
        let (input, inputObserver) = Signal<ProbeInput, Never>.pipe()
        let probe = ProbeEffects()
        let automaton = probe.makeAutomaton(input: input)
        automaton.replies.observe { probe.log.append("replies \($0)") }
        let inMapping = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        probe.onMapping.withCriticalRegion {
            $0 = { input in
                guard input == .effect(1) else { return }
                inMapping.signal()
                proceed.wait()
            }
        }
        let done = DispatchGroup()
        done.enter()
        Thread {
            automaton.ask(.effect(1)) { probe.log.append(describe(.effect(1), $0)) }
            done.leave()
        }.start()
        #expect(await Watchdog.signalled(inMapping))
        // Queued behind the input in the mapping, then dropped by the interruption.
        automaton.ask(.plain(2)) { probe.log.append(describe(.plain(2), $0)) }
        inputObserver.sendInterrupted()
        proceed.signal()
        await waitOrFail(done, timeout: 60)
        #expect(
            probe.log.values == [
                "replies interrupted",
                "answer effect(1): not answered: the automaton's input was interrupted",
                "answer plain(2): not answered: the automaton's input was interrupted",
            ])
    }

    @Test("an input whose commit the automaton's release aborts is answered .released after replies completed")
    func abortedCommitAnsweredAfterReleaseCompletedReplies() async {
        let probe = ProbeEffects()
        let holder = Locked<Automaton<Int, ProbeInput>?>(probe.makeAutomaton())
        // Weak to the automaton while it processes: the automaton asked through is let go of meanwhile.
        let send = holder.withCriticalRegion { $0!.sender }
        let inMapping = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let inReply = DispatchSemaphore(value: 0)
        let asked = DispatchSemaphore(value: 0)
        probe.onMapping.withCriticalRegion {
            $0 = { input in
                guard input == .effect(2) else { return }
                inMapping.signal()
                proceed.wait()
            }
        }
        holder.withCriticalRegion { automaton in
            _ = automaton!.replies.observe { event in
                probe.log.append("replies \(event)")
                guard case .value(.success(.plain(1), _, _)) = event else { return }
                inReply.signal()
                asked.wait()
            }
        }
        let done = DispatchGroup()
        done.enter()
        Thread {
            send(.plain(1))
            done.leave()
        }.start()
        #expect(await Watchdog.signalled(inReply))
        holder.withCriticalRegion { $0 }?.ask(.effect(2)) { probe.log.append(describe(.effect(2), $0)) }
        asked.signal()
        #expect(await Watchdog.signalled(inMapping))
        letGo(holder)
        proceed.signal()
        await waitOrFail(done, timeout: 60)
        #expect(
            probe.log.values == [
                "replies value(success(plain(1), 0 => 1))", "replies completed",
                "answer effect(2): not answered: automaton released",
            ])
    }

    @Test(
        "an interruption races asks of effect inputs from 3 threads: each answered once; .interrupted only after replies ended"
    )
    func interruptionRacesCommitsAnswersAfterTheEnd() async {
        for round in 0..<rounds {
            let (input, inputObserver) = Signal<ProbeInput, Never>.pipe()
            let probe = ProbeEffects()
            let automaton = probe.makeAutomaton(input: input, strategy: round % 2 == 0 ? .merge : .latest)
            let repliesEnded = Locked(false)
            let replyCount = Locked(0)
            automaton.replies.observe { event in
                if case .value = event {
                    replyCount.withCriticalRegion { $0 += 1 }
                } else {
                    repliesEnded.withCriticalRegion { $0 = true }
                }
            }
            let outcomes = Recording<String>()
            let perThread = 60
            await runOnThreads(4, timeout: 60) { thread in
                guard thread < 3 else {
                    for _ in 0..<(round % 7) * 20 { _ = automaton.acceptsInputs }
                    inputObserver.sendInterrupted()
                    return
                }
                for index in 0..<perThread {
                    let asked: ProbeInput =
                        switch index % 4 {
                        case 0: .effect(1)
                        case 1: .keyed(1, .latest)
                        case 2: .sends(1)
                        default: .plain(1)
                        }
                    let tag = thread * 1000 + index
                    let inCall = Locked(true)
                    automaton.ask(asked) { answer in
                        switch answer {
                        case .success: outcomes.append("\(tag) replied")
                        case .failure(.interrupted):
                            // Refused (asked once the termination was decided), it is answered in the
                            // call, maybe before replies ended; dropped or aborted, after they ended.
                            let ended = repliesEnded.withCriticalRegion { $0 }
                            let refusedMaybe = inCall.withCriticalRegion { $0 }
                            outcomes.append(
                                ended || refusedMaybe ? "\(tag) interrupted" : "\(tag) interrupted before replies ended"
                            )
                        case let .failure(error): outcomes.append("\(tag) unexpected \(error)")
                        }
                    }
                    inCall.withCriticalRegion { $0 = false }
                }
            }
            let values = outcomes.values
            #expect(values.count == 3 * perThread)
            #expect(Set(values.map { $0.split(separator: " ")[0] }).count == 3 * perThread)
            #expect(!values.contains { $0.contains("unexpected") || $0.contains("before") }, "\(values)")
            // The replied ones are the outside inputs among the replies (the .sends effects add theirs).
            let replied = values.filter { $0.hasSuffix("replied") }.count
            #expect(replied <= replyCount.withCriticalRegion { $0 })
            #expect(repliesEnded.withCriticalRegion { $0 })
        }
    }

    @Test("inputs queued before the input completed are answered; asks after are refused, never queued")
    func completionRacesAsks() async {
        for _ in 0..<rounds {
            let (input, inputObserver) = Signal<ProbeInput, Never>.pipe()
            let probe = ProbeEffects()
            let automaton = probe.makeAutomaton(input: input)
            let replies = Recording<String>()
            automaton.replies.observeValues { replies.append("\($0.input)") }
            let outcomes = Recording<String>()
            await runOnThreads(4, timeout: 60) { thread in
                guard thread < 3 else {
                    inputObserver.sendCompleted()
                    return
                }
                for index in 0..<50 {
                    // Tags from 100,000: an effect's `.plain(tag * 10)` has none of them.
                    let tag = 100_000 + thread * 1000 + index
                    let asked: ProbeInput = index % 2 == 0 ? .plain(tag) : .sends(tag)
                    let inCall = Locked(true)
                    automaton.ask(asked) { answer in
                        let atOnce = inCall.withCriticalRegion { $0 }
                        switch answer {
                        case .success: outcomes.append("\(tag) replied")
                        case .failure(.inputCompleted):
                            // Refused: answered on the calling thread, before `ask` returns.
                            outcomes.append(atOnce ? "\(tag) refused" : "\(tag) unexpected late refusal")
                        case let .failure(error): outcomes.append("\(tag) unexpected \(error)")
                        }
                    }
                    inCall.withCriticalRegion { $0 = false }
                }
            }
            // The effects' inputs are still processed after the completion; every ask is answered.
            let values = outcomes.values
            #expect(values.count == 150)
            #expect(!values.contains { $0.contains("unexpected") })
            let refused = Set(values.filter { $0.hasSuffix("refused") }.map { String($0.split(separator: " ")[0]) })
            let processed = Set(
                replies.values.compactMap { reply -> String? in
                    guard reply.hasPrefix("plain(") || reply.hasPrefix("sends(") else { return nil }
                    return String(reply.dropFirst(6).dropLast())
                })
            // A refused input is never processed.
            #expect(refused.isDisjoint(with: processed))
            #expect(automaton.isTerminated && !automaton.acceptsInputs)
        }
    }

    @Test("callbacks of dropped inputs that ask again are refused at once with the termination's cause")
    func askingFromADroppedInputsCallback() {
        for interrupt in [true, false] {
            let (input, inputObserver) = Signal<ProbeInput, Never>.pipe()
            let probe = ProbeEffects()
            let holder = Locked<Automaton<Int, ProbeInput>?>(probe.makeAutomaton(input: input))
            let automaton = WeakBox(holder.withCriticalRegion { $0 })
            holder.withCriticalRegion { held in
                _ = held!.replies.observe { event in
                    probe.log.append("replies \(event)")
                    guard case .value(.success(.plain(1), _, _)) = event else { return }
                    for n in 2...3 {
                        automaton.object?.ask(.plain(n)) { answer in
                            probe.log.append(describe(.plain(n), answer))
                            // Asked again during the termination: refused on this thread, at once.
                            if let again = automaton.object {
                                again.ask(.plain(n * 10)) { probe.log.append(describe(.plain(n * 10), $0)) }
                            } else {
                                probe.log.append("released: not asked again")
                            }
                        }
                    }
                    if interrupt {
                        inputObserver.sendInterrupted()
                    } else {
                        letGo(holder)
                    }
                }
            }
            // Weak to the automaton while it processes, so that the observer can let go of the last reference.
            holder.withCriticalRegion { $0!.sender }(.plain(1))
            if interrupt {
                let why = "not answered: the automaton's input was interrupted"
                #expect(
                    probe.log.values == [
                        "replies value(success(plain(1), 0 => 1))", "replies interrupted", "answer plain(2): \(why)",
                        "answer plain(20): \(why)", "answer plain(3): \(why)", "answer plain(30): \(why)",
                    ])
            } else {
                let why = "not answered: automaton released"
                #expect(
                    probe.log.values == [
                        "replies value(success(plain(1), 0 => 1))", "replies completed", "answer plain(2): \(why)",
                        "released: not asked again", "answer plain(3): \(why)", "released: not asked again",
                    ])
            }
            withExtendedLifetime(holder) {}
        }
    }

    @Test("the answer's callback releases the automaton: its effect starts and is cancelled, queued asks get .released")
    func releasedDuringTheCallback() {
        let probe = ProbeEffects()
        let holder = Locked<Automaton<Int, ProbeInput>?>(probe.makeAutomaton())
        let automaton = WeakBox(holder.withCriticalRegion { $0 })
        // Weak to the automaton while it processes, so that the callback can let go of the last reference.
        let send = holder.withCriticalRegion { $0!.sender }
        holder.withCriticalRegion { held in
            held!.replies.observe { probe.log.append("replies \($0)") }
            held!.effectEvents.observeValues { probe.log.append("event \($0)") }
        }
        holder.withCriticalRegion { held in
            _ = held!.replies.observeValues { reply in
                guard reply.input == .plain(1) else { return }
                automaton.object?.ask(.effect(2)) { answer in
                    probe.log.append(describe(.effect(2), answer))
                    letGo(holder)
                }
                automaton.object?.ask(.plain(3)) { probe.log.append(describe(.plain(3), $0)) }
            }
        }
        send(.plain(1))
        #expect(automaton.object == nil)
        #expect(
            probe.log.values == [
                "replies value(success(plain(1), 0 => 1))", "replies value(success(effect(2), 1 => 3))",
                "answer effect(2): success(effect(2), 1 => 3)", "event effect 0 started by effect(2)",
                "effect 2 started", "replies completed", "event effect 0 cancelled: automaton released",
                "answer plain(3): not answered: automaton released",
            ])
    }

    // MARK: Reentrancy

    @Test("callbacks that ask again, 50,000 deep, on a 256 KB stack: answered in order, in constant stack")
    func chainedAsksInConstantStack() async {
        let count = 50_000
        let result = await onDedicatedThread(stackSize: 256 << 10, timeout: 120) { () -> (Int, Bool) in
            let automaton = Automaton<Int, Int>(state: 0) { state, input in state + input }
            let answered = Locked(0)
            let inOrder = Locked(true)
            @Sendable func ask(_ n: Int) {
                automaton.ask(1) { answer in
                    let expected = answered.withCriticalRegion { answered -> Bool in
                        answered += 1
                        return answered == n
                    }
                    if !expected || (try? answer.get())?.toState != n {
                        inOrder.withCriticalRegion { $0 = false }
                    }
                    if n < count { ask(n + 1) }
                }
            }
            ask(1)
            return (answered.withCriticalRegion { $0 }, inOrder.withCriticalRegion { $0 })
        }
        #expect(result?.0 == count)
        #expect(result?.1 == true)
    }

    @Test("asked from the mapping, a processing observer and an effect's start handler: queued in FIFO order")
    func askedFromUserCodeOnTheProcessingThread() {
        let probe = ProbeEffects()
        let automaton = probe.makeAutomaton()
        let weak = WeakBox(automaton)
        automaton.replies.observeValues { probe.log.append("reply \($0)") }
        // The log, not the probe: the probe keeps this closure (a cycle would leak both).
        let log = probe.log
        probe.onMapping.withCriticalRegion {
            $0 = { input in
                guard input == .plain(1) else { return }
                weak.object?.ask(.plain(2)) { log.append(describe(.plain(2), $0)) }
            }
        }
        automaton.observeProcessing { record in
            guard record.reply.input == .plain(1) else { return }
            weak.object?.ask(.sends(3)) { probe.log.append(describe(.sends(3), $0)) }
        }
        automaton.ask(.plain(1)) { probe.log.append(describe(.plain(1), $0)) }
        #expect(
            probe.log.values == [
                "reply success(plain(1), 0 => 1)", "answer plain(1): success(plain(1), 0 => 1)",
                "reply success(plain(2), 1 => 3)", "answer plain(2): success(plain(2), 1 => 3)",
                "reply success(sends(3), 3 => 6)", "answer sends(3): success(sends(3), 3 => 6)", "effect 3 started",
                "reply success(plain(30), 6 => 36)",
            ])
        // An effect's start handler that asks before it sends: its value queues behind the asked input.
        let second = ProbeEffects()
        let holder = WeakBox<Automaton<Int, Int>>()
        let machine = Automaton<Int, Int>(state: 0) { state, input in
            guard input == 1 else { return (state + input, .empty) }
            return (
                state + 1,
                SignalProducer { observer, _ in
                    holder.object?.ask(100) {
                        second.log.append("answer 100: \((try? $0.get()).map(\.description) ?? "")")
                    }
                    observer.send(value: 10)
                    observer.sendCompleted()
                }
            )
        }
        holder.object = machine
        machine.replies.observeValues { second.log.append("reply \($0)") }
        machine.send(1)
        #expect(
            second.log.values == [
                "reply success(1, 0 => 1)", "reply success(100, 1 => 101)", "answer 100: success(100, 1 => 101)",
                "reply success(10, 101 => 111)",
            ])
    }

    @Test(
        "an input sent as if from the asked input's effect, during its reply, is processed after the answer and the start"
    )
    func sentAsIfFromTheEffectDuringTheReply() {
        let probe = ProbeEffects()
        let automaton = probe.makeAutomaton()
        let weak = WeakBox(automaton)
        automaton.replies.observeValues { reply in
            probe.log.append("reply \(reply.input)")
            // Effect 0 is committed, not started yet: its input is queued as the effect's.
            if reply.input == .effect(1) { weak.object?.send(.plain(5), asIfFromEffect: 0) }
        }
        automaton.observeProcessing { record in
            probe.log.append("processing \(record.reply.input) sent by \(record.sentByEffect.map { "\($0)" } ?? "-")")
        }
        automaton.ask(.effect(1)) { probe.log.append(describe(.effect(1), $0)) }
        #expect(
            probe.log.values == [
                "reply effect(1)", "processing effect(1) sent by -", "answer effect(1): success(effect(1), 0 => 1)",
                "effect 1 started", "reply plain(5)", "processing plain(5) sent by 0",
            ])
    }

    // MARK: Numbers

    @Test("numbers count the known values run with no record: a processing observer added later continues the count")
    func numbersCountKnownValues() {
        let automaton = ProbeEffects().makeAutomaton()
        let replies = automaton.replies.record()
        for n in 1...3 { automaton.send(.known(n)) }
        let numbers = Recording<String>()
        automaton.observeProcessing { numbers.append("#\($0.number) \($0.reply.input)") }
        automaton.send(.plain(1))
        #expect(replies.values.count == 7)
        #expect(numbers.values == ["#7 plain(1)"])
        // Added during a known value's reply: the value is announced with its number, sent by no effect.
        let second = ProbeEffects().makeAutomaton()
        let records = Recording<String>()
        let weak = WeakBox(second)  // the observer must not keep its automaton alive (a leak)
        second.replies.observeValues { reply in
            guard reply.input == .known(2) else { return }
            weak.object?.observeProcessing {
                records.append("#\($0.number) \($0.reply.input) \($0.sentByEffect.map { "\($0)" } ?? "-")")
            }
        }
        second.send(.plain(1))
        second.send(.known(2))
        second.send(.plain(3))
        #expect(records.values == ["#3 plain(20) -", "#4 plain(3) -"])
    }

    @Test("numbers follow the order of replies on every path, with 3 threads sending and asking")
    func numbersFollowRepliesUnderThreads() async {
        let probe = ProbeEffects()
        let automaton = probe.makeAutomaton()
        let replies = Recording<String>()
        let records = Recording<String>()
        automaton.replies.observeValues { replies.append("\($0)") }
        automaton.observeProcessing { records.append("#\($0.number) \($0.reply)") }
        let inputs: [ProbeInput] = [.plain(1), .fail, .sends(2), .known(3), .keyed(4, .latest), .cancelKey, .effect(5)]
        await runOnThreads(3, timeout: 120) { thread in
            for index in 0..<300 {
                let input = inputs[(index + thread) % inputs.count]
                if index % 2 == 0 {
                    automaton.send(input)
                } else {
                    automaton.ask(input) { _ in }
                }
                if index % 10 == 0 { probe.end(5) }
            }
        }
        let expected = replies.values.enumerated().map { "#\($0.offset + 1) \($0.element)" }
        #expect(records.values == expected)
        #expect(records.count >= 900)
    }

    // MARK: isTerminated and acceptsInputs

    @Test(
        "isTerminated and acceptsInputs never go back, and an ask once acceptsInputs is false is refused at once",
        arguments: ["interrupted", "completed"])
    func flagsNeverGoBack(mode: String) async {
        for _ in 0..<rounds {
            let (input, inputObserver) = Signal<ProbeInput, Never>.pipe()
            let probe = ProbeEffects()
            let automaton = probe.makeAutomaton(input: input)
            automaton.send(.effect(1))
            let violations = Recording<String>()
            let stop = Locked(false)
            await runOnThreads(3, timeout: 60) { thread in
                switch thread {
                case 0:
                    // Reads the flags: isTerminated first, so that true then means the phase had moved on.
                    var sawTerminated = false
                    var sawRefusing = false
                    var polls = 0
                    while !stop.withCriticalRegion({ $0 }) || polls < 100 {
                        polls += 1
                        let terminated = automaton.isTerminated
                        let accepts = automaton.acceptsInputs
                        if sawTerminated && !terminated { violations.append("isTerminated went back") }
                        if sawRefusing && accepts { violations.append("acceptsInputs went back") }
                        if terminated && accepts { violations.append("terminated yet accepting") }
                        sawTerminated = sawTerminated || terminated
                        sawRefusing = sawRefusing || !accepts
                        if !accepts {
                            let answeredAtOnce = Locked(false)
                            automaton.ask(.plain(1)) { answer in
                                if case .success = answer { violations.append("asked when refusing, processed") }
                                answeredAtOnce.withCriticalRegion { $0 = true }
                            }
                            if !answeredAtOnce.withCriticalRegion({ $0 }) {
                                violations.append("asked when refusing, not answered at once")
                            }
                        }
                    }
                case 1:
                    for _ in 0..<200 { automaton.send(.plain(1)) }
                    if mode == "interrupted" { inputObserver.sendInterrupted() } else { inputObserver.sendCompleted() }
                default:
                    for _ in 0..<100 { _ = automaton.isTerminated }
                    probe.end(1)
                    stop.withCriticalRegion { $0 = true }
                }
            }
            #expect(violations.values.isEmpty, "\(violations.values.prefix(3))")
            #expect(automaton.isTerminated)
            #expect(!automaton.acceptsInputs)
        }
    }

    @Test("isTerminated once interrupted, even while another thread still processes; acceptsInputs false with it")
    func interruptedWhileProcessing() async {
        let (input, inputObserver) = Signal<ProbeInput, Never>.pipe()
        let probe = ProbeEffects()
        let automaton = probe.makeAutomaton(input: input)
        let inMapping = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        probe.onMapping.withCriticalRegion {
            $0 = { input in
                guard input == .plain(1) else { return }
                inMapping.signal()
                proceed.wait()
            }
        }
        let done = DispatchGroup()
        done.enter()
        Thread {
            automaton.send(.plain(1))
            done.leave()
        }.start()
        #expect(await Watchdog.signalled(inMapping))
        #expect(!automaton.isTerminated && automaton.acceptsInputs)
        inputObserver.sendInterrupted()
        #expect(automaton.isTerminated && !automaton.acceptsInputs)
        await #expect(throws: AskError.interrupted) { try await automaton.ask(.plain(2)) }
        proceed.signal()
        await waitOrFail(done, timeout: 60)
        #expect(automaton.isTerminated && !automaton.acceptsInputs)
    }

    // MARK: Memory and locks

    @Test("the callback and the input are let go of once answered, dropped or refused; none is released under a lock")
    func waiterReleasedPromptlyAndUnlocked() async {
        let result = await onDedicatedThread(timeout: 60) { () -> [String] in
            let (input, inputObserver) = Signal<ProbeInput, Never>.pipe()
            let log = Recording<String>()
            let owner = WeakBox<Automaton<Int, ProbeInput>>()
            let automaton = ProbeEffects().makeAutomaton(input: input)
            owner.object = automaton
            // A spy whose release sends to the automaton: it would wait forever for a lock held.
            let spy = { @Sendable (name: String) in
                DeinitSpy(id: 0) {
                    log.append("\(name) released")
                    owner.object?.send(.plain(1000))
                }
            }
            @Sendable func ask(_ input: ProbeInput, _ name: String) {
                let captured = spy(name)
                automaton.ask(input) { answer in
                    withExtendedLifetime(captured) {}
                    log.append(describe(input, answer))
                }
            }
            automaton.replies.observeValues { reply in
                switch reply.input {
                case .plain(1):
                    ask(.plain(2), "callback 2")  // queued: answered, then let go of
                    ask(.effect(3), "callback 3")  // queued: dropped by the interruption
                case .plain(2):
                    inputObserver.sendInterrupted()  // performed after this input
                default:
                    break
                }
            }
            ask(.plain(1), "callback 1")  // processed at once (its caller holds it until `ask` returns)
            ask(.plain(4), "callback 4")  // refused
            return log.values
        }
        let why = "not answered: the automaton's input was interrupted"
        #expect(
            result == [
                "answer plain(1): success(plain(1), 0 => 1)", "answer plain(2): success(plain(2), 1 => 3)",
                "callback 2 released", "answer effect(3): \(why)", "callback 3 released", "callback 1 released",
                "answer plain(4): \(why)", "callback 4 released",
            ])
    }

    @Test("the callback is let go of once its input's effect has started, not at the end of the effect's chain")
    func callbackReleasedBeforeTheEffect() {
        let probe = ProbeEffects()
        let automaton = probe.makeAutomaton()
        let weak = WeakBox(automaton)
        automaton.replies.observeValues { reply in
            probe.log.append("reply \(reply.input)")
            guard reply.input == .plain(1) else { return }
            // Queued: once `ask` returns, only the engine holds the callback.
            let spy = DeinitSpy(id: 0) { probe.log.append("callback released") }
            weak.object?.ask(.sends(1)) { _ in withExtendedLifetime(spy) { probe.log.append("answer") } }
        }
        automaton.send(.plain(1))
        #expect(
            probe.log.values == [
                "reply plain(1)", "reply sends(1)", "answer", "effect 1 started", "callback released",
                "reply plain(10)",
            ])
    }

    @Test("an awaited input, and the reply of a wait that ended first, are not kept once processed")
    func awaitedInputNotKept() async throws {
        let automaton = Automaton<Int, AskParcel>(state: 0) { state, _ in state + 1 }
        let released = Locked<[Int]>([])
        do {
            let reply = try await automaton.ask(
                .parcel(DeinitSpy(id: 1) { released.withCriticalRegion { $0.append(1) } }))
            #expect(reply.toState == 1)
        }
        #expect(released.withCriticalRegion { $0 } == [1])
        // A wait that timed out: the reply comes later, to nobody, and is let go of by the processing
        // thread, after the locks (the spy's release sends to the automaton).
        let inReply = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let owner = WeakBox(automaton)
        automaton.replies.observeValues { reply in
            guard reply.input == .go else { return }
            inReply.signal()
            proceed.wait()
        }
        let done = DispatchGroup()
        done.enter()
        Thread {
            automaton.send(.go)
            done.leave()
        }.start()
        #expect(await Watchdog.signalled(inReply))
        let spy = DeinitSpy(id: 2) {
            released.withCriticalRegion { $0.append(2) }
            owner.object?.send(.replace)
        }
        await #expect(throws: AskError.timedOut) {
            try await automaton.ask(.parcel(spy), timeout: .zero)
        }
        _ = consume spy
        proceed.signal()
        await waitOrFail(done, timeout: 60)
        #expect(released.withCriticalRegion { $0 } == [1, 2])
        #expect(automaton.state.value == 4)
    }

    // MARK: Cancellation and time-out

    @Test("a time-out racing the answer on the real clock: the reply or .timedOut, each input processed once")
    func timeoutRacesTheAnswer() async {
        let automaton = Automaton<Int, TaggedInput>(state: 0) { state, _ in state + 1 }
        let replies = Recording<Int>()
        automaton.replies.observeValues { reply in
            replies.append(reply.input.tag)
            // Each input takes about 20 µs of work, so that an ask waits for about its time-out.
            let start = ContinuousClock.now
            while ContinuousClock.now - start < .microseconds(20) {}
        }
        var answered = 0
        var timedOut = 0
        for round in 0..<rounds * 5 {
            let outcomes = await withTaskGroup(of: Result<Reply<Int, TaggedInput>, AskError>?.self) { group in
                for index in 0..<4 {
                    let tag = round * 4 + index
                    group.addTask {
                        do throws(AskError) {
                            let reply = try await automaton.ask(
                                TaggedInput(tag: tag), timeout: .microseconds(index * 20))
                            return reply.input.tag == tag ? .success(reply) : nil
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                var all: [Result<Reply<Int, TaggedInput>, AskError>?] = []
                for await outcome in group { all.append(outcome) }
                return all
            }
            for outcome in outcomes {
                switch outcome {
                case .success: answered += 1
                case .failure(.timedOut): timedOut += 1
                default: Issue.record("unexpected outcome \(String(describing: outcome))")
                }
            }
        }
        // Every input is processed, timed out or not: one more ask, queued behind them all, comes last.
        _ = try? await automaton.ask(TaggedInput(tag: 1_000_000))
        let count = rounds * 5 * 4
        #expect(answered + timedOut == count)
        #expect(replies.count == count + 1)
        #expect(Set(replies.values) == Set(0..<count).union([1_000_000]))
    }

    @Test("cancelling a task waiting with a time-out throws .cancelled, not .timedOut, and leaves no timer")
    func cancelledWhileWaitingWithATimeout() async {
        let automaton = Automaton<Int, Int>(state: 0) { state, input in state + input }
        let scheduler = TestScheduler()
        let inReply = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let replies = automaton.replies.record()
        automaton.replies.observeValues { reply in
            guard reply.input == 1 else { return }
            inReply.signal()
            proceed.wait()
        }
        let done = DispatchGroup()
        done.enter()
        Thread {
            automaton.send(1)
            done.leave()
        }.start()
        #expect(await Watchdog.signalled(inReply))
        let waiting = Task { try await automaton.ask(2, timeout: .seconds(5), clock: scheduler.clock) }
        await scheduler.clock.waitForSleepers(1)
        waiting.cancel()
        await #expect(throws: AskError.cancelled) { try await waiting.value }
        #expect(scheduler.pendingActionCount == 0)
        proceed.signal()
        await waitOrFail(done, timeout: 60)
        #expect(replies.values == [.value(.success(1, 0, 1)), .value(.success(2, 1, 3))])
    }
    // MARK: The end of a wait racing the answer

    @Test(
        "a wait that ends (cancelled, timed out) just as the answer comes, before the task suspends: the error or the reply",
        arguments: [AskError.cancelled, .timedOut])
    func endOfWaitRacesTheAnswer(error: AskError) async throws {
        // A chain of inputs, each sending the next from a value effect, keeps one thread processing (it
        // never gives the role back while the chain runs): the asked inputs queue behind, and that
        // thread answers each about when its task, cancelled or out of time at once, stops waiting.
        // The tasks ask once the chain runs (else one of them could end up running it), and the chain
        // stops once they have asked all they ask.
        let running = Locked(false)
        let asked = Locked(false)
        let automaton = Automaton<Int, Int>(state: 0) { state, input in
            guard input >= 0 else { return (state + 1, .empty) }
            running.withCriticalRegion { $0 = true }
            return (state, input > 0 && !asked.withCriticalRegion({ $0 }) ? SignalProducer(value: input - 1) : .empty)
        }
        let chainDone = Locked(false)
        let chain = DispatchGroup()
        chain.enter()
        Thread {
            automaton.send(LongTests.isEnabled ? 10_000_000 : 1_000_000)
            chainDone.withCriticalRegion { $0 = true }
            chain.leave()
        }.start()
        let maxAsks = LongTests.isEnabled ? 50_000 : 6_000
        while !running.withCriticalRegion({ $0 }) { await Task.yield() }
        let counts = await withTaskGroup(of: (asked: Int, answered: Int, ended: Int).self) { group in
            for _ in 0..<2 {
                group.addTask {
                    var counts = (asked: 0, answered: 0, ended: 0)
                    while counts.asked < maxAsks, !chainDone.withCriticalRegion({ $0 }) {
                        counts.asked += 1
                        let waiting = Task { () throws(AskError) -> Reply<Int, Int> in
                            if error == .cancelled {
                                withUnsafeCurrentTask { $0?.cancel() }
                                return try await automaton.ask(-1)
                            }
                            return try await automaton.ask(-1, timeout: .zero)
                        }
                        switch await waiting.result {
                        case .success: counts.answered += 1
                        case let .failure(thrown) where (thrown as? AskError) == error: counts.ended += 1
                        case let .failure(thrown): Issue.record("unexpected \(thrown)")
                        }
                    }
                    return counts
                }
            }
            var total = (asked: 0, answered: 0, ended: 0)
            for await counts in group {
                total = (total.asked + counts.asked, total.answered + counts.answered, total.ended + counts.ended)
            }
            asked.withCriticalRegion { $0 = true }
            return total
        }
        await waitOrFail(chain, timeout: 120)
        #expect(counts.answered + counts.ended == counts.asked)
        // Every asked input was processed, its wait ended or not: one more, queued behind them all.
        #expect(try await automaton.ask(-1).toState == counts.asked + 1)
    }
}

/// An input that carries a value whose release is seen.
private enum AskParcel: Sendable, Hashable {
    case go, replace
    case parcel(DeinitSpy)
}
