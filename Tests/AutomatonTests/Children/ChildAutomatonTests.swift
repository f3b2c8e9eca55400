import Automaton
import AutomatonTesting
import Signals
import Testing

/// A parent that hosts one child: the login machine and its two-factor machine.
@Suite struct ChildAutomatonTests {
    typealias TFReply = Reply<TwoFactorState, TwoFactorInput>

    @Test func theChildLivesWhileItsEffectAndItsRepliesReachTheParentInOneOrder() {
        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        let tester = AutomatonTester(makeGate(twoFactor))
        tester.recordReplies(of: twoFactor)
        #expect(twoFactor.current(in: tester.automaton) == nil)

        tester.send(.submit)
        tester.expect([
            .success(.submit, .loggedOut, .verifying),
            .started(by: .submit, key: twoFactor.key),
        ])
        #expect(twoFactor.state(in: tester.automaton) == .waiting)
        let child = WeakBox(twoFactor.current(in: tester.automaton))
        #expect(child.object != nil)

        tester.send(.code("123"))
        tester.expect([
            .success(.code("123"), .verifying, .verifying),
            .child(twoFactor.key, TFReply.success(.enter("123"), .waiting, .accepted)),
            .cancelled(.cancelled(by: .accepted), key: twoFactor.key),
            .success(.accepted, .verifying, .loggedIn),
        ])
        #expect(child.object == nil, "the child is released when its effect is cancelled")
        #expect(twoFactor.current(in: tester.automaton) == nil)
        tester.finish()
    }

    @Test func aWrongCodeIsTheChildsFailureToDecideAndAFailedChildInputIsItsOwnFailure() {
        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        let tester = AutomatonTester(makeGate(twoFactor))
        tester.recordReplies(of: twoFactor)
        tester.send(.submit)
        tester.send(.code("999"))
        tester.expect([
            .success(.submit, .loggedOut, .verifying),
            .started(by: .submit, key: twoFactor.key),
            .success(.code("999"), .verifying, .verifying),
            .child(twoFactor.key, TFReply.success(.enter("999"), .waiting, .rejected)),
            .cancelled(.cancelled(by: .rejected), key: twoFactor.key),
            .success(.rejected, .verifying, .loggedOut),
        ])
        tester.finish()
    }

    @Test func anInputForwardedToNoChildIsDroppedAndStartsNoEffect() {
        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        let tester = AutomatonTester(makeGate(twoFactor))
        tester.recordReplies(of: twoFactor)
        tester.send(.other)
        tester.send(.code("123"))
        tester.expect([
            .success(.other, .loggedOut, .verifying),
            .success(.code("123"), .verifying, .verifying),
            .undelivered(.enter("123"), to: twoFactor),
        ])
        tester.finish()
    }

    @Test func aSecondStartReplacesTheRunningChildUnderLatest() {
        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        let tester = AutomatonTester(makeGate(twoFactor))
        tester.recordReplies(of: twoFactor)
        tester.send(.submit)
        let first = WeakBox(twoFactor.current(in: tester.automaton))
        tester.send(.submit)
        tester.expect([
            .success(.submit, .loggedOut, .verifying),
            .started(by: .submit, key: twoFactor.key),
            .cancelled(.replaced(by: .submit), key: twoFactor.key),
            .success(.submit, .verifying, .verifying),
            .started(by: .submit, key: twoFactor.key),
        ])
        #expect(first.object == nil)
        let second = twoFactor.current(in: tester.automaton)
        #expect(second != nil && second !== first.object)
        tester.finish(skipRunningEffects: true)
    }

