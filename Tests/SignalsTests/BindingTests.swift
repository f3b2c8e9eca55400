import Foundation
import Signals
import Testing

/// The kinds of source `<~` accepts.
enum BindingSourceKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case signal
    case producer
    case property
    case mutableProperty

    var testDescription: String { rawValue }

    /// What a target sees at once when bound: a property source sends its current value (0).
    var initialValues: [Int] {
        switch self {
        case .signal, .producer: return []
        case .property, .mutableProperty: return [0]
        }
    }
}

/// A source of each kind, that the test can send into and terminate.
final class BindingSourceFixture: Sendable {
    let kind: BindingSourceKind
    private let pipe = Signal<Int, Never>.pipe()
    /// The observer of the producer's run (`.producer`), and a log of "started" / "ended".
    private let run = LockedTestValue<Observer<Int, Never>?>(nil)
    let runLog = TestLog<String>()
    private let backing = LockedTestValue<MutableProperty<Int>?>(nil)
    private let property: Property<Int>

    init(_ kind: BindingSourceKind) {
        self.kind = kind
        property = Property(initial: 0, then: pipe.output)
        if kind == .mutableProperty { backing.withValue { $0 = MutableProperty(0) } }
    }

    private var producer: SignalProducer<Int, Never> {
        SignalProducer { [run, runLog] observer, lifetime in
            runLog.append("started")
            run.withValue { $0 = observer }
            lifetime.observeEnded { runLog.append("ended") }
        }
    }

    @discardableResult
    func bind<Target: BindingTargetProvider>(to target: Target) -> Disposable where Target.Value == Int {
        switch kind {
        case .signal: return target <~ pipe.output
        case .producer: return target <~ producer
        case .property: return target <~ property
        case .mutableProperty:
            guard let backing = backing.value else { return AnyDisposable.disposed }
            return target <~ backing
        }
    }

    func send(_ value: Int) {
        switch kind {
        case .signal, .property: pipe.input.send(value: value)
        case .producer: run.value?.send(value: value)
        case .mutableProperty: backing.value?.value = value
        }
    }

    /// Ends the source: completes it, or releases the mutable property.
    func terminate() {
        switch kind {
        case .signal, .property: pipe.input.sendCompleted()
        case .producer: run.value?.sendCompleted()
        case .mutableProperty: backing.withValue { $0 = nil }
        }
    }
}

/// The kinds of target of the Signals module.
enum BindingTargetKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case bindingTarget
    case mutableProperty
    case observer

    var testDescription: String { rawValue }
}

/// A target of each kind, recording the values it takes.
final class BindingTargetFixture: Sendable {
    let kind: BindingTargetKind
    let received = TestLog<Int>()
    private let token = LockedTestValue<Lifetime.Token?>(nil)
    private let target: BindingTarget<Int>?
    private let property = LockedTestValue<MutableProperty<Int>?>(nil)
    private let weakProperty = LockedTestValue<WeakBox<MutableProperty<Int>>?>(nil)
    private let observer: Observer<Int, Never>?

    init(_ kind: BindingTargetKind) {
        self.kind = kind
        switch kind {
        case .bindingTarget:
            let (lifetime, token) = Lifetime.make()
            self.token.withValue { $0 = token }
            target = BindingTarget(lifetime: lifetime) { [received] in received.append($0) }
            observer = nil
        case .mutableProperty:
            let property = MutableProperty(-1)
            property.signal.observeValues { [received] in received.append($0) }
            self.property.withValue { $0 = property }
            weakProperty.withValue { $0 = WeakBox(property) }
            target = nil
            observer = nil
        case .observer:
            let (signal, input) = Signal<Int, Never>.pipe()
            signal.observeValues { [received] in received.append($0) }
            target = nil
            observer = input
        }
    }

    /// Whether the target has a lifetime the test can end.
    var hasLifetime: Bool { kind != .observer }

    @discardableResult
    func bind(_ source: BindingSourceFixture) -> Disposable {
        if let target { return source.bind(to: target) }
        if let observer { return source.bind(to: observer) }
        guard let property = property.value else { return AnyDisposable.disposed }
        return source.bind(to: property)
    }

    /// Ends the target's lifetime: disposes the token, or releases the property.
    func endLifetime() {
        token.value?.dispose()
        property.withValue { $0 = nil }
    }

    /// For a property target: whether it was freed.
    var propertyWasFreed: Bool { weakProperty.value?.object == nil }
}

private let allPairs: [(BindingSourceKind, BindingTargetKind)] = BindingSourceKind.allCases.flatMap { source in
    BindingTargetKind.allCases.map { (source, $0) }
}

