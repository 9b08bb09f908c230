import ExpressionLanguage
import Foundation

/// Reads compiled models, as Xcode's model compiler writes them into an app bundle: an
/// `.momd` folder (one `.mom` per version and a `VersionInfo.plist`), or one `.mom` file.
///
/// A `.mom` is a keyed archive of `NSManagedObjectModel`. What a migration needs is read
/// from it as from an `.xcdatamodel`: entities, inheritance, attributes (type, optional,
/// transient, default, min/max, renaming identifier, version hash modifier, external
/// storage, transformer name, preserve-after-deletion, derivation, userInfo),
/// relationships (destination, inverse, to-many, ordered, counts, delete rule), uniqueness
/// constraints and fetch indexes. The archive's keys are those `NSPropertyDescription`,
/// `NSAttributeDescription`, `NSRelationshipDescription` and `NSEntityDescription` encode
/// (docs/model-format.md, "Compiled models"). The `.omo` files beside the `.mom`s are a
/// cache of the current version and are not read.
public enum CompiledModelReader {
    /// What `VersionInfo.plist` says about an `.momd`: the current version and each
    /// version's entity version hashes, as Core Data compares them with a store's.
    public struct VersionInfo: Sendable, Equatable {
        public var currentVersion: String?
        /// Version name → entity name → 32-byte version hash.
        public var versionHashes: [String: [String: Data]]
    }

    /// The model in a `.mom` file; its version is the file's name without the extension.
    public static func importModel(at url: URL) throws(ModelErrors) -> ObjectModel {
        let file = url.lastPathComponent
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw ModelErrors([
                ModelError(
                    .unreadable, file: url.path, path: "",
                    message: "cannot read the compiled model: no such file, or it is not readable")
            ])
        }
        let model = try parse(data, version: url.deletingPathExtension().lastPathComponent, file: file)
        try model.validate(file: file)
        return model
    }

    /// Every version in an `.momd` folder, oldest first (``ObjectModel/versionPrecedes(_:_:)``
    /// on the `.mom` names), and what its `VersionInfo.plist` says (nil without one).
    public static func importVersions(at url: URL) throws(ModelErrors) -> (versions: [ObjectModel], info: VersionInfo?)
    {
        var versions = try ObjectModel.loadInVersionOrder(
            in: url, suffix: ".mom", none: "no .mom versions inside; is this a compiled model?"
        ) { (file) throws(ModelErrors) in
            try importModel(at: file)
        }
        let info = try versionInfo(ofModelAt: url)
        for i in versions.indices { versions[i].declaredVersionHashes = info?.versionHashes[versions[i].version] }
        return (versions, info)
    }

    /// The `VersionInfo.plist` of the `.momd` at `url`; nil when it has none.
    public static func versionInfo(ofModelAt url: URL) throws(ModelErrors) -> VersionInfo? {
        let plistURL = url.appendingPathComponent("VersionInfo.plist")
        let file = "\(url.lastPathComponent)/VersionInfo.plist"
        guard let data = FileManager.default.contents(atPath: plistURL.path) else { return nil }
        guard let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] else {
            throw ModelErrors([
                ModelError(.syntax, file: file, path: "", message: "not a property list of version information")
            ])
        }
        var info = VersionInfo(
            currentVersion: plist["NSManagedObjectModel_CurrentVersionName"] as? String, versionHashes: [:])
        for (version, value) in plist["NSManagedObjectModel_VersionHashes"] as? [String: Any] ?? [:] {
            guard let hashes = value as? [String: Any] else {
                throw ModelErrors([
                    ModelError(
                        .syntax, file: file, path: "NSManagedObjectModel_VersionHashes.\(version)",
                        message: "expected a dictionary of entity hashes")
                ])
            }
            info.versionHashes[version] = hashes.compactMapValues { $0 as? Data }
        }
        return info
    }

    /// Reads an archived `NSManagedObjectModel`.
    public static func parse(_ data: Data, version: String, file: String? = nil) throws(ModelErrors) -> ObjectModel {
        var reader = MomReader(file: file)
        var model = ObjectModel(version: version, entities: [])
        do throws(ArchiveError) {
            let root = try KeyedArchive(data: data).topObject()
            guard root.classHierarchy.contains("NSManagedObjectModel") else {
                throw ArchiveError("\(root.path): \(root.describe()), not a compiled model (NSManagedObjectModel)")
            }
            for (name, value) in try root.required("NSEntities").entries().sorted(by: { $0.key < $1.key }) {
                guard let entity = try reader.entity(name, value) else { continue }
                if model.entity(named: entity.name) != nil {
                    reader.fail("entities.\(entity.name)", "two entities are named \(entity.name)")
                    continue
                }
                model.entities.append(entity)
            }
            // A store's model cache archives the model as it is at run time: a sub-entity
            // lists its inherited properties too, as copies. A sub-entity cannot redeclare
            // a property, so a name an ancestor has is an inherited one.
            let declared = model
            for i in model.entities.indices where model.entities[i].parent != nil {
                let inherited = Set(
                    declared.ancestors(of: declared.entities[i]).flatMap {
                        $0.attributes.map(\.name) + $0.relationships.map(\.name)
                    })
                model.entities[i].attributes.removeAll { inherited.contains($0.name) }
                model.entities[i].relationships.removeAll { inherited.contains($0.name) }
            }
            if let identifiers = try root.value(forKey: "NSVersionIdentifiers") {
                model.versionIdentifiers = try identifiers.elements().compactMap(\.stringValue).sorted()
            }
            if let configurations = try root.value(forKey: "NSConfigurations") {
                var result: [String: [String]] = [:]
                for (name, members) in try configurations.entries() {
                    for member in try members.elements() {
                        if let entity = try member.string(forKey: "NSEntityName") {
                            result[name, default: []].append(entity)
                        }
                    }
                }
                model.configurations = result
            }
        } catch {
            throw ModelErrors([
                ModelError(
                    .syntax, file: file, path: "", message: "not a compiled model Remodel can read: \(error.message)")
            ])
        }
        if !reader.errors.isEmpty { throw ModelErrors(reader.errors) }
        return model
    }
}

