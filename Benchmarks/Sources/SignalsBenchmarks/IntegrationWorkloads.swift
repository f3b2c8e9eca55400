// What attaching an integration costs per input (issue 32 §2): the group `integrations`. W2 (no
// effects) and W3 (a synchronous feedback effect per outside input) with nothing attached, with an
// empty processing observer (`observeProcessing`, the hook every integration but logging's default
// uses), and with each integration of the `Integrations/` package attached to a backend that does
// nothing (swift-log's no-op handler at `.info`, swift-metrics' no-op handlers, swift-distributed-
// tracing's `NoOpTracer`): what the integration itself costs, not what a backend does with it.
// `Benchmarks/callgrind "W2 table" "W2 table, traced" ...` counts their instructions.

#if AUTOMATON_DSL
    import Automaton
    import AutomatonLogging
    import AutomatonMetrics
    import AutomatonTracing
    import Logging
    import Metrics
    import Tracing

    /// A log handler that takes every record at `.info` and above and keeps none: what logging costs
    /// up to the handler (the metadata built, the handler called), not what a handler does.
    struct DiscardingLogHandler: LogHandler {
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {}
    }

    /// The integrations' workloads, each W2's or W3's loop on an automaton with `attach` applied.
    func integrationWorkloads(count: Int) -> [Workload] {
        // The automata are built from mapping tables, as users write them (and so that the closure
        // mappings of the W2 and W3 groups keep their own specializations: a second use of `w3Mapping()`
        // here changed how its thunk was inlined, and W3's count by 18 instructions).
        func w2(_ suffix: String, _ attach: @escaping (Automaton<LoginState, LoginInput>) -> Void) -> Workload {
            automatonW2(name: "W2 table" + suffix, count: count) {
                let automaton = w2TableAutomaton()
                attach(automaton)
                return automaton
            }
        }
        func w3(_ suffix: String, _ attach: @escaping (Automaton<LoginState, LoginInput>) -> Void) -> Workload {
            automatonW3(name: "W3 table" + suffix, count: count) {
                let automaton = w3TableAutomaton()
                attach(automaton)
                return automaton
            }
        }
        let observed: (Automaton<LoginState, LoginInput>) -> Void = { $0.observeProcessing { _ in } }
        let traced: (Automaton<LoginState, LoginInput>) -> Void = { $0.trace(with: NoOpTracer(), context: .topLevel) }
        let logger = Logger(label: "benchmark") { _ in DiscardingLogHandler() }
        let logged: (Automaton<LoginState, LoginInput>) -> Void = { $0.log(to: logger) }
        let metered: (Automaton<LoginState, LoginInput>) -> Void = {
            $0.recordMetrics(recordProcessingTime: true, factory: NOOPMetricsHandler.instance)
        }
        return [
            w2("", { _ in }), w2(", processing observed", observed), w2(", logged", logged), w2(", metered", metered),
            w2(", traced", traced),
            w3("", { _ in }), w3(", processing observed", observed), w3(", logged", logged), w3(", metered", metered),
            w3(", traced", traced),
        ]
    }

    /// Runs the `integrations` group; returns its notes for the end of the run.
    func runIntegrations(_ options: Options) throws -> [String] {
        let count = options.count(1_000_000)
        print("integrations: W2 and W3 with each integration attached to a backend that does nothing")
        let measured = try integrationWorkloads(count: count).map { try measure($0, options: options) }
        var notes: [String] = []
        for plainIndex in [0, measured.count / 2] {
            let plain = measured[plainIndex]
            for attached in measured[(plainIndex + 1)..<(plainIndex + measured.count / 2)] {
                notes.append(
                    "integrations, \(attached.name): \(format(attached.median)) ns per input against "
                        + "\(format(plain.median)) with nothing attached (+\(format(attached.median - plain.median)) ns)"
                )
            }
        }
        for note in notes { print("  " + note) }
        return notes
    }
#endif
