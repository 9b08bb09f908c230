import ExpressionLanguage
import Foundation
import ObjectGraph

extension MappingModel {
    /// Reads a compiled mapping model (`.cdm`, a keyed archive of `NSMappingModel`, as
    /// Xcode builds an `.xcmappingmodel`) against the model versions it maps.
    ///
    /// A `.cdm` does not name its versions; the step is the pair of consecutive versions
    /// that has every entity it maps and, as Core Data requires, the entity version hashes
    /// it records: a `.cdm` compiled from other versions of the models is an error that
    /// says which entities differ.
    public static func load(compiledMappingModelAt url: URL, models: [ObjectModel]) throws(MappingErrors)
        -> MappingModel
    {
        let file = url.relativePath
        let data = try contents(of: url, file: file, named: "the file")
        let mapping: XcodeMapping
        do throws(ArchiveError) {
            mapping = try XcodeMapping(compiled: try KeyedArchive(data: data).topObject())
        } catch {
            throw MappingErrors([MappingError(.syntax, file: file, path: "", message: error.message)])
        }
        return try mapping.compiled(file: file, models: models)
    }
}

extension XcodeMapping {
    /// The mapping an archived `NSMappingModel` holds; its expressions are complete, so the
    /// fill-ins of ``compiled(file:models:)`` find nothing to do.
    init(compiled root: ArchivedValue) throws(ArchiveError) {
        guard root.classHierarchy.contains("NSMappingModel") else {
            throw ArchiveError("\(root.path): \(root.describe()), not a compiled mapping model (NSMappingModel)")
        }
        self.init()
        for (index, value) in try root.required("NSEntityMappings").elements().enumerated() {
            var entity = Entity(
                name: try value.string(forKey: "NSMappingName"), mappingNumber: index,
                sourceEntity: try value.string(forKey: "NSSourceEntityName"),
                destinationEntity: try value.string(forKey: "NSDestinationEntityName"),
                storedType: try value.integer(forKey: "NSMappingType") ?? 0,
                policy: try value.string(forKey: "NSEntityMigrationPolicyClassName"))
            if let expression = try value.value(forKey: "NSSourceExpression") {
                entity.sourceExpression = try FormatExpression(archived: expression)
            }
            entity.userInfo = try Self.userInfo(value)
            entity.sourceHash = try value.data(forKey: "NSSourceEntityVersionHash")
            entity.destinationHash = try value.data(forKey: "NSDestinationEntityVersionHash")
            entity.attributes = try Self.properties(value, "NSAttributeMappings")
            entity.relationships = try Self.properties(value, "NSRelationshipMappings")
            entities.append(entity)
        }
    }

    private static func properties(_ entity: ArchivedValue, _ key: String) throws(ArchiveError) -> [Property] {
        guard let list = try entity.value(forKey: key) else { return [] }
        var properties: [Property] = []
        for value in try list.elements() {
            let expression = try value.value(forKey: "NSValueExpression").map { (v) throws(ArchiveError) in
                try FormatExpression(archived: v)
            }
            properties.append(
                Property(
                    name: try value.required("NSDestinationPropertyName").stringValue ?? "",
                    expression: expression, autogenerates: false, userInfo: try userInfo(value)))
        }
        return properties
    }

    private static func userInfo(_ value: ArchivedValue) throws(ArchiveError) -> [String: Value] {
        guard let info = try value.value(forKey: "NSUserInfo") else { return [:] }
        guard case .dictionary(let entries) = try info.foundationValue() else {
            throw ArchiveError("\(info.path): the user info is not a dictionary")
        }
        return entries
    }
}