    @Test func theParentsReleaseReleasesTheChildAndTheChildsOwnEffects() {
        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        let tester = AutomatonTester(makeGate(twoFactor))
        tester.send(.submit)
        let childEvents = Locked<[String]>([])
        let weakChild = WeakBox<Automaton<TwoFactorState, TwoFactorInput>>()
        do {
            let child = twoFactor.current(in: tester.automaton)!
            child.effectEvents.observeValues { event in
                childEvents.withCriticalRegion { $0.append("\(event.kind)") }
            }
            child.replies.observeCompleted { childEvents.withCriticalRegion { $0.append("replies completed") } }
            child.send(.resend)
            weakChild.object = child
        }
        tester.expect([
            .success(.submit, .loggedOut, .verifying),
            .started(by: .submit, key: twoFactor.key),
        ])
        #expect(tester.release())
        tester.expect([.cancelled(.released, key: twoFactor.key)])
        #expect(weakChild.object == nil)
        #expect(
            childEvents.withCriticalRegion { $0 } == [
                "started(by: resend)", "replies completed", "cancelled(cancelled: automaton released)",
            ])
    }

    @Test func theParentsInterruptionReleasesTheChild() {
        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        let (input, inputObserver) = Signal<GateInput, Never>.pipe()
        let login = makeGate(twoFactor, input: input)
        let events = Locked<[EffectEvent<GateInput>.Kind]>([])
        login.effectEvents.observeValues { event in events.withCriticalRegion { $0.append(event.kind) } }
        inputObserver.send(value: .submit)
        let child = WeakBox(twoFactor.current(in: login))
        #expect(child.object != nil)
        inputObserver.sendInterrupted()
        #expect(child.object == nil)
        #expect(twoFactor.current(in: login) == nil)
        #expect(events.withCriticalRegion { $0 } == [.started(by: .submit), .cancelled(.interrupted)])
    }

    @Test func anUnnamedChildUnderLatestIsReplacedByTheNextOutsideInput() {
        let parent = Automaton<Int, String>(
            state: 0,
            strategy: .latest,
            table: [
                "host" | any => 1
                    | SignalProducer<String, Never>.child({ makeTwoFactor() }) { reply in
                        reply.toState == .accepted ? "accepted" : nil
                    },
                { (_: String) in true } | { state, _ in state + 1 },
            ])
        let events = Locked<[EffectEvent<String>.Kind]>([])
        parent.effectEvents.observeValues { event in events.withCriticalRegion { $0.append(event.kind) } }
        parent.send("host")
        #expect(parent.runningEffectCount == 1)
        parent.send("next")
        #expect(parent.runningEffectCount == 0)
        #expect(
            events.withCriticalRegion { $0 } == [.started(by: "host"), .cancelled(.replaced(by: "next"))])
    }

    @Test func aChildWhoseRepliesEndEndsItsEffect() {
        let (childInput, childObserver) = Signal<TwoFactorInput, Never>.pipe()
        let parent = Automaton<Int, String>(
            state: 0,
            table: [
                "host" | any => 1
                    | SignalProducer<String, Never>.child({
                        Automaton(state: TwoFactorState.waiting, input: childInput) { _, _ in .accepted }
                    }) { reply in "child \(reply.input)" },
                { (input: String) in input.hasPrefix("child") } | { state, _ in state + 1 },
            ])
        let replies = Locked<[String]>([])
        parent.replies.observeValues { reply in replies.withCriticalRegion { $0.append(reply.input) } }
        let events = Locked<[EffectEvent<String>.Kind]>([])
        parent.effectEvents.observeValues { event in events.withCriticalRegion { $0.append(event.kind) } }
        parent.send("host")
        childObserver.send(value: .resend)
        childObserver.sendCompleted()
        #expect(replies.withCriticalRegion { $0 } == ["host", "child resend"])
        #expect(events.withCriticalRegion { $0 } == [.started(by: "host"), .ended])
        #expect(parent.runningEffectCount == 0)
        #expect(parent.state.value == 2)
    }
}

/// The tester's conveniences for children: replies written without their type, and a late
/// `recordReplies(of:)` reported.
@Suite struct ChildTesterTests {
    @Test func aChildsReplyIsWrittenWithItsTypesInferredFromTheChild() {
        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        let tester = AutomatonTester(makeGate(twoFactor))
        tester.recordReplies(of: twoFactor)
        tester.send(.submit)
        tester.send(.code("999"))
        tester.expect([
            .success(.submit, .loggedOut, .verifying),
            .started(by: .submit, key: twoFactor.key),
            .success(.code("999"), .verifying, .verifying),
            .child(twoFactor, .success(.enter("999"), .waiting, .rejected)),
            .cancelled(.cancelled(by: .rejected), key: twoFactor.key),
            .success(.rejected, .verifying, .loggedOut),
        ])
        tester.finish()
    }

    @Test func aKindsChildReplyIsWrittenWithItsId() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        let tester = AutomatonTester(makeManager(downloads))
        tester.recordReplies(of: downloads)
        tester.send(.add("a"))
        tester.send(.tick("a"))
        tester.expect([
            .success(.add("a"), 0, 0),
            .started(by: .add("a"), key: downloads.key("a")),
            .success(.tick("a"), 0, 0),
            .child(downloads, "a", .success(.tick, .downloading(0), .downloading(1))),
        ])
        tester.finish(skipRunningEffects: true)
    }

    @Test func recordingRepliesWhileChildrenRunIsReported() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        let tester = AutomatonTester(makeManager(downloads))
        tester.send(.add("a"))
        withKnownIssue {
            tester.recordReplies(of: downloads)
        }
        #expect(tester.failures.count == 1)
        #expect(
            tester.failures.first?.hasPrefix("recordReplies(of: downloads) was called while 1 of its children run (a)")
                == true)

        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        let gate = AutomatonTester(makeGate(twoFactor))
        gate.send(.submit)
        withKnownIssue {
            gate.recordReplies(of: twoFactor)
        }
        #expect(gate.failures.count == 1)
        tester.expect([.success(.add("a"), 0, 0), .started(by: .add("a"), key: downloads.key("a"))])
        gate.expect([.success(.submit, .loggedOut, .verifying), .started(by: .submit, key: twoFactor.key)])
    }
}
