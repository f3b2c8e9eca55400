import Automaton
import Dispatch

enum TransferState: Sendable, Equatable, CustomStringConvertible {
    case idle, receiving(Int), done
    var description: String {
        switch self {
        case .idle: return "idle"
        case let .receiving(chunks): return "receiving(\(chunks))"
        case .done: return "done"
        }
    }
}

enum TransferInput: String, Sendable, Equatable, CustomStringConvertible {
    case go, chunk
    var description: String { rawValue }
}

enum DownloadsInput: Sendable, Equatable, CustomStringConvertible {
    case add(String), go(String), remove(String), finished(String)

    var added: String? { if case let .add(name) = self { name } else { nil } }
    var started: String? { if case let .go(name) = self { name } else { nil } }
    var removed: String? { if case let .remove(name) = self { name } else { nil } }
    var finishedName: String? { if case let .finished(name) = self { name } else { nil } }

    var description: String {
        switch self {
        case let .add(name): return "add(\(name))"
        case let .go(name): return "go(\(name))"
        case let .remove(name): return "remove(\(name))"
        case let .finished(name): return "finished(\(name))"
        }
    }
}

/// Machines made of machines: a download manager runs one transfer machine per file (`ChildAutomata`).
/// Each transfer receives three chunks on a timer of its own; the manager forwards `go` to a transfer,
/// hears `finished` when one is done (and removes it), and removes `c` before it finishes, which
/// releases it and cancels its timer. The manager ends having finished `a` and `b`, with no child left.
@Sendable
func runChildrenDemo() -> Bool {
    let scheduler = QueueScheduler(label: "demo.children")
    let transfers = ChildAutomata<String, TransferState, TransferInput>("transfers") { _ in
        Automaton(
            state: .idle,
            table: [
                .go | .idle => .receiving(0) | SignalProducer(value: .chunk).delay(.milliseconds(30), on: scheduler),
                TransferInput.chunk | { state, _ in
                    guard case let .receiving(chunks) = state else { return nil }
                    return chunks + 1 == 3 ? .done : .receiving(chunks + 1)
                } | { state, _ in
                    guard case let .receiving(chunks) = state, chunks + 1 < 3 else { return .empty }
                    return SignalProducer(value: .chunk).delay(.milliseconds(30), on: scheduler)
                },
            ])
    }
    let manager = Automaton<Int, DownloadsInput>(
        state: 0,
        table: [
            \.added | { count, _ in count } | { _, name in
                transfers.start(name) { reply in reply.toState == .done ? .finished(name) : nil }
            },
            \.started | { count, _ in count } | { _, name in transfers.send(.go, to: name) },
            \.removed | { count, _ in count } | { _, name in transfers.remove(name) },
            \.finishedName | { count, _ in count + 1 } | { _, name in transfers.remove(name) },
        ])
    let finishedBoth = DispatchSemaphore(value: 0)
    manager.replies.observeValues { reply in
        print("   manager: \(reply)")
        if reply.toState == 2 { finishedBoth.signal() }
    }
    manager.effectEvents.observeValues { event in print("   manager: \(event)") }
    for name in ["a", "b", "c"] { manager.send(.add(name)) }
    for name in ["a", "b", "c"] { manager.send(.go(name)) }
    print("   transfers running: \(transfers.ids(in: manager))")
    manager.send(.remove("c"))
    guard finishedBoth.wait(timeout: .now() + 10) == .success else { return false }
    let left = transfers.ids(in: manager)
    print("   transfers running at the end: \(left)")
    return manager.state.value == 2 && left.isEmpty
}
