import Automaton
import Signals
import Testing

/// A child's own signals, reached through its parent, without keeping the child alive.
@Suite struct ChildSignalsTests {
    enum Heard: Equatable {
        case event(EffectEvent<TwoFactorInput>.Kind)
        case reply(Reply<TwoFactorState, TwoFactorInput>)
        case ended(String)
    }

    @Test func aChildsEffectEventsAndRepliesHeldByAnObserverDoNotKeepTheChild() {
        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        let parent = ChildAnswerTests.makeAskingGate(twoFactor)
        #expect(twoFactor.effectEvents(in: parent) == nil, "no child runs")
        parent.send(.start)
        let heard = Locked<[Heard]>([])
        let events = twoFactor.effectEvents(in: parent)!
        let replies = twoFactor.replies(in: parent)!
        events.observe { event in
            switch event {
            case let .value(event): heard.withCriticalRegion { $0.append(.event(event.kind)) }
            case .completed, .interrupted: heard.withCriticalRegion { $0.append(.ended("events")) }
            }
        }
        replies.observe { event in
            switch event {
            case let .value(reply): heard.withCriticalRegion { $0.append(.reply(reply)) }
            case .completed, .interrupted: heard.withCriticalRegion { $0.append(.ended("replies")) }
            }
        }
        let child = WeakBox(twoFactor.current(in: parent))
        parent.send(.send(.resend))  // the child starts an effect that never ends
        parent.send(.stop)  // releases the child, whose effect is cancelled
        #expect(child.object == nil, "the signals held do not keep the child")
        #expect(
            heard.withCriticalRegion { $0 } == [
                .reply(.success(.resend, .waiting, .waiting)),
                .event(.started(by: .resend)),
                .ended("replies"),
                .event(.cancelled(.released)),
                .ended("events"),
            ])
        withExtendedLifetime((events, replies)) {}
    }

    @Test func aKindsChildsEffectEventsAreFoundByIdAndEndWithItsRemoval() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        let manager = makeManager(downloads)
        manager.send(.add("a"))
        #expect(downloads.effectEvents(of: "b", in: manager) == nil)
        #expect(downloads.replies(of: "b", in: manager) == nil)
        let ended = Locked<[String]>([])
        let events = downloads.effectEvents(of: "a", in: manager)!
        events.observeCompleted { ended.withCriticalRegion { $0.append("events") } }
        let replies = downloads.replies(of: "a", in: manager)!
        let heard = Locked<[Reply<DownloadState, DownloadInput>]>([])
        replies.observeValues { reply in heard.withCriticalRegion { $0.append(reply) } }
        let child = WeakBox(downloads.child("a", in: manager))
        manager.send(.tick("a"))
        manager.send(.remove("a"))
        #expect(child.object == nil)
        #expect(heard.withCriticalRegion { $0 } == [.success(.tick, .downloading(0), .downloading(1))])
        #expect(ended.withCriticalRegion { $0 } == ["events"])
        withExtendedLifetime((events, replies)) {}
    }
}
