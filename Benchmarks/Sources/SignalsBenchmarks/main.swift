#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

var options = Options()
for argument in CommandLine.arguments.dropFirst() {
    switch argument {
    case "--quick": options.quick = true
    case "--help", "-h":
        print("""
            usage: SignalsBenchmarks [--quick] [NAME...]
              --quick   counts / 10 and 3 repetitions (a few minutes at most)
              NAME      run only workloads whose name contains NAME (w1, w2, ..., chain, memory)
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
