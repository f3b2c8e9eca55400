/// A growable ring buffer: O(1) amortized `append` and `removeFirst`, storage reused once warm.
///
/// Package-internal: the signal delivery queue and the automaton's input queue both use it.
@usableFromInline
package struct FIFOQueue<Element> {
    @usableFromInline var storage: ContiguousArray<Element?> = []
    @usableFromInline var head = 0
    @usableFromInline package private(set) var count = 0

    @inlinable
    package init() {}

    @inlinable
    package var isEmpty: Bool { count == 0 }

    @inlinable
    package mutating func append(_ element: Element) {
        if count == storage.count {
            grow()
        }
        var index = head + count
        if index >= storage.count { index -= storage.count }
        storage[index] = element
        count += 1
    }

    /// Puts `element` at the front: it comes out before every element already queued.
    @inlinable
    package mutating func prepend(_ element: Element) {
        if count == storage.count {
            grow()
        }
        head = head == 0 ? storage.count - 1 : head - 1
        storage[head] = element
        count += 1
    }

    @inlinable
    package mutating func removeFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head].take()
        head += 1
        if head == storage.count { head = 0 }
        count -= 1
        return element
    }

    @usableFromInline
    mutating func grow() {
        let newCapacity = Swift.max(8, storage.count * 2)
        var newStorage = ContiguousArray<Element?>(repeating: nil, count: newCapacity)
        for offset in 0..<count {
            var index = head + offset
            if index >= storage.count { index -= storage.count }
            newStorage[offset] = storage[index].take()
        }
        storage = newStorage
        head = 0
    }

    /// The elements, first to last: for checks and tests, O(count).
    package var elements: [Element] {
        (0..<count).map { offset in
            var index = head + offset
            if index >= storage.count { index -= storage.count }
            return storage[index].unsafelyUnwrapped
        }
    }

    /// Removes every element, keeping the storage.
    @inlinable
    package mutating func removeAll() {
        while removeFirst() != nil {}
    }
}

extension FIFOQueue: Sendable where Element: Sendable {}
