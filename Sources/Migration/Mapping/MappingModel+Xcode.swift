import ExpressionLanguage
import Foundation
import ObjectGraph

extension MappingModel {
    /// The bytes of `url`, part of the mapping file `file`, or the error that says
    /// `named` cannot be read.
    static func contents(of url: URL, file: String, named: String) throws(MappingErrors) -> Data {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw MappingErrors([
                MappingError(
                    .unreadable, file: file, path: "",
                    message: "cannot read \(named): no such file, or it is not readable")
            ])
        }
        return data
    }

    /// Reads an Xcode mapping model (an `.xcmappingmodel` bundle, or its `xcmapping.xml`)
    /// against the model versions it maps, and gives the mapping Xcode's mapping compiler
    /// would: what the file leaves blank is filled in as a compiled `.cdm` shows it
    /// (docs/mapping-format.md, "Xcode mapping models").
    ///
    ///     let versions = try ObjectModel.loadVersions(at: URL(fileURLWithPath: "Model.xcdatamodeld"))
    ///     let mapping = try MappingModel.load(xcodeMappingModelAt: url, models: versions)
    ///
    /// - Parameter models: the model versions; the mapping names its source and destination
    ///   version by the `.xcdatamodel` paths it was made from.
    /// - Throws: every problem found, each naming the file and the object (`line 52,
    ///   XDDEVENTITYMAPPING z104`) or the entity mapping it is in.
    public static func load(xcodeMappingModelAt url: URL, models: [ObjectModel]) throws(MappingErrors) -> MappingModel {
        let file = url.relativePath
        let xml = url.pathExtension == "xcmappingmodel" ? url.appendingPathComponent("xcmapping.xml") : url
        return try parse(
            xcodeMapping: try contents(of: xml, file: file, named: xml.lastPathComponent), file: file, models: models)
    }

    /// The mapping model in the `xcmapping.xml` bytes `data`, read as
    /// ``load(xcodeMappingModelAt:models:)`` reads a file's (errors name `file`).
    public static func parse(xcodeMapping data: Data, file: String, models: [ObjectModel]) throws(MappingErrors)
        -> MappingModel
    {
        let document: XcodeMappingDocument
        do throws(MappingDocumentError) {
            document = try XcodeMappingDocument(data: data)
        } catch {
            throw MappingErrors([MappingError(.syntax, file: file, path: "", message: error.message)])
        }
        var reader = XcodeMappingReader(file: file)
        let raw = reader.read(document)
        if !reader.errors.isEmpty { throw MappingErrors(reader.errors) }
        return try raw.compiled(file: file, models: models)
    }
}

/// A mapping model as Xcode's files state it, before the mapping compiler's fill-ins.
struct XcodeMapping {
    struct Entity {
        var name: String?
        var mappingNumber: Int
        var sourceEntity: String?
        var destinationEntity: String?
        /// `NSEntityMappingType` as stored (0: undefined, decided from the entities).
        var storedType: Int64 = 0
        var policy: String?
        var sourceExpression: FormatExpression?
        var filterPredicate: String?
        var attributes: [Property] = []
        var relationships: [Property] = []
        var userInfo: [String: Value] = [:]
        /// The entity version hashes a compiled mapping model records for its source and
        /// destination entity (nil for an added or removed entity, and in `.xcmappingmodel`s).
        var sourceHash: Data?
        var destinationHash: Data?
    }

    struct Property {
        var name: String
        var expression: FormatExpression?
        /// Xcode's "auto-generate value expression" flag.
        var autogenerates: Bool
        var userInfo: [String: Value] = [:]
        /// `sourcekeypath` and `sourcemappingname`, which Xcode's relationship inspector stores as text.
        var keyPath: String?
        var mappingName: String?
    }

    /// The model versions by the names the file gives, when it gives them.
    var sourceVersion: String?
    var destinationVersion: String?
    var entities: [Entity] = []

    /// `NSEntityMappingType`'s stored values.
    static let types: [Int64: MappingType] = [1: .custom, 2: .add, 3: .remove, 4: .copy, 5: .transform]

