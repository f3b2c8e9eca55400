import Automaton
import Signals
import Testing

/// `liveIDs(in:)`: the ids of a parent's children of one kind as a property, changed after a child is
/// registered and after it is unregistered, completed when the parent is released.
@Suite struct ChildLiveIDsTests {
    enum Entry: Equatable, CustomStringConvertible {
        case ids([String])
        case idsCompleted
        case parent(Reply<Int, ManagerInput>)

        var description: String {
            switch self {
            case let .ids(ids): return "ids \(ids)"
            case .idsCompleted: return "ids completed"
            case let .parent(reply): return "parent \(reply)"
            }
        }
    }

    @Test func theIdsChangeAfterEachStartRemovalAndReplacementAndCompleteWithTheParent() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        var manager: Automaton<Int, ManagerInput>? = makeManager(downloads)
        let parent = WeakBox(manager)
        let log = Locked<[Entry]>([])
        let ids = downloads.liveIDs(in: manager!)
        #expect(ids.value == [])
        ids.signal.observe { event in
            switch event {
            case let .value(ids): log.withCriticalRegion { $0.append(.ids(ids)) }
            case .completed, .interrupted: log.withCriticalRegion { $0.append(.idsCompleted) }
            }
        }
        manager!.replies.observeValues { reply in log.withCriticalRegion { $0.append(.parent(reply)) } }
        manager!.send(.add("a"))
        manager!.send(.add("b"))
        manager!.send(.add("a"))  // `.latest`: replaces the running a
        manager!.send(.remove("b"))
        manager!.send(.remove("zip"))  // no such child: no change
        for _ in 0..<3 { manager!.send(.tick("a")) }  // a finishes: the manager removes it
        manager!.send(.add("c"))
        #expect(ids.value == ["c"])
        #expect(downloads.liveIDs(in: manager!).value == ["c"], "the same watch")
        manager = nil
        #expect(parent.object == nil, "the property holds no parent")
        #expect(ids.value == [])
        let tick = { (done: Int) in Entry.parent(.success(.tick("a"), done, done)) }
        #expect(
            log.withCriticalRegion { $0 } == [
                .parent(.success(.add("a"), 0, 0)),
                .ids(["a"]),
                .parent(.success(.add("b"), 0, 0)),
                .ids(["a", "b"]),
                .ids(["b"]),  // the replaced a leaves, before the parent's reply
                .parent(.success(.add("a"), 0, 0)),
                .ids(["b", "a"]),  // the new a comes, after it
                .ids(["a"]),
                .parent(.success(.remove("b"), 0, 0)),
                .parent(.success(.remove("zip"), 0, 0)),
                tick(0), tick(0), tick(0),
                .ids([]),  // a's `.finished` removes it, before the manager's reply
                .parent(.success(.finished("a"), 0, 1)),
                .parent(.success(.add("c"), 1, 1)),
                .ids(["c"]),
                .ids([]),  // the manager's release: c is released
                .idsCompleted,
            ])
    }

    @Test func aChildAutomatonTellsWhetherItRuns() {
        let twoFactor = ChildAutomaton("twoFactor") { makeTwoFactor() }
        var gate: Automaton<GateState, GateInput>? = makeGate(twoFactor)
        let running = twoFactor.liveIsRunning(in: gate!)
        let log = Locked<[String]>([])
        running.signal.observe { event in
            switch event {
            case let .value(isRunning): log.withCriticalRegion { $0.append("\(isRunning)") }
            case .completed, .interrupted: log.withCriticalRegion { $0.append("completed") }
            }
        }
        #expect(running.value == false)
        gate!.send(.submit)
        gate!.send(.submit)  // `.latest`: a new child replaces the first
        gate!.send(.code("123"))  // accepted: the gate stops the child
        gate!.send(.other)
        gate!.send(.submit)
        gate = nil
        #expect(log.withCriticalRegion { $0 } == ["true", "false", "true", "false", "true", "false", "completed"])
    }

    /// Children started and removed from 4 threads (each its own ids): the last list sent is the final
    /// one, and no list is sent twice in a row.
    @Test func underFourThreadsTheLastListSentIsTheCurrentOne() async {
        for _ in 0..<50 {
            let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
            let parent = Automaton<Int, Int>(state: 0) { state, id in
                id >= 0 ? (state, counters.start(id)) : (state, counters.remove(-id - 1))
            }
            let ids = counters.liveIDs(in: parent)
            let sent = Locked<[[Int]]>([])
            ids.signal.observeValues { ids in sent.withCriticalRegion { $0.append(ids) } }
            await runOnThreads(4) { thread in
                for step in 0..<100 {
                    let id = thread * 1000 + step % 5
                    parent.send(step.isMultiple(of: 3) ? -id - 1 : id)
                }
            }
            let lists = sent.withCriticalRegion { $0 }
            #expect(lists.last ?? [] == counters.ids(in: parent))
            #expect(ids.value == counters.ids(in: parent))
            #expect(zip(lists, lists.dropFirst()).allSatisfy { $0 != $1 }, "only changes are sent")
        }
    }

    @Test func theWatchLeavesNothingRegisteredOnceTheParentIsReleased() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        var manager: Automaton<Int, ManagerInput>? = makeManager(downloads)
        let ids = downloads.liveIDs(in: manager!)
        #expect(manager!.hasRegisteredChildren, "the watch is registered")
        manager!.send(.add("a"))
        let child = WeakBox(downloads.child("a", in: manager!))
        manager = nil
        #expect(child.object == nil)
        #expect(ids.value == [])
        // A parent made at the freed one's address must not find the old watch.
        let next = makeManager(downloads)
        #expect(!next.hasRegisteredChildren)
    }
}
