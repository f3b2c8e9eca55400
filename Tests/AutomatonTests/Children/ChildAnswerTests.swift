import Automaton
import AutomatonTesting
import Dispatch
import Foundation
import Signals
import Testing

/// `send(_:to:answer:)`: the parent learns what became of an input it forwarded to a child: the
/// child's reply (accepted or refused), no child, or not processed.
@Suite struct ChildAnswerTests {
    typealias DAnswer = ChildAnswer<DownloadState, DownloadInput>
    typealias DReply = Reply<DownloadState, DownloadInput>

    enum AskingInput: Hashable, Sendable, CustomStringConvertible {
        case add(String), pause(String), tick(String), remove(String), answered(String, DAnswer), finished(String)

        var description: String {
            switch self {
            case let .add(id): return "add(\(id))"
            case let .pause(id): return "pause(\(id))"
            case let .tick(id): return "tick(\(id))"
            case let .remove(id): return "remove(\(id))"
            case let .answered(id, answer): return "answered(\(id), \(answer))"
            case let .finished(id): return "finished(\(id))"
            }
        }
    }

    /// A download manager whose forwards are answered: each answer is an input that the state counts.
    static func makeAskingManager(
        _ downloads: ChildAutomata<String, DownloadState, DownloadInput>,
        _ policy: EffectPolicy = .latest,
        strategy: AutomatonStrategy = .merge
    ) -> Automaton<Int, AskingInput> {
        Automaton(
            state: 0,
            mapping: { state, input in
                switch input {
                case let .add(id):
                    return (
                        state, downloads.start(id, policy) { reply in reply.toState == .finished ? .finished(id) : nil }
                    )
                case let .pause(id): return (state, downloads.send(.pause, to: id) { .answered(id, $0) })
                case let .tick(id): return (state, downloads.send(.tick, to: id) { .answered(id, $0) })
                case let .remove(id): return (state, downloads.remove(id))
                case .answered: return (state + 1, .empty)
                case .finished: return (state, .empty)
                }
            },
            strategy: strategy)
    }

