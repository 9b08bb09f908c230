import ExpressionLanguage
import Foundation
import OrderedCollections

extension MappingModel {
    /// Reads a mapping file (`*.mapping.json`, docs/mapping-format.md). Every structural
    /// problem is reported, each with the file and its JSON path; names and expressions
    /// are checked against the models by ``MappingChecker``.
    public static func load(contentsOf url: URL) throws(MappingErrors) -> MappingModel {
        let file = url.path
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw MappingErrors([MappingError(file: file, path: "", message: "cannot read the file: \(error.localizedDescription)")])
        }
        let json: JSON
        do throws(JSONError) {
            json = try JSON.parse(data)
        } catch {
            throw MappingErrors([MappingError(file: file, path: "", message: "invalid JSON at \(error)")])
        }
        return try MappingModel(json: json, file: file)
    }

    /// Reads a mapping from JSON. Throws every structural problem found.
    public init(json: JSON, file: String? = nil) throws(MappingErrors) {
        var reader = MappingJSONReader(file: file)
        let mapping = reader.mapping(json)
        if !reader.errors.isEmpty { throw MappingErrors(reader.errors) }
        self = mapping!
    }

    /// The mapping as a mapping file: what ``init(json:file:)`` reads back. Implicit
    /// property mappings are not written (they are implied).
    public var json: JSON {
        var root = OrderedDictionary<String, JSON>()
        root["sourceModel"] = .string(sourceModel)
        root["destinationModel"] = .string(destinationModel)
        root["entityMappings"] = .array(entityMappings.map(\.json))
        return .object(root)
    }
}

extension EntityMapping {
    var json: JSON {
        var o = OrderedDictionary<String, JSON>()
        o["name"] = .string(name)
        o["type"] = .string(type.rawValue)
        if let sourceEntity { o["sourceEntity"] = .string(sourceEntity) }
        if let destinationEntity { o["destinationEntity"] = .string(destinationEntity) }
        if let sourceExpression { o["sourceExpression"] = .string(sourceExpression) }
        func properties(_ mappings: [PropertyMapping]) -> JSON {
            var members = OrderedDictionary<String, JSON>()
            for mapping in mappings where !mapping.isImplicit {
                let expression: JSON = mapping.valueExpression.map(JSON.string) ?? .null
                if mapping.userInfo.isEmpty {
                    members[mapping.name] = expression
                } else {
                    members[mapping.name] = .object(["valueExpression": expression, "userInfo": Value.dictionary(mapping.userInfo).json])
                }
            }
            return .object(members)
        }
        if attributeMappings.contains(where: { !$0.isImplicit }) { o["attributeMappings"] = properties(attributeMappings) }
        if relationshipMappings.contains(where: { !$0.isImplicit }) { o["relationshipMappings"] = properties(relationshipMappings) }
        if let policy { o["policy"] = .string(policy) }
        if !userInfo.isEmpty { o["userInfo"] = Value.dictionary(userInfo).json }
        return .object(o)
    }
}

/// Reads the structure of a mapping file, collecting every problem.
private struct MappingJSONReader {
    let file: String?
    var errors: [MappingError] = []

    init(file: String?) { self.file = file }

    mutating func fail(_ path: String, _ message: String) {
        errors.append(MappingError(file: file, path: path, message: message))
    }

    mutating func object(_ json: JSON, _ path: String, allowed: [String]) -> OrderedDictionary<String, JSON>? {
        guard let object = json.objectValue else {
            fail(path, "expected an object, found \(json.kindName)")
            return nil
        }
        for key in object.keys where !allowed.contains(key) {
            let place = path.isEmpty ? key : "\(path).\(key)"
            if let suggestion = Suggestion.closest(to: key, among: allowed) {
                fail(place, "unknown key '\(key)'; did you mean '\(suggestion)'?")
            } else {
                fail(place, "unknown key '\(key)'; expected one of \(allowed.joined(separator: ", "))")
            }
        }
        return object
    }

    mutating func string(_ json: JSON?, _ path: String) -> String? {
        guard let json, !json.isNull else { return nil }
        guard let s = json.stringValue else { fail(path, "expected a string, found \(json.kindName)"); return nil }
        return s
    }

    mutating func userInfo(_ json: JSON?, _ path: String) -> [String: Value] {
        guard let json else { return [:] }
        do throws(ExpressionError) {
            guard case .dictionary(let d) = try Value(json: json) else {
                fail(path, "expected an object, found \(json.kindName)")
                return [:]
            }
            return d
        } catch {
            fail(path, error.message)
            return [:]
        }
    }

