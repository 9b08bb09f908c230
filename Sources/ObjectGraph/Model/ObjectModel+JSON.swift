import ExpressionLanguage
import Foundation
import OrderedCollections

extension ObjectModel {
    /// Loads and validates a JSON model file (`*.model.json`, docs/model-format.md).
    /// Every problem is reported, each with the file and its JSON path.
    public static func load(contentsOf url: URL) throws(ModelErrors) -> ObjectModel {
        let file = url.lastPathComponent
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ModelErrors([
                ModelError(
                    .unreadable, file: url.path, path: "",
                    message: "cannot read the file: \(error.localizedDescription)")
            ])
        }
        let json: JSON
        do throws(JSONError) {
            json = try JSON.parse(data)
        } catch {
            throw ModelErrors([ModelError(.syntax, file: file, path: "", message: "invalid JSON at \(error)")])
        }
        let model = try ObjectModel(json: json, file: file)
        try model.validate(file: file)
        return model
    }

    /// Reads a model from JSON without validating the relations between entities (see
    /// ``validate(file:)``). Throws every structural problem found.
    public init(json: JSON, file: String? = nil) throws(ModelErrors) {
        var reader = ModelJSONReader(file: file)
        let model = reader.model(json)
        if !reader.errors.isEmpty { throw ModelErrors(reader.errors) }
        self = model!
    }

    /// The model as a JSON model file: what ``init(json:file:)`` reads back.
    public var json: JSON {
        var entitiesJSON = OrderedDictionary<String, JSON>()
        for entity in entities {
            var e = OrderedDictionary<String, JSON>()
            if let parent = entity.parent { e["parent"] = .string(parent) }
            if entity.isAbstract { e["abstract"] = .bool(true) }
            if let r = entity.renamingIdentifier { e["renamingIdentifier"] = .string(r) }
            if let v = entity.versionHashModifier { e["versionHashModifier"] = .string(v) }
            var attributes = OrderedDictionary<String, JSON>()
            for a in entity.attributes {
                var o = OrderedDictionary<String, JSON>()
                o["type"] = .string(a.type.rawValue)
                if !a.isOptional { o["optional"] = .bool(false) }
                if a.isTransient { o["transient"] = .bool(true) }
                if let d = a.defaultValue { o["default"] = d.json }
                if let m = a.minValue { o["min"] = m.json }
                if let m = a.maxValue { o["max"] = m.json }
                if let r = a.renamingIdentifier { o["renamingIdentifier"] = .string(r) }
                if let v = a.versionHashModifier { o["versionHashModifier"] = .string(v) }
                if a.allowsExternalBinaryDataStorage { o["allowsExternalBinaryDataStorage"] = .bool(true) }
                if let t = a.valueTransformerName { o["valueTransformerName"] = .string(t) }
                if let d = a.derivationExpression { o["derivationExpression"] = .string(d) }
                if !a.validationPredicates.isEmpty {
                    o["validationPredicates"] = .array(a.validationPredicates.map(JSON.string))
                }
                if a.preservesValueInHistoryOnDeletion { o["preservesValueInHistoryOnDeletion"] = .bool(true) }
                if !a.userInfo.isEmpty { o["userInfo"] = Value.dictionary(a.userInfo).json }
                attributes[a.name] = o.count == 1 ? .string(a.type.rawValue) : .object(o)
            }
            if !attributes.isEmpty { e["attributes"] = .object(attributes) }
            var relationships = OrderedDictionary<String, JSON>()
            for r in entity.relationships {
                var o = OrderedDictionary<String, JSON>()
                o["destination"] = .string(r.destination)
                if let i = r.inverse { o["inverse"] = .string(i) }
                if r.isToMany { o["toMany"] = .bool(true) }
                if r.isOrdered { o["ordered"] = .bool(true) }
                if !r.isOptional { o["optional"] = .bool(false) }
                if r.isTransient { o["transient"] = .bool(true) }
                if r.minCount != 0 { o["minCount"] = .integer(Int64(r.minCount)) }
                if r.maxCount != 0 { o["maxCount"] = .integer(Int64(r.maxCount)) }
                if r.deleteRule != .nullify { o["deleteRule"] = .string(r.deleteRule.rawValue) }
                if let n = r.renamingIdentifier { o["renamingIdentifier"] = .string(n) }
                if let v = r.versionHashModifier { o["versionHashModifier"] = .string(v) }
                if !r.userInfo.isEmpty { o["userInfo"] = Value.dictionary(r.userInfo).json }
                relationships[r.name] = .object(o)
            }
            if !relationships.isEmpty { e["relationships"] = .object(relationships) }
            if !entity.uniquenessConstraints.isEmpty {
                e["uniquenessConstraints"] = .array(entity.uniquenessConstraints.map { .array($0.map(JSON.string)) })
            }
            if !entity.fetchedProperties.isEmpty {
                var fetched = OrderedDictionary<String, JSON>()
                for f in entity.fetchedProperties {
                    var o: OrderedDictionary<String, JSON> = ["entity": .string(f.entity)]
                    if let p = f.predicate { o["predicate"] = .string(p) }
                    fetched[f.name] = .object(o)
                }
                e["fetchedProperties"] = .object(fetched)
            }
            if !entity.userInfo.isEmpty { e["userInfo"] = Value.dictionary(entity.userInfo).json }
            entitiesJSON[entity.name] = .object(e)
        }
        var root: OrderedDictionary<String, JSON> = ["version": .string(version)]
        if !versionIdentifiers.isEmpty { root["versionIdentifiers"] = .array(versionIdentifiers.map(JSON.string)) }
        root["entities"] = .object(entitiesJSON)
        if !configurations.isEmpty {
            root["configurations"] = .object(
                OrderedDictionary(
                    uniqueKeysWithValues: configurations.sorted { $0.key < $1.key }
                        .map { ($0.key, JSON.array($0.value.map(JSON.string))) }))
        }
        return .object(root)
    }
}

