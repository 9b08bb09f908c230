import ExpressionLanguage
import Foundation
import ObjectGraph
import OrderedCollections

/// One object of a store, summarised for a report: its attributes as JSON values and its
/// relationships as the objects they hold (a dry run shows a few of each entity).
///
///     Note/1 title="Quarterly report" created=2024-09-02T09:00:00Z priority="high" notebook=Notebook/1 attachments=[]
public struct ObjectSample: Sendable, Hashable, CustomStringConvertible {
    /// What a relationship holds.
    public enum Related: Sendable, Hashable {
        /// A to-one: the object (`Notebook/1`), or nil.
        case toOne(String?)
        /// A to-many: how many objects, and the first few of them.
        case toMany(count: Int, first: [String])
    }

    /// `Entity/Z_PK`.
    public var object: String
    /// Attribute values in Remodel's JSON encoding (`{"$date": …}`), in model order;
    /// strings longer than ``maximumStringLength`` are cut, and data longer than
    /// ``maximumDataLength`` bytes is given by its length, `{"$dataLength": n}`.
    public var attributes: OrderedDictionary<String, JSON>
    /// Relationships, in model order.
    public var relationships: OrderedDictionary<String, Related>

    /// Strings longer than this are cut, with `…` at the end.
    public static let maximumStringLength = 60
    /// Data longer than this is given by its length.
    public static let maximumDataLength = 48
    /// The members of a to-many relationship a sample lists.
    public static let maximumRelated = 5

    public init(
        object: String, attributes: OrderedDictionary<String, JSON>, relationships: OrderedDictionary<String, Related>
    ) {
        self.object = object
        self.attributes = attributes
        self.relationships = relationships
    }

    /// A summary of `object`.
    public init(_ object: ManagedObject) throws {
        self.object = object.objectID.description
        attributes = [:]
        relationships = [:]
        guard let model = object.managedObjectContext?.store.model else { return }
        for attribute in model.allAttributes(of: object.entity) where !attribute.isTransient {
            attributes[attribute.name] = Self.summary(try object.value(forKey: attribute.name))
        }
        for relationship in model.allRelationships(of: object.entity) where !relationship.isTransient {
            let value = try object.value(forKey: relationship.name)
            let members = (value.collectionElements ?? (value.isNull ? [] : [value])).map(\.formatDescription)
            relationships[relationship.name] =
                relationship.isToMany
                ? .toMany(count: members.count, first: Array(members.prefix(Self.maximumRelated)))
                : .toOne(members.first)
        }
    }

    private static func summary(_ value: Value) -> JSON {
        switch value {
        case .string(let text) where text.count > maximumStringLength:
            return .string(String(text.prefix(maximumStringLength - 1)) + "…")
        case .data(let data) where data.count > maximumDataLength:
            return ["$dataLength": .integer(Int64(data.count))]
        default:
            return value.json
        }
    }

    /// The sample as JSON: `{"object": "Note/1", "attributes": {…}, "relationships":
    /// {"notebook": "Notebook/1", "attachments": {"count": 0, "first": []}}}`.
    public var json: JSON {
        var related = OrderedDictionary<String, JSON>()
        for (name, value) in relationships {
            switch value {
            case .toOne(let object): related[name] = object.map(JSON.string) ?? .null
            case .toMany(let count, let first):
                related[name] = ["count": .integer(Int64(count)), "first": .array(first.map(JSON.string))]
            }
        }
        return ["object": .string(object), "attributes": .object(attributes), "relationships": .object(related)]
    }

    /// One line: `Note/1 title="Quarterly report" wordCount=5 notebook=Notebook/1 attachments=[]`.
    public var description: String {
        var fields = [object]
        for (name, value) in attributes { fields.append("\(name)=\(Self.compact(value))") }
        for (name, value) in relationships {
            switch value {
            case .toOne(let object): fields.append("\(name)=\(object ?? "nil")")
            case .toMany(let count, let first):
                let more = count > first.count ? ", … \(count) in all" : ""
                fields.append("\(name)=[\(first.joined(separator: ", "))\(more)]")
            }
        }
        return fields.joined(separator: " ")
    }

    /// A JSON value written short: strings quoted, dates bare, `nil`, `YES`/`NO`.
    static func compact(_ json: JSON) -> String {
        switch json {
        case .null: return "nil"
        case .bool(let b): return b ? "YES" : "NO"
        case .string: return json.serialized()
        case .array(let elements): return "[" + elements.map(compact).joined(separator: ", ") + "]"
        case .object(let members):
            if members.count == 1, let member = members.elements.first, case .string(let text) = member.value {
                switch member.key {
                case "$date", "$object": return text
                case "$data": return "<\(Data(base64Encoded: text)?.count ?? 0) bytes>"
                default: break
                }
            }
            if members.count == 1, let length = members["$dataLength"]?.integerValue { return "<\(length) bytes>" }
            if members.count == 1, let elements = members["$set"]?.arrayValue {
                return "{" + elements.map(compact).joined(separator: ", ") + "}"
            }
            return json.serialized()
        default: return json.serialized()
        }
    }
}
