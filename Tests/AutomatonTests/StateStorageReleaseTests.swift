import Testing

@testable import Automaton
@testable import Signals

/// The automaton's state lives in one allocation with its lock (`PropertyBuffer`), which the
/// engine's effect lifetimes share. What holds that lock holds the state: these tests check that what
/// a state may reasonably keep does not keep the state's storage alive after the automaton's release.
@Suite("The state's storage is freed with the automaton")
struct StateStorageReleaseTests {
    /// A state that keeps anything, and records its release.
    final class Node: @unchecked Sendable {
        // Safe: set before the value is shared, never changed.
        let kept: Any?
        let onDeinit: @Sendable () -> Void

        init(kept: Any?, onDeinit: @escaping @Sendable () -> Void = {}) {
            self.kept = kept
            self.onDeinit = onDeinit
        }

        deinit { onDeinit() }
    }

    enum Kept: CaseIterable {
        case lifetime, lifetimeRegistration, replies, effectEvents, mappedStateSignal
    }

    @Test(
        "a state that keeps the automaton's lifetime, a registration on it or a derived signal is freed",
        arguments: Kept.allCases)
    func stateKeepingWhatItMay(_ kept: Kept) {
        let released = Recording<String>()
        let storage = WeakBox<AnyObject>()
        let engine = WeakBox<AnyObject>()
        do {
            let automaton = Automaton<Node?, Node>(state: nil, mapping: { _, node in node })
            storage.object = automaton.state.storedObject
            engine.object = automaton.engine
            let value: Any? =
                switch kept {
                case .lifetime: automaton.lifetime
                case .lifetimeRegistration: automaton.lifetime.observeEnded {}
                case .replies: automaton.replies
                case .effectEvents: automaton.effectEvents
                case .mappedStateSignal: automaton.state.signal.map { $0 != nil }
                }
            automaton.send(Node(kept: value, onDeinit: { released.append("state") }))
            #expect(automaton.state.value != nil)
            #expect(released.values == [])
        }
        #expect(engine.object == nil)
        #expect(storage.object == nil)
        #expect(released.values == ["state"])
    }

    @Test("a state that kept its own change signal, then let go of it, is freed (keeping it is a cycle)")
    func stateLettingGoOfItsSignal() {
        let released = Recording<String>()
        let storage = WeakBox<AnyObject>()
        do {
            let automaton = Automaton<Node?, Node>(state: nil, mapping: { _, node in node })
            storage.object = automaton.state.storedObject
            automaton.send(Node(kept: automaton.state.signal, onDeinit: { released.append("first") }))
            automaton.send(Node(kept: nil, onDeinit: { released.append("second") }))
            #expect(released.values == ["first"])
        }
        #expect(storage.object == nil)
        #expect(released.values == ["first", "second"])
    }
}
