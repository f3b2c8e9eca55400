import Automaton
import Dispatch
import Foundation
import InMemoryTracing
import Testing
import Tracing

@testable import AutomatonTracing

// `Automaton.trace(with:options:context:)`: a span per input, a child span per effect ended with the
// effect, links from an effect's inputs to its span; every span ended at the termination and at the
// disposal; a table bounded by the running effects and the linkable ended ones.

private enum Phase: Hashable, Sendable {
    case idle, loading, ready
}

private enum Command: Hashable, Sendable {
    case bogus, load, loaded, search(Int), fetch
}

/// `.load` starts an effect that sends `.loaded` twice and ends; `.search` runs until replaced by the
/// next one (key `search`, `.latest`); `.fetch` runs until the end, and a second one is dropped (key
/// `fetch`, `.first`); `.bogus` never applies.
private func scriptedAutomaton() -> Automaton<Phase, Command> {
    let loads = SignalProducer<Command, Never>(values: [.loaded, .loaded])
    let forever = SignalProducer<Command, Never>.never
    return Automaton(
        state: .idle,
        mapping: { phase, command in
            switch (phase, command) {
            case (.idle, .load): (.loading, loads)
            case (.loading, .loaded), (.ready, .loaded): (.ready, .empty)
            case (.ready, .search): (.ready, forever.keyed("search", .latest))
            case (.ready, .fetch): (.ready, forever.keyed("fetch", .first))
            default: nil
            }
        })
}

/// An attribute's value as text.
private func text(_ attribute: SpanAttribute) -> String {
    switch attribute {
    case let .string(value): value
    case let .int64(value): "\(value)"
    case let .int32(value): "\(value)"
    case let .bool(value): "\(value)"
    default: "\(attribute)"
    }
}

/// Attributes as `{key=value, ...}`, sorted by key.
private func text(_ attributes: SpanAttributes) -> String {
    var pairs: [String] = []
    attributes.forEach { key, value in pairs.append("\(key)=\(text(value))") }
    return "{" + pairs.sorted().joined(separator: ", ") + "}"
}

/// A finished span as one comparable line: id, name, parent, attributes, events, links.
private func line(_ span: FinishedInMemorySpan) -> String {
    var result = "\(span.spanID) \(span.operationName) parent=\(span.parentSpanID ?? "-") \(text(span.attributes))"
    if !span.events.isEmpty {
        let events = span.events.map { $0.attributes.isEmpty ? $0.name : $0.name + text($0.attributes) }
        result += " events[" + events.joined(separator: ", ") + "]"
    }
    if !span.links.isEmpty {
        let links = span.links.map { ($0.context.inMemorySpanContext?.spanID ?? "?") + text($0.attributes) }
        result += " links[" + links.joined(separator: ", ") + "]"
    }
    return result
}

/// The number in `span-N`, for sorting by start.
private func number(_ span: FinishedInMemorySpan) -> Int {
    Int(span.spanID.dropFirst("span-".count)) ?? -1
}

private func integer(_ span: FinishedInMemorySpan, _ key: String) -> Int64? {
    if case let .int64(value) = span.attributes.get(key) { return value }
    return nil
}

private func string(_ span: FinishedInMemorySpan, _ key: String) -> String? {
    if case let .string(value) = span.attributes.get(key) { return value }
    return nil
}

