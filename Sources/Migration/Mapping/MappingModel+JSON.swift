import ExpressionLanguage
import Foundation
import OrderedCollections

extension MappingModel {
    /// Reads a mapping file (`*.mapping.json`, docs/mapping-format.md). Every structural
    /// problem is reported, each with the file and its JSON path, in file order; names and
    /// expressions are checked against the models by ``MigrationManager/check(_:source:destination:policies:)``.
    ///
    /// Messages name the file as `url` gives it (its relative path when it has one), so a
    /// user sees the path they passed.
    public static func load(contentsOf url: URL) throws(MappingErrors) -> MappingModel {
        let file = url.relativePath
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw MappingErrors([
                MappingError(
                    .unreadable, file: file, path: "", message: "cannot read the file: \(error.localizedDescription)")
            ])
        }
        let json: JSON
        do throws(JSONError) {
            json = try JSON.parse(data)
        } catch {
            let location = MappingError.TextLocation(
                line: error.line, column: error.column, lineText: Self.line(error.line, of: data))
            throw MappingErrors([
                MappingError(file: file, textLocation: location, message: "invalid JSON: \(error.message)")
            ])
        }
        return try MappingModel(json: json, file: file)
    }

    /// The text of 1-based line `number` of `data`, without its line break.
    private static func line(_ number: Int, of data: Data) -> String {
        let lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        guard number >= 1, number <= lines.count else { return "" }
        var bytes = lines[number - 1]
        if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads a mapping from JSON. Throws every structural problem found, in file order.
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

    /// The keys a mapping file's top level may have.
    static let fileKeys = ["$schema", "comment", "sourceModel", "destinationModel", "entityMappings"]
    /// The keys an entity mapping may have.
    static let entityMappingKeys = [
        "comment", "name", "type", "sourceEntity", "destinationEntity", "sourceExpression", "attributeMappings",
        "relationshipMappings", "policy", "userInfo"
    ]
    /// The keys of a property mapping written as an object.
    static let propertyMappingKeys = ["comment", "valueExpression", "userInfo"]
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
                    members[mapping.name] = .object([
                        "valueExpression": expression, "userInfo": Value.dictionary(mapping.userInfo).json
                    ])
                }
            }
            return .object(members)
        }
        if attributeMappings.contains(where: { !$0.isImplicit }) {
            o["attributeMappings"] = properties(attributeMappings)
        }
        if relationshipMappings.contains(where: { !$0.isImplicit }) {
            o["relationshipMappings"] = properties(relationshipMappings)
        }
        if let policy { o["policy"] = .string(policy) }
        if !userInfo.isEmpty { o["userInfo"] = Value.dictionary(userInfo).json }
        return .object(o)
    }
}

/// Reads the structure of a mapping file, collecting every problem in file order.
private struct MappingJSONReader {
    let file: String?
    var errors: [MappingError] = []
    /// Entity mapping names taken so far, with the index of the mapping that took each.
    var names: [String: Int] = [:]

    init(file: String?) { self.file = file }

    mutating func fail(_ path: String, _ message: String) {
        errors.append(MappingError(file: file, path: path, message: message))
    }

    /// Puts the errors found since `start` in the order of their keys in the object at
    /// `base`, whose keys are `keys`, so that problems are reported in file order. Errors
    /// about the object as a whole stand at `wholeObjectKey`'s place; errors about keys
    /// it lacks come first.
    mutating func orderByKeys(since start: Int, base: String, keys: [String], wholeObjectKey: String? = nil) {
        errors.sortByKey(from: start, under: base) { key in
            keys.firstIndex(of: key.isEmpty ? wholeObjectKey ?? "" : key) ?? -1
        }
    }

    /// The members of an object, after reporting its unknown keys (with the nearest known
    /// key). A key's path is `keyPrefix` followed by the key. Also returns the known keys
    /// suggested for unknown ones, whose absence then goes without saying.
    mutating func object(_ json: JSON, _ path: String, keyPrefix: String, allowed: [String], expected: String)
        -> (members: OrderedDictionary<String, JSON>, suggested: Set<String>)?
    {
        guard let members = json.objectValue else {
            fail(path, "expected \(expected), found \(Self.describe(json))")
            return nil
        }
        var suggested = Set<String>()
        let known = allowed.filter { $0 != "$schema" }
        for key in members.keys where !allowed.contains(key) {
            if let suggestion = Suggestion.closest(to: key, among: known) {
                suggested.insert(suggestion)
                fail(keyPrefix + key, "unknown key '\(key)'; did you mean '\(suggestion)'?")
            } else {
                fail(keyPrefix + key, "unknown key '\(key)'; the keys here are \(known.joined(separator: ", "))")
            }
        }
        return (members, suggested)
    }

    /// A JSON value as messages quote it: `the string "Tag"`, `the array ["Tag"]`.
    static func describe(_ json: JSON) -> String {
        let text = json.serialized()
        switch json {
        case .null: return "null"
        case .bool: return "the boolean \(text)"
        case .integer, .double: return "the number \(text)"
        case .string: return text.count <= 40 ? "the string \(text)" : "a string"
        case .array(let elements):
            return elements.isEmpty ? "an empty array" : text.count <= 40 ? "the array \(text)" : "an array"
        case .object(let members): return members.isEmpty ? "an empty object" : "an object"
        }
    }