/// Reads the JSON model format, collecting every problem with its path.
private struct ModelJSONReader {
    let file: String?
    var errors: [ModelError] = []

    init(file: String?) { self.file = file }

    mutating func fail(_ path: String, _ message: String) {
        errors.append(ModelError(file: file, path: path, message: message))
    }

    mutating func object(_ json: JSON, _ path: String, allowed: [String]) -> OrderedDictionary<String, JSON>? {
        guard let object = json.objectValue else {
            fail(path, "expected an object, found \(json.kindName)")
            return nil
        }
        for key in object.keys where !allowed.contains(key) {
            fail(
                path.isEmpty ? key : "\(path).\(key)",
                "unknown key '\(key)'; expected one of \(allowed.joined(separator: ", "))")
        }
        return object
    }

    mutating func string(_ json: JSON?, _ path: String) -> String? {
        guard let json else { return nil }
        guard let s = json.stringValue else { fail(path, "expected a string, found \(json.kindName)"); return nil }
        return s
    }

    mutating func bool(_ json: JSON?, _ path: String, default value: Bool) -> Bool {
        guard let json else { return value }
        guard let b = json.boolValue else { fail(path, "expected true or false, found \(json.kindName)"); return value }
        return b
    }

    mutating func int(_ json: JSON?, _ path: String) -> Int {
        guard let json else { return 0 }
        // Core Data's counts are unsigned; its hashes take 32 bits of them.
        guard let i = json.integerValue, i >= 0, i <= Int64(UInt32.max) else {
            fail(path, "expected a non-negative integer, found \(json)")
            return 0
        }
        return Int(i)
    }

    mutating func value(_ json: JSON?, _ path: String) -> Value? {
        guard let json else { return nil }
        do throws(ExpressionError) {
            return try Value(json: json)
        } catch {
            fail(path, error.message)
            return nil
        }
    }

    mutating func userInfo(_ json: JSON?, _ path: String) -> [String: Value] {
        guard let json else { return [:] }
        guard case .dictionary(let d)? = value(json, path) else {
            fail(path, "expected an object")
            return [:]
        }
        return d
    }

    /// `[["name"], ["first", "last"]]`: lists of property names.
    mutating func uniquenessConstraints(_ json: JSON?, _ path: String) -> [[String]] {
        guard let json else { return [] }
        guard let constraints = json.arrayValue else {
            fail(path, "expected an array of arrays of property names, found \(json.kindName)")
            return []
        }
        var result: [[String]] = []
        for (i, constraint) in constraints.enumerated() {
            guard let names = constraint.arrayValue else {
                fail("\(path)[\(i)]", "expected an array of property names, found \(constraint.kindName)")
                continue
            }
            var constraintNames: [String] = []
            for (j, name) in names.enumerated() {
                if let name = string(name, "\(path)[\(i)][\(j)]") { constraintNames.append(name) }
            }
            result.append(constraintNames)
        }
        return result
    }

