import Signals
import Testing

@Suite("FIFOQueue, the ring buffer behind delivery queues")
struct FIFOQueueTests {
    @Test("An empty queue has no elements and removeFirst returns nil")
    func empty() {
        var queue = FIFOQueue<Int>()
        #expect(queue.isEmpty)
        #expect(queue.count == 0)
        #expect(queue.removeFirst() == nil)
    }

    @Test("Elements come out in the order they went in, across growth")
    func fifoAcrossGrowth() {
        var queue = FIFOQueue<Int>()
        for value in 0..<1_000 { queue.append(value) }
        #expect(queue.count == 1_000)

        var drained: [Int] = []
        while let value = queue.removeFirst() { drained.append(value) }

        #expect(drained == Array(0..<1_000))
        #expect(queue.isEmpty)
    }

    @Test("Elements stay in order when the buffer wraps around and then grows while wrapped")
    func fifoAcrossWrapAround() {
        var queue = FIFOQueue<Int>()
        var drained: [Int] = []
        // Fill the first 8 slots, free 5 at the front, refill so the tail wraps, then grow while wrapped.
        for value in 0..<8 { queue.append(value) }
        for _ in 0..<5 { drained.append(queue.removeFirst()!) }
        for value in 8..<13 { queue.append(value) }
        #expect(queue.count == 8)
        for value in 13..<40 { queue.append(value) }
        #expect(queue.count == 35)
        while let value = queue.removeFirst() { drained.append(value) }

        #expect(drained == Array(0..<40))
    }

    @Test("prepend puts an element first: at the start of the buffer, wrapped to its end, and when full")
    func prependComesOutFirst() {
        var queue = FIFOQueue<Int>()
        var drained: [Int] = []
        queue.prepend(0)  // empty: grows, then wraps from slot 0 to the last slot
        queue.append(1)
        for value in 2..<8 { queue.append(value) }  // full (8 slots), head in the last slot
        queue.prepend(-1)  // full: grows while wrapped, then prepends
        #expect(queue.count == 9)
        for _ in 0..<3 { drained.append(queue.removeFirst()!) }
        queue.prepend(-2)  // head in the middle of the buffer
        while let value = queue.removeFirst() { drained.append(value) }

        #expect(drained == [-1, 0, 1, -2, 2, 3, 4, 5, 6, 7])
        #expect(queue.isEmpty)
    }

    @Test("Interleaved appends and removals match a plain array")
    func matchesReferenceModel() {
        var queue = FIFOQueue<Int>()
        var model: [Int] = []
        var removed: [Int] = []
        var expectedRemoved: [Int] = []
        var seed: UInt64 = 0x2545_F491_4F6C_DD1D
        var next = 0
        for _ in 0..<20_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let roll = (seed >> 33) % 10
            if roll < 6 {
                queue.append(next)
                model.append(next)
                next += 1
            } else if let value = queue.removeFirst() {
                removed.append(value)
                expectedRemoved.append(model.removeFirst())
            } else {
                #expect(model.isEmpty)
            }
            #expect(queue.count == model.count)
        }
        while let value = queue.removeFirst() { removed.append(value) }
        expectedRemoved += model

        #expect(removed == expectedRemoved)
        #expect(removed == Array(0..<next))
    }

    @Test("removeAll empties the queue, which then works as new")
    func removeAll() {
        var queue = FIFOQueue<Int>()
        for value in 0..<20 { queue.append(value) }
        _ = queue.removeFirst()
        queue.removeAll()
        #expect(queue.isEmpty)
        #expect(queue.count == 0)
        #expect(queue.removeFirst() == nil)

        for value in 100..<130 { queue.append(value) }
        var drained: [Int] = []
        while let value = queue.removeFirst() { drained.append(value) }
        #expect(drained == Array(100..<130))
    }

    @Test("A removed element is released at once, not kept by the buffer")
    func removedElementsAreReleased() {
        final class Element {}
        var queue = FIFOQueue<Element>()
        weak var first: Element?
        weak var second: Element?
        do {
            let one = Element()
            let two = Element()
            first = one
            second = two
            queue.append(one)
            queue.append(two)
        }
        #expect(first != nil)

        _ = queue.removeFirst()
        #expect(first == nil)
        #expect(second != nil)

        queue.removeAll()
        #expect(second == nil)
    }
}
