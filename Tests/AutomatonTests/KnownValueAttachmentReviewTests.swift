import Automaton
import Foundation
import Signals
import Testing

/// From the adversarial review of `KnownValueAttachment` (a value producer's value lives in a subclass
/// of its attachment, read with `unsafeDowncast`): which producers claim a value, values of every
/// kind sent intact and freed exactly once, and value producers shared between threads.
@Suite("A value producer's attachment: claimed only by SignalProducer(value:), its value freed once")
struct KnownValueAttachmentReviewTests {
    /// Counts the instances made and freed; a value of each kind below holds one.
    final class Tracked: Sendable {
        let name: String
        let counts: Locked<(made: Int, freed: Int)>

        init(_ name: String, counts: Locked<(made: Int, freed: Int)>) {
            self.name = name
            self.counts = counts
            counts.withCriticalRegion { $0.made += 1 }
        }

        deinit { counts.withCriticalRegion { $0.freed += 1 } }
    }

    @Test("operators, .cancel and child directives make producers without a value; keying keeps it, however often")
    func whoClaimsAValue() {
        let value = SignalProducer<Int, Never>(value: 3)
        let children = ChildAutomata<Int, Int, Int>("child") { _ in
            Automaton<Int, Int>(state: 0, mapping: { (_: Int, _: Int) -> Int? in nil })
        }
        let producers: [(String, SignalProducer<Int, Never>)] = [
            ("value", value),
            ("keyed", value.keyed("k", .queue)),
            ("keyed twice", value.keyed("k", .latest).keyed("j", .first)),
            ("keyed three times", value.keyed(1, .merge).keyed("j", .queue).keyed(2.5, .latest)),
            ("map", value.map { $0 }),
            ("keyed, then map", value.keyed("k").map { $0 }),
            ("filter", value.filter { _ in true }),
            ("on", value.on(value: { _ in })),
            ("keyed, then on", value.keyed("k").on(value: { _ in })),
            ("lift", value.lift { $0 }),
            (
                "promoteError, then flatMapError",
                value.promoteError(CancellationError.self).flatMapError { _ in .empty }
            ),
            ("cancel", .cancel("k")),
            ("empty, keyed", SignalProducer<Int, Never>.empty.keyed("k")),
            ("child start", children.start(1)),
            ("child send", children.send(1, to: 1)),
            ("child remove", children.remove(1)),
        ]
        let claims = producers.map { name, producer in
            "\(name): \(producer.knownValue.map(String.init) ?? "none"), directive \(producer.hasDirective)"
        }
        #expect(
            claims == [
                "value: 3, directive false",
                "keyed: 3, directive true",
                "keyed twice: 3, directive true",
                "keyed three times: 3, directive true",
                "map: none, directive false",
                "keyed, then map: none, directive false",
                "filter: none, directive false",
                "on: none, directive false",
                "keyed, then on: none, directive false",
                "lift: none, directive false",
                "promoteError, then flatMapError: none, directive false",
                "cancel: none, directive true",
                "empty, keyed: none, directive true",
                "child start: none, directive true",
                "child send: none, directive true",
                "child remove: none, directive true",
            ])
        // Started, the derived producers still send the value, once.
        let sent = Recording<String>()
        for (name, producer) in producers.prefix(11) {
            producer.start { sent.append("\(name) \($0)") }
        }
        #expect(
            sent.values == [
                "value value(3)", "value completed", "keyed value(3)", "keyed completed",
                "keyed twice value(3)", "keyed twice completed", "keyed three times value(3)",
                "keyed three times completed", "map value(3)", "map completed", "keyed, then map value(3)",
                "keyed, then map completed", "filter value(3)", "filter completed", "on value(3)", "on completed",
                "keyed, then on value(3)", "keyed, then on completed", "lift value(3)", "lift completed",
                "promoteError, then flatMapError value(3)", "promoteError, then flatMapError completed",
            ])
    }

    @Test("a value that is itself nil is a known value, keyed or not, and the automaton processes it")
    func nilIsAKnownValue() {
        let producer = SignalProducer<Int?, Never>(value: nil)
        #expect(producer.knownValue.map { $0 == nil } == true)
        #expect(producer.keyed("k").keyed("j", .queue).knownValue.map { $0 == nil } == true)
        #expect(SignalProducer<Int?, Never>(value: 4).keyed("k").knownValue == .some(4))
        #expect(SignalProducer<Void, Never>(value: ()).keyed("k").knownValue != nil)
        func path(knownValue: Bool, keyed: Bool) -> [String] {
            let automaton = Automaton<[String], Int?>(
                state: [],
                mapping: { path, input in
                    let next = path + [input.map(String.init) ?? "nil"]
                    guard input == 1 else { return (next, .empty) }
                    let effect: SignalProducer<Int?, Never> =
                        knownValue
                        ? SignalProducer(value: nil)
                        : SignalProducer { observer, _ in
                            observer.send(value: nil)
                            observer.sendCompleted()
                        }
                    return (next, keyed ? effect.keyed("k", .queue) : effect)
                })
            automaton.send(1)
            automaton.send(2)
            return automaton.state.value
        }
        for keyed in [false, true] {
            #expect(path(knownValue: true, keyed: keyed) == ["1", "nil", "2"])
            #expect(path(knownValue: false, keyed: keyed) == ["1", "nil", "2"])
        }
    }

    /// A large value with a reference and a closure inside.
    struct Large: Sendable {
        var numbers: (Int, Int, Int, Int, Int, Int, Int, Int)
        var tracked: Tracked
        var describe: @Sendable () -> String
    }

    /// A value aligned to 16 bytes, past the attachment's own fields.
    struct Aligned: Sendable {
        var vector: SIMD4<Float>
        var tracked: Tracked
    }

    enum Shape: Sendable {
        case none
        case one(Tracked)
        case two(Tracked, String)
    }

    /// Makes value producers of `Value` from `make`, copies and keys them, starts each copy twice, reads
    /// their known values, runs them as an automaton's effects (unkeyed, and keyed under `.queue`
    /// behind an effect that never ends, then released while waiting), and returns what was seen.
    static func exercise<Value: Sendable>(
        _ counts: Locked<(made: Int, freed: Int)>, make: @escaping @Sendable (Int) -> Value,
        describe: @escaping @Sendable (Value) -> String
    ) -> [String] {
        let seen = Recording<String>()
        do {
            let producer = SignalProducer<Value, Never>(value: make(1))
            var copies = [producer, producer.keyed("k"), producer.keyed("k").keyed("j", .merge)]
            copies.append(copies[2])
            for copy in copies {
                seen.append("known \(copy.knownValue.map(describe) ?? "none")")
                for _ in 0..<2 {
                    copy.start { event in
                        switch event {
                        case let .value(value): seen.append("sent \(describe(value))")
                        default: seen.append("\(event)")
                        }
                    }
                }
            }
        }
        for keyed in [false, true] {
            let automaton = Automaton<[String], Value>(
                state: [],
                mapping: { path, input in
                    let next = path + [describe(input)]
                    guard path.count < 3 else { return (next, .empty) }
                    let effect = SignalProducer<Value, Never>(value: make(path.count + 2))
                    if !keyed { return (next, effect) }
                    // The first effect never ends: the others wait behind it, and are released with it.
                    return (next, path.isEmpty ? SignalProducer.never.keyed("k", .queue) : effect.keyed("k", .queue))
                })
            automaton.send(make(0))
            automaton.send(make(9))
            automaton.send(make(10))
            seen.append("keyed \(keyed): \(automaton.state.value)")
        }
        let final = counts.withCriticalRegion { $0 }
        seen.append("made \(final.made), freed \(final.freed)")
        return seen.values
    }

    static func expected(_ names: (Int) -> String, made: Int) -> [String] {
        let starts = ["sent \(names(1))", "completed", "sent \(names(1))", "completed"]
        return (0..<4).flatMap { _ in ["known \(names(1))"] + starts } + [
            "keyed false: [\"\(names(0))\", \"\(names(2))\", \"\(names(3))\", \"\(names(4))\", \"\(names(9))\", \"\(names(10))\"]",
            "keyed true: [\"\(names(0))\", \"\(names(9))\", \"\(names(10))\"]",
            "made \(made), freed \(made)",
        ]
    }

    @Test("values of every kind: sent intact from each copy, and freed exactly once with the last one")
    func valuesOfEveryKind() {
        // 1 value, then 6 per automaton: 3 inputs and 3 effects' values (the first keyed one made, unused).
        func check<Value: Sendable>(
            _ kind: String, make: @escaping @Sendable (Tracked) -> Value,
            describe: @escaping @Sendable (Value) -> String
        ) {
            let counts = Locked<(made: Int, freed: Int)>((0, 0))
            let seen = Self.exercise(counts, make: { make(Tracked("v\($0)", counts: counts)) }, describe: describe)
            let made = counts.withCriticalRegion { $0.made }
            #expect(seen == Self.expected({ "v\($0)" }, made: made), "\(kind)")
            #expect(made == 13, "\(kind): values made")
        }
        check("class", make: { $0 }, describe: { $0.name })
        check(
            "string", make: { $0.name + String(repeating: "-", count: 40) },
            describe: { String($0.prefix { $0 != "-" }) })
        check("array", make: { [$0, $0] }, describe: { $0[1].name })
        check("existential", make: { $0 as any Sendable }, describe: { ($0 as! Tracked).name })
        check(
            "large struct",
            make: { tracked in Large(numbers: (1, 2, 3, 4, 5, 6, 7, 8), tracked: tracked, describe: { tracked.name }) },
            describe: { $0.numbers.7 == 8 ? $0.describe() : "torn" })
        check(
            "enum", make: { Shape.two($0, "payload") },
            describe: {
                if case let .two(tracked, text) = $0, text == "payload" { return tracked.name }
                return "torn"
            })
        check(
            "aligned", make: { Aligned(vector: SIMD4(1, 2, 3, 4), tracked: $0) },
            describe: { $0.vector.w == 4 ? $0.tracked.name : "torn" })
        check("optional", make: { Optional($0) }, describe: { $0?.name ?? "nil" })
        check(
            "closure", make: { tracked in { @Sendable in tracked.name } },
            describe: { (closure: @Sendable () -> String) in closure() })
    }

    @Test("threads starting, keying and reading one value producer at once: each sees the value, freed once")
    func threadsShareAValueProducer() async {
        let counts = Locked<(made: Int, freed: Int)>((0, 0))
        let perThread = Locked<[Int: [String]]>([:])
        do {
            let producer = SignalProducer<Tracked, Never>(value: Tracked("shared", counts: counts))
            await runOnThreads(4) { index in
                var seen: [String] = []
                for round in 0..<500 {
                    let copy = round % 2 == 0 ? producer : producer.keyed(index, .merge)
                    seen.append(copy.knownValue?.name ?? "none")
                    let events = Recording<String>()
                    copy.start { event in
                        switch event {
                        case let .value(value): events.append(value.name)
                        default: events.append("\(event)")
                        }
                    }
                    seen += events.values
                }
                perThread.withCriticalRegion { $0[index] = seen }
            }
        }
        let expected = Array(repeating: ["shared", "shared", "completed"], count: 500).flatMap { $0 }
        #expect(perThread.withCriticalRegion { $0 } == [0: expected, 1: expected, 2: expected, 3: expected])
        #expect(counts.withCriticalRegion { "\($0.made) made, \($0.freed) freed" } == "1 made, 1 freed")
    }
}
