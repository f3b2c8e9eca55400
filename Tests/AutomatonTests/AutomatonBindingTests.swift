import Automaton
import Signals
import Testing

/// A source of each kind `<~` accepts, that the test can send into and terminate.
final class BindingInputSource: Sendable {
    enum Kind: String, CaseIterable, Sendable { case signal, producer, property }

    let kind: Kind
    let runLog = Recording<String>()
    private let pipe = Signal<Int, Never>.pipe()
    private let run = Locked<Observer<Int, Never>?>(nil)

    init(_ kind: Kind) {
        self.kind = kind
    }

    /// What the automaton receives at once when bound: a property sends its current value (0).
    var initialInputs: [Int] { kind == .property ? [0] : [] }

    @discardableResult
    func bind(to automaton: Automaton<Int, Int>) -> Disposable {
        switch kind {
        case .signal:
            return automaton <~ pipe.output
        case .producer:
            return automaton
                <~ SignalProducer { [run, runLog] observer, lifetime in
                    runLog.append("started")
                    run.withCriticalRegion { $0 = observer }
                    lifetime.observeEnded { runLog.append("ended") }
                }
        case .property:
            return automaton <~ Property(initial: 0, then: pipe.output)
        }
    }

    func send(_ value: Int) {
        switch kind {
        case .signal, .property: pipe.input.send(value: value)
        case .producer: run.withCriticalRegion { $0 }?.send(value: value)
        }
    }

    func terminate() {
        switch kind {
        case .signal, .property: pipe.input.sendCompleted()
        case .producer: run.withCriticalRegion { $0 }?.sendCompleted()
        }
    }
}

/// An automaton whose state is the sum of its inputs, recording its replies' inputs.
private func summingAutomaton(recording inputs: Recording<Int>) -> Automaton<Int, Int> {
    let automaton = Automaton<Int, Int>(state: 0, mapping: { state, input in state + input })
    automaton.replies.observeValues { reply in inputs.append(reply.input) }
    return automaton
}

@Suite("Binding to an automaton's input with <~")
struct AutomatonBindingTests {
    @Test(
        "each value of the source is sent as an input; the source's end does not end the automaton",
        arguments: BindingInputSource.Kind.allCases)
    func sourceTermination(kind: BindingInputSource.Kind) {
        let source = BindingInputSource(kind)
        let inputs = Recording<Int>()
        let automaton = summingAutomaton(recording: inputs)
        let replies = Recording<String>()
        automaton.replies.observe { event in if event.isTerminating { replies.append("\(event)") } }
        let binding = source.bind(to: automaton)
        source.send(1)
        source.send(2)
        source.terminate()
        source.send(3)
        automaton.send(10)

        #expect(inputs.values == source.initialInputs + [1, 2, 10])
        #expect(automaton.state.value == 13)
        #expect(replies.values == [], "the automaton goes on")
        #expect(binding.isDisposed)
        if kind == .producer { #expect(source.runLog.values == ["started", "ended"]) }
    }

    @Test(
        "disposing the binding ends it; a producer source's run is interrupted",
        arguments: BindingInputSource.Kind.allCases)
    func disposal(kind: BindingInputSource.Kind) {
        let source = BindingInputSource(kind)
        let inputs = Recording<Int>()
        let automaton = summingAutomaton(recording: inputs)
        let binding = source.bind(to: automaton)
        source.send(1)
        binding.dispose()
        source.send(2)

        #expect(inputs.values == source.initialInputs + [1])
        #expect(binding.isDisposed)
        if kind == .producer { #expect(source.runLog.values == ["started", "ended"]) }
    }

    @Test(
        "releasing the automaton ends the binding, which never kept it alive",
        arguments: BindingInputSource.Kind.allCases)
    func release(kind: BindingInputSource.Kind) {
        let source = BindingInputSource(kind)
        let inputs = Recording<Int>()
        weak var weakAutomaton: Automaton<Int, Int>?
        let binding: Disposable
        do {
            let automaton = summingAutomaton(recording: inputs)
            weakAutomaton = automaton
            binding = source.bind(to: automaton)
            source.send(1)
        }
        source.send(2)

        #expect(weakAutomaton == nil)
        #expect(inputs.values == source.initialInputs + [1])
        #expect(binding.isDisposed)
        if kind == .producer { #expect(source.runLog.values == ["started", "ended"]) }
    }

    @Test("the automaton's lifetime ends when it is released, last: after replies and state complete")
    func lifetimeEndsOnRelease() {
        let log = Recording<String>()
        do {
            let automaton = Automaton<Int, Int>(state: 0, mapping: { state, input in state + input })
            automaton.lifetime.observeEnded { log.append("lifetime ended") }
            automaton.replies.observeCompleted { log.append("replies completed") }
            automaton.state.signal.observeCompleted { log.append("state completed") }
            #expect(!automaton.lifetime.hasEnded)
        }
        #expect(log.values == ["replies completed", "state completed", "lifetime ended"])
    }

    @Test(
        "values sent from two threads at once are all processed, each thread's in order",
        arguments: BindingInputSource.Kind.allCases)
    func twoThreads(kind: BindingInputSource.Kind) async {
        let perThread = 10_000
        let source = BindingInputSource(kind)
        let inputs = Recording<Int>()
        let automaton = summingAutomaton(recording: inputs)
        let binding = source.bind(to: automaton)
        await runOnThreads(2) { thread in
            for index in 1...perThread { source.send(thread * perThread * 10 + index) }
        }
        source.terminate()

        let received = inputs.values
        #expect(Array(received.prefix(source.initialInputs.count)) == source.initialInputs)
        let sent = received.dropFirst(source.initialInputs.count)
        #expect(sent.count == 2 * perThread)
        for thread in 0..<2 {
            let base = thread * perThread * 10
            #expect(sent.filter { $0 > base && $0 <= base + perThread } == Array(base + 1...base + perThread))
        }
        #expect(automaton.state.value == received.reduce(0, +))
        #expect(binding.isDisposed)
    }
}
