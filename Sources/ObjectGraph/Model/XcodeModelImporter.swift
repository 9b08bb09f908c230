import ExpressionLanguage
import Foundation
#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Imports models from Xcode: an `.xcdatamodel` folder's `contents` XML, or every version
/// of an `.xcdatamodeld` folder.
///
/// Everything the store and migrations need is kept: entities, inheritance, attributes
/// (type, optional, transient, default, min/max, renaming identifier from `elementID`,
/// version hash modifier, external storage, transformer name, userInfo) and relationships
/// (destination, inverse, to-many, ordered, counts, delete rule, renaming identifier).
/// Derived attributes, preserve-after-deletion, uniqueness constraints, fetched properties
/// configurations and fetch indexes are carried on the model, each with a warning
/// (``ObjectModel/warnings(file:)``) saying what Remodel does with it; diagram
/// layout, code generation settings and stored fetch requests are skipped. Only what would
/// lose data is refused (a stored composite attribute), with why (docs/model-format.md).
public enum XcodeModelImporter {
    /// The model in an `.xcdatamodel` folder (or a `contents` file); its version is the
    /// folder's name without the extension.
    public static func importModel(at url: URL) throws(ModelErrors) -> ObjectModel {
        var isDirectory: ObjCBool = false
        // A path that does not exist is read as a file, whose read below says so.
        let isFolder =
            FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
        let contents = isFolder ? url.appendingPathComponent("contents") : url
        let folder = isFolder ? url : url.deletingLastPathComponent()
        let version = folder.deletingPathExtension().lastPathComponent
        guard let data = FileManager.default.contents(atPath: contents.path) else {
            throw ModelErrors([
                ModelError(.unreadable, file: contents.path, path: "", message: "cannot read the model's contents file")
            ])
        }
        let model = try parse(data, version: version, file: "\(folder.lastPathComponent)/contents")
        try model.validate(file: "\(folder.lastPathComponent)/contents")
        return model
    }

    /// Every version in an `.xcdatamodeld` folder, oldest first as Xcode names them (the
    /// unnumbered base name, then numeric-aware order: `Model`, `Model 2`, … `Model 10`; see
    /// ``ObjectModel/versionPrecedes(_:_:)``), and the name of the current version (from
    /// `.xccurrentversion`; the last one when absent).
    public static func importVersions(at url: URL) throws(ModelErrors) -> (versions: [ObjectModel], current: String) {
        let versions = try ObjectModel.loadInVersionOrder(
            in: url, suffix: ".xcdatamodel", none: "no .xcdatamodel versions inside"
        ) { (file) throws(ModelErrors) in
            try importModel(at: file)
        }
        var current = versions.last!.version
        if let data = FileManager.default.contents(atPath: url.appendingPathComponent(".xccurrentversion").path),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
            let name = plist["_XCCurrentVersionName"] as? String
        {
            current = (name as NSString).deletingPathExtension
        }
        return (versions, current)
    }

    /// Parses `contents` XML.
    public static func parse(_ data: Data, version: String, file: String? = nil) throws(ModelErrors) -> ObjectModel {
        let delegate = ContentsParser(file: file)
        if let problem = XMLInput.parse(data, with: delegate), delegate.errors.isEmpty {
            throw ModelErrors([ModelError(.syntax, file: file, path: "", message: problem.message)])
        }
        if !delegate.sawModel && delegate.errors.isEmpty {
            delegate.errors.append(
                ModelError(.syntax, file: file, path: "", message: "not a Core Data model: no <model> element"))
        }
        if !delegate.errors.isEmpty { throw ModelErrors(delegate.errors) }
        var model = ObjectModel(version: version, entities: delegate.entities)
        let names = Set(model.entities.map(\.name))
        for (name, members) in delegate.configurations.sorted(by: { $0.key < $1.key }) {
            for member in members where !names.contains(member) {
                delegate.errors.append(
                    ModelError(
                        file: file, path: "configuration \(name)",
                        message:
                            "unknown memberEntity '\(member)'; the entities are \(names.sorted().joined(separator: ", "))"
                    ))
            }
        }
        if !delegate.errors.isEmpty { throw ModelErrors(delegate.errors) }
        model.configurations = delegate.configurations
        model.versionIdentifiers = delegate.versionIdentifiers
        return model
    }
}

private final class ContentsParser: XMLInput.Reader {
    let file: String?
    var entities: [EntityDescription] = []
    var configurations: [String: [String]] = [:]
    var errors: [ModelError] = []
    var sawModel = false
    var versionIdentifiers: [String] = []