@Suite("Binding with <~")
struct BindingTests {
    @Test(
        "values flow to the target until the source terminates; the binding then reports disposed", arguments: allPairs)
    func sourceTermination(source: BindingSourceKind, target: BindingTargetKind) {
        let sourceFixture = BindingSourceFixture(source)
        let targetFixture = BindingTargetFixture(target)
        let binding = targetFixture.bind(sourceFixture)
        sourceFixture.send(1)
        sourceFixture.send(2)
        #expect(!binding.isDisposed)
        sourceFixture.terminate()
        sourceFixture.send(3)

        #expect(targetFixture.received.entries == source.initialValues + [1, 2])
        #expect(binding.isDisposed)
        if source == .producer { #expect(sourceFixture.runLog.entries == ["started", "ended"]) }
    }

    @Test("disposing the binding ends it; a producer source's run is interrupted", arguments: allPairs)
    func disposal(source: BindingSourceKind, target: BindingTargetKind) {
        let sourceFixture = BindingSourceFixture(source)
        let targetFixture = BindingTargetFixture(target)
        let binding = targetFixture.bind(sourceFixture)
        sourceFixture.send(1)
        binding.dispose()
        sourceFixture.send(2)

        #expect(targetFixture.received.entries == source.initialValues + [1])
        #expect(binding.isDisposed)
        if source == .producer { #expect(sourceFixture.runLog.entries == ["started", "ended"]) }
    }

    @Test(
        "ending the target's lifetime ends the binding; a property target is not kept alive by it",
        arguments: BindingSourceKind.allCases, [BindingTargetKind.bindingTarget, .mutableProperty])
    func targetLifetime(source: BindingSourceKind, target: BindingTargetKind) {
        let sourceFixture = BindingSourceFixture(source)
        let targetFixture = BindingTargetFixture(target)
        let binding = targetFixture.bind(sourceFixture)
        sourceFixture.send(1)
        targetFixture.endLifetime()
        sourceFixture.send(2)

        #expect(targetFixture.received.entries == source.initialValues + [1])
        #expect(binding.isDisposed)
        if target == .mutableProperty { #expect(targetFixture.propertyWasFreed) }
        if source == .producer { #expect(sourceFixture.runLog.entries == ["started", "ended"]) }
    }

    @Test(
        "binding to a target whose lifetime has ended binds nothing and starts no producer",
        arguments: BindingSourceKind.allCases)
    func endedTarget(source: BindingSourceKind) {
        let sourceFixture = BindingSourceFixture(source)
        let (lifetime, token) = Lifetime.make()
        token.dispose()
        let received = TestLog<Int>()
        let binding = sourceFixture.bind(to: BindingTarget(lifetime: lifetime) { received.append($0) })
        sourceFixture.send(1)

        #expect(received.entries == [])
        #expect(binding.isDisposed)
        #expect(sourceFixture.runLog.entries == [])
    }

    @Test(
        "values sent from two threads at once all reach the target, one at a time, each thread's in order",
        arguments: allPairs)
    func twoThreads(source: BindingSourceKind, target: BindingTargetKind) {
        let perThread = 10_000
        let sourceFixture = BindingSourceFixture(source)
        let targetFixture = BindingTargetFixture(target)
        let binding = targetFixture.bind(sourceFixture)
        Watchdog.runOnThreads(2) { thread in
            for index in 1...perThread { sourceFixture.send(thread * perThread * 10 + index) }
        }
        sourceFixture.terminate()

        let received = targetFixture.received.entries
        #expect(Array(received.prefix(source.initialValues.count)) == source.initialValues)
        let sent = received.dropFirst(source.initialValues.count)
        #expect(sent.count == 2 * perThread)
        for thread in 0..<2 {
            let base = thread * perThread * 10
            #expect(sent.filter { $0 > base && $0 <= base + perThread } == Array(base + 1...base + perThread))
        }
        #expect(binding.isDisposed)
    }

    @Test(
        "many rounds of sends racing the end of the target's lifetime: nothing arrives after the end returns",
        arguments: [BindingSourceKind.signal, .producer], [BindingTargetKind.bindingTarget, .mutableProperty])
    func lifetimeEndRacingSends(source: BindingSourceKind, target: BindingTargetKind) {
        for _ in 0..<200 {
            let sourceFixture = BindingSourceFixture(source)
            let targetFixture = BindingTargetFixture(target)
            let binding = targetFixture.bind(sourceFixture)
            let countAtEnd = LockedTestValue(0)
            Watchdog.runOnThreads(2) { thread in
                if thread == 0 {
                    for index in 1...200 { sourceFixture.send(index) }
                } else {
                    targetFixture.endLifetime()
                    countAtEnd.withValue { $0 = targetFixture.received.entries.count }
                }
            }
            let received = targetFixture.received.entries
            #expect(received == Array(1..<received.count + 1))
            // At most the one value being handed over as the lifetime ended may still have arrived.
            #expect(received.count <= countAtEnd.value + 1)
            #expect(binding.isDisposed)
        }
    }

    @Test("<~ binds tighter than assignment and looser than other operators, right to left")
    func precedence() {
        let first = MutableProperty(0)
        let second = MutableProperty(0)
        let (signal, input) = Signal<Int, Never>.pipe()
        // The whole operator chain on the right is the source: no parentheses are needed.
        let binding = first <~ signal.map { $0 + 1 }.filter { $0 > 1 }
        second <~ first
        input.send(value: 1)
        input.send(value: 5)
        #expect(first.value == 6)
        #expect(second.value == 6)
        binding.dispose()
    }
}