    mutating func model(_ json: JSON) -> ObjectModel? {
        guard
            let root = object(
                json, "", allowed: ["version", "versionIdentifiers", "entities", "configurations", "$schema", "comment"]
            )
        else { return nil }
        guard let version = string(root["version"], "version") else {
            if root["version"] == nil { fail("version", "missing: a model names its version, such as \"Model1\"") }
            return nil
        }
        guard let entitiesJSON = root["entities"] else {
            fail("entities", "missing: a model has an object of entities")
            return nil
        }
        guard
            let entitiesObject = object(
                entitiesJSON, "entities", allowed: entitiesJSON.objectValue.map { Array($0.keys) } ?? [])
        else { return nil }
        var entities: [EntityDescription] = []
        for (name, body) in entitiesObject {
            if let entity = entity(name, body, "entities.\(name)") { entities.append(entity) }
        }
        var model = ObjectModel(version: version, entities: entities)
        if let identifiers = root["versionIdentifiers"] {
            model.versionIdentifiers = strings(identifiers, "versionIdentifiers") ?? []
        }
        if let configurations = root["configurations"],
            let o = object(
                configurations, "configurations", allowed: configurations.objectValue.map { Array($0.keys) } ?? [])
        {
            let names = Set(entities.map(\.name))
            for (name, members) in o {
                guard let list = strings(members, "configurations.\(name)") else { continue }
                for member in list where !names.contains(member) {
                    fail(
                        "configurations.\(name)",
                        "unknown entity '\(member)'; the entities are \(names.sorted().joined(separator: ", "))")
                }
                model.configurations[name] = list
            }
        }
        return model
    }

