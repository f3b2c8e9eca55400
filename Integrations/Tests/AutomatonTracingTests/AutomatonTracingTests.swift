import Testing
@testable import AutomatonTracing