@Suite("Tracing: a span per input, a child span per effect, links from an effect's inputs")
struct AutomatonTracingTests {
    @Test("a failure, an effect and its inputs, a replaced effect, a dropped one, and the release")
    func scriptedSpans() {
        let tracer = InMemoryTracer()
        var automaton: Automaton<Phase, Command>? = scriptedAutomaton()
        let recorder = automaton!.makeTraceRecorder(tracer: tracer, options: .init(), context: .topLevel)
        for command in [Command.bogus, .load, .search(1), .search(2), .fetch, .fetch] {
            automaton!.send(command)
        }
        #expect(recorder.tableSize.open == 2)  // search(2)'s and the first fetch's effects run
        automaton = nil
        let spans = tracer.finishedSpans
        #expect(tracer.activeSpans.isEmpty)
        let input = "automaton.input"
        let effect = "automaton.effect"
        #expect(
            spans.sorted { number($0) < number($1) }.map(line) == [
                "span-1 \(input) parent=- {automaton.from=idle, automaton.input=bogus, automaton.outcome=failure}",
                "span-2 \(input) parent=- {automaton.effect.id=0, automaton.from=idle, automaton.input=load, "
                    + "automaton.outcome=success, automaton.to=loading}",
                "span-3 \(effect) parent=span-2 {automaton.effect.id=0, automaton.effect.outcome=ended} events[started]",
                "span-4 \(input) parent=- {automaton.from=loading, automaton.input=loaded, automaton.outcome=success, "
                    + "automaton.sender.effect.id=0, automaton.to=ready} links[span-3{automaton.effect.id=0}]",
                "span-5 \(input) parent=- {automaton.from=ready, automaton.input=loaded, automaton.outcome=success, "
                    + "automaton.sender.effect.id=0, automaton.to=ready} links[span-3{automaton.effect.id=0}]",
                "span-6 \(input) parent=- {automaton.effect.id=1, automaton.from=ready, automaton.input=search(1), "
                    + "automaton.outcome=success, automaton.to=ready}",
                "span-7 \(effect) parent=span-6 {automaton.effect.id=1, automaton.effect.key=search, "
                    + "automaton.effect.outcome=replaced} events[started, "
                    + "cancelled{automaton.effect.cancellation=replaced, automaton.input=search(2)}]",
                "span-8 \(input) parent=- {automaton.effect.id=2, automaton.from=ready, automaton.input=search(2), "
                    + "automaton.outcome=success, automaton.to=ready}",
                "span-9 \(effect) parent=span-8 {automaton.effect.id=2, automaton.effect.key=search, "
                    + "automaton.effect.outcome=released} events[started, "
                    + "cancelled{automaton.effect.cancellation=released}]",
                "span-10 \(input) parent=- {automaton.effect.id=3, automaton.from=ready, automaton.input=fetch, "
                    + "automaton.outcome=success, automaton.to=ready}",
                "span-11 \(effect) parent=span-10 {automaton.effect.id=3, automaton.effect.key=fetch, "
                    + "automaton.effect.outcome=released} events[started, "
                    + "cancelled{automaton.effect.cancellation=released}]",
                "span-12 \(input) parent=- {automaton.effect.id=4, automaton.from=ready, automaton.input=fetch, "
                    + "automaton.outcome=success, automaton.to=ready}",
                "span-13 \(effect) parent=span-12 {automaton.effect.id=4, automaton.effect.key=fetch, "
                    + "automaton.effect.outcome=dropped} events[cancelled{automaton.effect.cancellation=dropped, "
                    + "automaton.input=fetch}]",
            ])
        // Each effect span is in its input's trace, starts when its input span ends, and ends after it.
        let byID = Dictionary(uniqueKeysWithValues: spans.map { ($0.spanID, $0) })
        for span in spans {
            #expect(span.startInstant.nanosecondsSinceEpoch <= span.endInstant.nanosecondsSinceEpoch)
            guard let parentID = span.parentSpanID, let parent = byID[parentID] else { continue }
            #expect(span.traceID == parent.traceID)
            #expect(span.startInstant.nanosecondsSinceEpoch == parent.endInstant.nanosecondsSinceEpoch)
        }
        // Every input span is the root of a trace of its own.
        #expect(Set(spans.filter { $0.parentSpanID == nil }.map(\.traceID)).count == 8)
        // In the order they ended: the replaced effect before the input that replaced it, the dropped
        // one after the input that dropped it, the released ones last.
        #expect(
            spans.map(\.spanID) == [
                "span-1", "span-2", "span-3", "span-4", "span-5", "span-6", "span-7", "span-8", "span-10",
                "span-12", "span-13", "span-9", "span-11",
            ])
        #expect(recorder.tableSize == (0, 0, 0))
    }

    @Test("under the .latest strategy, an outside input's effect is replaced by the next outside input")
    func latestStrategy() {
        let tracer = InMemoryTracer()
        let automaton = Automaton<Int, Command>(
            state: 0, mapping: { state, _ in (state + 1, .never) }, strategy: .latest)
        automaton.trace(with: tracer, context: .topLevel)
        automaton.send(.search(1))
        automaton.send(.search(2))
        let replaced = tracer.finishedSpans.first { $0.operationName == "automaton.effect" }
        #expect(
            replaced.map(line)
                == "span-2 automaton.effect parent=span-1 {automaton.effect.id=0, automaton.effect.outcome=replaced} "
                + "events[started, cancelled{automaton.effect.cancellation=replaced, automaton.input=search(2)}]")
    }

    @Test("options: span names, rendering, extra attributes, failures as errors, the parent context")
    func options() {
        let tracer = InMemoryTracer()
        let automaton = scriptedAutomaton()
        var options = AutomatonTraceOptions<Phase, Command>()
        options.inputSpanName = "session.input"
        options.effectSpanName = "session.effect"
        options.describeInput = { "\($0)".uppercased() }
        options.describeState = { "<\($0)>" }
        options.attributes = ["session.id": "s-7"]
        options.marksFailuresAsErrors = true
        let parent = tracer.startSpan("request", context: .topLevel)
        automaton.trace(with: tracer, options: options, context: parent.context)
        automaton.send(.bogus)
        automaton.send(.load)
        parent.end()
        let spans = tracer.finishedSpans
        #expect(
            spans.map(line) == [
                "span-2 session.input parent=span-1 {automaton.from=<idle>, automaton.input=BOGUS, "
                    + "automaton.outcome=failure, session.id=s-7}",
                "span-3 session.input parent=span-1 {automaton.effect.id=0, automaton.from=<idle>, "
                    + "automaton.input=LOAD, automaton.outcome=success, automaton.to=<loading>, session.id=s-7}",
                "span-4 session.effect parent=span-3 {automaton.effect.id=0, automaton.effect.outcome=ended, "
                    + "session.id=s-7} events[started]",
                "span-5 session.input parent=span-1 {automaton.from=<loading>, automaton.input=LOADED, "
                    + "automaton.outcome=success, automaton.sender.effect.id=0, automaton.to=<ready>, session.id=s-7} "
                    + "links[span-4{automaton.effect.id=0}]",
                "span-6 session.input parent=span-1 {automaton.from=<ready>, automaton.input=LOADED, "
                    + "automaton.outcome=success, automaton.sender.effect.id=0, automaton.to=<ready>, session.id=s-7} "
                    + "links[span-4{automaton.effect.id=0}]",
                "span-1 request parent=- {}",
            ])
        #expect(spans.map { $0.status?.code } == [.error, nil, nil, nil, nil, nil])
        #expect(Set(spans.map(\.traceID)).count == 1)
    }

    @Test("an interrupted input ends the running effects' spans, cancelled: interrupted")
    func interruption() {
        let tracer = InMemoryTracer()
        let (input, sink) = Signal<Command, Never>.pipe()
        let automaton = Automaton<Int, Command>(state: 0, input: input, mapping: { state, _ in (state + 1, .never) })
        let recorder = automaton.makeTraceRecorder(tracer: tracer, options: .init(), context: .topLevel)
        sink.send(value: .fetch)
        sink.send(value: .fetch)
        #expect(recorder.tableSize.open == 2)
        sink.sendInterrupted()
        #expect(tracer.activeSpans.isEmpty)
        let outcomes = tracer.finishedSpans.compactMap { string($0, "automaton.effect.outcome") }
        #expect(outcomes == ["interrupted", "interrupted"])
        #expect(recorder.tableSize == (0, 0, 0))
        // Tracing an automaton that has terminated traces nothing.
        let late = automaton.makeTraceRecorder(tracer: tracer, options: .init(), context: .topLevel)
        automaton.send(.fetch)
        #expect(late.tableSize == (0, 0, 0))
        #expect(tracer.finishedSpans.count == 4)
    }

    @Test("disposal ends the open effect spans, detached, and stops tracing")
    func disposal() {
        let tracer = InMemoryTracer()
        let automaton = scriptedAutomaton()
        let recorder = automaton.makeTraceRecorder(tracer: tracer, options: .init(), context: .topLevel)
        let disposable = AnyDisposable { recorder.detach() }
        automaton.send(.load)
        automaton.send(.search(1))
        #expect(recorder.tableSize.open == 1)
        disposable.dispose()
        #expect(tracer.activeSpans.isEmpty)
        let count = tracer.finishedSpans.count
        #expect(
            tracer.finishedSpans.last.map(line)
                == "span-6 automaton.effect parent=span-5 {automaton.effect.id=1, automaton.effect.key=search, "
                + "automaton.effect.outcome=detached} events[started]")
        #expect(recorder.tableSize == (0, 0, 0))
        automaton.send(.search(2))
        automaton.send(.bogus)
        #expect(tracer.finishedSpans.count == count)
        #expect(tracer.activeSpans.isEmpty)
        disposable.dispose()
    }

    @Test(
        "when tracing stops, the tracer and the parent context are let go of, though its disposable is held",
        arguments: Stop.allCases)
    func letsGoOfTracerWhileDisposableHeld(stop: Stop) {
        let spans = InMemoryTracer()
        let (input, sink) = Signal<Command, Never>.pipe()
        let (gate, opener) = Signal<Command, Never>.pipe()
        // `.load` starts an effect that sends `.loaded` and ends; `.fetch` one that runs until the gate
        // completes.
        var automaton: Automaton<Phase, Command>? = Automaton(
            state: .idle, input: input,
            mapping: { phase, command in
                switch (phase, command) {
                case (.idle, .load): (.loading, SignalProducer(values: [.loaded]))
                case (.loading, .loaded): (.ready, .empty)
                case (.ready, .fetch): (.ready, SignalProducer(gate))
                default: nil
                }
            })
        weak var tracer: ForwardingTracer?
        weak var marker: Marker?
        let disposable: Disposable
        do {
            let strongTracer = ForwardingTracer(spans)
            let strongMarker = Marker()
            tracer = strongTracer
            marker = strongMarker
            var context = ServiceContext.topLevel
            context[MarkerKey.self] = strongMarker
            disposable = automaton!.trace(with: strongTracer, context: context)
        }
        sink.send(value: .load)
        sink.send(value: .fetch)
        #expect(tracer != nil)
        #expect(marker != nil)
        switch stop {
        case .released: automaton = nil
        case .interrupted: sink.sendInterrupted()
        case .completed:
            opener.sendCompleted()
            sink.sendCompleted()
        case .disposed: disposable.dispose()
        }
        let last: String
        switch stop {
        case .released, .interrupted:
            last =
                "{automaton.effect.id=1, automaton.effect.outcome=\(stop)} "
                + "events[started, cancelled{automaton.effect.cancellation=\(stop)}]"
        case .completed: last = "{automaton.effect.id=1, automaton.effect.outcome=ended} events[started]"
        case .disposed: last = "{automaton.effect.id=1, automaton.effect.outcome=detached} events[started]"
        }
        // Popped: the finished spans hold the context too.
        #expect(
            spans.popFinishedSpans().map(line) == [
                "span-1 automaton.input parent=- {automaton.effect.id=0, automaton.from=idle, automaton.input=load, "
                    + "automaton.outcome=success, automaton.to=loading}",
                "span-2 automaton.effect parent=span-1 {automaton.effect.id=0, automaton.effect.outcome=ended} "
                    + "events[started]",
                "span-3 automaton.input parent=- {automaton.from=loading, automaton.input=loaded, "
                    + "automaton.outcome=success, automaton.sender.effect.id=0, automaton.to=ready} "
                    + "links[span-2{automaton.effect.id=0}]",
                "span-4 automaton.input parent=- {automaton.effect.id=1, automaton.from=ready, automaton.input=fetch, "
                    + "automaton.outcome=success, automaton.to=ready}",
                "span-5 automaton.effect parent=span-4 " + last,
            ])
        #expect(spans.activeSpans.isEmpty)
        #expect(tracer == nil)
        #expect(marker == nil)
        #expect(disposable.isDisposed == (stop == .disposed))
        // Disposing after the stop does nothing.
        disposable.dispose()
        automaton?.send(.fetch)
        #expect(spans.finishedSpans.isEmpty)
        // Tracing an automaton that has terminated keeps nothing either.
        if stop == .interrupted || stop == .completed, let automaton {
            weak var late: ForwardingTracer?
            let lateDisposable: Disposable
            do {
                let strongTracer = ForwardingTracer(spans)
                late = strongTracer
                lateDisposable = automaton.trace(with: strongTracer, context: .topLevel)
            }
            #expect(late == nil)
            withExtendedLifetime(lateDisposable) {}
        }
        withExtendedLifetime((automaton, sink, opener)) {}
    }

    @Test("spans that do not record: nothing rendered, effects still tracked until their end")
    func nonRecordingSpans() {
        let rendered = Counter()
        var options = AutomatonTraceOptions<Phase, Command>()
        options.describeInput = { input in
            rendered.increment()
            return "\(input)"
        }
        options.describeState = { state in
            rendered.increment()
            return "\(state)"
        }
        var automaton: Automaton<Phase, Command>? = scriptedAutomaton()
        let recorder = automaton!.makeTraceRecorder(tracer: NoOpTracer(), options: options, context: .topLevel)
        for command in [Command.bogus, .load, .search(1), .search(2), .fetch, .fetch] {
            automaton!.send(command)
        }
        #expect(recorder.tableSize.open == 2)  // search(2)'s and the first fetch's effects run
        automaton = nil
        #expect(recorder.tableSize == (0, 0, 0))
        #expect(rendered.value == 0)
    }

    @Test("a queued effect that starts and ends on another thread before its input's record has its span")
    func eventsBeforeRecord() {
        let tracer = InMemoryTracer()
        let (gate, opener) = Signal<Command, Never>.pipe()
        // The first `.fetch` waits for the gate; the second waits for the first (key `q`, `.queue`),
        // then ends at once.
        let automaton = Automaton<Int, Command>(
            state: 0,
            mapping: { state, command in
                guard command == .fetch else { return nil }
                let effect = state == 0 ? SignalProducer(gate) : SignalProducer<Command, Never>(values: [])
                return (state + 1, effect.keyed("q", .queue))
            })
        // Called before the recorder's observer: while the processing thread is in it for the second
        // `.fetch`, another thread opens the gate, so the first effect ends and the second one starts
        // and ends there, before the recorder has the second input's record.
        let earlyEvents = Counter()
        let watched = Watched<AutomatonTraceRecorder<InMemoryTracer>>()
        automaton.observeProcessing { record in
            guard record.effect == 1 else { return }
            let opened = DispatchSemaphore(value: 0)
            Thread {
                opener.sendCompleted()
                opened.signal()
            }.start()
            opened.wait()
            for _ in 0..<(watched.value?.tableSize.early ?? 0) { earlyEvents.increment() }
        }
        let recorder = automaton.makeTraceRecorder(tracer: tracer, options: .init(), context: .topLevel)
        watched.value = recorder
        automaton.send(.fetch)
        automaton.send(.fetch)
        #expect(
            tracer.finishedSpans.map(line) == [
                "span-1 automaton.input parent=- {automaton.effect.id=0, automaton.from=0, automaton.input=fetch, "
                    + "automaton.outcome=success, automaton.to=1}",
                "span-2 automaton.effect parent=span-1 {automaton.effect.id=0, automaton.effect.key=q, "
                    + "automaton.effect.outcome=ended} events[started]",
                "span-3 automaton.input parent=- {automaton.effect.id=1, automaton.from=1, automaton.input=fetch, "
                    + "automaton.outcome=success, automaton.to=2}",
                "span-4 automaton.effect parent=span-3 {automaton.effect.id=1, automaton.effect.key=q, "
                    + "automaton.effect.outcome=ended} events[started]",
            ])
        #expect(earlyEvents.value == 1)  // the second effect's events came before its record
        #expect(tracer.activeSpans.isEmpty)
        #expect(recorder.tableSize == (0, 0, 2))
    }

    @Test("an effect made before tracing began has no span; its events are ignored, or dropped at the next record")
    func effectsBeforeTracing() {
        let tracer = InMemoryTracer()
        let (gate, opener) = Signal<Command, Never>.pipe()
        let automaton = Automaton<Int, Command>(
            state: 0,
            mapping: { state, command in
                guard command == .fetch else { return nil }
                return (state + 1, state == 0 ? SignalProducer(gate) : SignalProducer(values: [.loaded]))
            })
        automaton.send(.fetch)
        let recorder = automaton.makeTraceRecorder(tracer: tracer, options: .init(), context: .topLevel)
        opener.sendCompleted()
        // No record has named an effect yet: the end of effect 0 might be a queued effect's, early.
        #expect(recorder.tableSize == (0, 1, 0))
        automaton.send(.fetch)
        #expect(recorder.tableSize == (0, 0, 1))
        #expect(
            tracer.finishedSpans.map(line) == [
                "span-1 automaton.input parent=- {automaton.effect.id=1, automaton.from=1, automaton.input=fetch, "
                    + "automaton.outcome=success, automaton.to=2}",
                "span-2 automaton.effect parent=span-1 {automaton.effect.id=1, automaton.effect.outcome=ended} "
                    + "events[started]",
                "span-3 automaton.input parent=- {automaton.from=2, automaton.input=loaded, automaton.outcome=failure, "
                    + "automaton.sender.effect.id=1} links[span-2{automaton.effect.id=1}]",
            ])
    }

    @Test("the table is bounded: 10,000 effects keep only the last 16 ended contexts, and still link")
    func boundedTable() {
        let tracer = InMemoryTracer()
        let automaton = Automaton<Int, Command>(
            state: 0,
            mapping: { state, command in
                switch command {
                case .load: (state + 1, SignalProducer(values: [.loaded]))
                default: (state + 1, .empty)
                }
            })
        var options = AutomatonTraceOptions<Int, Command>()
        options.linkableEndedEffects = 16
        let recorder = automaton.makeTraceRecorder(tracer: tracer, options: options, context: .topLevel)
        for _ in 0..<10_000 {
            automaton.send(.load)
            #expect(recorder.tableSize.ended <= 16)
        }
        #expect(recorder.tableSize == (0, 0, 16))
        let spans = tracer.finishedSpans
        #expect(spans.count == 30_000)
        // Every `.loaded` was processed right after its effect ended: linked.
        let linked = spans.filter { string($0, "automaton.input") == "loaded" }
        #expect(linked.count == 10_000)
        #expect(linked.allSatisfy { $0.links.count == 1 })
    }

    @Test("4 threads × 500 inputs, effects ending on other threads: every span ended, parents and links right")
    func threads() async {
        let tracer = InMemoryTracer()
        let replies = Counter()
        let background = DispatchQueue(label: "effects", attributes: .concurrent)
        // Ends on another thread, after sending `.loaded`; keyed `.queue`, so that effects wait for
        // their turn and start on the thread that ended the previous one.
        let remote = SignalProducer<Command, Never> { observer, _ in
            background.async {
                observer.send(value: .loaded)
                observer.sendCompleted()
            }
        }
        let automaton = Automaton<Int, Command>(
            state: 0,
            mapping: { state, command in
                switch command {
                case .load: (state + 1, SignalProducer(values: [.loaded, .loaded]))
                case .fetch: (state + 1, remote.keyed("remote", .queue))
                case .loaded: (state + 1, .empty)
                default: nil
                }
            })
        automaton.replies.observeValues { _ in replies.increment() }
        var options = AutomatonTraceOptions<Int, Command>()
        options.linkableEndedEffects = 1_000_000
        let recorder = automaton.makeTraceRecorder(tracer: tracer, options: options, context: .topLevel)
        let perThread = 500
        let commands: [Command] = [.load, .fetch, .bogus, .loaded]
        await runOnThreads(4) { _ in
            for index in 0..<perThread { automaton.send(commands[index % 4]) }
        }
        // Each `.load` makes 2 inputs more, each `.fetch` 1.
        let expectedReplies = 4 * perThread + 2 * perThread + perThread
        let settled = await eventually { replies.value == expectedReplies && tracer.activeSpans.isEmpty }
        #expect(settled)
        let spans = tracer.finishedSpans
        let inputs = spans.filter { $0.operationName == "automaton.input" }
        let effects = spans.filter { $0.operationName == "automaton.effect" }
        #expect(inputs.count == expectedReplies)
        #expect(effects.count == 2 * perThread)
        let byID = Dictionary(uniqueKeysWithValues: spans.map { ($0.spanID, $0) })
        var effectSpans: [Int64: FinishedInMemorySpan] = [:]
        for span in effects {
            let id = integer(span, "automaton.effect.id")
            #expect(id != nil)
            #expect(string(span, "automaton.effect.outcome") == "ended")
            #expect(span.events.map(\.name) == ["started"])
            // The parent is the input span that made it.
            let parent = span.parentSpanID.flatMap { byID[$0] }
            #expect(parent?.operationName == "automaton.input")
            #expect(parent.flatMap { integer($0, "automaton.effect.id") } == id)
            if let id { effectSpans[id] = span }
        }
        #expect(effectSpans.count == 2 * perThread)
        for span in inputs {
            guard let sender = integer(span, "automaton.sender.effect.id") else {
                #expect(span.links.isEmpty)
                continue
            }
            #expect(span.links.map { $0.context.inMemorySpanContext?.spanID } == [effectSpans[sender]?.spanID])
        }
        #expect(inputs.filter { !$0.links.isEmpty }.count == 3 * perThread)
        #expect(recorder.tableSize.open == 0)
        #expect(recorder.tableSize.early == 0)
        #expect(recorder.tableSize.ended == 2 * perThread)
        recorder.detach()
        #expect(recorder.tableSize == (0, 0, 0))
    }
}