    /// An array of strings, such as a configuration's entities or a uniqueness constraint.
    mutating func strings(_ json: JSON, _ path: String) -> [String]? {
        guard let array = json.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
            fail(path, "expected an array of names, found \(json.kindName)")
            return nil
        }
        return array.compactMap(\.stringValue)
    }

    mutating func entity(_ name: String, _ json: JSON, _ path: String) -> EntityDescription? {
        guard
            let o = object(
                json, path,
                allowed: [
                    "parent", "abstract", "attributes", "relationships",
                    "renamingIdentifier", "versionHashModifier", "userInfo",
                    "uniquenessConstraints", "fetchedProperties", "comment"
                ])
        else { return nil }
        var entity = EntityDescription(name: name)
        entity.parent = string(o["parent"], path + ".parent")
        entity.isAbstract = bool(o["abstract"], path + ".abstract", default: false)
        entity.renamingIdentifier = string(o["renamingIdentifier"], path + ".renamingIdentifier")
        entity.versionHashModifier = string(o["versionHashModifier"], path + ".versionHashModifier")
        entity.userInfo = userInfo(o["userInfo"], path + ".userInfo")
        entity.uniquenessConstraints = uniquenessConstraints(
            o["uniquenessConstraints"], path + ".uniquenessConstraints")
        if let fetched = o["fetchedProperties"] {
            let fpath = path + ".fetchedProperties"
            if let fo = object(fetched, fpath, allowed: fetched.objectValue.map { Array($0.keys) } ?? []) {
                for (name, body) in fo {
                    guard let b = object(body, "\(fpath).\(name)", allowed: ["entity", "predicate", "comment"]) else {
                        continue
                    }
                    guard let target = string(b["entity"], "\(fpath).\(name).entity") else {
                        if b["entity"] == nil {
                            fail("\(fpath).\(name).entity", "missing: a fetched property names the entity it fetches")
                        }
                        continue
                    }
                    entity.fetchedProperties.append(
                        FetchedPropertyDescription(
                            name: name, entity: target, predicate: string(b["predicate"], "\(fpath).\(name).predicate"))
                    )
                }
            }
        }
        if let attributes = o["attributes"] {
            let apath = path + ".attributes"
            if let ao = object(attributes, apath, allowed: attributes.objectValue.map { Array($0.keys) } ?? []) {
                for (attributeName, body) in ao {
                    if let a = attribute(attributeName, body, "\(apath).\(attributeName)") {
                        entity.attributes.append(a)
                    }
                }
            }
        }
        if let relationships = o["relationships"] {
            let rpath = path + ".relationships"
            if let ro = object(relationships, rpath, allowed: relationships.objectValue.map { Array($0.keys) } ?? []) {
                for (relationshipName, body) in ro {
                    if let r = relationship(relationshipName, body, "\(rpath).\(relationshipName)") {
                        entity.relationships.append(r)
                    }
                }
            }
        }
        return entity
    }

    mutating func attributeType(_ text: String, _ path: String) -> AttributeType? {
        if let t = AttributeType(rawValue: text) ?? AttributeType(xcodeName: text) { return t }
        fail(
            path,
            "unknown attribute type '\(text)'; the types are \(AttributeType.allCases.map(\.rawValue).joined(separator: " ")) (the last three only for transient attributes)"
        )
        return nil
    }

    mutating func attribute(_ name: String, _ json: JSON, _ path: String) -> AttributeDescription? {
        if let shorthand = json.stringValue {
            guard let type = attributeType(shorthand, path) else { return nil }
            return AttributeDescription(name: name, type: type)
        }
        guard
            let o = object(
                json, path,
                allowed: [
                    "type", "optional", "transient", "default", "min", "max",
                    "renamingIdentifier", "versionHashModifier",
                    "allowsExternalBinaryDataStorage", "valueTransformerName",
                    "derivationExpression", "preservesValueInHistoryOnDeletion", "validationPredicates",
                    "userInfo", "comment"
                ])
        else { return nil }
        guard let typeName = string(o["type"], path + ".type") else {
            if o["type"] == nil { fail(path + ".type", "missing: an attribute has a type") }
            return nil
        }
        guard let type = attributeType(typeName, path + ".type") else { return nil }
        var a = AttributeDescription(name: name, type: type)
        a.isOptional = bool(o["optional"], path + ".optional", default: true)
        a.isTransient = bool(o["transient"], path + ".transient", default: false)
        a.defaultValue = value(o["default"], path + ".default").map { Self.coerce($0, to: type) }
        a.minValue = value(o["min"], path + ".min")
        a.maxValue = value(o["max"], path + ".max")
        a.renamingIdentifier = string(o["renamingIdentifier"], path + ".renamingIdentifier")
        a.versionHashModifier = string(o["versionHashModifier"], path + ".versionHashModifier")
        a.allowsExternalBinaryDataStorage = bool(
            o["allowsExternalBinaryDataStorage"], path + ".allowsExternalBinaryDataStorage", default: false)
        a.valueTransformerName = string(o["valueTransformerName"], path + ".valueTransformerName")
        a.derivationExpression = string(o["derivationExpression"], path + ".derivationExpression")
        if let predicates = o["validationPredicates"] {
            a.validationPredicates = strings(predicates, path + ".validationPredicates") ?? []
        }
        a.preservesValueInHistoryOnDeletion = bool(
            o["preservesValueInHistoryOnDeletion"], path + ".preservesValueInHistoryOnDeletion", default: false)
        a.userInfo = userInfo(o["userInfo"], path + ".userInfo")
        return a
    }

    /// JSON has no float or boolean-as-number distinction: `"default": 0` on a double
    /// attribute means 0.0, on a boolean attribute NO; `1.0` or `true` on an integer
    /// attribute means 1, as Xcode's `defaultValueString` does.
    static func coerce(_ value: Value, to type: AttributeType) -> Value {
        switch (type, value) {
        case (.double, .integer(let i)), (.float, .integer(let i)): .double(Double(i))
        case (.boolean, .integer(let i)) where i == 0 || i == 1: .bool(i == 1)
        case (.decimal, .integer(let i)): .decimal(Decimal(i))
        case (.int16, .double(let d)), (.int32, .double(let d)), (.int64, .double(let d)):
            d.rounded() == d ? Int64(exactly: d).map(Value.integer) ?? value : value
        case (.int16, .bool(let b)), (.int32, .bool(let b)), (.int64, .bool(let b)): .integer(b ? 1 : 0)
        case (.boolean, .double(let d)) where d == 0 || d == 1: .bool(d == 1)
        case (.decimal, .double(let d)): .decimal(Value.decimal(d))
        default: value
        }
    }

    mutating func relationship(_ name: String, _ json: JSON, _ path: String) -> RelationshipDescription? {
        guard
            let o = object(
                json, path,
                allowed: [
                    "destination", "inverse", "toMany", "ordered", "optional", "transient",
                    "minCount", "maxCount", "deleteRule", "renamingIdentifier",
                    "versionHashModifier", "userInfo", "comment"
                ])
        else { return nil }
        guard let destination = string(o["destination"], path + ".destination") else {
            if o["destination"] == nil {
                fail(path + ".destination", "missing: a relationship has a destination entity")
            }
            return nil
        }
        var r = RelationshipDescription(name: name, destination: destination)
        r.inverse = string(o["inverse"], path + ".inverse")
        r.isToMany = bool(o["toMany"], path + ".toMany", default: false)
        r.isOrdered = bool(o["ordered"], path + ".ordered", default: false)
        r.isOptional = bool(o["optional"], path + ".optional", default: true)
        r.isTransient = bool(o["transient"], path + ".transient", default: false)
        r.minCount = int(o["minCount"], path + ".minCount")
        r.maxCount = int(o["maxCount"], path + ".maxCount")
        if let rule = string(o["deleteRule"], path + ".deleteRule") {
            if let parsed = DeleteRule(rawValue: rule) ?? DeleteRule(xcodeName: rule) {
                r.deleteRule = parsed
            } else {
                fail(
                    path + ".deleteRule",
                    "unknown delete rule '\(rule)'; the rules are nullify, cascade, deny, noAction")
            }
        }
        r.renamingIdentifier = string(o["renamingIdentifier"], path + ".renamingIdentifier")
        r.versionHashModifier = string(o["versionHashModifier"], path + ".versionHashModifier")
        r.userInfo = userInfo(o["userInfo"], path + ".userInfo")
        return r
    }
}