/// Turns archived entity and property descriptions into Remodel's.
private struct MomReader {
    let file: String?
    var errors: [ModelError] = []

    init(file: String?) { self.file = file }

    mutating func fail(_ path: String, _ message: String) {
        errors.append(ModelError(file: file, path: path, message: message))
    }

    mutating func entity(_ name: String, _ value: ArchivedValue) throws(ArchiveError) -> EntityDescription? {
        var entity = EntityDescription(name: try value.string(forKey: "NSEntityName") ?? name)
        let path = "entities.\(entity.name)"
        entity.parent = try value.value(forKey: "NSSuperentity").map { (s) throws(ArchiveError) in
            try s.required("NSEntityName").stringValue ?? ""
        }
        entity.isAbstract = try value.bool(forKey: "NSIsAbstract") ?? false
        entity.renamingIdentifier = try renaming(value, entity.name)
        entity.versionHashModifier = try nonEmpty(value.string(forKey: "NSVersionHashModifier"))
        entity.userInfo = try userInfo(value, path)
        if let tuples = try value.value(forKey: "NSUniqueTuples") {
            for tuple in try tuples.elements() {
                let names = try tuple.elements().compactMap(\.stringValue)
                if !names.isEmpty { entity.uniquenessConstraints.append(names) }
            }
        }
        if let indexes = try value.value(forKey: "NSFetchIndexDescriptions") {
            for index in try indexes.elements() {
                var properties: [String] = []
                for element in try index.value(forKey: "NSIndexElements")?.elements() ?? [] {
                    if let property = try element.string(forKey: "NSPropertyName") { properties.append(property) }
                }
                entity.fetchIndexes.append(
                    FetchIndexDescription(name: try index.string(forKey: "NSIndexName"), properties: properties))
            }
        }
        // Properties in name order, as Xcode lists them; the archive's dictionary order is
        // a hash order.
        for (key, property) in try value.required("NSProperties").entries().sorted(by: { $0.key < $1.key }) {
            let hierarchy = property.classHierarchy
            if hierarchy.contains("NSRelationshipDescription") {
                if let r = try relationship(key, property, path) { entity.relationships.append(r) }
            } else if hierarchy.contains("NSFetchedPropertyDescription") {
                entity.fetchedProperties.append(try fetchedProperty(key, property))
            } else if hierarchy.contains("NSAttributeDescription") {
                if let a = try attribute(key, property, path) { entity.attributes.append(a) }
            } else {
                fail(
                    "\(path).\(key)",
                    "\(property.describe()), a kind of property Remodel does not know; the file may come from a newer Xcode"
                )
            }
        }
        return entity
    }