    /// The mapping with the compiler's fill-ins, against the versions it maps.
    func compiled(file: String, models: [ObjectModel]) throws(MappingErrors) -> MappingModel {
        let (source, destination) = try versions(file: file, models: models)
        let ordered = entities.enumerated().sorted {
            ($0.element.mappingNumber, $0.offset) < ($1.element.mappingNumber, $1.offset)
        }.map(\.element)
        var errors: [MappingError] = []
        // Names first: relationship fill-ins refer to other entity mappings by name.
        let names = ordered.map {
            $0.name ?? EntityMapping.defaultName(source: $0.sourceEntity, destination: $0.destinationEntity) ?? ""
        }
        var result: [EntityMapping] = []
        for (index, entity) in ordered.enumerated() {
            let name = names[index]
            let path = MappingPath.entityMapping(index, name)
            let sourceEntity = entity.sourceEntity.flatMap { source.entity(named: $0) }
            let destinationEntity = entity.destinationEntity.flatMap { destination.entity(named: $0) }
            let type: MappingType
            if let stored = Self.types[entity.storedType] {
                type = stored
            } else if entity.policy != nil {
                type = .custom
            } else if entity.sourceEntity == nil {
                type = .add
            } else if entity.destinationEntity == nil {
                type = .remove
            } else if let s = entity.sourceEntity, s == entity.destinationEntity {
                type = .copy
            } else {
                type = .transform
            }
            var mapping = EntityMapping(
                name: name, type: type, sourceEntity: entity.sourceEntity,
                destinationEntity: entity.destinationEntity, policy: entity.policy, userInfo: entity.userInfo)
            if let expression = entity.sourceExpression {
                mapping.sourceExpression = expression.description
            } else if let sourceName = entity.sourceEntity, type != .remove {
                let predicate = entity.filterPredicate ?? "TRUEPREDICATE"
                do throws(ExpressionError) {
                    _ = try FormatPredicate(parsing: predicate)
                } catch {
                    errors.append(MappingError(file: file, path: "\(path) .sourceExpression", expressionError: error))
                }
                mapping.sourceExpression = Self.standardFetch(of: sourceName, predicate: predicate).description
            }
            for property in entity.attributes.sorted(by: { $0.name < $1.name }) {
                var expression = property.expression
                if expression == nil, let sourceEntity,
                    source.allAttributes(of: sourceEntity).contains(where: { $0.name == property.name })
                {
                    expression = FormatExpression(.keyPath(operand: .variable("source"), path: [property.name]))
                }
                mapping.attributeMappings.append(
                    PropertyMapping(
                        name: property.name, valueExpression: expression?.description,
                        userInfo: property.userInfo))
            }
            for property in entity.relationships.sorted(by: { $0.name < $1.name }) {
                var expression = property.expression
                if expression == nil, let mappingName = property.mappingName, let keyPath = property.keyPath {
                    do throws(ExpressionError) {
                        expression = Self.lookup(mappingName, try FormatExpression(parsing: keyPath))
                    } catch {
                        errors.append(
                            MappingError(
                                file: file,
                                path: MappingPath.property(index, name, "relationshipMappings", property.name),
                                expressionError: error))
                    }
                } else if expression == nil, property.autogenerates, let sourceEntity, let destinationEntity,
                    destination.allRelationships(of: destinationEntity).contains(where: { $0.name == property.name }),
                    let sourceRelationship = source.allRelationships(of: sourceEntity).first(where: {
                        $0.name == property.name
                    })
                {
                    // The entity mappings that migrate what the source relationship points to.
                    let targets =
                        source.entity(named: sourceRelationship.destination).map {
                            source.descendants(of: $0).map(\.name)
                        } ?? []
                    let candidates = ordered.indices.filter {
                        ordered[$0].sourceEntity.map(targets.contains) == true && ordered[$0].destinationEntity != nil
                    }
                    let instances = FormatExpression(.keyPath(operand: .variable("source"), path: [property.name]))
                    if candidates.count == 1 {
                        expression = Self.lookup(names[candidates[0]], instances)
                    } else if candidates.count > 1 {
                        // Several mappings migrate them (an entity and its sub-entities):
                        // each instance is looked up through the mapping that migrated it.
                        expression = Self.relationshipLookup(sourceRelationship.name, instances)
                    }
                }
                mapping.relationshipMappings.append(
                    PropertyMapping(
                        name: property.name, valueExpression: expression?.description,
                        userInfo: property.userInfo))
            }
            result.append(mapping)
        }
        if !errors.isEmpty { throw MappingErrors(errors) }
        return MappingModel(
            sourceModel: source.version, destinationModel: destination.version, entityMappings: result, file: file)
    }

