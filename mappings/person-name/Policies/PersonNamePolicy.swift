import Remodel

/// Splits a full name in two for the person-name example's policy variant: the first word
/// is the first name, the rest (however many words, whatever the spacing) the last name;
/// a single name is a first name.
///
/// The mapping file calls it from expressions, through functions registered on the
/// policy — `FUNCTION($entityPolicy, 'firstNameOf:', $source.name)` — so the split is
/// written once, in Swift, and the mapping file still says what goes where.
public final class PersonNamePolicy: EntityMigrationPolicy {
    public init() {}

    /// `(first, last)`; nil parts for a missing or blank name.
    public static func split(_ name: String) -> (first: String?, last: String?) {
        let words = name.split(whereSeparator: { $0.isWhitespace })
        guard let first = words.first else { return (nil, nil) }
        return (String(first), words.count > 1 ? words.dropFirst().joined(separator: " ") : nil)
    }
}

extension PolicyRegistry {
    /// The person-name example's policy and its two functions.
    public static var personName: PolicyRegistry {
        var registry = PolicyRegistry()
        registry.register("PersonNamePolicy") { PersonNamePolicy() }
        registry.registerFunction("firstNameOf:", for: PersonNamePolicy.self) { _, arguments in
            guard case .string(let name) = arguments[0] else { return .null }
            return PersonNamePolicy.split(name).first.map(Value.string) ?? .null
        }
        registry.registerFunction("lastNameOf:", for: PersonNamePolicy.self) { _, arguments in
            guard case .string(let name) = arguments[0] else { return .null }
            return PersonNamePolicy.split(name).last.map(Value.string) ?? .null
        }
        return registry
    }
}