    mutating func attribute(_ key: String, _ value: ArchivedValue, _ entityPath: String) throws(ArchiveError)
        -> AttributeDescription?
    {
        let name = try value.string(forKey: "NSPropertyName") ?? key
        let path = "\(entityPath).attributes.\(name)"
        let code = try value.integer(forKey: "NSAttributeType") ?? 0
        guard let type = AttributeType.allCases.first(where: { Int64($0.coreDataCode) == code }) else {
            fail(
                path,
                "the attribute type \(code) (NSAttributeType) is not one Remodel knows; it stores "
                    + AttributeType.storableCases.map(\.xcodeName).joined(separator: ", "))
            return nil
        }
        var a = AttributeDescription(name: name, type: type)
        try readCommon(value, name) {
            a.isOptional = $0; a.isTransient = $1; a.renamingIdentifier = $2; a.versionHashModifier = $3
        }
        a.userInfo = try userInfo(value, path)
        a.valueTransformerName = try value.string(forKey: "NSValueTransformerName")
        // NSAttributeDescription's flags: 1 a maximum, 2 a minimum, 4 external binary data,
        // 16 preserve after deletion, 32 a file-backed future.
        let flags = try value.integer(forKey: "NSFlagsKey") ?? 0
        a.allowsExternalBinaryDataStorage = flags & 4 != 0
        a.preservesValueInHistoryOnDeletion = flags & 16 != 0
        if flags & 1 != 0 { a.maxValue = try bound(value, "NSMaxValueName", type) }
        if flags & 2 != 0 { a.minValue = try bound(value, "NSMinValueName", type) }
        if let defaultValue = try value.value(forKey: "NSDefaultValue") {
            if [.transformable, .undefined, .composite].contains(type), (try? defaultValue.foundationValue()) == nil {
                a.unreadableDefaultClass = defaultValue.className ?? "object"
            } else {
                a.defaultValue = try self.defaultValue(defaultValue, type, path + ".default")
            }
        }
        if value.classHierarchy.contains("NSDerivedAttributeDescription") {
            let expression = try value.value(forKey: "NSDerivationExpression")
            a.derivationExpression =
                try expression.map { (e) throws(ArchiveError) in try FormatExpression(archived: e).description } ?? ""
        }
        a.validationPredicates = try validationPredicates(value)
        return a
    }

    mutating func relationship(_ key: String, _ value: ArchivedValue, _ entityPath: String) throws(ArchiveError)
        -> RelationshipDescription?
    {
        let name = try value.string(forKey: "NSPropertyName") ?? key
        let path = "\(entityPath).relationships.\(name)"
        let destinationName = try value.string(forKey: "_NSDestinationEntityName")
        var destination = destinationName
        if destination == nil { destination = try nameOf(value, "NSDestinationEntity", "NSEntityName") }
        guard let destination else {
            fail(path, "no destination entity")
            return nil
        }
        var inverse = try value.string(forKey: "_NSInverseRelationshipName")
        if inverse == nil { inverse = try nameOf(value, "NSInverseRelationship", "NSPropertyName") }
        // A model built in code may set maxCount to NSUIntegerMax (no bound), which the
        // archive holds as -1: kept as UInt32.max, a bound no count reaches, which hashes
        // as Core Data hashes it (the hash takes the low 32 bits) and a JSON model holds.
        var maxCount = Int(try value.integer(forKey: "NSMaxCount") ?? 0)
        if maxCount < 0 { maxCount = Int(UInt32.max) }
        var r = RelationshipDescription(name: name, destination: destination, inverse: inverse, isToMany: maxCount != 1)
        try readCommon(value, name) {
            r.isOptional = $0; r.isTransient = $1; r.renamingIdentifier = $2; r.versionHashModifier = $3
        }
        r.userInfo = try userInfo(value, path)
        r.isOrdered = try value.bool(forKey: "NSIsOrdered") ?? false
        r.minCount = Int(try value.integer(forKey: "NSMinCount") ?? 0)
        r.maxCount = r.isToMany ? maxCount : 0
        switch try value.integer(forKey: "NSDeleteRule") ?? 1 {
        case 0: r.deleteRule = .noAction
        case 1: r.deleteRule = .nullify
        case 2: r.deleteRule = .cascade
        case 3: r.deleteRule = .deny
        case let rule:
            fail(
                path,
                "unknown delete rule \(rule) (NSDeleteRule); Core Data's are 0 no action, 1 nullify, 2 cascade, 3 deny")
        }
        if !(try validationPredicates(value)).isEmpty {
            fail(path, "validation predicates on a relationship, which Remodel cannot carry")
        }
        return r
    }

    func fetchedProperty(_ key: String, _ value: ArchivedValue) throws(ArchiveError) -> FetchedPropertyDescription {
        let name = try value.string(forKey: "NSPropertyName") ?? key
        guard let request = try value.value(forKey: "NSFetchRequest") else {
            return FetchedPropertyDescription(name: name, entity: "?")
        }
        let entity = try nameOf(request, "NSEntity", "NSEntityName")
        let predicate = try request.value(forKey: "NSPredicate")
        return FetchedPropertyDescription(
            name: name, entity: entity ?? "?",
            predicate: try predicate.map { (p) throws(ArchiveError) in try FormatPredicate(archived: p).description })
    }

