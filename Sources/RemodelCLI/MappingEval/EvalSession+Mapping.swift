import ExpressionLanguage
import Foundation
import Migration
import ObjectGraph

/// A mapping file loaded with `:mapping`, read against the open store's models.
public struct LoadedMapping {
    /// The file as the user wrote it.
    public let file: String
    public let model: MappingModel
    public let destination: ObjectModel
    /// The entity mappings as a run applies them (implied property mappings added).
    public let entityMappings: [EntityMapping]
    /// The mapping run on the open store into a temporary store, when a lookup first
    /// needs it (``StoreManager``).
    let dryRun: MappingDryRun
}

extension EvalSession {
    /// `:mapping FILE`: reads a mapping file (JSON, `.xcmappingmodel`, `.cdm`) against the
    /// open store's models, says what it maps and what its check finds.
    func mappingCommand(_ argument: String) throws(InputError) -> EvalOutput {
        guard let store else {
            throw InputError(
                "no store is open; :open STORE --models PATH first: a mapping is read against the store's models and tried on its rows"
            )
        }
        guard !argument.isEmpty else {
            guard let mapping else {
                return EvalOutput(lines: [EvalOutput.Line(.output, "no mapping is loaded; :mapping FILE loads one")])
            }
            return EvalOutput(lines: [EvalOutput.Line(.output, Self.describe(mapping))])
        }
        let file = JSONInput.expandingTilde(argument)
        let url = URL(fileURLWithPath: file)
        let model: MappingModel
        do throws(MappingErrors) {
            switch url.pathExtension {
            case "xcmappingmodel": model = try MappingModel.load(xcodeMappingModelAt: url, models: store.versions)
            case "cdm": model = try MappingModel.load(compiledMappingModelAt: url, models: store.versions)
            default: model = try MappingModel.load(contentsOf: url)
            }
        } catch {
            throw InputError("cannot load the mapping \(argument):\n" + error.rendered())
        }
        guard model.sourceModel == store.model.version else {
            throw InputError(
                "the mapping goes from \(model.sourceModel) to \(model.destinationModel), but the open store is at \(store.model.version); open a store at \(model.sourceModel) to try it"
            )
        }
        guard let destination = store.versions.first(where: { $0.version == model.destinationModel }) else {
            throw InputError(
                "the mapping leads to \(model.destinationModel), which is not a version of \(store.modelsPath) (\(store.versions.map(\.version).joined(separator: ", ")))"
            )
        }
        let (entityMappings, errors) = MigrationManager.effectiveEntityMappings(
            model, source: store.model, destination: destination,
            policies: policies)
        // A mapping that does not check is still loaded: its other entity mappings can be tried.
        var effective = entityMappings
        for original in model.entityMappings where !effective.contains(where: { $0.name == original.name }) {
            effective.append(original)
        }
        let policies = self.policies
        let dryRun = MappingDryRun { destinationPath in
            let manager = try MigrationManager(
                mapping: model, source: store.model, destination: destination, policies: policies,
                options: MigrationOptions(keepsResults: true))
            _ = try manager.migrateStore(from: store.readPath, to: destinationPath)
            return manager
        }
        let loaded = LoadedMapping(
            file: argument, model: model, destination: destination, entityMappings: effective, dryRun: dryRun)
        mapping = loaded
        var output = EvalOutput(lines: [EvalOutput.Line(.output, Self.describe(loaded))])
        for error in errors { output.warn("warning: " + error.rendered()) }
        return output
    }

    /// `Products1_to_Products2.mapping.json: Products1 → Products2, 1 entity mapping (ProductToProduct)`.
    static func describe(_ loaded: LoadedMapping) -> String {
        let names = loaded.entityMappings.map(\.name)
        return "\(loaded.file): \(loaded.model.sourceModel) → \(loaded.model.destinationModel), "
            + "\(names.count) entity mapping\(names.count == 1 ? "" : "s") (\(names.joined(separator: ", ")))"
    }

