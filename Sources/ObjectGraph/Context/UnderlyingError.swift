import ExpressionLanguage

/// The error another error was made from, kept whole so that a program sees SQLite's code
/// and SQL, or an expression's kind and location, beneath a context's or a migration's
/// message (which quotes it as text).
public indirect enum UnderlyingError: Hashable, Sendable, CustomStringConvertible {
    case sqlite(SQLiteError)
    case expression(ExpressionError)
    case context(ContextError)
    case store(StoreError)

    /// The kinds of error that are kept; nil for others (their text is in the message).
    public init?(_ error: any Error) {
        switch error {
        case let error as SQLiteError: self = .sqlite(error)
        case let error as ExpressionError: self = .expression(error)
        case let error as ContextError: self = .context(error)
        case let error as StoreError: self = .store(error)
        default: return nil
        }
    }

    /// The SQLite error at the bottom of the chain, if SQLite is where it began.
    public var sqlite: SQLiteError? {
        switch self {
        case .sqlite(let error): error
        case .context(let error): error.underlying?.sqlite
        case .store(let error): error.underlying?.sqlite
        case .expression: nil
        }
    }

    public var description: String {
        switch self {
        case .sqlite(let error): error.description
        case .expression(let error): error.description
        case .context(let error): error.description
        case .store(let error): error.description
        }
    }
}
