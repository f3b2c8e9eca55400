import Automaton
import Signals
import Testing

/// APIContracts, "Child automata", Order: a child's reply reaches the child's observers (those added
/// later through `child(_:in:)` included) before the parent processes the input made of it, whether
/// the parent is processing or idle.
@Suite struct ChildObserverOrderTests {
    enum Entry: Equatable, CustomStringConvertible {
        case child(Reply<DownloadState, DownloadInput>)
        case childProcessed(Reply<DownloadState, DownloadInput>)
        case childEnded
        case parent(Reply<Int, ManagerInput>)

        var description: String {
            switch self {
            case let .child(reply): return "child \(reply)"
            case let .childProcessed(reply): return "child processed \(reply)"
            case .childEnded: return "child's replies ended"
            case let .parent(reply): return "parent \(reply)"
            }
        }
    }

    /// The parent is idle: the child's reply is heard by an observer added through `child(_:in:)` (and
    /// by a processing observer added so) before the parent processes the input made of it, even the
    /// one whose row removes (and so releases) the child.
    @Test func anObserverAddedThroughChildInHearsTheReplyBeforeTheIdleParentProcessesIt() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        let manager = makeManager(downloads)
        let log = Locked<[Entry]>([])
        manager.send(.add("a"))
        manager.replies.observeValues { reply in log.withCriticalRegion { $0.append(.parent(reply)) } }
        do {
            // Holds the signal and the processing observer, not the child.
            let child = downloads.child("a", in: manager)!
            child.replies.observe { event in
                switch event {
                case let .value(reply): log.withCriticalRegion { $0.append(.child(reply)) }
                case .completed, .interrupted: log.withCriticalRegion { $0.append(.childEnded) }
                }
            }
            child.observeProcessing { record in log.withCriticalRegion { $0.append(.childProcessed(record.reply)) } }
        }
        let weakChild = WeakBox(downloads.child("a", in: manager))
        for _ in 0..<3 {
            downloads.child("a", in: manager)?.send(.tick)  // straight to the child: the parent is idle
        }
        #expect(
            log.withCriticalRegion { $0 } == [
                .child(.success(.tick, .downloading(0), .downloading(1))),
                .childProcessed(.success(.tick, .downloading(0), .downloading(1))),
                .child(.success(.tick, .downloading(1), .downloading(2))),
                .childProcessed(.success(.tick, .downloading(1), .downloading(2))),
                .child(.success(.tick, .downloading(2), .finished)),
                .childProcessed(.success(.tick, .downloading(2), .finished)),
                // The parent's row removes the child: it is released, and its replies end.
                .parent(.success(.finished("a"), 0, 1)),
                .childEnded,
            ])
        #expect(weakChild.object == nil)
        #expect(downloads.ids(in: manager).isEmpty)
    }

    /// The same with the parent processing: the input made of the child's reply waits for the
    /// parent's current input, after every observer of the child.
    @Test func anObserverAddedThroughChildInHearsTheReplyBeforeTheBusyParentProcessesIt() {
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in makeDownload() }
        let manager = makeManager(downloads)
        let log = Locked<[Entry]>([])
        manager.send(.add("a"))
        manager.send(.tick("a"))
        manager.send(.tick("a"))
        manager.replies.observeValues { reply in log.withCriticalRegion { $0.append(.parent(reply)) } }
        downloads.child("a", in: manager)!.replies.observeValues { reply in
            log.withCriticalRegion { $0.append(.child(reply)) }
        }
        manager.send(.tick("a"))
        #expect(
            log.withCriticalRegion { $0 } == [
                .parent(.success(.tick("a"), 0, 0)),
                .child(.success(.tick, .downloading(2), .finished)),
                .parent(.success(.finished("a"), 0, 1)),
            ])
    }

    /// Under threads: children counted from 4 threads straight (the parent idle or busy, by chance);
    /// each observer added through `child(_:in:)` hears every count before the parent processes it.
    @Test func underFourThreadsEveryChildObserverHearsEachCountBeforeTheParentProcessesIt() async {
        for _ in 0..<20 {
            let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
            let parent = makeCounting(counters)
            for id in 0..<4 { parent.send(.open(id)) }
            let heardByChildObserver = (0..<4).map { _ in Locked<Int>(0) }
            let violations = Locked(0)
            for id in 0..<4 {
                counters.child(id, in: parent)!.replies.observeValues { reply in
                    heardByChildObserver[id].withCriticalRegion { $0 = reply.toState ?? 0 }
                }
            }
            parent.replies.observeValues { reply in
                guard case let .counted(id, count) = reply.input else { return }
                if heardByChildObserver[id].withCriticalRegion({ $0 }) < count {
                    violations.withCriticalRegion { $0 += 1 }
                }
            }
            let perThread = 200
            await runOnThreads(4) { id in
                for step in 0..<perThread {
                    if step.isMultiple(of: 2) {
                        counters.child(id, in: parent)?.send(.inc)
                    } else {
                        parent.send(.bump(id))
                    }
                }
            }
            #expect(violations.withCriticalRegion { $0 } == 0)
            #expect(parent.state.value == 4 * perThread)
        }
    }
}