    /// One destination property an entity mapping sets, for a source row.
    public struct MappedProperty {
        public let name: String
        /// The expression; nil for a property the mapping sets to nothing.
        public let expression: String?
        /// The value as the destination attribute stores it, or what stops it.
        public let result: Result<Value, InputError>
    }

    /// What the entity mapping `name` of the loaded mapping makes of the open store's
    /// object `reference` (`Product/1`): each destination property it sets, in the order of
    /// the mapping, with the value a run writes (converted to the destination attribute's
    /// type) or the error. Nothing is written; policies' hooks do not run; what needs a
    /// running migration (the destination, lookups of destination instances) says so.
    public func mapped(_ name: String, source reference: String) throws(InputError) -> (
        entityMapping: EntityMapping, properties: [MappedProperty]
    ) {
        guard let loaded = mapping, let store else {
            throw InputError("no mapping is loaded; :open STORE --models PATH, then :mapping FILE")
        }
        guard let entityMapping = loaded.entityMappings.first(where: { $0.name == name }) else {
            throw InputError(
                "the mapping has no entity mapping '\(name)'; it has \(loaded.entityMappings.map(\.name).joined(separator: ", "))"
            )
        }
        let source = try storeObject(reference)
        if case .object(let object) = source, let managed = object.object as? ManagedObject,
            let entity = entityMapping.sourceEntity,
            !([managed.entity] + store.model.ancestors(of: managed.entity)).contains(where: { $0.name == entity })
        {
            throw InputError(
                "\(reference) is a \(managed.entity.name), and \(entityMapping.name) maps \(entity) instances")
        }
        var bound = variables
        bound["source"] = source
        bound["manager"] = .object(ObjectReference(StoreManager(store, dryRun: loaded.dryRun)))
        let destination = entityMapping.destinationEntity.flatMap { loaded.destination.entity(named: $0) }
        let attributes = destination.map { loaded.destination.allAttributes(of: $0) } ?? []
        var properties: [MappedProperty] = []
        for property in entityMapping.attributeMappings + entityMapping.relationshipMappings {
            guard let text = property.valueExpression else {
                properties.append(MappedProperty(name: property.name, expression: nil, result: .success(.null)))
                continue
            }
            let result: Result<Value, InputError>
            do {
                let value = try InputEvaluator.evaluate(text, mode: .expression, variables: bound, compiler: compiler)
                    .value
                if let attribute = attributes.first(where: { $0.name == property.name }) {
                    do {
                        result = .success(try attribute.stored(value))
                    } catch {
                        result = .failure(InputError("a run would stop here: \(error.message)"))
                    }
                } else {
                    result = .success(value)
                }
            } catch {
                result = .failure(InputError(error.error.description))
            }
            properties.append(MappedProperty(name: property.name, expression: text, result: result))
        }
        return (entityMapping, properties)
    }

    /// The first `limit` source rows of the entity mapping `name`, as a run finds them:
    /// its source expression evaluated against the open store (the standard FETCH, with
    /// its filter), else every instance of its source entity.
    public func sourceRows(of name: String, limit: Int = 5) throws(InputError) -> [String] {
        guard let loaded = mapping, let store else {
            throw InputError("no mapping is loaded; :open STORE --models PATH, then :mapping FILE")
        }
        guard let entityMapping = loaded.entityMappings.first(where: { $0.name == name }) else {
            throw InputError(
                "the mapping has no entity mapping '\(name)'; it has \(loaded.entityMappings.map(\.name).joined(separator: ", "))"
            )
        }
        let rows: Value
        if let text = entityMapping.sourceExpression {
            do {
                rows = try InputEvaluator.evaluate(
                    text, mode: .expression,
                    variables: ["manager": .object(ObjectReference(StoreManager(store, dryRun: loaded.dryRun)))],
                    compiler: compiler
                ).value
            } catch {
                throw InputError("its source expression fails: \(error.error.description)")
            }
        } else if let entity = entityMapping.sourceEntity {
            do {
                var request = FetchRequest(entityName: entity)
                request.fetchLimit = limit
                rows = .array(try store.context.fetch(request).map { .object(ObjectReference($0)) })
            } catch {
                throw InputError(error.description)
            }
        } else {
            throw InputError(
                "\(name) has no source entity: it maps no rows (an add mapping makes its instances in a policy)")
        }
        return (rows.collectionElements ?? []).prefix(limit).compactMap { element in
            guard case .object(let reference) = element, let object = reference.object as? ManagedObject else {
                return nil
            }
            return object.objectID.description
        }
    }

