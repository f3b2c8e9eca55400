import Automaton
import Signals
import Testing

// The mapping table written in place, `Automaton(state:strategy:table: [rows])`: every row form, the
// first row that applies wins whatever the index groups, and each input tries rows once.

private enum Door: Sendable, Equatable {
    case closed, open, locked(code: Int), broken
    var code: Int? { if case let .locked(code) = self { code } else { nil } }
    var isLocked: Bool { code != nil }
}

private enum DoorInput: Sendable, Equatable {
    case open, close, lock(code: Int), unlock(code: Int), kick, repair, knock
    var lockCode: Int? { if case let .lock(code) = self { code } else { nil } }
    var unlockCode: Int? { if case let .unlock(code) = self { code } else { nil } }
    var isKick: Bool { self == .kick }
}

private enum Loader: Sendable, Equatable {
    case idle, loading(id: Int), showing(String)
}

/// Counts the reads of `fetchID`, to show that a case row reads its case once per input.
private let fetchIDReads = Recording<Int>()

private enum LoaderInput: Sendable, Equatable {
    case fetch(id: Int), loaded(String), reset
    var fetchID: Int? {
        guard case let .fetch(id) = self else { return nil }
        fetchIDReads.append(id)
        return id
    }
    var loadedItem: String? { if case let .loaded(item) = self { item } else { nil } }
}

