import Automaton
import AutomatonTesting
import Testing

// The code of the article "Effects and strategies" (Sources/Automaton/Automaton.docc/EffectsAndStrategies.md),
// verbatim between the markers (checked by .ci/check-docc-snippets).

// DOCC-EFFECTS-LOOKUP-BEGIN
enum Lookup: Sendable, Equatable {
    case idle, searching, found(String)
}

enum LookupInput: Sendable, Equatable {
    case search(String), results(String)

    var query: String? { if case let .search(query) = self { query } else { nil } }
    var results: String? { if case let .results(results) = self { results } else { nil } }
}

/// Each search starts an effect that answers with `.results`; `strategy` decides what a newer search
/// does to the effect of an older one.
func makeLookup(
    strategy: AutomatonStrategy,
    search: @escaping @Sendable (String) -> SignalProducer<LookupInput, Never>
) -> Automaton<Lookup, LookupInput> {
    Automaton(
        state: .idle, strategy: strategy,
        table: [
            \.query | { _, _ in .searching } | { _, query in search(query) },
            \.results | { _, results in .found(results) },
        ])
}
// DOCC-EFFECTS-LOOKUP-END

// DOCC-EFFECTS-KEYS-BEGIN
struct Document: Sendable, Equatable {
    var saves = 0, refreshes = 0
    func saved() -> Document { Document(saves: saves + 1, refreshes: refreshes) }
    func refreshed() -> Document { Document(saves: saves, refreshes: refreshes + 1) }
}

enum DocumentInput: Sendable, Equatable {
    case save, saved, refresh, refreshed, close
}

enum DocumentKey: Hashable, Sendable {
    case save, refresh
}

/// Saves run one after another (`.queue`); a refresh is not started while one runs (`.first`);
/// `.close` cancels both keys, running and waiting effects alike.
func makeEditor(
    save: SignalProducer<DocumentInput, Never>,
    refresh: SignalProducer<DocumentInput, Never>
) -> Automaton<Document, DocumentInput> {
    Automaton(
        state: Document(), strategy: .latest,
        table: [
            .save | { $0 } | save.keyed(DocumentKey.save, .queue),
            .refresh | { $0 } | refresh.keyed(DocumentKey.refresh, .first),
            .saved | { $0.saved() },
            .refreshed | { $0.refreshed() },
            .close | { $0 } | .cancel(DocumentKey.save, DocumentKey.refresh),
        ])
}
// DOCC-EFFECTS-KEYS-END

@Suite("Article: Effects and strategies")
struct EffectsArticleTests {
    @Test("under .latest a newer search replaces the older one's effect; under .merge both answer")
    func latestAndMerge() {
        // DOCC-EFFECTS-LOOKUP-USE-BEGIN
        let scheduler = TestScheduler()
        let search: @Sendable (String) -> SignalProducer<LookupInput, Never> = { query in
            SignalProducer(value: .results("\(query)!")).delay(.seconds(1), on: scheduler)
        }
        let latest = AutomatonTester(makeLookup(strategy: .latest, search: search), scheduler: scheduler)
        let merge = AutomatonTester(makeLookup(strategy: .merge, search: search), scheduler: scheduler)

        for tester in [latest, merge] {
            tester.send(.search("a"))
            tester.send(.search("ab"))  // before the first search has answered
        }
        scheduler.advance(by: .seconds(1))

        latest.expect([
            .success(.search("a"), .idle, .searching),
            .started(by: .search("a")),
            .cancelled(.replaced(by: .search("ab"))),  // before the reply that replaces it
            .success(.search("ab"), .searching, .searching),
            .started(by: .search("ab")),
            .success(.results("ab!"), .searching, .found("ab!")),
            .ended(),
        ])
        merge.expect([
            .success(.search("a"), .idle, .searching),
            .started(by: .search("a")),
            .success(.search("ab"), .searching, .searching),
            .started(by: .search("ab")),
            .success(.results("a!"), .searching, .found("a!")),  // a stale answer
            .ended(),
            .success(.results("ab!"), .found("a!"), .found("ab!")),
            .ended(),
        ])
        // DOCC-EFFECTS-LOOKUP-USE-END
        latest.finish()
        merge.finish()
    }

    @Test("keys: .queue runs saves one after another, .first drops a refresh, .cancel cancels waiting effects too")
    func keyPolicies() {
        // DOCC-EFFECTS-KEYS-USE-BEGIN
        let scheduler = TestScheduler()
        let tester = AutomatonTester(
            makeEditor(
                save: SignalProducer(value: .saved).delay(.seconds(1), on: scheduler),
                refresh: SignalProducer(value: .refreshed).delay(.seconds(1), on: scheduler)
            ),
            scheduler: scheduler
        )

        tester.send(.save)
        tester.send(.save)  // waits for the first save
        tester.send(.refresh)
        tester.send(.refresh)  // dropped: a refresh runs
        tester.advance(by: .seconds(1))  // the first save and the refresh end; the second save starts
        tester.send(.close)  // cancels the second save

        tester.expect([
            .success(.save, Document(), Document()),
            .started(by: .save, key: DocumentKey.save),
            .success(.save, Document(), Document()),
            .success(.refresh, Document(), Document()),
            .started(by: .refresh, key: DocumentKey.refresh),
            .success(.refresh, Document(), Document()),
            .cancelled(.dropped(by: .refresh), key: DocumentKey.refresh),  // after its reply, as a start
            .success(.saved, Document(), Document(saves: 1)),
            .ended(key: DocumentKey.save),
            .started(by: .save, key: DocumentKey.save),
            .success(.refreshed, Document(saves: 1), Document(saves: 1, refreshes: 1)),
            .ended(key: DocumentKey.refresh),
            .cancelled(.cancelled(by: .close), key: DocumentKey.save),
            .success(.close, Document(saves: 1, refreshes: 1), Document(saves: 1, refreshes: 1)),
        ])
        tester.finish()  // nothing runs any more
        // DOCC-EFFECTS-KEYS-USE-END
    }
}
