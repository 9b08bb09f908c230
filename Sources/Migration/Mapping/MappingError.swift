import ExpressionLanguage

/// A problem in a mapping file, placed by the file, the JSON path inside it and, for
/// expressions, the line and column inside the expression.
///
///     Model1_to_Model2.mapping.json: entityMappings[0] "BookToBook" .attributeMappings.price: 1:9: the source entity Book has no attribute or relationship 'pricee'; did you mean 'price'? in "$source.pricee * 1.03"
///
/// Text that is not JSON is placed by line and column in the file instead:
///
///     Model1_to_Model2.mapping.json: 9:33: invalid JSON: trailing comma before '}'
public struct MappingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem, for programs that handle some themselves.
    public enum Kind: String, Hashable, Sendable {
        /// The file or folder cannot be read.
        case unreadable
        /// The text is not JSON, XML or a property list of the expected shape.
        case syntax
        /// A key or value the mapping format does not accept.
        case format
        /// The mapping does not fit the models: an entity, a property or a type that is not
        /// there.
        case model
        /// An expression does not parse or does not fit the models (``expressionError``).
        case expression
        /// The mapping names a policy that is not registered.
        case policy
        /// The mapping is not one of the run's steps, or a step has no mapping and none can
        /// be inferred.
        case step
    }

    public var kind: Kind
    public var file: String?
    /// Where in the file: `entityMappings[0] "BookToBook" .attributeMappings.price`.
    public var path: String
    public var message: String
    /// For problems inside an expression: the error with the expression text and range.
    public var expressionError: ExpressionError?
    /// For problems in the file's text (invalid JSON): the line and column in the file.
    public var textLocation: TextLocation?

    /// A place in the text of a file, with the line it is on, for the caret.
    public struct TextLocation: Hashable, Sendable {
        /// 1-based line.
        public var line: Int
        /// 1-based column, in characters.
        public var column: Int
        /// The text of the line, without its line break.
        public var lineText: String

        public init(line: Int, column: Int, lineText: String) {
            self.line = line
            self.column = column
            self.lineText = lineText
        }
    }

    public init(_ kind: Kind = .format, file: String?, path: String, message: String) {
        self.kind = kind
        self.file = file
        self.path = path
        self.message = message
    }

    public init(file: String?, path: String, expressionError: ExpressionError) {
        kind = .expression
        self.file = file
        self.path = path
        self.message = expressionError.message
        self.expressionError = expressionError
    }

    public init(file: String?, textLocation: TextLocation, message: String) {
        kind = .syntax
        self.file = file
        self.path = ""
        self.message = message
        self.textLocation = textLocation
    }

    /// `file: path` — what the error is about.
    public var label: String {
        [file, path.isEmpty ? nil : path].compactMap { $0 }.joined(separator: ": ")
    }

    /// The one-line form: the place, the column inside the expression, the message, and
    /// the expression quoted.
    public var description: String {
        let place = label.isEmpty ? "" : label + ": "
        if let textLocation { return place + "\(textLocation.line):\(textLocation.column): " + message }
        guard let expressionError else { return place + message }
        var text = place + expressionError.description
        if let source = expressionError.source { text += " in \"\(source)\"" }
        return text
    }

    /// As a terminal shows it: the place and message, then the expression (or the line of
    /// the file) with a caret under the offending text.
    public func rendered(caret: Bool = true) -> String {
        if caret, let textLocation {
            return description + ExpressionError.caretLines(textLocation.lineText, column: textLocation.column)
        }
        guard let expressionError, caret, expressionError.range != nil else { return description }
        return expressionError.rendered(label: label.isEmpty ? nil : label, caret: true)
    }
}

/// Every problem found in a mapping file (or a set of them), in file order.
public typealias MappingErrors = ErrorList<MappingError>

extension ErrorList where Element == MappingError {
    /// As a terminal shows them: each with its caret line (``MappingError/rendered(caret:)``).
    public func rendered(caret: Bool = true) -> String {
        errors.map { $0.rendered(caret: caret) }.joined(separator: "\n")
    }
}

/// The JSON path of a place inside a mapping file, as messages show it.
enum MappingPath {
    static func entityMapping(_ index: Int, _ name: String?) -> String {
        name.map { "entityMappings[\(index)] \"\($0)\"" } ?? "entityMappings[\(index)]"
    }

    static func property(_ index: Int, _ name: String?, _ group: String, _ property: String) -> String {
        "\(entityMapping(index, name)) .\(group).\(property)"
    }
}

extension [MappingError] {
    /// Sorts the errors from `start` on, keeping their order among equals, by the rank of
    /// the key that follows `base` in their paths (`""` for errors about the object at
    /// `base` itself; errors elsewhere rank -1): problems in the order of the file's keys.
    mutating func sortByKey(from start: Int, under base: String, rank: (String) -> Int) {
        guard count - start > 1 else { return }
        func rankOf(_ error: MappingError) -> Int {
            guard error.path.hasPrefix(base) else { return -1 }
            let rest = error.path.dropFirst(base.count).drop { $0 == " " || $0 == "." }
            return rank(String(rest.prefix { $0 != " " && $0 != "." && $0 != "[" }))
        }
        let ranked = self[start...].enumerated().map { (rank: rankOf($1), index: $0, error: $1) }
            .sorted { ($0.rank, $0.index) < ($1.rank, $1.index) }
        replaceSubrange(start..., with: ranked.map(\.error))
    }
}