/// What stops tracing: the automaton's termination (released, its input interrupted, its input
/// completed with no effect running), or the disposal.
enum Stop: String, CaseIterable, Sendable {
    case released, interrupted, completed, disposed
}

/// Kept by a parent context: a weak reference to it tells when tracing let go of the context.
private final class Marker: Sendable {}

private enum MarkerKey: ServiceContextKey {
    typealias Value = Marker
}

/// A tracer object, for a weak reference to tell when tracing let go of it: it starts its spans with
/// an `InMemoryTracer` the test keeps.
private final class ForwardingTracer: Tracer {
    let base: InMemoryTracer

    init(_ base: InMemoryTracer) {
        self.base = base
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        base.startSpan(
            operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID,
            line: line)
    }

    func forceFlush() {
        base.forceFlush()
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract
    ) where Extract.Carrier == Carrier {
        base.extract(carrier, into: &context, using: extractor)
    }

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext, into carrier: inout Carrier, using injector: Inject
    ) where Inject.Carrier == Carrier {
        base.inject(context, into: &carrier, using: injector)
    }
}

/// A thread-safe counter.
private final class Counter: @unchecked Sendable {
    // Safe: `count` is only read or written with `lock` held.
    private let lock = NSLock()
    private var count = 0

    func increment() {
        lock.withLock { count += 1 }
    }

    var value: Int {
        lock.withLock { count }
    }
}

/// A reference set once, read from another thread.
private final class Watched<Value: Sendable>: @unchecked Sendable {
    // Safe: `stored` is only read or written with `lock` held.
    private let lock = NSLock()
    private var stored: Value?

    var value: Value? {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// Runs `body(index)` on `count` threads at once and waits for all of them, without holding one of
/// the test runner's threads.
private func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.start()
        }
        group.notify(queue: .global()) { continuation.resume() }
    }
}

/// Whether `condition` became true within 60 seconds, checked every 10 ms.
private func eventually(_ condition: @escaping @Sendable () -> Bool) async -> Bool {
    for _ in 0..<6_000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
