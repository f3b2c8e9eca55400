/// A weak reference: to check that something was freed, or to reach an object from a closure that
/// must not keep it alive.
final class WeakBox<Object: AnyObject>: @unchecked Sendable {
    // Safe: Swift's weak references are loaded and stored atomically; tests set it before the code that
    // reads it can run.
    weak var object: Object?

    init(_ object: Object? = nil) {
        self.object = object
    }
}

/// An object that runs `onDeinit` when it is released, equal to another of the same `id`: an effect's
/// key or an input's payload, to see when (and under which lock) the automaton lets it go.
final class DeinitSpy: Hashable, Sendable {
    let id: Int
    let onDeinit: @Sendable () -> Void

    init(id: Int, onDeinit: @escaping @Sendable () -> Void = {}) {
        self.id = id
        self.onDeinit = onDeinit
    }

    deinit {
        onDeinit()
    }

    static func == (lhs: DeinitSpy, rhs: DeinitSpy) -> Bool { lhs.id == rhs.id }

    func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }
}
