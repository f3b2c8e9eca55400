import Automaton
import AutomatonTesting
import Foundation
import Signals
import Testing

/// A parent that runs many children by id: the download manager, and counters under threads.
@Suite struct ChildAutomataTests {
    typealias DReply = Reply<DownloadState, DownloadInput>

    @Test func childrenStartAreAddressedAndRemovedByIdAndTheirEventsNameThem() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        let tester = AutomatonTester(makeManager(downloads))
        tester.recordReplies(of: downloads)
        tester.send(.add("a"))
        tester.send(.add("b"))
        tester.expect([
            .success(.add("a"), 0, 0),
            .started(by: .add("a"), key: downloads.key("a")),
            .success(.add("b"), 0, 0),
            .started(by: .add("b"), key: downloads.key("b")),
        ])
        #expect(downloads.ids(in: tester.automaton) == ["a", "b"])
        #expect("\(downloads.key("a"))" == "downloads[a]")

        tester.send(.tick("a"))
        tester.send(.pause("b"))
        tester.send(.tick("b"))
        tester.send(.tick("c"))
        tester.expect([
            .success(.tick("a"), 0, 0),
            .child(downloads.key("a"), DReply.success(.tick, .downloading(0), .downloading(1))),
            .success(.pause("b"), 0, 0),
            .child(downloads.key("b"), DReply.success(.pause, .downloading(0), .paused(0))),
            .success(.tick("b"), 0, 0),
            .child(downloads.key("b"), DReply.failure(.tick, .paused(0))),
            .success(.tick("c"), 0, 0),
            .undelivered(.tick, to: downloads, "c"),
        ])
        #expect(downloads.state(of: "a", in: tester.automaton) == .downloading(1))
        #expect(downloads.state(of: "b", in: tester.automaton) == .paused(0))
        #expect(downloads.state(of: "c", in: tester.automaton) == nil)

        tester.send(.tick("a"))
        tester.send(.tick("a"))
        tester.expect([
            .success(.tick("a"), 0, 0),
            .child(downloads.key("a"), DReply.success(.tick, .downloading(1), .downloading(2))),
            .success(.tick("a"), 0, 0),
            .child(downloads.key("a"), DReply.success(.tick, .downloading(2), .finished)),
            .cancelled(.cancelled(by: .finished("a")), key: downloads.key("a")),
            .success(.finished("a"), 0, 1),
        ])
        #expect(downloads.ids(in: tester.automaton) == ["b"])

        let b = WeakBox(downloads.child("b", in: tester.automaton))
        tester.send(.remove("b"))
        tester.expect([
            .cancelled(.cancelled(by: .remove("b")), key: downloads.key("b")),
            .success(.remove("b"), 1, 1),
        ])
        #expect(b.object == nil, "removing a child releases it")
        #expect(downloads.ids(in: tester.automaton).isEmpty)
        tester.finish()
    }

    @Test func theParentsReleaseReleasesAllItsChildrenAndLeavesNothingRegistered() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        var manager: Automaton<Int, ManagerInput>? = makeManager(downloads)
        let events = Locked<[EffectEvent<ManagerInput>.Kind]>([])
        manager!.effectEvents.observeValues { event in events.withCriticalRegion { $0.append(event.kind) } }
        let children = (0..<10).map { index -> WeakBox<Automaton<DownloadState, DownloadInput>> in
            manager!.send(.add("\(index)"))
            return WeakBox(downloads.child("\(index)", in: manager!))
        }
        #expect(children.allSatisfy { $0.object != nil })
        #expect(manager!.hasRegisteredChildren)
        let parent = WeakBox(manager)
        manager = nil
        #expect(parent.object == nil)
        #expect(children.allSatisfy { $0.object == nil })
        let cancelled = events.withCriticalRegion { $0 }.filter { $0 == .cancelled(.released) }
        #expect(cancelled.count == 10)
    }

    @Test func aMillionChildrenStartedAndRemovedLeaveNothingBehind() async {
        let released = await onDedicatedThread { () -> Bool in
            let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
            let parent = makeCounting(counters)
            let remove = Automaton<Int, Int>(state: 0) { state, _ in state }
            withExtendedLifetime(remove) {}
            for index in 0..<(LongTests.isEnabled ? 1_000_000 : 20_000) {
                parent.send(.open(index % 7))  // `.latest` by id: each start releases the previous child
                parent.send(.bump(index % 7))
            }
            return parent.runningEffectCount == 7 && counters.ids(in: parent).count == 7
        }
        #expect(released == true)
    }

    /// 4 threads send into the parent (forwarded to their child) and straight into their child: each
    /// child counts every input once, and the parent hears each child's counts in the child's order.
    @Test func fourThreadsSendingIntoParentAndChildrenLoseNothingAndKeepEachChildsOrder() async {
        for _ in 0..<10 {
            let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
            let parent = makeCounting(counters)
            let heard = Locked<[Int: [Int]]>([:])
            parent.replies.observeValues { reply in
                guard case let .counted(id, count) = reply.input else { return }
                heard.withCriticalRegion { $0[id, default: []].append(count) }
            }
            for id in 0..<4 { parent.send(.open(id)) }
            let perThread = 250
            await runOnThreads(4) { id in
                let child = counters.child(id, in: parent)!
                for step in 0..<perThread {
                    parent.send(.bump(id))
                    if step.isMultiple(of: 2) { child.send(.inc) }
                }
            }
            let expected = Array(1...(perThread + perThread / 2))
            let counts = heard.withCriticalRegion { $0 }
            for id in 0..<4 {
                #expect(counts[id] == expected, "child \(id)")
                #expect(counters.state(of: id, in: parent) == expected.count)
            }
            #expect(parent.state.value == 4 * expected.count)
        }
    }

    /// The parent is released on one thread while three others send into it and into its children:
    /// every child is released, none is left registered.
    @Test func releasingTheParentWhileThreadsSendReleasesEveryChild() async {
        for _ in 0..<30 {
            let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
            let holder = Locked<Automaton<Int, CountingInput>?>(makeCounting(counters))
            let parent = WeakBox(holder.withCriticalRegion { $0 })
            let children = (0..<3).map { id -> WeakBox<Automaton<Int, CounterInput>> in
                let automaton = holder.withCriticalRegion { $0 }!
                automaton.send(.open(id))
                return WeakBox(counters.child(id, in: automaton))
            }
            await runOnThreads(4) { index in
                if index == 3 {
                    let released = holder.withCriticalRegion { held in
                        defer { held = nil }
                        return held
                    }
                    withExtendedLifetime(released) {}
                    return
                }
                for _ in 0..<200 {
                    guard let automaton = parent.object else { return }
                    automaton.send(.bump(index))
                    counters.child(index, in: automaton)?.send(.inc)
                }
            }
            #expect(parent.object == nil)
            #expect(children.allSatisfy { $0.object == nil })
        }
    }
}
