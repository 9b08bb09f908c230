import Foundation
import Testing
@testable import ObjectGraph

/// Text bound and read back exactly: empty strings are not NULL, NULs and non-ASCII survive.
@Suite struct StatementTests {
    @Test(arguments: ["", "plain", "Zoë Müller", "a\u{0}b", "🚀 ok", String(repeating: "x", count: 100_000)])
    func textRoundTrips(_ text: String) throws {
        let database = try Database(path: ":memory:", mode: .create)
        let statement = try database.prepare("SELECT ?1, typeof(?1), length(CAST(?1 AS BLOB))")
        try statement.bind(text, at: 1)
        #expect(try statement.step())
        #expect(statement.string(at: 0) == text)
        #expect(statement.string(at: 1) == "text")
        #expect(statement.int64(at: 2) == Int64(text.utf8.count))
    }
}