    /// The string at `path`; nil, after reporting it, for anything else but null.
    mutating func string(_ json: JSON?, _ path: String, what: String = "a string") -> String? {
        guard let json, !json.isNull else { return nil }
        guard let s = json.stringValue else {
            fail(path, "expected \(what), found \(Self.describe(json))")
            return nil
        }
        return s
    }

    mutating func userInfo(_ json: JSON?, _ path: String) -> [String: Value] {
        guard let json, !json.isNull else { return [:] }
        guard json.objectValue != nil else {
            fail(path, "expected an object of values for policies and tools, found \(Self.describe(json))")
            return [:]
        }
        do throws(ExpressionError) {
            guard case .dictionary(let d) = try Value(json: json) else { return [:] }
            return d
        } catch {
            fail(path, error.message)
            return [:]
        }
    }

    mutating func mapping(_ json: JSON) -> MappingModel? {
        guard
            let (root, suggested) = object(
                json, "", keyPrefix: "", allowed: MappingModel.fileKeys,
                expected: "an object with sourceModel, destinationModel and entityMappings")
        else { return nil }
        let models = [
            ("sourceModel", "the source model's version name, such as \"Model1\""),
            ("destinationModel", "the destination model's version name, such as \"Model2\"")
        ]
        var versions: [String] = []
        for (key, what) in models {
            if let value = root[key], !value.isNull {
                if let version = string(value, key, what: what) { versions.append(version) }
            } else if !suggested.contains(key) {
                fail(key, "missing: \(what)")
            }
        }
        var entityMappings: [EntityMapping] = []
        switch root["entityMappings"] {
        case nil, .null?:
            if !suggested.contains("entityMappings") {
                fail("entityMappings", "missing: the entity mappings, in the order they run")
            }
        case .array(let elements)?:
            for (index, element) in elements.enumerated() {
                if let mapping = entityMapping(element, index) { entityMappings.append(mapping) }
            }
        case let other?:
            fail(
                "entityMappings",
                "expected an array of entity mappings, in the order they run, found \(Self.describe(other))")
        }
        orderByKeys(since: 0, base: "", keys: Array(root.keys))
        guard versions.count == 2 else { return nil }
        var mapping = MappingModel(
            sourceModel: versions[0], destinationModel: versions[1], entityMappings: entityMappings, file: file)
        mapping.keyOrder.keys = Array(root.keys)
        return mapping
    }

