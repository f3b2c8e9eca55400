/// A deterministic random generator (SplitMix64), so that every generated case is replayable from
/// its seed on any platform and Swift version.
///
/// It draws integers itself rather than through `Int.random(in:using:)`, whose algorithm the
/// standard library does not promise to keep: a seed must mean the same case forever.
struct SeededGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A number in `range`, uniformly enough for testing (the modulo bias is below 2^-50).
    mutating func int(in range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int(next() % width)
    }

    /// A number in `range`.
    mutating func int(in range: Range<Int>) -> Int {
        int(in: range.lowerBound...(range.upperBound - 1))
    }

    /// `true` with probability `percent` / 100.
    mutating func chance(_ percent: Int) -> Bool {
        int(in: 0..<100) < percent
    }

    /// One of `choices`, each as likely.
    mutating func pick<Element>(_ choices: [Element]) -> Element {
        choices[int(in: 0..<choices.count)]
    }

    /// The seed of the `index`-th case of a run whose cases all derive from `base`: well spread, so
    /// that neighbouring cases are unrelated.
    static func caseSeed(base: UInt64, index: Int) -> UInt64 {
        var generator = SeededGenerator(seed: base ^ (UInt64(index) &* 0xD1B5_4A32_D192_ED03))
        return generator.next()
    }
}
