import Automaton
import Signals
import Testing

/// The documented order between a parent and its children, under threads: a forwarded input's child
/// reply comes after the parent's reply to the forwarding input, and a child's reply comes before the
/// parent's reply to the input mapped from it.
@Suite struct ChildOrderTests {
    enum Entry: Equatable {
        case parentBump(Int)
        case parentCounted(Int, Int)
        case child(Int, Int)
    }

    @Test func parentAndChildRepliesKeepTheirCausalOrderUnderFourThreads() async {
        for _ in 0..<10 {
            let counters = ChildAutomata<Int, Int, CounterInput>("counters") { _ in makeCounter() }
            let parent = makeCounting(counters)
            let log = Locked<[Entry]>([])
            let watch = counters.watchReplies(of: parent) { key, reply in
                guard let count = reply.toState else { return }
                log.withCriticalRegion { $0.append(.child(key.id, count)) }
            }
            parent.replies.observeValues { reply in
                switch reply.input {
                case let .bump(id): log.withCriticalRegion { $0.append(.parentBump(id)) }
                case let .counted(id, count): log.withCriticalRegion { $0.append(.parentCounted(id, count)) }
                case .open: break
                }
            }
            for id in 0..<4 { parent.send(.open(id)) }
            let perThread = 200
            await runOnThreads(4) { id in
                for _ in 0..<perThread { parent.send(.bump(id)) }
            }
            let entries = log.withCriticalRegion { $0 }
            for id in 0..<4 {
                // The k-th bump of `id` is answered before the child's k-th count, which comes before
                // the parent's reply to `.counted(id, k)`.
                let bumps = entries.indices.filter { entries[$0] == .parentBump(id) }
                #expect(bumps.count == perThread)
                for count in 1...perThread {
                    guard let child = entries.firstIndex(of: .child(id, count)),
                        let counted = entries.firstIndex(of: .parentCounted(id, count))
                    else {
                        Issue.record("child \(id): count \(count) missing")
                        break
                    }
                    #expect(bumps[count - 1] < child, "child \(id), count \(count)")
                    #expect(child < counted, "child \(id), count \(count)")
                }
            }
            withExtendedLifetime(watch) {}
        }
    }
}
