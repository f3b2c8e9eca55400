import Dispatch
import Signals
import Testing

@Suite("AtomicWord, a word changed only by atomic operations")
struct AtomicWordTests {
    @Test("A new word is 0; a copy shares the word; a compare-and-swap succeeds only on the expected value")
    func loadStoreCompareExchange() {
        let word = AtomicWord()
        let copy = word
        #expect(word.load() == 0)
        word.store(5)
        #expect(copy.load() == 5)
        #expect(!copy.compareExchange(expected: 4, desired: 7))
        #expect(copy.compareExchange(expected: 5, desired: 7))
        #expect(word.loadSequentially() == 7)
        word.storeSequentially(1)
        word.setBitsSequentially(4)
        word.setBits(8)
        #expect(word.load() == 13)
    }

    @Test("takeBit sets the role bit if it is clear, and else sets the mark and leaves the role to its holder")
    func takeBit() {
        let word = AtomicWord()
        #expect(word.takeBit(1, orSet: 2))
        #expect(word.load() == 1)
        #expect(!word.takeBit(1, orSet: 2))
        #expect(word.load() == 3)
    }

    @Test("Concurrent setBits from many threads lose no bit, and one thread in each round takes the role")
    func concurrentBits() {
        for _ in 0..<200 {
            let word = AtomicWord()
            let takers = AtomicWord()
            DispatchQueue.concurrentPerform(iterations: 8) { index in
                word.setBits(UInt(1) << (index + 1))
                if word.takeBit(1, orSet: 0) { takers.setBits(UInt(1) << index) }
            }
            #expect(word.load() == 0b1_1111_1111)
            #expect(takers.load().nonzeroBitCount == 1)
        }
    }
}