    /// What every property archives: optional, transient, renaming identifier (the
    /// compiler writes the property's own name when there is none), version hash modifier.
    private func readCommon(
        _ value: ArchivedValue, _ name: String,
        _ set: (Bool, Bool, String?, String?) -> Void
    ) throws(ArchiveError) {
        set(
            try value.bool(forKey: "NSIsOptional") ?? false, try value.bool(forKey: "NSIsTransient") ?? false,
            try renaming(value, name), try nonEmpty(value.string(forKey: "NSVersionHashModifier")))
    }

    /// The name (`nameKey`) of the object under `key`: a relationship's destination entity.
    private func nameOf(_ value: ArchivedValue, _ key: String, _ nameKey: String) throws(ArchiveError) -> String? {
        guard let object = try value.value(forKey: key) else { return nil }
        return try object.string(forKey: nameKey)
    }

    private func renaming(_ value: ArchivedValue, _ name: String) throws(ArchiveError) -> String? {
        guard let identifier = try value.string(forKey: "NSRenamingIdentifier"), identifier != name else { return nil }
        return identifier
    }

    private func nonEmpty(_ text: String?) -> String? { text?.isEmpty == false ? text : nil }

    private mutating func userInfo(_ value: ArchivedValue, _ path: String) throws(ArchiveError) -> [String: Value] {
        guard let info = try value.value(forKey: "NSUserInfo") else { return [:] }
        guard case .dictionary(let dictionary) = try info.foundationValue() else {
            fail(path + ".userInfo", "expected a dictionary, found \(info.describe())")
            return [:]
        }
        return dictionary
    }

    /// A bound as `NSAttributeDescription` archives it: an integer for integer types and
    /// string lengths, a double otherwise (a date's as seconds since 2001).
    private func bound(_ value: ArchivedValue, _ key: String, _ type: AttributeType) throws(ArchiveError) -> Value? {
        guard let raw = try value.value(forKey: key) else { return nil }
        let number: Double
        switch raw.plist {
        case .integer(let i): number = Double(i)
        case .real(let d): number = d
        default: throw ArchiveError("\(raw.path): expected a number, found \(raw.describe())")
        }
        switch type {
        case .int16, .int32, .int64, .string, .binary, .uri: return .integer(Int64(exactly: number.rounded()) ?? 0)
        case .date: return .date(Date(timeIntervalSinceReferenceDate: number))
        case .decimal: return .decimal(Value.decimal(exactly: number))
        default: return .double(number)
        }
    }

    /// An archived default value, as the attribute's type holds it.
    private mutating func defaultValue(_ raw: ArchivedValue, _ type: AttributeType, _ path: String) throws(ArchiveError)
        -> Value?
    {
        let value = try raw.foundationValue()
        switch (type, value) {
        case (_, .null): return nil
        case (.int16, .integer), (.int32, .integer), (.int64, .integer), (.double, .double), (.float, .double),
            (.string, .string), (.uri, .string), (.uuid, .string), (.date, .date), (.binary, .data),
            (.transformable, _), (.undefined, _), (.objectID, _), (.composite, _), (.decimal, .decimal):
            return value
        case (.int16, .bool(let b)), (.int32, .bool(let b)), (.int64, .bool(let b)): return .integer(b ? 1 : 0)
        case (.int16, .double(let d)), (.int32, .double(let d)), (.int64, .double(let d)):
            if let i = Int64(exactly: d) { return .integer(i) }
        case (.double, .integer(let i)), (.float, .integer(let i)): return .double(Double(i))
        case (.decimal, .integer(let i)): return .decimal(Decimal(i))
        case (.decimal, .double(let d)): return .decimal(Value.decimal(exactly: d))
        case (.boolean, .bool): return value
        case (.boolean, .integer(let i)): return .bool(i != 0)
        default: break
        }
        fail(path, "the default value \(raw.describe()) is not a \(type.xcodeName) value")
        return nil
    }

    /// The archived validation predicates as format strings.
    private func validationPredicates(_ value: ArchivedValue) throws(ArchiveError) -> [String] {
        guard let list = try value.value(forKey: "NSValidationPredicates") else { return [] }
        return try list.elements().map { (p) throws(ArchiveError) in try FormatPredicate(archived: p).description }
    }
}
