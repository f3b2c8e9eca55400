import Testing
@testable import AutomatonLogging