    /// The model versions the mapping maps: the ones it names, or else the one pair of
    /// consecutive versions that has every entity it maps.
    private func versions(file: String, models: [ObjectModel]) throws(MappingErrors) -> (ObjectModel, ObjectModel) {
        let all = models.map(\.version).joined(separator: ", ")
        if let sourceVersion, let destinationVersion {
            let source = models.first { $0.version == sourceVersion },
                destination = models.first { $0.version == destinationVersion }
            guard let source, let destination else {
                let missing = [source == nil ? sourceVersion : nil, destination == nil ? destinationVersion : nil]
                    .compactMap { $0 }
                throw MappingErrors([
                    MappingError(
                        .step, file: file, path: "",
                        message:
                            "the mapping model maps \(sourceVersion) → \(destinationVersion), but the models have no version named \(missing.joined(separator: " or ")) (the versions are \(all)); pass the models the mapping was made from"
                    )
                ])
            }
            return (source, destination)
        }
        let sourceNames = Set(entities.compactMap(\.sourceEntity)),
            destinationNames = Set(entities.compactMap(\.destinationEntity))
        var fits = zip(models, models.dropFirst()).filter { pair in
            sourceNames.allSatisfy { pair.0.entity(named: $0) != nil }
                && destinationNames.allSatisfy { pair.1.entity(named: $0) != nil }
        }
        // A compiled mapping model records its entities' version hashes: as Core Data, use
        // it only for the versions it was compiled from.
        if entities.contains(where: { $0.sourceHash != nil || $0.destinationHash != nil }), !fits.isEmpty {
            let byHashes = fits.filter { hashDifferences($0.0, $0.1).isEmpty }
            guard !byHashes.isEmpty else {
                let report = fits.map {
                    "\($0.0.version) → \($0.1.version): \(hashDifferences($0.0, $0.1).joined(separator: "; "))"
                }
                throw MappingErrors([
                    MappingError(
                        .step, file: file, path: "",
                        message:
                            "the compiled mapping model was compiled from other versions of the models: its entity version hashes are not those of "
                            + report.joined(separator: ", nor of ")
                            + "; Core Data would not use it either: compile it again from these models, or give the models it was compiled from"
                    )
                ])
            }
            fits = byHashes
        }
        guard fits.count == 1 else {
            let which =
                fits.isEmpty
                ? "no pair of consecutive versions has all its entities"
                : "it fits \(fits.map { "\($0.0.version) → \($0.1.version)" }.joined(separator: " and "))"
            throw MappingErrors([
                MappingError(
                    .step, file: file, path: "",
                    message:
                        "the mapping model does not say which versions it maps, and \(which) (the versions are \(all))")
            ])
        }
        return fits[0]
    }

    /// Where the entity version hashes the mapping records differ from `source`'s and
    /// `destination`'s, one line per entity mapping.
    private func hashDifferences(_ source: ObjectModel, _ destination: ObjectModel) -> [String] {
        let sourceHashes = source.storeVersionHashes, destinationHashes = destination.storeVersionHashes
        var differences: [String] = []
        for entity in entities {
            if let name = entity.sourceEntity, let hash = entity.sourceHash, sourceHashes[name] != hash {
                differences.append("\(name) of \(source.version) differs")
            }
            if let name = entity.destinationEntity, let hash = entity.destinationHash, destinationHashes[name] != hash {
                differences.append("\(name) of \(destination.version) differs")
            }
        }
        return differences
    }

    /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "<entity>", "<predicate>"), $manager.sourceContext, NO)`.
    static func standardFetch(of entity: String, predicate: String) -> FormatExpression {
        let request = managerCall(
            MappingCompiler.fetchSelector, .constant(.string(entity)), .constant(.string(predicate)))
        let context = FormatExpression(.keyPath(operand: .variable("manager"), path: ["sourceContext"]))
        return FormatExpression(.fetch(request: request, context: context, countOnly: .constant(.bool(false))))
    }

    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "<mapping>", <instances>)`.
    static func lookup(_ mapping: String, _ instances: FormatExpression) -> FormatExpression {
        managerCall(
            "destinationInstancesForEntityMappingNamed:sourceInstances:", .constant(.string(mapping)), instances)
    }

    /// `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "<relationship>", <instances>)`.
    static func relationshipLookup(_ relationship: String, _ instances: FormatExpression) -> FormatExpression {
        managerCall(
            "destinationInstancesForSourceRelationshipNamed:sourceInstances:", .constant(.string(relationship)),
            instances)
    }

    /// `FUNCTION($manager, "<selector>", <arguments>…)`.
    static func managerCall(_ selector: String, _ arguments: FormatExpression...) -> FormatExpression {
        FormatExpression(
            .functionCall(target: .variable("manager"), selector: .constant(.string(selector)), arguments: arguments))
    }
}

