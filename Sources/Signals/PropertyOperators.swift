// Composed properties and how they read their value.
//
// A property composed with `map`, `combineLatest(with:)` or `skipRepeats()` stores nothing: its `value`
// is computed from its sources' values at the moment of the read (`transform(source.value)`, the tuple
// of both values, the source's value). Its changes come from its sources' producers.
//
// Why read the sources rather than keep a derived copy: a copy is updated by observing the source, and
// the source notifies its observers only after its own value has changed, so between the two there is
// a window in which `source.value` is new and the copy is stale (ReactiveSwift's composed properties
// have that window). Reading the sources has none: `mapped.value == transform(source.value)` whenever
// it is read, even from an observer of the source that runs before the composed property's observers
// have been told. The price is that `transform` runs on every read, so it must be cheap and pure.
//
// `zip(with:)` cannot be computed from its sources' current values (its value is the last *pair*
// formed, which lags the sources by design), so a zipped property keeps its own storage, fed by a run
// of the zipped producers; as for any stored property, its value changes before its observers hear of
// it.

extension Property {
    /// A property whose value is always `transform(self.value)`, computed at each read, as in
    /// ReactiveSwift (which keeps a copy instead; see the comment at the top of this file).
    ///
    /// - `value` runs `transform` on the current value of this property at each read, on the reading
    ///   thread, with no lock held: `transform` must be pure.
    /// - `producer` sends the transformed current value, then each transformed change; `signal` sends
    ///   each transformed later change. Both end when this property's changes end.
    /// - The composed property keeps this property alive.
    public func map<NewValue: Sendable>(_ transform: @escaping @Sendable (Value) -> NewValue) -> Property<NewValue> {
        Property<NewValue>(read: { [self] in transform(self.value) }, producer: producer.map(transform))
    }

    /// A property whose value is always `(self.value, other.value)`, read from both at each read, as in
    /// ReactiveSwift.
    ///
    /// `producer` sends the current pair, then a pair each time either property changes; `signal` sends
    /// the later pairs. They complete when both properties' changes have completed. Changes of the two
    /// made from different threads are sent one at a time, in the order they were received.
    public func combineLatest<Other>(with other: Property<Other>) -> Property<(Value, Other)> {
        Property<(Value, Other)>(
            read: { [self] in (self.value, other.value) },
            producer: SignalProducer.combineLatest(producer, other.producer)
        )
    }

    /// A property whose value is the latest pair of values of this property and `other` taken in step:
    /// first both current values, then the first change of each, and so on, as in ReactiveSwift.
    ///
    /// A zipped property keeps its own value (it cannot be computed from the two current values): it
    /// starts a run of both producers at once, which lasts until one of the properties stops changing.
    /// Its `value` changes before its observers hear of it. The changes of one property wait, without
    /// bound, for the other's.
    public func zip<Other>(with other: Property<Other>) -> Property<(Value, Other)> {
        Property<(Value, Other)>(firstValueAndChanges: SignalProducer.zip(producer, other.producer))
    }

    /// The pair of `a`'s and `b`'s values. See `combineLatest(with:)`.
    public static func combineLatest<A, B>(_ a: Property<A>, _ b: Property<B>) -> Property<(A, B)>
    where Value == (A, B) {
        a.combineLatest(with: b)
    }

    /// The pairs of `a`'s and `b`'s values taken in step. See `zip(with:)`.
    public static func zip<A, B>(_ a: Property<A>, _ b: Property<B>) -> Property<(A, B)> where Value == (A, B) {
        a.zip(with: b)
    }
}

extension Property where Value: Equatable {
    /// A property with the same value as this one, whose `signal` and `producer` leave out a change
    /// equal to the value before it, as in ReactiveSwift.
    ///
    /// `value` reads this property's value at each read (so it may be a newer instance equal to the
    /// last one sent). The composed property keeps this property alive.
    public func skipRepeats() -> Property<Value> {
        Property(read: { [self] in self.value }, producer: producer.skipRepeats())
    }
}

extension MutableProperty {
    /// `Property(self).map(transform)`: does not keep this property alive. See `Property.map(_:)`.
    public func map<NewValue: Sendable>(_ transform: @escaping @Sendable (Value) -> NewValue) -> Property<NewValue> {
        Property(self).map(transform)
    }

    /// `Property(self).combineLatest(with: other)`. See `Property.combineLatest(with:)`.
    public func combineLatest<Other>(with other: Property<Other>) -> Property<(Value, Other)> {
        Property(self).combineLatest(with: other)
    }

    /// `Property(self).zip(with: other)`. See `Property.zip(with:)`.
    public func zip<Other>(with other: Property<Other>) -> Property<(Value, Other)> {
        Property(self).zip(with: other)
    }
}

extension MutableProperty where Value: Equatable {
    /// `Property(self).skipRepeats()`. See `Property.skipRepeats()`.
    public func skipRepeats() -> Property<Value> {
        Property(self).skipRepeats()
    }
}
