import Synchronization

/// Parsed trees by source text, so that the same format string is parsed once per
/// process (mapping files repeat expressions; the REPL re-evaluates them). Only texts
/// parsed without format arguments are cached. Bounded: when full, it starts afresh.
final class ParseCache: Sendable {
    static let shared = ParseCache(capacity: 4096)

    private enum Key: Hashable {
        case expression(String)
        case predicate(String)
    }

    private enum Entry {
        case expression(FormatExpression)
        case predicate(FormatPredicate, [ParseWarning])
    }

    private let capacity: Int
    private let entries = Mutex<[Key: Entry]>([:])

    init(capacity: Int) {
        self.capacity = capacity
    }

    func expression(_ source: String) throws(ExpressionError) -> FormatExpression {
        if case .expression(let e)? = entries.withLock({ $0[.expression(source)] }) { return e }
        let parsed = try FormatParser(source).parseExpression()
        store(.expression(source), .expression(parsed))
        return parsed
    }

    func predicate(_ source: String) throws(ExpressionError) -> (FormatPredicate, [ParseWarning]) {
        if case .predicate(let p, let w)? = entries.withLock({ $0[.predicate(source)] }) { return (p, w) }
        let parser = FormatParser(source)
        let parsed = try parser.parsePredicate()
        store(.predicate(source), .predicate(parsed, parser.warnings))
        return (parsed, parser.warnings)
    }

    private func store(_ key: Key, _ entry: Entry) {
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
    }
}

extension FormatExpression {
    /// Parses `source` as an expression, substituting `arguments` for `%@`, `%K`, `%d`, ….
    /// Texts without arguments are parsed once per process and cached.
    ///
    ///     let e = try FormatExpression(parsing: "$source.price * 1.03")
    public init(parsing source: String, arguments: [Value] = []) throws(ExpressionError) {
        if arguments.isEmpty {
            self = try ParseCache.shared.expression(source)
        } else {
            self = try FormatParser(source, arguments: arguments).parseExpression()
        }
    }
}

extension FormatPredicate {
    /// Parses `source` as a predicate, substituting `arguments` for `%@`, `%K`, `%d`, ….
    /// Texts without arguments are parsed once per process and cached. Warnings (AND and
    /// OR mixed without parentheses) are available from ``FormatParser``.
    ///
    ///     let p = try FormatPredicate(parsing: "name BEGINSWITH[cd] %@", arguments: ["jo"])
    public init(parsing source: String, arguments: [Value] = []) throws(ExpressionError) {
        if arguments.isEmpty {
            self = try ParseCache.shared.predicate(source).0
        } else {
            self = try FormatParser(source, arguments: arguments).parsePredicate()
        }
    }
}