    /// For an entity mapping with a policy of its own: what the policy made of the row in
    /// the mapping's dry run (its hooks run there, with the session's registered
    /// policies), or why that cannot be shown.
    private func policyLines(_ policy: String, _ entityMapping: EntityMapping, source: String) -> [String] {
        guard let loaded = mapping, case .object(let reference)? = try? storeObject(source),
            let object = reference.object as? ManagedObject
        else { return [] }
        let made: [ManagedObject]
        do {
            made = try loaded.dryRun.manager().destinationInstances(
                forEntityMappingNamed: entityMapping.name, sourceInstances: [object])
        } catch {
            return [
                "  (its policy \(policy) runs in the mapping's dry run, which failed: \(error); the expressions below are evaluated alone)"
            ]
        }
        var lines = ["  its policy \(policy) made, in the mapping's dry run:" + (made.isEmpty ? " nothing" : "")]
        for destination in made {
            let attributes = loaded.destination.allAttributes(of: destination.entity).map { attribute in
                "\(attribute.name)=" + ((try? destination.value(forKey: attribute.name)) ?? .null).json.serialized()
            }
            lines.append("    \(destination.objectID)  " + attributes.joined(separator: " "))
        }
        lines.append("  its expressions, evaluated alone:")
        return lines
    }

    /// `:map ENTITYMAPPING ENTITY/PK`: ``mapped(_:source:)``, one line a property; with no
    /// row, the first rows the mapping reads, one line each.
    func mapCommand(_ argument: String) throws(InputError) -> EvalOutput {
        let words = argument.split(separator: " ", maxSplits: 1).map(String.init)
        if words.count == 1 {
            let rows = try sourceRows(of: words[0])
            var lines = ["\(words[0]): its first \(rows.count) source row\(rows.count == 1 ? "" : "s")"]
            for row in rows {
                let (_, properties) = try mapped(words[0], source: row)
                let values = properties.map { property -> String in
                    switch property.result {
                    case .success(let value): "\(property.name)=\(value.json.serialized())"
                    case .failure: "\(property.name)=error"
                    }
                }
                lines.append("  \(row)  " + values.joined(separator: " "))
            }
            return EvalOutput(lines: [EvalOutput.Line(.output, lines.joined(separator: "\n"))])
        }
        guard words.count == 2, Self.isObjectReference(words[1]) else {
            throw InputError("usage: :map ENTITYMAPPING [ENTITY/PK], such as :map ProductToProduct Product/1")
        }
        let (entityMapping, properties) = try mapped(words[0], source: words[1])
        var lines = [
            "\(entityMapping.name) (\(entityMapping.type.rawValue)) on \(words[1]), into \(entityMapping.destinationEntity ?? "nothing"):"
        ]
        if let policy = entityMapping.policy { lines += policyLines(policy, entityMapping, source: words[1]) }
        let width = properties.map(\.name.count).max() ?? 0
        for property in properties {
            let name = property.name.padding(toLength: width, withPad: " ", startingAt: 0)
            guard let text = property.expression else {
                lines.append("  \(name)  null ⟹ not set (its default)")
                continue
            }
            let shown = text.count > 80 ? String(text.prefix(79)) + "…" : text
            switch property.result {
            case .success(let value): lines.append("  \(name)  \(shown) ⟹ " + EvalFormat.abbreviated(value))
            case .failure(let error): lines.append("  \(name)  \(shown) ⟹ error: \(error.message)")
            }
        }
        return EvalOutput(lines: [EvalOutput.Line(.output, lines.joined(separator: "\n"))])
    }
}