    mutating func entityMapping(_ json: JSON, _ index: Int) -> EntityMapping? {
        let start = errors.count
        let explicitName = json["name"]?.stringValue
        let name =
            explicitName
            ?? EntityMapping.defaultName(
                source: json["sourceEntity"]?.stringValue,
                destination: json["destinationEntity"]?.stringValue)
        let path = MappingPath.entityMapping(index, name)
        guard
            let (o, _) = object(
                json, path, keyPrefix: "\(path) .", allowed: MappingModel.entityMappingKeys,
                expected:
                    "an entity mapping ({\"name\": …, \"type\": …, \"sourceEntity\": …, \"destinationEntity\": …})")
        else { return nil }
        defer { orderByKeys(since: start, base: path, keys: Array(o.keys), wholeObjectKey: "type") }

        func has(_ key: String) -> Bool { o[key].map { !$0.isNull } ?? false }
        _ = string(o["name"], "\(path) .name", what: "a name")
        let sourceEntity = string(
            o["sourceEntity"], "\(path) .sourceEntity", what: "the name of an entity of the source model")
        let destinationEntity = string(
            o["destinationEntity"], "\(path) .destinationEntity", what: "the name of an entity of the destination model"
        )
        let sourceExpression = string(o["sourceExpression"], "\(path) .sourceExpression", what: "an expression string")
        let policy = string(o["policy"], "\(path) .policy", what: "the name of a registered policy")

        // Whether the keys are there at all: a value of the wrong kind is reported once, at its key.
        let hasSource = has("sourceEntity"), hasDestination = has("destinationEntity")
        var type: MappingType?
        if has("type") {
            if let text = string(
                o["type"], "\(path) .type", what: "a mapping type (add, remove, copy, transform or custom)")
            {
                type = MappingType(rawValue: text)
                if type == nil {
                    let hint =
                        Suggestion.closest(to: text, among: MappingType.allCases.map(\.rawValue)).map {
                            "did you mean '\($0)'?"
                        }
                        ?? "the types are add, remove, copy, transform and custom"
                    fail("\(path) .type", "unknown mapping type '\(text)'; \(hint)")
                }
            }
        } else {
            switch (hasSource, hasDestination) {
            case (false, true): type = .add
            case (true, false): type = .remove
            case (true, true): type = .transform
            case (false, false):
                fail(
                    path,
                    "an entity mapping needs a sourceEntity, a destinationEntity or both (without a type, they decide it)"
                )
            }
        }
        switch type {
        case .add?:
            if !hasDestination {
                fail(path, "an add mapping needs a destinationEntity: the entity it adds instances of")
            }
            if hasSource {
                fail(
                    "\(path) .sourceEntity",
                    "an add mapping has no source instances, so it has no sourceEntity; drop it, or make the mapping a transform to create \(destinationEntity ?? "destination") instances from \(sourceEntity ?? "source") instances"
                )
            }
            if has("sourceExpression") {
                fail(
                    "\(path) .sourceExpression",
                    "an add mapping has no source instances, so it has no sourceExpression; drop it, or make the mapping a transform"
                )
            }
        case .remove?:
            if !hasSource {
                fail(path, "a remove mapping needs a sourceEntity: the entity whose instances are left behind")
            }
            if hasDestination {
                fail(
                    "\(path) .destinationEntity",
                    "a remove mapping creates nothing; drop the destinationEntity, or make the mapping a transform")
            }
            if has("sourceExpression") {
                fail(
                    "\(path) .sourceExpression",
                    "a remove mapping migrates no instances, so it has no sourceExpression; drop it, or make the mapping a transform"
                )
            }
            for group in ["attributeMappings", "relationshipMappings"]
            where has(group) && o[group]?.objectValue?.isEmpty != true {
                fail(
                    "\(path) .\(group)",
                    "a remove mapping creates nothing, so it has no property mappings; drop \(group), or make the mapping a transform"
                )
            }
        case .copy?, .transform?:
            let missing = [hasSource ? nil : "sourceEntity", hasDestination ? nil : "destinationEntity"].compactMap {
                $0
            }
            if !missing.isEmpty {
                fail(
                    path,
                    "a \(type!.rawValue) mapping needs both a sourceEntity and a destinationEntity; this one has no \(missing.joined(separator: " and no "))"
                )
            }
        case .custom?:
            if !hasDestination && !has("policy") {
                fail(path, "a custom mapping needs a destinationEntity or a policy")
            }
        case nil:
            break
        }
        if let name {
            if let first = names[name] {
                if explicitName == nil {
                    fail(
                        path,
                        "without a name, this mapping is called '\(name)' after its entities, but entityMappings[\(first)] is called that already; give one of them a name of its own"
                    )
                } else {
                    fail(
                        "\(path) .name",
                        "the name '\(name)' is already used by entityMappings[\(first)]; entity mapping names must be unique (relationship mappings find mappings by name)"
                    )
                }
            } else {
                names[name] = index
            }
        } else if type != nil, !o.keys.contains("name") {
            fail(path, "an entity mapping without entities needs a name")
        }
        let attributes = properties(o["attributeMappings"], "\(path) .attributeMappings")
        let relationships = properties(o["relationshipMappings"], "\(path) .relationshipMappings")
        let info = userInfo(o["userInfo"], "\(path) .userInfo")
        guard let type, let name else { return nil }
        var mapping = EntityMapping(
            name: name, type: type, sourceEntity: sourceEntity, destinationEntity: destinationEntity,
            sourceExpression: sourceExpression, attributeMappings: attributes, relationshipMappings: relationships,
            policy: policy, userInfo: info)
        mapping.keyOrder.keys = Array(o.keys)
        return mapping
    }

    mutating func properties(_ json: JSON?, _ path: String) -> [PropertyMapping] {
        guard let json, !json.isNull else { return [] }
        guard let members = json.objectValue else {
            fail(path, "expected an object of property name → expression, found \(Self.describe(json))")
            return []
        }
        let expected = "expected an expression string, null, or {\"valueExpression\": …, \"userInfo\": …}"
        var result: [PropertyMapping] = []
        for (name, value) in members {
            let place = "\(path).\(name)"
            switch value {
            case .null:
                result.append(PropertyMapping(name: name, valueExpression: nil))
            case .string(let expression):
                result.append(PropertyMapping(name: name, valueExpression: expression))
            case .object:
                let start = errors.count
                guard
                    let (o, _) = object(
                        value, place, keyPrefix: "\(place).", allowed: MappingModel.propertyMappingKeys, expected: "")
                else { continue }
                let expression = string(
                    o["valueExpression"], "\(place).valueExpression", what: "an expression string or null")
                let info = userInfo(o["userInfo"], "\(place).userInfo")
                orderByKeys(since: start, base: place, keys: Array(o.keys))
                result.append(PropertyMapping(name: name, valueExpression: expression, userInfo: info))
            case .bool(let b):
                fail(
                    place,
                    "\(expected); found \(Self.describe(value)); write the constant as an expression: \"\(b ? "YES" : "NO")\""
                )
            case .integer, .double:
                fail(
                    place,
                    "\(expected); found \(Self.describe(value)); write the constant as an expression: \"\(value.serialized())\""
                )
            case .array(let elements):
                let hint =
                    elements.count == 1 && elements[0].stringValue != nil
                    ? "; write the expression without the brackets: \(elements[0].serialized())" : ""
                fail(place, "\(expected); found \(Self.describe(value))\(hint)")
            }
        }
        return result
    }
}
