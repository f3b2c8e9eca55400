import Automaton
import AutomatonTesting
import Dispatch
import Foundation
import Signals
import Testing

// The code of the article "Request and reply on a server" (RequestAndReply.md) and of the README's
// "Request and reply", compiled and run here.

// DOCC-REQUEST-REPLY-ORDER-BEGIN
// README-REQUEST-REPLY-ORDER-BEGIN
enum ShopOrder: Sendable, Equatable {
    case cart(items: Int), paying, paid
}

enum ShopInput: Sendable, Equatable {
    case add, checkout, paid
}

func makeShopOrder(pay: SignalProducer<ShopInput, Never>) -> Automaton<ShopOrder, ShopInput> {
    Automaton(state: .cart(items: 0)) { (state: ShopOrder, input: ShopInput) in
        switch (state, input) {
        case let (.cart(items), .add): return (.cart(items: items + 1), .empty)
        case let (.cart(items), .checkout) where items > 0: return (.paying, pay)
        case (.paying, .paid): return (.paid, .empty)
        default: return nil
        }
    }
}
// README-REQUEST-REPLY-ORDER-END
// DOCC-REQUEST-REPLY-ORDER-END

// DOCC-REQUEST-REPLY-HANDLER-BEGIN
// README-REQUEST-REPLY-HANDLER-BEGIN
struct Response: Sendable, Equatable {
    let status: Int
    let body: String
}

/// POST /orders/:id/checkout: answers with the machine's reply to this request's own input.
func checkout(_ order: Automaton<ShopOrder, ShopInput>) async -> Response {
    do {
        switch try await order.ask(.checkout, timeout: .seconds(2)) {
        case let .success(_, _, state): return Response(status: 200, body: "\(state)")
        case let .failure(_, state): return Response(status: 409, body: "cannot check out: \(state)")
        }
    } catch .timedOut {
        // Not withdrawn: the input is processed in its turn.
        return Response(status: 202, body: "accepted, still processing")
    } catch {
        return Response(status: 503, body: "\(error)")
    }
}
// README-REQUEST-REPLY-HANDLER-END
// DOCC-REQUEST-REPLY-HANDLER-END

@Suite("Article: request and reply on a server")
struct RequestAndReplyArticleTests {
    @Test("the handler answers 200 for the checkout that succeeds, 409 for one refused")
    func handlerAnswers() async {
        // DOCC-REQUEST-REPLY-USE-BEGIN
        let order = makeShopOrder(pay: .never)
        #expect(await checkout(order) == Response(status: 409, body: "cannot check out: cart(items: 0)"))
        order.send(.add)
        #expect(await checkout(order) == Response(status: 200, body: "paying"))
        #expect(await checkout(order) == Response(status: 409, body: "cannot check out: paying"))
        // DOCC-REQUEST-REPLY-USE-END
    }

    @Test("the tester asserts the answer to an asked input, and the reply among its steps")
    func testerAsk() {
        // DOCC-REQUEST-REPLY-TESTER-BEGIN
        let tester = AutomatonTester(makeShopOrder(pay: .never))
        tester.send(.add)
        let checkout = tester.ask(.checkout)
        checkout.expect([.value(.success(.checkout, .cart(items: 1), .paying)), .completed])
        tester.expect([
            .success(.add, .cart(items: 0), .cart(items: 1)),
            .success(.checkout, .cart(items: 1), .paying),
            .started(by: .checkout),
        ])
        // DOCC-REQUEST-REPLY-TESTER-END
        tester.finish(skipRunningEffects: true)
    }

    @Test("100 concurrent checkouts of 10 orders from 4 threads: one 200 per order, every other a 409 naming paying")
    func concurrentCheckouts() async {
        let orders = (0..<10).map { _ in makeShopOrder(pay: .never) }
        for order in orders { order.send(.add) }
        let responses = Recording<(Int, Response)>()
        await runOnThreads(4) { thread in
            let done = DispatchGroup()
            for request in 0..<25 {
                let index = (thread * 25 + request) % 10
                done.enter()
                Task {
                    responses.append((index, await checkout(orders[index])))
                    done.leave()
                }
            }
            done.wait()
        }
        let all = responses.values
        #expect(all.count == 100)
        for index in 0..<10 {
            let mine = all.filter { $0.0 == index }.map(\.1)
            #expect(mine.count == 10)
            #expect(mine.filter { $0.status == 200 } == [Response(status: 200, body: "paying")])
            #expect(mine.filter { $0.status == 409 }.count == 9)
            #expect(
                mine.allSatisfy { $0.status == 200 || $0 == Response(status: 409, body: "cannot check out: paying") })
        }
    }
}