    mutating func mapping(_ json: JSON) -> MappingModel? {
        guard let root = object(json, "", allowed: ["$schema", "sourceModel", "destinationModel", "entityMappings"]) else { return nil }
        let source = string(root["sourceModel"], "sourceModel")
        let destination = string(root["destinationModel"], "destinationModel")
        if root["sourceModel"] == nil { fail("sourceModel", "missing: name the source model version, such as \"Model1\"") }
        if root["destinationModel"] == nil { fail("destinationModel", "missing: name the destination model version, such as \"Model2\"") }
        var entityMappings: [EntityMapping] = []
        if let list = root["entityMappings"] {
            if let array = list.arrayValue {
                for (index, element) in array.enumerated() {
                    if let mapping = entityMapping(element, index) { entityMappings.append(mapping) }
                }
            } else {
                fail("entityMappings", "expected an array of entity mappings, found \(list.kindName)")
            }
        } else {
            fail("entityMappings", "missing: list the entity mappings, in the order they run")
        }
        var seen: [String: Int] = [:]
        for (index, mapping) in entityMappings.enumerated() {
            if let first = seen[mapping.name] {
                fail(MappingPath.entityMapping(index, mapping.name) + " .name",
                     "the name '\(mapping.name)' is already used by entityMappings[\(first)]; entity mapping names must be unique")
            } else {
                seen[mapping.name] = index
            }
        }
        guard let source, let destination else { return nil }
        return MappingModel(sourceModel: source, destinationModel: destination, entityMappings: entityMappings, file: file)
    }

    static let entityMappingKeys = [
        "name", "type", "sourceEntity", "destinationEntity", "sourceExpression", "attributeMappings",
        "relationshipMappings", "policy", "userInfo",
    ]

    mutating func entityMapping(_ json: JSON, _ index: Int) -> EntityMapping? {
        let provisional = MappingPath.entityMapping(index, json["name"]?.stringValue)
        guard let o = object(json, provisional, allowed: Self.entityMappingKeys) else { return nil }
        let sourceEntity = string(o["sourceEntity"], "\(provisional) .sourceEntity")
        let destinationEntity = string(o["destinationEntity"], "\(provisional) .destinationEntity")
        let name = string(o["name"], "\(provisional) .name") ?? "\(sourceEntity ?? "")To\(destinationEntity ?? "")"
        let path = MappingPath.entityMapping(index, name)
        var type: MappingType
        if let text = string(o["type"], "\(path) .type") {
            guard let t = MappingType(rawValue: text) else {
                fail("\(path) .type", "unknown mapping type '\(text)'; expected one of \(MappingType.allCases.map(\.rawValue).joined(separator: ", "))")
                return nil
            }
            type = t
        } else {
            // Without a type: what the entities say.
            switch (sourceEntity, destinationEntity) {
            case (nil, _?): type = .add
            case (_?, nil): type = .remove
            default: type = .transform
            }
        }
        switch type {
        case .add where destinationEntity == nil:
            fail(path, "an add mapping needs a destinationEntity")
        case .remove where sourceEntity == nil:
            fail(path, "a remove mapping needs a sourceEntity")
        case .copy where sourceEntity == nil || destinationEntity == nil, .transform where sourceEntity == nil || destinationEntity == nil:
            fail(path, "a \(type.rawValue) mapping needs both a sourceEntity and a destinationEntity")
        case .custom where destinationEntity == nil && o["policy"] == nil:
            fail(path, "a custom mapping needs a destinationEntity or a policy")
        default:
            break
        }
        if type == .remove, destinationEntity != nil {
            fail("\(path) .destinationEntity", "a remove mapping creates nothing; drop the destinationEntity or use a transform mapping")
        }
        let attributes = properties(o["attributeMappings"], "\(path) .attributeMappings")
        let relationships = properties(o["relationshipMappings"], "\(path) .relationshipMappings")
        for (group, list) in [("attributeMappings", attributes), ("relationshipMappings", relationships)]
        where type == .remove && !list.isEmpty {
            fail("\(path) .\(group)", "a remove mapping creates nothing, so it has no property mappings")
        }
        return EntityMapping(
            name: name, type: type, sourceEntity: sourceEntity, destinationEntity: destinationEntity,
            sourceExpression: string(o["sourceExpression"], "\(path) .sourceExpression"),
            attributeMappings: attributes, relationshipMappings: relationships,
            policy: string(o["policy"], "\(path) .policy"), userInfo: userInfo(o["userInfo"], "\(path) .userInfo"))
    }

    mutating func properties(_ json: JSON?, _ path: String) -> [PropertyMapping] {
        guard let json else { return [] }
        guard let members = json.objectValue else {
            fail(path, "expected an object of property name → expression, found \(json.kindName)")
            return []
        }
        var result: [PropertyMapping] = []
        for (name, value) in members {
            let place = "\(path).\(name)"
            switch value {
            case .null:
                result.append(PropertyMapping(name: name, valueExpression: nil))
            case .string(let expression):
                result.append(PropertyMapping(name: name, valueExpression: expression))
            case .object:
                guard let o = object(value, place, allowed: ["valueExpression", "userInfo"]) else { continue }
                result.append(PropertyMapping(name: name, valueExpression: string(o["valueExpression"], "\(place).valueExpression"),
                                              userInfo: userInfo(o["userInfo"], "\(place).userInfo")))
            default:
                fail(place, "expected an expression string, null, or {\"valueExpression\": …, \"userInfo\": …}; found \(value.kindName)")
            }
        }
        return result
    }
}

/// The closest of a few names to a misspelt one, for "did you mean" hints.
enum Suggestion {
    static func closest(to word: String, among candidates: some Sequence<String>) -> String? {
        let lowered = word.lowercased()
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(lowered, candidate.lowercased())
            if distance <= max(1, min(3, candidate.count / 3)), distance < (best?.1 ?? .max) { best = (candidate, distance) }
        }
        return best?.0
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