    private enum Owner { case entity, attribute, relationship, other }
    private var stack: [String] = []
    private var current: EntityDescription?
    private var currentAttribute: AttributeDescription?
    private var currentRelationship: RelationshipDescription?
    private var userInfoOwner: Owner?
    private var currentConfiguration: String?
    private var currentConstraint: [String]?
    private var currentFetchedProperty: String?
    /// A fetch index or compound index being read: its name and its properties.
    private var currentIndex: (name: String?, properties: [String])?

    init(file: String?) { self.file = file }

    private func fail(_ path: String, _ message: String) {
        errors.append(ModelError(file: file, path: path, message: message))
    }

    private static func yes(_ value: String?) -> Bool { value == "YES" }

    override func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes a: [String: String] = [:]
    ) {
        defer { stack.append(name) }
        let parent = stack.last
        switch (parent, name) {
        case (nil, "model"):
            sawModel = true
            // Core Data's versionIdentifiers: the one identifier, when the attribute is there.
            versionIdentifiers = a["userDefinedModelVersionIdentifier"].map { [$0] } ?? []
        case ("model", "entity"):
            var entity = EntityDescription(name: a["name"] ?? "")
            entity.parent = a["parentEntity"]
            entity.isAbstract = Self.yes(a["isAbstract"])
            entity.renamingIdentifier = a["elementID"]
            entity.versionHashModifier = a["versionHashModifier"]
            current = entity
        case ("entity", "attribute"):
            currentAttribute = attribute(a)
        case ("entity", "relationship"):
            currentRelationship = relationship(a)
        case ("entity", "fetchedProperty"):
            currentFetchedProperty = a["name"] ?? ""
        case ("fetchedProperty", "fetchRequest"):
            guard let name = currentFetchedProperty else { return }
            guard let target = a["entity"] else {
                fail("entity \(current?.name ?? "?") fetchedProperty \(name)", "no entity in its fetchRequest")
                return
            }
            current?.fetchedProperties.append(
                FetchedPropertyDescription(name: name, entity: target, predicate: a["predicateString"]))
        case ("uniquenessConstraints", "uniquenessConstraint"):
            currentConstraint = []
        case ("uniquenessConstraint", "constraint"):
            if let value = a["value"] { currentConstraint?.append(value) }
        case ("entity", "fetchIndex"), ("compoundIndexes", "compoundIndex"):
            currentIndex = (a["name"], [])
        case ("fetchIndex", "fetchIndexElement"):
            if let property = a["property"] ?? a["expression"] { currentIndex?.properties.append(property) }
        case ("compoundIndex", "index"):
            if let value = a["value"] { currentIndex?.properties.append(value) }
        case ("model", "configuration"):
            currentConfiguration = a["name"] ?? ""
            configurations[currentConfiguration!] = []
        case ("configuration", "memberEntity"):
            if let configuration = currentConfiguration, let name = a["name"] {
                configurations[configuration]?.append(name)
            }
        case (_, "userInfo"):
            switch parent {
            case "entity": userInfoOwner = .entity
            case "attribute": userInfoOwner = .attribute
            case "relationship": userInfoOwner = .relationship
            default: userInfoOwner = .other
            }
        case ("userInfo", "entry"):
            guard let key = a["key"] else { return }
            let value = Value.string(a["value"] ?? "")
            switch userInfoOwner {
            case .entity: current?.userInfo[key] = value
            case .attribute: currentAttribute?.userInfo[key] = value
            case .relationship: currentRelationship?.userInfo[key] = value
            default: break
            }
        default:
            break
        }
    }

    override func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?)
    {
        stack.removeLast()
        switch (stack.last, name) {
        case ("model", "entity"):
            if let current { entities.append(current) }
            current = nil
        case ("entity", "attribute"):
            if let currentAttribute { current?.attributes.append(currentAttribute) }
            currentAttribute = nil
        case ("entity", "relationship"):
            if let currentRelationship { current?.relationships.append(currentRelationship) }
            currentRelationship = nil
        case ("entity", "fetchedProperty"):
            currentFetchedProperty = nil
        case ("uniquenessConstraints", "uniquenessConstraint"):
            if let currentConstraint, !currentConstraint.isEmpty {
                current?.uniquenessConstraints.append(currentConstraint)
            }
            currentConstraint = nil
        case ("entity", "fetchIndex"), ("compoundIndexes", "compoundIndex"):
            if let index = currentIndex {
                current?.fetchIndexes.append(FetchIndexDescription(name: index.name, properties: index.properties))
            }
            currentIndex = nil
        case ("model", "configuration"):
            currentConfiguration = nil
        default:
            break
        }
    }

    private func attribute(_ a: [String: String]) -> AttributeDescription? {
        let entityName = current?.name ?? "?"
        let name = a["name"] ?? ""
        let path = "entity \(entityName) attribute \(name)"
        let typeName = a["attributeType"] ?? "Undefined"
        guard let type = AttributeType(xcodeName: typeName) else {
            fail(
                path,
                "the attribute type '\(typeName)' is not supported; Remodel stores "
                    + AttributeType.storableCases.map(\.xcodeName).joined(separator: ", "))
            return nil
        }
        var attribute = AttributeDescription(name: name, type: type)
        attribute.isOptional = Self.yes(a["optional"])
        attribute.isTransient = Self.yes(a["transient"])
        attribute.renamingIdentifier = a["elementID"]
        attribute.versionHashModifier = a["versionHashModifier"]
        attribute.allowsExternalBinaryDataStorage = Self.yes(a["allowsExternalBinaryDataStorage"])
        attribute.valueTransformerName = a["valueTransformerName"]
        if Self.yes(a["derived"]) { attribute.derivationExpression = a["derivationExpression"] ?? "" }
        attribute.preservesValueInHistoryOnDeletion = Self.yes(a["preserveAfterDeletion"])
        if let pattern = a["regularExpressionString"], !pattern.isEmpty {
            attribute.validationPredicates = ["SELF MATCHES \(FormatExpression(.constant(.string(pattern))))"]
        }
        if type == .date, let interval = a["defaultDateTimeInterval"].flatMap(Double.init) {
            attribute.defaultValue = .date(Date(timeIntervalSinceReferenceDate: interval))
        } else if let text = a["defaultValueString"] {
            attribute.defaultValue = parseValue(text, type, path + " defaultValueString")
        }
        if let text = a["minValueString"] { attribute.minValue = parseBound(text, type, path + " minValueString") }
        if let text = a["maxValueString"] { attribute.maxValue = parseBound(text, type, path + " maxValueString") }
        return attribute
    }

    private func parseValue(_ text: String, _ type: AttributeType, _ path: String) -> Value? {
        switch type {
        case .int16, .int32, .int64:
            if let i = Int64(text) { return .integer(i) }
            // Xcode keeps the text when a Double becomes an Integer ("0.0"), and a Boolean's
            // YES/NO when a Boolean does: integral doubles and YES/NO are integers.
            if let d = Double(text), d.rounded() == d, let i = Int64(exactly: d) { return .integer(i) }
            if text == "YES" || text == "NO" { return .integer(text == "YES" ? 1 : 0) }
        case .double, .float:
            if let d = Double(text) { return .double(d) }
        case .decimal:
            if let d = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) { return .decimal(d) }
        case .boolean:
            if text == "YES" || text == "NO" { return .bool(text == "YES") }
            if let d = Double(text), d == 0 || d == 1 { return .bool(d == 1) }
        case .string, .uri, .uuid:
            return .string(text)
        case .date:
            if let d = Double(text) { return .date(Date(timeIntervalSinceReferenceDate: d)) }
        case .binary, .transformable, .undefined, .objectID, .composite:
            break
        }
        fail(path, "'\(text)' is not a valid \(type.xcodeName) value")
        return nil
    }

    private func parseBound(_ text: String, _ type: AttributeType, _ path: String) -> Value? {
        switch type {
        case .string, .binary:
            if let i = Int64(text) { return .integer(i) }
            fail(path, "'\(text)' is not a length")
            return nil
        default:
            return parseValue(text, type, path)
        }
    }

    private func relationship(_ a: [String: String]) -> RelationshipDescription? {
        let entityName = current?.name ?? "?"
        let name = a["name"] ?? ""
        guard let destination = a["destinationEntity"] else {
            fail("entity \(entityName) relationship \(name)", "no destinationEntity")
            return nil
        }
        var r = RelationshipDescription(
            name: name, destination: destination, inverse: a["inverseName"],
            isToMany: Self.yes(a["toMany"]))
        r.isOrdered = Self.yes(a["ordered"])
        r.isOptional = Self.yes(a["optional"])
        r.isTransient = Self.yes(a["transient"])
        // Xcode writes maxCount="1" for every to-one; only to-many counts mean anything.
        if r.isToMany {
            r.minCount = a["minCount"].flatMap(Int.init) ?? 0
            r.maxCount = a["maxCount"].flatMap(Int.init) ?? 0
        }
        // A to-one's minCount (`minCount="1"` on an optional to-one) is in Apple's version hash.
        if !r.isToMany { r.minCount = a["minCount"].flatMap(Int.init) ?? 0 }
        if let rule = a["deletionRule"] {
            if let parsed = DeleteRule(xcodeName: rule) {
                r.deleteRule = parsed
            } else {
                fail("entity \(entityName) relationship \(name)", "unknown deletionRule '\(rule)'")
            }
        }
        r.renamingIdentifier = a["elementID"]
        r.versionHashModifier = a["versionHashModifier"]
        return r
    }
}
