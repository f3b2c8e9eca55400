import Signals
import Testing

@Suite("README Signals quick start")
struct ReadmeSignalsQuickStartTests {
    @Test("the Signals quick start prints what its comments say")
    func quickStart() {
        let printed = LockedTestValue<[Int]>([])
        @Sendable func print(_ value: Int) { printed.withValue { $0.append(value) } }

        // README-SIGNALS-QUICK-START-BEGIN
        let (signal, input) = Signal<Int, Never>.pipe()
        signal
            .filter { $0.isMultiple(of: 2) }
            .map { $0 * 10 }
            .observeValues { print($0) }  // 20, 40
        for value in 1...4 { input.send(value: value) }

        let producer = SignalProducer<Int, Never>(values: 1, 2, 3).scan(0, +)
        let disposable = producer.startWithValues { print($0) }  // 1, 3, 6
        disposable.dispose()

        let total = MutableProperty(0)
        let (amounts, amount) = Signal<Int, Never>.pipe()
        total <~ amounts.scan(0, +)  // ends when `total` is released or `amounts` ends
        amount.send(value: 2)
        amount.send(value: 3)
        print(total.value)  // 5
        // README-SIGNALS-QUICK-START-END

        #expect(printed.value == [20, 40, 1, 3, 6, 5])
    }
}
