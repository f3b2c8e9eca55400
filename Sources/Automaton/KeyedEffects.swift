import Signals

/// The key of a group of effects: any `Hashable & Sendable` value, type-erased.
///
/// Effects with equal keys form a group that their policy (`EffectPolicy`) governs and that a
/// `.cancel(key)` row cancels. Two keys are equal when their values are of the same type (the
/// value's own type, whatever the static type it was passed as) and equal: `1` and `UInt(1)` are two
/// keys, although `AnyHashable` would bridge them; `EffectKey(k)` of an `EffectKey` `k` is `k`.
public struct EffectKey: Hashable, Sendable, CustomStringConvertible {
    /// The key, boxed: an `EffectKey` is one reference, so that effects, their events and the
    /// engine's bookkeeping copy it without going through `AnyHashable`'s value witnesses.
    @usableFromInline
    class Storage: @unchecked Sendable {
        // Safe: `value`, `hash` and `type` are immutable, and `value` only ever wraps a `Sendable`
        // value (`EffectKey.init` requires one); `AnyHashable` adds no mutable state of its own.
        @usableFromInline let value: AnyHashable
        /// The value's hash, computed once and spread (see `spread(_:)`): the engine looks a key up
        /// two or three times per effect, by the low bits of this hash.
        @usableFromInline let hash: Int
        /// The value's own type: `AnyHashable` alone would let `1` and `UInt(1)` compare equal.
        @usableFromInline let type: ObjectIdentifier

        @usableFromInline
        init(_ value: AnyHashable, hash: Int? = nil) {
            self.value = value
            self.hash = hash ?? Storage.spread(value.hashValue)
            self.type = ObjectIdentifier(Swift.type(of: value.base))
        }

        /// Whether `other`, whose value has the same type and hash, wraps an equal value: through
        /// `AnyHashable` here; `TypedStorage` compares its own type's values directly.
        @usableFromInline
        func isEqual(to other: Storage) -> Bool {
            value == other.value
        }

        /// Mixes every bit of `hash` into every bit of the result (murmur3's 64-bit finalizer), so that
        /// its low bits are spread even for a type whose `hashValue` is not (an aligned address, a
        /// small integer): the engine's key table indexes by the low bits.
        @usableFromInline
        static func spread(_ hash: Int) -> Int {
            var mixed = UInt64(truncatingIfNeeded: hash)
            mixed ^= mixed >> 33
            mixed &*= 0xff51_afd7_ed55_8ccd
            mixed ^= mixed >> 33
            mixed &*= 0xc4ce_b9fe_1a85_ec53
            mixed ^= mixed >> 33
            return Int(truncatingIfNeeded: mixed)
        }
    }

    /// The storage of a key made from a value of type `Key`, which compares two such values with
    /// `Key`'s own `==`: `AnyHashable`'s equality would first look up each value's canonical box
    /// through the runtime (about 1,000 instructions for two `Int`s, measured at `800b805`, under the
    /// engine's lock, at each lookup of a key made anew).
    @usableFromInline
    final class TypedStorage<Key: Hashable & Sendable>: Storage, @unchecked Sendable {
        // Safe: `key` is immutable and `Sendable`.
        @usableFromInline let key: Key

        @usableFromInline
        init(_ key: Key, hash: Int? = nil) {
            self.key = key
            super.init(AnyHashable(key), hash: hash)
        }

        @usableFromInline
        override func isEqual(to other: Storage) -> Bool {
            // The same class is the same `Key`; otherwise (a value passed as another static type: a
            // subclass instance as its superclass), the values compare as `AnyHashable`s.
            guard ObjectIdentifier(Swift.type(of: other)) == ObjectIdentifier(Swift.type(of: self)) else {
                return super.isEqual(to: other)
            }
            return key == unsafeDowncast(other, to: TypedStorage<Key>.self).key
        }
    }

    @usableFromInline let storage: Storage

    /// The key, type-erased.
    public var value: AnyHashable { storage.value }

    /// The key `key` (itself, if it is already an `EffectKey`).
    @inlinable
    public init<Key: Hashable & Sendable>(_ key: Key) {
        if let key = key as? EffectKey {
            self = key
        } else {
            storage = TypedStorage(key)
        }
    }

    /// The hash the engine's key table indexes by (spread from the value's `hashValue`): for the
    /// package's tests.
    package var tableHash: Int { storage.hash }

    /// The key `key` with the table hash `hash` instead of its own: for the package's tests, which
    /// place keys in chosen slots of the engine's key table.
    package init<Key: Hashable & Sendable>(_ key: Key, tableHash hash: Int) {
        storage = TypedStorage(key, hash: hash)
    }

    /// Whether the two keys wrap equal values of the same (dynamic) type.
    @inlinable
    public static func == (lhs: EffectKey, rhs: EffectKey) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.storage.hash == rhs.storage.hash && lhs.storage.type == rhs.storage.type
                && lhs.storage.isEqual(to: rhs.storage))
    }

    /// Hashes the wrapped value (its hash is computed once, when the key is made).
    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.hash)
    }

    /// The key's own description, e.g. `connection`.
    public var description: String { String(describing: storage.value.base) }
}

