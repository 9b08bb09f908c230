import Foundation
import Testing
import TestSupport

@testable import ObjectGraph

/// `remodel_separated_count` against Foundation's `components(separatedBy:)`, which the
/// interpreter's `componentsSeparatedByString:` calls: wherever the bytes tell the count,
/// it is Foundation's.
@Suite struct SeparatedCountTests {
    /// What `remodel_separated_count(text, separator)` gives, nil for NULL.
    static func count(_ text: String, _ separator: String, in database: Database) throws -> Int? {
        let statement = try database.prepare("SELECT remodel_separated_count(?1, ?2)")
        try statement.bind(text, at: 1)
        try statement.bind(separator, at: 2)
        _ = try statement.step()
        return statement.value(at: 0) == .null ? nil : Int(statement.int64(at: 0))
    }

    static func database() throws -> Database {
        let database = try Database(path: ":memory:", mode: .create)
        try database.registerValueFunctions()
        return database
    }

    @Test func countsWhatTheBytesTell() throws {
        let database = try Self.database()
        let told: [(String, String, Int)] = [
            ("", " ", 1), (" ", " ", 2), ("a b  c", " ", 4), ("café au lait", " ", 3), ("Zürich résumé ß", " ", 3),
            ("aaa", "aa", 2), ("a, b, c", ", ", 3), ("a\r b\0 c", " ", 3), ("line\r\nline", " ", 1),
            ("日本語", " ", 1), ("日本 語", "x", 1)
        ]
        for (text, separator, expected) in told {
            #expect(try Self.count(text, separator, in: database) == expected, "\(text.debugDescription)")
            #expect(text.components(separatedBy: separator).count == expected, "\(text.debugDescription)")
        }
    }

    /// A separator a character joins (a combining mark after it, a prepended mark before
    /// it), next to a character from U+0300 on, or text with a character canonically
    /// equal to an ASCII one: the bytes do not tell, and the interpreter's function runs.
    @Test func leavesWhatTheBytesCannotTell() throws {
        let database = try Self.database()
        for (text, separator) in [
            ("a \u{301}b", " "), ("\u{600} x", " "), ("日本 語", " "), ("a\u{37E}b", ";"), ("K\u{212A}", " "),
            ("x\u{200D} y", " ")
        ] {
            #expect(try Self.count(text, separator, in: database) == nil, "\(text.debugDescription)")
        }
        // Not text, or a separator that is not printable ASCII.
        let statement = try database.prepare(
            "SELECT remodel_separated_count(NULL, ' '), remodel_separated_count(12, ' '), remodel_separated_count(x'20', ' '), "
                + "remodel_separated_count('a b', ''), remodel_separated_count('a\tb', char(9)), remodel_separated_count('aéb', 'é'), "
                + "remodel_separated_count(CAST(x'c328ff20' AS TEXT), ' ')")
        _ = try statement.step()
        for i in 0..<7 { #expect(statement.value(at: Int32(i)) == .null, "column \(i)") }
    }

    /// Random text of ASCII, Latin letters, combining and prepended marks, joiners,
    /// emoji, CR LF and the characters canonically equal to ASCII ones: every count the
    /// bytes tell is Foundation's, and most are told.
    @Test func agreesWithFoundationOnRandomText() throws {
        let database = try Self.database()
        let pieces = [
            "a", "b", " ", ",", ";", "K", "`", "\r", "\n", "\r\n", "\0", "\u{301}", "\u{600}", "\u{37E}", "\u{212A}",
            "\u{1FEF}", "é", "e\u{301}", "ü", "ß", "\u{2FF}", "\u{300}", "\u{A0}", "\u{AD}", "\u{200D}", "🇫", "🇷",
            "👍", "\u{1F3FB}", "\u{1100}", "\u{1161}", "\u{903}", "\u{E33}", "日", "ab", "a,"
        ]
        let separators = [" ", ",", ";", "K", "`", "ab", ", ", "  ", "a", "b a"]
        var random = SeededGenerator(seed: 7)
        var told = 0
        let trials = 20_000
        for _ in 0..<trials {
            let text = (0..<Int.random(in: 0...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined()
            let separator = separators.randomElement(using: &random)!
            guard let count = try Self.count(text, separator, in: database) else { continue }
            told += 1
            #expect(
                count == text.components(separatedBy: separator).count,
                "\(text.unicodeScalars.map { String($0.value, radix: 16) }) by \(separator.debugDescription)")
        }
        #expect(told > trials / 2)
    }
}
