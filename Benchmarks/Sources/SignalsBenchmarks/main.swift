#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

var options = Options()
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--quick": options.quick = true
    case "--scale": options.scaleOverride = arguments.popFirst().flatMap { Int($0) }
    case "--repetitions": options.repetitionsOverride = arguments.popFirst().flatMap { Int($0) }
    case "--only": options.only = arguments.popFirst()
    case "--help", "-h":
        print(
            """
            usage: SignalsBenchmarks [--quick] [--scale N] [--repetitions N] [NAME...]
              --quick            counts / 10 and 3 repetitions (a few minutes at most)
              --scale N          divide every count by N (for profiling under valgrind)
              --repetitions N    timed repetitions after the warm-up (default 5, quick 3)
              --only NAME        run only the workloads whose full name contains NAME, or is NAME
                                 without its last character if NAME ends in $ (for profiling)
              NAME               run only workloads whose name contains NAME (w1, w2, ..., chain, ask, memory, graph, scaling, million, children)
            """)
        exit(0)
    default: options.filters.append(argument)
    }
}

do {
    try runSuite(options)
} catch {
    print("FAILED: \(error)")
    exit(1)
}
