import ExpressionLanguage
import ObjectGraph

/// What an expression is known to give before it runs, where that is knowable.
enum StaticKind: Equatable {
    case number, string, bool, date, data, null, object, collection

    var name: String {
        switch self {
        case .number: "a number"
        case .string: "a string"
        case .bool: "a boolean"
        case .date: "a date"
        case .data: "data"
        case .null: "nil"
        case .object: "an object"
        case .collection: "a collection"
        }
    }

    var isScalar: Bool { [.number, .string, .bool, .date, .data].contains(self) }

    static func of(_ expression: FormatExpression, source: ObjectModel, sourceEntity: EntityDescription?) -> StaticKind?
    {
        switch expression.kind {
        case .constant(let value):
            switch value {
            case .null: return .null
            case .bool: return .bool
            case .integer, .double, .decimal: return .number
            case .string: return .string
            case .date: return .date
            case .data: return .data
            case .array, .set, .dictionary: return .collection
            case .object: return .object
            }
        case .arithmetic(_, let a, let b):
            let ka = of(a, source: source, sourceEntity: sourceEntity),
                kb = of(b, source: source, sourceEntity: sourceEntity)
            return ka == .number && kb == .number ? .number : nil
        case .negate(let a):
            return of(a, source: source, sourceEntity: sourceEntity) == .number ? .number : nil
        case .keyPath(let operand?, let path):
            guard case .variable("source") = operand.kind, var entity = sourceEntity else { return nil }
            var kind: StaticKind? = nil
            for (i, key) in path.enumerated() {
                if key.hasPrefix("@") { return key == "@count" && i == path.count - 1 ? .number : nil }
                if let attribute = source.allAttributes(of: entity).first(where: { $0.name == key }) {
                    guard i == path.count - 1 else { return nil }
                    return attribute.type.staticKind
                }
                guard let relationship = source.allRelationships(of: entity).first(where: { $0.name == key }),
                    let next = source.entity(named: relationship.destination)
                else { return nil }
                if relationship.isToMany { return i == path.count - 1 ? .collection : nil }
                kind = .object
                entity = next
            }
            return kind
        default:
            return nil
        }
    }

    /// Why a value of this kind cannot go into `attribute`; nil when it can.
    func misfit(_ attribute: AttributeDescription) -> String? {
        let accepted: [StaticKind]
        switch attribute.type {
        case .int16, .int32, .int64, .decimal, .double, .float: accepted = [.number, .bool]
        case .boolean: accepted = [.bool, .number]
        case .string, .uri, .uuid: accepted = [.string]
        case .date: accepted = [.date]
        case .binary, .transformable: accepted = [.data]
        // Transient only: never mapped, any value would do.
        case .undefined, .objectID, .composite: return nil
        }
        if self == .null || accepted.contains(self) { return nil }
        return
            "'\(attribute.name)' is \(MappingCompiler.article(attribute.type.rawValue)) attribute, but the expression gives \(name)"
    }
}

extension AttributeType {
    var staticKind: StaticKind {
        switch self {
        case .int16, .int32, .int64, .decimal, .double, .float: .number
        case .boolean: .bool
        case .string, .uri, .uuid: .string
        case .date: .date
        case .binary, .transformable: .data
        case .undefined, .objectID, .composite: .object
        }
    }
}
