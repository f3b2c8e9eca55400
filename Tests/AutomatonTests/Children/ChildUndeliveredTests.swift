import Automaton
import AutomatonTesting
import Foundation
import Signals
import Testing

/// `send(_:to:)` to a child that does not run drops the input, but not in silence: a tester recording
/// the kind records it; with nobody watching, a debug build prints one warning line.
@Suite struct ChildUndeliveredTests {
    /// A parent of downloads whose starts use `policy`; `.pause(id)` forwards with `send(_:to:)`.
    static func makeManager(
        _ downloads: ChildAutomata<String, DownloadState, DownloadInput>, _ policy: EffectPolicy
    ) -> Automaton<Int, ManagerInput> {
        Automaton(state: 0) { state, input in
            switch input {
            case let .add(id): return (state, downloads.start(id, policy))
            case let .pause(id): return (state, downloads.send(.pause, to: id))
            case let .remove(id): return (state, downloads.remove(id))
            case .tick, .finished: return (state, .empty)
            }
        }
    }

    @Test func anInputToAChildNeverStartedRemovedOrWaitingIsRecordedAsUndelivered() {
        let inputs = Locked<[Observer<DownloadInput, Never>]>([])
        let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in
            let (signal, observer) = Signal<DownloadInput, Never>.pipe()
            inputs.withCriticalRegion { $0.append(observer) }
            return Automaton(state: .downloading(0), input: signal) { state, input in
                input == .pause ? .paused(0) : nil
            }
        }
        let tester = AutomatonTester(Self.makeManager(downloads, .queue))
        tester.recordReplies(of: downloads)
        tester.send(.pause("a"))  // never started
        tester.send(.add("b"))
        tester.send(.remove("b"))
        tester.send(.pause("b"))  // removed
        tester.send(.add("c"))
        tester.send(.add("c"))  // waits for the first c
        tester.send(.pause("c"))  // reaches the running c only
        inputs.withCriticalRegion { $0[1] }.sendCompleted()  // the first c ends: the second starts
        tester.send(.pause("c"))
        tester.expect([
            .success(.pause("a"), 0, 0),
            .undelivered(.pause, to: downloads, "a"),
            .success(.add("b"), 0, 0),
            .started(by: .add("b"), key: downloads.key("b")),
            .cancelled(.cancelled(by: .remove("b")), key: downloads.key("b")),
            .success(.remove("b"), 0, 0),
            .success(.pause("b"), 0, 0),
            .undelivered(.pause, to: downloads, "b"),
            .success(.add("c"), 0, 0),
            .started(by: .add("c"), key: downloads.key("c")),
            .success(.add("c"), 0, 0),
            .success(.pause("c"), 0, 0),
            .child(downloads, "c", .success(.pause, .downloading(0), .paused(0))),
            .ended(key: downloads.key("c")),
            .started(by: .add("c"), key: downloads.key("c")),
            .success(.pause("c"), 0, 0),
            .child(downloads, "c", .success(.pause, .downloading(0), .paused(0))),
        ])
        #expect(
            "\(Step<Int, ManagerInput>.undelivered(.pause, to: downloads, "a"))"
                == "child [downloads[a]] not running: pause dropped")
        tester.finish(skipRunningEffects: true)
    }

    #if DEBUG  // the warning is printed by debug builds only
        /// With nobody watching the kind, a debug build prints one line on standard error naming the
        /// child (kind and id) and the input, and how to learn of it; a watched kind prints nothing,
        /// a kind whose parent watches only another kind prints.
        @Test func withNobodyWatchingADebugBuildPrintsOneWarningLine() async {
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                let downloads = ChildAutomata<String, DownloadState, DownloadInput>("downloads") { _ in
                    makeDownload()
                }
                let manager = ChildUndeliveredTests.makeManager(downloads, .latest)
                manager.send(.add("a"))
                manager.send(.pause("a"))  // delivered: nothing printed
                manager.send(.pause("zip"))
                let watched = ChildUndeliveredTests.makeManager(downloads, .latest)
                let watch = downloads.watchReplies(of: watched) { _, _ in }
                watched.send(.pause("b"))  // watched: nothing printed
                let others = ChildAutomata<String, DownloadState, DownloadInput>("others") { _ in makeDownload() }
                let watchingOthers = ChildUndeliveredTests.makeManager(downloads, .latest)
                let otherWatch = others.watchReplies(of: watchingOthers) { _, _ in }
                watchingOthers.send(.pause("c"))  // another kind is watched: printed
                withExtendedLifetime((watch, otherWatch)) {}
            }
            let output = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
            let lines = output.split(separator: "\n").filter { $0.hasPrefix("Automaton:") }
            let line = { (id: String) in
                "Automaton: the input pause forwarded to the child downloads[\(id)] was dropped: no child "
                    + "downloads[\(id)] runs (never started, ended, removed, or waiting under .queue). Forward "
                    + "with send(_:to:answer:) for the parent to learn of it."
            }
            #expect(lines == [line("zip")[...], line("c")[...]], "standard error was: \(output)")
        }
    #endif
}
