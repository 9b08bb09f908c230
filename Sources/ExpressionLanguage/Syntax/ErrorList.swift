/// Every problem found in one input, in the order found (file order, where the loader
/// knows it): what loaders and checkers throw, so that a user fixes them all in one pass.
/// ``ModelErrors``, ``MappingErrors`` and ``InferenceErrors`` are lists of this kind.
public struct ErrorList<Element: Error & Hashable & Sendable & CustomStringConvertible>: Error, Hashable, Sendable,
    CustomStringConvertible
{
    public var errors: [Element]

    public init(_ errors: [Element]) { self.errors = errors }

    /// One problem per line.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