/// Turns an `xcmapping.xml`'s objects into an ``XcodeMapping``, collecting every problem.
struct XcodeMappingReader {
    let file: String
    var errors: [MappingError] = []

    init(file: String) { self.file = file }

    private mutating func fail(_ object: XcodeMappingDocument.Object, _ message: String) {
        errors.append(MappingError(file: file, path: object.place, message: message))
    }

    mutating func read(_ document: XcodeMappingDocument) -> XcodeMapping {
        var mapping = XcodeMapping()
        let models = document.objects(ofType: "XDDEVMAPPINGMODEL")
        guard let model = models.first else {
            errors.append(
                MappingError(
                    .syntax, file: file, path: "", message: "not an Xcode mapping model: no XDDEVMAPPINGMODEL object"))
            return mapping
        }
        func version(_ attribute: String) -> String? {
            model.string(attribute).map { (($0 as NSString).lastPathComponent as NSString).deletingPathExtension }
        }
        mapping.sourceVersion = version("sourcemodelpath")
        mapping.destinationVersion = version("destinationmodelpath")
        var entityMappings = document.targets(of: model, "entitymappings")
        // Mappings that point at the model without being listed in it are still the model's.
        for object in document.objects(ofType: "XDDEVENTITYMAPPING")
        where !entityMappings.contains(where: { $0.id == object.id }) {
            entityMappings.append(object)
        }
        for object in entityMappings {
            var entity = XcodeMapping.Entity(
                name: object.string("name"), mappingNumber: Int(object.string("mappingnumber") ?? "") ?? Int.max,
                sourceEntity: object.string("sourcename"), destinationEntity: object.string("destinationname"),
                policy: object.string("migrationpolicyclassname"),
                filterPredicate: object.string("sourcefilterpredicatestring"))
            entity.sourceExpression = expression(object, "sourceexpressiondata")
            entity.userInfo = userInfo(object)
            entity.attributes = document.targets(of: object, "attributemappings").map { property($0) }
            entity.relationships = document.targets(of: object, "relationshipmappings").map { property($0) }
            mapping.entities.append(entity)
        }
        return mapping
    }

    private mutating func property(_ object: XcodeMappingDocument.Object) -> XcodeMapping.Property {
        if object.string("name") == nil { fail(object, "a property mapping without a name (the destination property)") }
        return XcodeMapping.Property(
            name: object.string("name") ?? "", expression: expression(object, "valueexpressiondata"),
            autogenerates: object.string("autogenerateexpression") == "1", userInfo: userInfo(object),
            keyPath: object.string("sourcekeypath"), mappingName: object.string("sourcemappingname"))
    }

    /// The keyed archive in the binary attribute `attribute` (base64 text), if there is one.
    private mutating func archive(_ object: XcodeMappingDocument.Object, _ attribute: String) -> ArchivedValue? {
        guard let text = object.attributes[attribute] else { return nil }
        guard let data = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
            fail(object, "the attribute '\(attribute)' is not base64 data")
            return nil
        }
        do throws(ArchiveError) {
            return try KeyedArchive(data: data).topObject()
        } catch {
            fail(object, "\(attribute): \(error)")
            return nil
        }
    }

    private mutating func expression(_ object: XcodeMappingDocument.Object, _ attribute: String) -> FormatExpression? {
        guard let archived = archive(object, attribute) else { return nil }
        do throws(ArchiveError) {
            return try FormatExpression(archived: archived)
        } catch {
            fail(object, "\(attribute): \(error.message)")
            return nil
        }
    }

    private mutating func userInfo(_ object: XcodeMappingDocument.Object) -> [String: Value] {
        guard let archived = archive(object, "userinfodata") else { return [:] }
        do throws(ArchiveError) {
            guard case .dictionary(let entries) = try archived.foundationValue() else {
                fail(object, "userinfodata: the user info is not a dictionary")
                return [:]
            }
            return entries
        } catch {
            fail(object, "userinfodata: \(error.message)")
            return [:]
        }
    }
}