    @Test func theParentLearnsTheChildsAcceptanceItsRefusalAndThatNoChildRuns() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        let tester = AutomatonTester(Self.makeAskingManager(downloads))
        tester.recordReplies(of: downloads)
        tester.send(.add("a"))
        tester.send(.pause("a"))
        tester.send(.pause("a"))  // paused already: the child refuses it
        tester.send(.pause("b"))  // no child b
        tester.expect([
            .success(.add("a"), 0, 0),
            .started(by: .add("a"), key: downloads.key("a")),
            .success(.pause("a"), 0, 0),
            .started(by: .pause("a")),
            .child(downloads, "a", .success(.pause, .downloading(0), .paused(0))),
            .ended(),
            .success(.answered("a", .reply(.success(.pause, .downloading(0), .paused(0)))), 0, 1),
            .success(.pause("a"), 1, 1),
            .started(by: .pause("a")),
            .child(downloads, "a", .failure(.pause, .paused(0))),
            .ended(),
            .success(.answered("a", .reply(.failure(.pause, .paused(0)))), 1, 2),
            .success(.pause("b"), 2, 2),
            .started(by: .pause("b")),
            .ended(),
            .success(.answered("b", .noChild), 2, 3),
        ])
        tester.finish(skipRunningEffects: true)
    }

    /// The input `start(replies:)` makes of the child's reply comes before the answer's: a finishing
    /// tick is first `.finished` (whose row here removes nothing), then answered.
    @Test func theAnswerComesAfterTheInputTheChildsStartMadeOfTheSameReply() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        let tester = AutomatonTester(Self.makeAskingManager(downloads))
        tester.send(.add("a"))
        for _ in 0..<3 { tester.send(.tick("a")) }
        let finishing = DReply.success(.tick, .downloading(2), .finished)
        tester.expect([
            .success(.add("a"), 0, 0),
            .started(by: .add("a"), key: downloads.key("a")),
            .success(.tick("a"), 0, 0),
            .started(by: .tick("a")),
            .ended(),
            .success(.answered("a", .reply(.success(.tick, .downloading(0), .downloading(1)))), 0, 1),
            .success(.tick("a"), 1, 1),
            .started(by: .tick("a")),
            .ended(),
            .success(.answered("a", .reply(.success(.tick, .downloading(1), .downloading(2)))), 1, 2),
            .success(.tick("a"), 2, 2),
            .started(by: .tick("a")),
            .ended(),
            .success(.finished("a"), 2, 2),
            .success(.answered("a", .reply(finishing)), 2, 3),
        ])
        tester.finish(skipRunningEffects: true)
    }

    @Test func underMergeEachChildOfTheIdAnswersOnceInStartOrder() {
        let made = Locked(0)
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in
            // The second child is paused from the start: it refuses the pause.
            let index = made.withCriticalRegion { made in
                made += 1
                return made
            }
            let child = makeDownload()
            if index == 2 { child.send(.pause) }
            return child
        }
        let tester = AutomatonTester(Self.makeAskingManager(downloads, .merge))
        tester.send(.add("a"))
        tester.send(.add("a"))
        tester.send(.pause("a"))
        tester.expect([
            .success(.add("a"), 0, 0),
            .started(by: .add("a"), key: downloads.key("a")),
            .success(.add("a"), 0, 0),
            .started(by: .add("a"), key: downloads.key("a")),
            .success(.pause("a"), 0, 0),
            .started(by: .pause("a")),
            .ended(),
            .success(.answered("a", .reply(.success(.pause, .downloading(0), .paused(0)))), 0, 1),
            .success(.answered("a", .reply(.failure(.pause, .paused(0)))), 1, 2),
        ])
        tester.finish(skipRunningEffects: true)
    }

    enum GateAsking: Hashable, Sendable {
        case start, stop, send(TwoFactorInput), answered(ChildAnswer<TwoFactorState, TwoFactorInput>)
    }

    /// A parent of one two-factor child whose forwards are answered: its state lists the answers.
    static func makeAskingGate(
        _ twoFactor: ChildAutomaton<TwoFactorState, TwoFactorInput>, strategy: AutomatonStrategy = .merge
    ) -> Automaton<[ChildAnswer<TwoFactorState, TwoFactorInput>], GateAsking> {
        Automaton(
            state: [],
            mapping: { answers, input in
                switch input {
                case .start: return (answers, twoFactor.start())
                case .stop: return (answers, twoFactor.stop())
                case let .send(input): return (answers, twoFactor.send(input) { .answered($0) })
                case let .answered(answer): return (answers + [answer], .empty)
                }
            },
            strategy: strategy)
    }

    /// A child that takes no more outside inputs (its input signal completed; an effect keeps it
    /// running) answers `.notProcessed(.inputCompleted)`; once removed, `.noChild`.
    @Test func aChildWhoseInputCompletedAnswersNotProcessedAndARemovedOneNoChild() {
        let (input, inputObserver) = Signal<TwoFactorInput, Never>.pipe()
        let twoFactor = ChildAutomaton("twoFactor") {
            Automaton(state: TwoFactorState.waiting, input: input) { state, input in
                input == .resend ? (state, SignalProducer<TwoFactorInput, Never>.never) : nil
            }
        }
        let tester = AutomatonTester(Self.makeAskingGate(twoFactor))
        tester.send(.start)
        tester.send(.send(.resend))  // the child starts an effect that never ends
        inputObserver.sendCompleted()
        tester.send(.send(.enter("1")))
        tester.send(.stop)
        tester.send(.send(.enter("2")))
        let resent = ChildAnswer<TwoFactorState, TwoFactorInput>.reply(.success(.resend, .waiting, .waiting))
        tester.expect([
            .success(.start, [], []),
            .started(by: .start, key: twoFactor.key),
            .success(.send(.resend), [], []),
            .started(by: .send(.resend)),
            .ended(),
            .success(.answered(resent), [], [resent]),
            .success(.send(.enter("1")), [resent], [resent]),
            .started(by: .send(.enter("1"))),
            .ended(),
            .success(.answered(.notProcessed(.inputCompleted)), [resent], [resent, .notProcessed(.inputCompleted)]),
            .cancelled(.cancelled(by: .stop), key: twoFactor.key),
            .success(.stop, [resent, .notProcessed(.inputCompleted)], [resent, .notProcessed(.inputCompleted)]),
            .success(
                .send(.enter("2")), [resent, .notProcessed(.inputCompleted)], [resent, .notProcessed(.inputCompleted)]),
            .started(by: .send(.enter("2"))),
            .ended(),
            .success(
                .answered(.noChild), [resent, .notProcessed(.inputCompleted)],
                [resent, .notProcessed(.inputCompleted), .noChild]),
        ])
        tester.finish()
    }

    /// A two-factor child whose mapping, for `.resend`, tells `entered` and waits for `proceed`: it
    /// holds the child busy on another thread.
    static func makeBlockingTwoFactor(
        entered: DispatchSemaphore, proceed: DispatchSemaphore
    ) -> Automaton<TwoFactorState, TwoFactorInput> {
        Automaton(state: .waiting) { state, input in
            if input == .resend {
                entered.signal()
                proceed.wait()
                return state
            }
            guard state == .waiting, case let .enter(code) = input else { return nil }
            return code == "123" ? .accepted : .rejected
        }
    }

    /// The child is busy on another thread when the parent forwards: the input waits in the child's
    /// queue; the parent removes the child, which is released once its current input is done, and
    /// the waiting input is answered `.notProcessed(.released)`.
    @Test func aChildReleasedBeforeItsTurnAnswersNotProcessedReleased() async {
        for _ in 0..<20 {
            let entered = DispatchSemaphore(value: 0)
            let proceed = DispatchSemaphore(value: 0)
            let twoFactor = ChildAutomaton("twoFactor") {
                Self.makeBlockingTwoFactor(entered: entered, proceed: proceed)
            }
            let parent = Self.makeAskingGate(twoFactor)
            parent.send(.start)
            // The child's sender holds its engine, not the child: the parent's `.stop` releases it.
            let send = twoFactor.current(in: parent)!.sender
            let busy = onThread { send(.resend) }  // blocks in the child's mapping
            entered.wait()
            parent.send(.send(.enter("123")))  // queued in the busy child
            parent.send(.stop)  // the child's effect is cancelled: released after its current input
            #expect(parent.state.value == [])
            proceed.signal()
            await waitOrFail(busy)
            #expect(parent.state.value == [.notProcessed(.released)])
        }
    }

    /// Under `.latest`, the parent's next outside success replaces the effect that waits for an answer:
    /// the answer is dropped and `answer` is not called.
    @Test func underLatestANewerOutsideInputCancelsTheWaitForAnAnswer() async {
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let twoFactor = ChildAutomaton("twoFactor") { Self.makeBlockingTwoFactor(entered: entered, proceed: proceed) }
        let mapped = Locked<[ChildAnswer<TwoFactorState, TwoFactorInput>]>([])
        // One token per forward, captured by its `answer`: what a cancelled forward keeps shows here.
        let tokens = Locked<[WeakBox<LiveObject>]>([])
        let parent = Automaton<Int, GateAsking>(
            state: 0,
            mapping: { count, input in
                switch input {
                case .start: return (count, twoFactor.start())
                case .stop: return (count, twoFactor.stop())
                case let .send(input):
                    let token = LiveObject()
                    tokens.withCriticalRegion { $0.append(WeakBox(token)) }
                    return (
                        count,
                        twoFactor.send(input) { answer in
                            withExtendedLifetime(token) {}
                            mapped.withCriticalRegion { $0.append(answer) }
                            return .answered(answer)
                        }
                    )
                case .answered: return (count + 1, .empty)
                }
            },
            strategy: .latest)
        let events = Locked<[EffectEvent<GateAsking>.Kind]>([])
        parent.effectEvents.observeValues { event in events.withCriticalRegion { $0.append(event.kind) } }
        parent.send(.start)
        let child = twoFactor.current(in: parent)!
        let busy = onThread { child.send(.resend) }  // blocks in the child's mapping
        entered.wait()
        parent.send(.send(.enter("123")))  // waits behind the child's `.resend`
        parent.send(.send(.enter("999")))  // replaces the first wait; waits too
        // The replaced forward's `answer` is let go of at its cancellation, though the child still has
        // its input queued; the waiting one's is kept.
        #expect(tokens.withCriticalRegion { $0.map { $0.object != nil } } == [false, true])
        proceed.signal()
        await waitOrFail(busy)
        #expect(mapped.withCriticalRegion { $0 } == [.reply(.failure(.enter("999"), .accepted))])
        #expect(parent.state.value == 1)
        #expect(
            events.withCriticalRegion { $0 } == [
                .started(by: .start), .started(by: .send(.enter("123"))),
                .cancelled(.replaced(by: .send(.enter("999")))), .started(by: .send(.enter("999"))), .ended,
            ])
        #expect(child.state.value == .accepted, "the child processed both inputs")
    }

    @Test func anAnsweredForwardIsLabelledAsAnEffectThatSendsToTheChild() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        let graph = Self.makeAskingManager(downloads).graph(inputs: [.add("a"), .pause("a")])
        let pause = graph.edges.first { $0.input == .pause("a") }
        #expect(pause?.startsEffect == true)
        #expect(pause?.effectKey == nil)
        #expect(pause?.forwardedTo == EffectKey(downloads.key("a")))
        #expect(graph.mermaid().contains("s0 --> s0 : pause(a) / effect, send [downloads[a]]\n"))
    }

    @Test func aKeyedAnsweredForwardKeepsItsChildInTheGraph() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        let manager = Automaton<Int, AskingInput>(state: 0) { state, input in
            guard case let .pause(id) = input else { return nil }
            return (state, downloads.send(.pause, to: id) { .answered(id, $0) }.keyed("pausing", .first))
        }
        let pause = manager.graph(inputs: [.pause("a")]).edges.first { $0.input == .pause("a") }
        #expect(pause?.startsEffect == true)
        #expect(pause?.effectKey == EffectKey("pausing"))
        #expect(pause?.forwardedTo == EffectKey(downloads.key("a")))
    }

    /// 4 threads bump their own counter through the parent, answered, while their counter's replies
    /// also reach the parent through `start`: each counter's answers come in its counts' order, each
    /// after the input `start` made of the same reply.
    @Test func fourThreadsAskingTheirChildrenGetEveryAnswerInOrder() async {
        enum Input: Hashable, Sendable {
            case open(Int), bump(Int), counted(Int, Int), answered(Int, Int)
        }
        enum Entry: Equatable {
            case counted(Int), answered(Int)
        }
        for _ in 0..<10 {
            let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
            let parent = Automaton<Int, Input>(state: 0) { state, input in
                switch input {
                case let .open(id):
                    return (state, counters.start(id) { reply in reply.toState.map { .counted(id, $0) } })
                case let .bump(id):
                    return (
                        state, counters.send(.inc, to: id) { answer in answer.reply?.toState.map { .answered(id, $0) } }
                    )
                case .counted, .answered: return (state + 1, .empty)
                }
            }
            let log = (0..<4).map { _ in Locked<[Entry]>([]) }
            parent.replies.observeValues { reply in
                switch reply.input {
                case let .counted(id, count): log[id].withCriticalRegion { $0.append(.counted(count)) }
                case let .answered(id, count): log[id].withCriticalRegion { $0.append(.answered(count)) }
                case .open, .bump: break
                }
            }
            for id in 0..<4 { parent.send(.open(id)) }
            let perThread = 200
            await runOnThreads(4) { id in
                for _ in 0..<perThread { parent.send(.bump(id)) }
            }
            let expected = (1...perThread).flatMap { [Entry.counted($0), .answered($0)] }
            for id in 0..<4 {
                #expect(log[id].withCriticalRegion { $0 } == expected, "counter \(id)")
            }
            #expect(parent.state.value == 4 * 2 * perThread)
        }
    }

    #if DEBUG  // a release build's precondition failure prints no message
        @Test func anAnsweredForwardWrappedInAnOperatorStopsTheProcessSayingWhatToDo() async {
            let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
                let parent = Automaton<Int, CountingInput>(state: 0) { state, input in
                    switch input {
                    case let .open(id): return (state, counters.start(id))
                    case let .bump(id): return (state, counters.send(.inc, to: id) { _ in nil }.map { $0 })
                    case .counted: return (state, .empty)
                    }
                }
                parent.send(.open(0))
                parent.send(.bump(0))
            }
            let output = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
            #expect(output.contains("send(_:to:answer:)"), "standard error was: \(output)")
            #expect(output.contains("return it from the row unchanged"), "standard error was: \(output)")
        }
    #endif
}

/// Runs `body` on a new thread; the group is left when it returns.
func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    group.enter()
    let slot = BodySlot(body)
    Thread {
        slot.take()()
        group.leave()
    }.start()
    return group
}
