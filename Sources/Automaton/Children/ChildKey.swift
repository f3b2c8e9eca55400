/// The effect key of a named child automaton: the name of its ``ChildAutomata`` (or
/// ``ChildAutomaton``) and its id. Effect events (`EffectEvent.key`) and an `AutomatonTester`'s steps
/// carry it, so they say which child started, ended or was cancelled.
///
/// Its description is `name[id]` (`downloads[https://example.com/a]`), or `name` for a
/// ``ChildAutomaton``.
public struct ChildKey<ID: Hashable & Sendable>: Hashable, Sendable, CustomStringConvertible {
    /// The name of the child's kind.
    public let name: String
    /// The child's id within its kind.
    public let id: ID

    /// The key of the child `id` of the kind `name`.
    @inlinable
    public init(_ name: String, _ id: ID) {
        self.name = name
        self.id = id
    }

    /// `name[id]`, or `name` for the one child of a ``ChildAutomaton``.
    public var description: String {
        id is ChildAutomatonID ? name : "\(name)[\(id)]"
    }
}