/// What a new effect does to the running effects of its key. A struct with static members, so that
/// policies can be added without breaking anyone's `switch`.
///
/// - `.latest`: the new effect disposes the running (and waiting) ones, then starts.
/// - `.first`: the new effect is dropped (never started) while one with its key runs.
/// - `.queue`: the new effect waits until the running ones have ended, then starts, in FIFO order.
/// - `.merge`: the new effect runs beside the others; they are cancelled together by key.
public struct EffectPolicy: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Hashable, Sendable {
        case latest, first, queue, merge
    }

    @usableFromInline let kind: Kind

    @inlinable
    init(_ kind: Kind) {
        self.kind = kind
    }

    /// The new effect replaces the running ones of its key.
    public static let latest = EffectPolicy(.latest)
    /// The new effect is dropped while one of its key runs.
    public static let first = EffectPolicy(.first)
    /// The new effect waits for the running ones of its key to end, FIFO.
    public static let queue = EffectPolicy(.queue)
    /// The new effect runs beside the others of its key.
    public static let merge = EffectPolicy(.merge)

    /// `latest`, `first`, `queue` or `merge`.
    public var description: String {
        switch kind {
        case .latest: return "latest"
        case .first: return "first"
        case .queue: return "queue"
        case .merge: return "merge"
        }
    }
}

/// What a producer tells the automaton about the effect it stands for.
@usableFromInline
enum EffectDirective: Sendable {
    /// Run it as an effect of `key`, under `policy`.
    case keyed(EffectKey, EffectPolicy)
    /// Start nothing; cancel every running or waiting effect of each key.
    case cancel([EffectKey])
    /// A `.cancel` of the keys of the state-scoped declarations the machine leaves (or restarts): the
    /// same for the engine, but the cancellations are `exited(by:)`. Only ever an element of an
    /// `.effects(...)` list (`StateScopes`); alone, it would be handled as a `.cancel`.
    case exit([EffectKey])
    /// Start nothing; after the reply, on the processing thread, call the action with the engine (a
    /// child automaton's forwarded input: see `ChildAutomata.send(_:to:)`).
    case afterReply(@Sendable (AnyObject) -> Void, forwardsTo: EffectKey?)
    /// An ordinary, un-keyed effect that forwards an input to the child `forwardsTo` and sends its
    /// answer back (`ChildAutomata.send(_:to:answer:)`): nothing for the engine, the key for the state
    /// graph's labels.
    case answering(forwardsTo: EffectKey)
    /// Several effects, each with its own directive (`SignalProducer.effects(_:)`): an
    /// `EffectList` of the producer's `Value`, whose elements are flattened and none is an un-keyed
    /// `.empty`. The engine handles it as a `.cancel` of no key until it reads the list (see
    /// `AutomatonEngine.commitStartingNothing`), so the single effect's path tests nothing more.
    case several(AnyObject & Sendable)
}

/// An effect's directive, as the producer carries it: one class reference, which the engine reads
/// back with a class cast (a cast from an existential to the enum went through the runtime's
/// dynamic-cast machinery on every keyed effect). Its parts are stored apart, not as the enum, so that
/// the engine reads the one it needs where it needs it: a copy of the enum retains the key it holds.
@usableFromInline
final class EffectDirectiveBox: Sendable {
    /// The key and policy of `.keyed`; `nil` for `.cancel`.
    @usableFromInline let key: EffectKey?
    @usableFromInline let policy: EffectPolicy?
    /// The keys of `.cancel` (none for `.afterReply`, which the engine handles as a `.cancel` of no
    /// key); `nil` for `.keyed`.
    @usableFromInline let cancelKeys: [EffectKey]?
    /// The action of `.afterReply`; `nil` otherwise.
    @usableFromInline let afterReply: (@Sendable (AnyObject) -> Void)?
    /// The key of the child `.afterReply` or `.answering` forwards to, for the state graph's labels;
    /// `nil` otherwise.
    @usableFromInline let forwardKey: EffectKey?
    /// The `EffectList` of `.several`; `nil` otherwise.
    @usableFromInline let several: (AnyObject & Sendable)?
    /// Whether `cancelKeys` are those of `.exit`.
    @usableFromInline let exits: Bool

    /// `forwardsTo`: for `.keyed`, the child an answered forward that is keyed asks (its key, kept
    /// for the state graph's labels when `keyed(_:_:)` replaces its `.answering` directive).
    @inlinable
    init(_ directive: EffectDirective, forwardsTo forwardedKey: EffectKey? = nil) {
        if case .exit = directive { exits = true } else { exits = false }
        switch directive {
        case let .keyed(key, policy):
            (self.key, self.policy, cancelKeys, afterReply, forwardKey) = (key, policy, nil, nil, forwardedKey)
            several = nil
        case let .exit(keys):
            (key, policy, cancelKeys, afterReply, forwardKey, several) = (nil, nil, keys, nil, nil, nil)
        case let .cancel(keys):
            (key, policy, cancelKeys, afterReply, forwardKey, several) = (nil, nil, keys, nil, nil, nil)
        case let .afterReply(action, target):
            (key, policy, cancelKeys, afterReply, forwardKey, several) = (nil, nil, [], action, target, nil)
        case let .answering(target):
            (key, policy, cancelKeys, afterReply, forwardKey, several) = (nil, nil, nil, nil, target, nil)
        case let .several(list):
            (key, policy, cancelKeys, afterReply, forwardKey, several) = (nil, nil, [], nil, nil, list)
        }
    }