@Suite("The mapping table")
struct MappingTableTests {
    @Test(
        "every row form: value, predicate, array, any, key-path predicate, state function, computed, case payload, effects"
    )
    func everyRowForm() {
        let effects = Recording<String>()
        let isKick: @Sendable (DoorInput) -> Bool = { $0 == .kick }
        let automaton = Automaton<Door, DoorInput>(
            state: .closed,
            table: [
                .open | .closed => .open | SignalProducer { _, _ in effects.append("creak") },
                .close | .open => .closed,
                \.lockCode | { state, code in state == .closed ? .locked(code: code) : nil },
                \.unlockCode | { state, code in state.code == code ? .closed : nil },
                isKick | [.closed, .open] => .broken | { send in
                    effects.append("crash"); send(.knock)
                },
                .knock | { state, _ in state },
                .repair | \.isLocked => .locked(code: 0),
                .repair | any => .closed | { state, _ in
                    effects.append("repair \(state)")
                    return .empty
                },
                \.isKick | \.isLocked => .broken,
            ])
        let replies = automaton.replies.record()

        for input: DoorInput in [
            .open, .lock(code: 1), .close, .lock(code: 7), .unlock(code: 1), .unlock(code: 7),
            .kick, .repair, .lock(code: 3), .repair, .kick, .repair,
        ] {
            automaton.send(input)
        }

        #expect(
            replies.values == [
                .value(.success(.open, .closed, .open)),
                .value(.failure(.lock(code: 1), .open)),
                .value(.success(.close, .open, .closed)),
                .value(.success(.lock(code: 7), .closed, .locked(code: 7))),
                .value(.failure(.unlock(code: 1), .locked(code: 7))),
                .value(.success(.unlock(code: 7), .locked(code: 7), .closed)),
                .value(.success(.kick, .closed, .broken)),
                .value(.success(.knock, .broken, .broken)),
                .value(.success(.repair, .broken, .closed)),
                .value(.success(.lock(code: 3), .closed, .locked(code: 3))),
                .value(.success(.repair, .locked(code: 3), .locked(code: 0))),
                .value(.success(.kick, .locked(code: 0), .broken)),
                .value(.success(.repair, .broken, .closed)),
            ])
        #expect(effects.values == ["creak", "crash", "repair broken", "repair broken"])
    }

    @Test("the first row that applies wins, whether rows are for one input value or test inputs otherwise")
    func firstMatchWinsAcrossIndexGroups() {
        let automaton = Automaton<Int, String>(
            state: 0,
            table: [
                { $0.hasPrefix("a") } | 0 => 10,  // before the keyed rows for "a1"
                "a1" | 0 => 20,  // never wins from 0: the row above comes first
                "a1" | 10 => 30,
                { $0.hasPrefix("a") } | 10 => 40,  // after "a1"'s row from 10: loses to it
                "b" | { $0 + 1 },
                any | 30 => 0,
                "a1" | any => 99,  // after `any | 30 => 0`: loses to it from 30
            ])
        let replies = automaton.replies.record()

        for input in ["a1", "a2", "a1", "a1", "b", "zz", "a1", "b"] { automaton.send(input) }

        #expect(
            replies.values == [
                .value(.success("a1", 0, 10)),
                .value(.success("a2", 10, 40)),
                .value(.success("a1", 40, 99)),
                .value(.success("a1", 99, 99)),
                .value(.success("b", 99, 100)),
                .value(.failure("zz", 100)),
                .value(.success("a1", 100, 99)),
                .value(.success("b", 99, 100)),
            ])
    }

    /// Rows write their result only when they apply: a row with an effect that declines (its state
    /// test fails, its computed row returns nil) leaves nothing behind for the row that wins after it.
    @Test("a row that declines leaves no effect to the row that applies after it")
    func decliningRowLeavesNoEffect() {
        let started = Locked(0)
        let effect = SignalProducer<String, Never> { observer, _ in
            started.withCriticalRegion { $0 += 1 }
            observer.sendCompleted()
        }
        let automaton = Automaton<Int, String>(
            state: 0,
            table: [
                "go" | 5 => 6 | effect,  // declines from 0: its state test fails
                "go" | { state, _ in state == 1 ? 2 : nil } | { _, _ in effect },  // declines from 0
                "go" | 0 => 1,  // applies, without an effect
                "go" | 1 => 2 | effect,
            ])
        let replies = automaton.replies.record()
        let events = automaton.effectEvents.record()

        automaton.send("go")
        automaton.send("go")

        #expect(replies.values == [.value(.success("go", 0, 1)), .value(.success("go", 1, 2))])
        #expect(started.withCriticalRegion { $0 } == 1, "only the computed row from 1 started its effect")
        #expect(events.values.count == 2, "one effect: started, then ended")
    }

    @Test("a table decides exactly as reduce over the same rows, for every state and input")
    func tableAgreesWithReduce() {
        let table: [MappingRow<Int, Int>] = [
            1 | 0 => 1, { $0 > 5 } | 1 => 2, 1 | [1, 2] => 3, 2 | { $0 * 2 }, any | 3 => 0,
            3 | any => 4, { $0.isMultiple(of: 2) } | { state, input in state == input ? nil : input },
        ]
        let mappings: [Automaton<Int, Int>.Mapping] = [
            1 | 0 => 1, { $0 > 5 } | 1 => 2, 1 | [1, 2] => 3, 2 | { $0 * 2 }, any | 3 => 0,
            3 | any => 4, { state, input in input.isMultiple(of: 2) && state != input ? input : nil },
        ]
        let tableMapping = MappingTable(table).mapping
        let reference = reduce(mappings)
        var disagreements: [String] = []
        for state in -1...8 {
            for input in -1...8 where tableMapping(state, input)?.0 != reference(state, input) {
                disagreements.append("(\(state), \(input))")
            }
        }
        #expect(disagreements == [])
    }

    @Test("tables of one to seven input values decide as reduce over the same rows")
    func tablesOfEveryIndexSizeAgreeWithReduce() {
        for size in 1...7 {
            var table: [MappingRow<Int, Int>] = []
            var mappings: [Automaton<Int, Int>.Mapping] = []
            for key in 0..<size {
                let (next, opposite) = (key + 1, -key)  // `=>` binds tighter than `+`
                table.append(key | key => next)
                mappings.append(key | key => next)
                if key == 1 {  // an un-keyed row between keyed ones
                    table.append({ $0 > 4 } | any => 0)
                    mappings.append({ $0 > 4 } | any => 0)
                }
                table.append(key | [key + 2, key + 3] => opposite)
                mappings.append(key | [key + 2, key + 3] => opposite)
            }
            table.append(any | { state, input in state == input * 2 ? state + input : nil })
            mappings.append({ state, input in state == input * 2 ? state + input : nil })
            let tableMapping = MappingTable(table).mapping
            let reference = reduce(mappings)
            var disagreements: [String] = []
            for state in -8...10 {
                for input in -1...9 where tableMapping(state, input)?.0 != reference(state, input) {
                    disagreements.append("\(size) keys: (\(state), \(input))")
                }
            }
            #expect(disagreements == [])
        }
    }

    @Test("each input tries a row's closures at most once, and only the rows of its group")
    func rowsAreTriedOncePerInput() {
        let calls = Recording<String>()
        let automaton = Automaton<Int, String>(
            state: 0,
            table: [
                "x" | { state, _ in
                    calls.append("x1"); return nil
                },
                { _ in
                    calls.append("p"); return false
                } | any => 1,
                "x" | { state, _ in
                    calls.append("x2"); return state + 1
                },
                "y" | { state, _ in
                    calls.append("y"); return state + 2
                },
            ])

        automaton.send("x")
        automaton.send("y")
        automaton.send("z")

        #expect(calls.values == ["x1", "p", "x2", "p", "y", "p"])
        #expect(automaton.state.value == 3)
    }

    @Test("inputs that are not Equatable work with predicate and case rows")
    func nonEquatableInputs() {
        struct Payload: Sendable { let value: Int }
        let automaton = Automaton<Int, Payload>(
            state: 0,
            table: [
                { $0.value > 0 } | { state, input in state + input.value },
                any | any => -1,
            ])
        let states = automaton.state.signal.record()

        automaton.send(Payload(value: 2))
        automaton.send(Payload(value: 0))
        automaton.send(Payload(value: 5))

        #expect(states.values == [.value(2), .value(-1), .value(4)])
    }

    @Test("strategy: .latest applies to a table as to a mapping")
    func latestStrategyOnATable() {
        let scheduler = TestScheduler()
        let automaton = Automaton<Int, String>(
            state: 0, strategy: .latest,
            table: [
                "start" | any => 1 | SignalProducer(value: "done").delay(.seconds(1), on: scheduler),
                "done" | 1 => 2,
            ])
        let replies = automaton.replies.record()

        automaton.send("start")
        automaton.send("start")  // replaces the first effect
        scheduler.run()

        #expect(
            replies.values == [
                .value(.success("start", 0, 1)),
                .value(.success("start", 1, 1)),
                .value(.success("done", 1, 2)),
            ])
        #expect(scheduler.pendingActionCount == 0)
    }

    @Test("a case row's effect closure receives the associated value the row read, read once per input")
    func caseRowEffectReceivesTheValue() {
        let scheduler = TestScheduler()
        let fetched = Recording<String>()
        let automaton = Automaton<Loader, LoaderInput>(
            state: .idle, strategy: .latest,
            table: [
                \.fetchID | { _, id in id > 0 ? .loading(id: id) : nil } | { state, id in
                    // Interpolation would take the whole input as well: the row's value is what it gets.
                    fetched.append("fetch \(id) from \(state)")
                    return SignalProducer(value: .loaded("item \(id)")).delay(.seconds(1), on: scheduler)
                },
                \.loadedItem | { state, item in state == .idle ? nil : .showing(item) },
                \.fetchID | { _, _ in .idle } | SignalProducer(value: .reset),  // a producer: no value needed
                .reset | any => .idle,
            ])
        let replies = automaton.replies.record()

        automaton.send(.fetch(id: 3))
        #expect(fetchIDReads.values.filter { $0 == 3 } == [3], "read once, for both closures")
        scheduler.run()
        automaton.send(.fetch(id: 0))  // declined by the first row; the third applies

        #expect(fetched.values == ["fetch 3 from idle"])
        #expect(
            replies.values == [
                .value(.success(.fetch(id: 3), .idle, .loading(id: 3))),
                .value(.success(.loaded("item 3"), .loading(id: 3), .showing("item 3"))),
                .value(.success(.fetch(id: 0), .showing("item 3"), .idle)),
                .value(.success(.reset, .idle, .idle)),
            ])
    }

    @Test("a case row's effect closure that reads the whole input still gets it")
    func caseRowEffectWithTheWholeInput() {
        let automaton = Automaton<Loader, LoaderInput>(
            state: .idle,
            table: [
                // `input.fetchID` only type-checks on the whole input: this closure receives it.
                \.fetchID | { _, id in .loading(id: id) } | { _, input in
                    SignalProducer(value: .loaded("item \(input.fetchID ?? -1)"))
                },
                \.loadedItem | { _, item in .showing(item) },
            ])
        let replies = automaton.replies.record()

        automaton.send(.fetch(id: 5))

        #expect(
            replies.values == [
                .value(.success(.fetch(id: 5), .idle, .loading(id: 5))),
                .value(.success(.loaded("item 5"), .loading(id: 5), .showing("item 5"))),
            ])
    }

    @Test("a table written in place, declared as a MappingTable, or made from an array of rows decides alike")
    func tableSpellings() {
        let rows: [MappingRow<Int, String>] = ["up" | any => 1, "down" | 1 => 0, "reset" | any => 0]
        let declared: MappingTable<Int, String> = ["up" | any => 1, "down" | 1 => 0, "reset" | any => 0]
        let automata = [
            Automaton<Int, String>(state: 0, table: ["up" | any => 1, "down" | 1 => 0, "reset" | any => 0]),
            Automaton(state: 0, table: declared),
            Automaton(state: 0, table: MappingTable(rows)),
        ]
        #expect(declared.rows.count == 3)
        for automaton in automata {
            let replies = automaton.replies.record()
            for input in ["down", "up", "up", "down", "reset", "knock"] {
                automaton.send(input)
            }
            #expect(
                replies.values == [
                    .value(.failure("down", 0)),
                    .value(.success("up", 0, 1)),
                    .value(.success("up", 1, 1)),
                    .value(.success("down", 1, 0)),
                    .value(.success("reset", 0, 0)),
                    .value(.failure("knock", 0)),
                ])
        }
    }
}