    /// The directive.
    @inlinable
    var directive: EffectDirective {
        if let several { return .several(several) }
        if let afterReply { return .afterReply(afterReply, forwardsTo: forwardKey) }
        if let cancelKeys { return exits ? .exit(cancelKeys) : .cancel(cancelKeys) }
        if let key { return .keyed(key, policy.unsafelyUnwrapped) }
        return .answering(forwardsTo: forwardKey.unsafelyUnwrapped)
    }
}

extension SignalProducer where Error == Never {
    /// The directive `keyed(_:_:)` or `cancel(_:)` attached to this producer, if any.
    @inlinable
    var effectDirective: EffectDirective? {
        directiveBox?.directive
    }

    /// The box of the directive attached to this producer, if any.
    @inlinable
    var directiveBox: EffectDirectiveBox? {
        guard hasDirective else { return nil }
        return directive as? EffectDirectiveBox
    }
}

extension SignalProducer where Error == Never {
    /// This effect, keyed: governed by `key` and `policy` instead of the automaton-wide strategy.
    ///
    /// A keyed effect is not part of the `.latest` tree: an unrelated input never cancels it. It ends
    /// by itself, by its key (a newer `.latest` effect of the key, or a `.cancel(key)` row), or when
    /// the automaton is interrupted or released. The input that starts it still counts as a successful
    /// input at its level of the tree, replacing what that level's previous input started, as an
    /// `.empty` effect would.
    ///
    /// Apply `keyed` last: an operator applied to the result (`map`, `delay`, ...) makes a new producer,
    /// which carries no key.
    ///
    /// ```swift
    /// .connect | .disconnected => .connecting | connect.keyed(ConnectionKey.attempt, .latest)
    /// ```
    ///
    /// A keyed `.empty` is a real effect: it has its events (it starts and ends at once), and under
    /// `.latest` it cancels what runs with its key. To cancel a key without starting anything, use
    /// `.cancel(key)`.
    @inlinable
    public func keyed<Key: Hashable & Sendable>(_ key: Key, _ policy: EffectPolicy = .latest) -> SignalProducer {
        // An answered forward (`ChildAutomata.send(_:to:answer:)`) keeps the child it asks, for the
        // state graph.
        attaching(EffectDirectiveBox(.keyed(EffectKey(key), policy), forwardsTo: directiveBox?.forwardKey))
    }

    /// A `{ send in ... }` effect, keyed: the closure effect of a row (`| { send in ... }`), governed
    /// by `key` and `policy` as `keyed(_:_:)` governs a producer.
    ///
    /// ```swift
    /// .connect | .disconnected => .connecting | .keyed(ConnectionKey.attempt) { send in
    ///     api.connect { ok in send(ok ? .connected : .failed) }
    /// }
    /// .disconnect | any => .disconnected | .cancel(ConnectionKey.attempt)
    /// ```
    ///
    /// `body` runs as an un-keyed closure effect's does: once per start, after the transition, on the
    /// processing thread (under `.queue`, when its turn comes, on the thread where its predecessor
    /// ended; under `.first`, never if it is dropped), and the effect lives as long as its `send`: it
    /// has ended when `body` returns if `body` kept no `send`, and otherwise when the last copy of
    /// `send` is released. The key decides the rest as for any keyed effect: a newer `.latest` effect
    /// of the key or a `.cancel(key)` row cancels it, an unrelated input never does, and once it is
    /// cancelled, `send` does nothing.
    @inlinable
    public static func keyed<Key: Hashable & Sendable>(
        _ key: Key,
        _ policy: EffectPolicy = .latest,
        _ body: @escaping @Sendable (_ send: @escaping @Sendable (Value) -> Void) -> Void
    ) -> SignalProducer {
        closureEffect(body).keyed(key, policy)
    }

    /// An effect that starts nothing and cancels every running or waiting effect of each of `keys`,
    /// before the new state and reply are emitted. A row that cancels:
    ///
    /// ```swift
    /// .disconnect | any => .disconnected | .cancel(ConnectionKey.attempt)
    /// .disconnect | any => .disconnected | .cancel(ConnectionKey.attempt, ConnectionKey.backOff)
    /// ```
    ///
    /// The keys of one `.cancel` have one type: to cancel keys of two types in one row, give them one
    /// type (for example, one enum of the keys of a feature).
    @inlinable
    public static func cancel<Key: Hashable & Sendable>(_ keys: Key...) -> SignalProducer {
        SignalProducer.empty.attaching(EffectDirectiveBox(.cancel(keys.map(EffectKey.init))))
    }
}
