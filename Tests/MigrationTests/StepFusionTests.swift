import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// Steps run as one (docs/engine.md, "Steps run as one"): an inferred step that only
/// renames what the step before wrote is run by that step's mapping, and the chain ends
/// with the same store, the same reports and the same errors as when each step runs on
/// its own.
@Suite struct StepFusionTests {
    /// What a chain run left: the store's rows and each step's counts, or its error; and
    /// which steps ran in one pass with the step before.
    struct Chain: Equatable {
        var outcome: PushdownDifferentialTests.Outcome
        var fused: [Bool] = []
        /// Each step's entity mappings, by name.
        var entityMappings: [[String]] = []
        /// The chunks of its steps' mappings written as SQL without checking their rows,
        /// checked ahead (``MappingExecution/chunksCheckedAhead``).
        var chunksCheckedAhead = 0
    }

    /// Runs the chain `models` (`mappings` for the steps that have one) from a copy of
    /// `source` at `path`, with or without fusing steps.
    static func run(
        _ models: [ObjectModel], _ mappings: [MappingModel], source: String, at path: String, fuses: Bool,
        policies: PolicyRegistry = PolicyRegistry(), options: MigrationOptions = MigrationOptions(chunkSize: 700)
    ) throws -> Chain {
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.copyItem(atPath: source, toPath: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var migrator = StoreMigrator(models: models, mappings: mappings, policies: policies, options: options)
        migrator.fusesSteps = fuses
        migrator.keepsBackup = false
        do {
            let reports = try migrator.migrate(storeAt: path)
            let counts = reports.flatMap { step in
                step.report.entityMappings.map {
                    [$0.sourceInstances, $0.destinationInstances, $0.relationshipsSet]
                }
            }
            return Chain(
                outcome: .store(try PushdownDifferentialTests.dump(path), counts), fused: reports.map(\.isFused),
                entityMappings: reports.map { $0.report.entityMappings.map(\.name) },
                chunksCheckedAhead: reports.flatMap(\.report.entityMappings).reduce(0) {
                    $0 + ($1.execution?.chunksCheckedAhead ?? 0)
                })
        } catch let error as MigrationError {
            return Chain(outcome: .failure("\(error.kind.rawValue): \(error)"))
        }
    }

    /// Runs the chain both ways, one step at a time and with steps fused (``run``), and
    /// expects the same store or error and the same counts; `what` says which case failed.
    static func bothWays(
        _ models: [ObjectModel], _ mappings: [MappingModel], source: String, at path: String,
        policies: PolicyRegistry = PolicyRegistry(), options: MigrationOptions = MigrationOptions(chunkSize: 700),
        _ what: @autoclosure () -> String = "", sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> (oneByOne: Chain, fused: Chain) {
        let oneByOne = try run(
            models, mappings, source: source, at: path, fuses: false, policies: policies, options: options)
        let fused = try run(
            models, mappings, source: source, at: path, fuses: true, policies: policies, options: options)
        #expect(
            fused.outcome == oneByOne.outcome,
            "\(what()): \(RandomLinkDifferentialTests.difference(fused.outcome, oneByOne.outcome))",
            sourceLocation: sourceLocation)
        return (oneByOne, fused)
    }

    /// `model` with entities, attributes and relationships renamed at random (each with
    /// its old name as renaming identifier), and a new attribute with a default in each
    /// entity: a version an inferred step reaches by renaming alone.
    static func renamed(_ model: ObjectModel, version: String, _ random: inout SeededGenerator) -> ObjectModel {
        var entityNames: [String: String] = [:]
        var propertyNames: [String: [String: String]] = [:]
        for entity in model.entities {
            entityNames[entity.name] = Bool.random(using: &random) ? entity.name + "New" : entity.name
            for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
                propertyNames[entity.name, default: [:]][name] = Bool.random(using: &random) ? name + "New" : name
            }
        }
        let entities = model.entities.map { old in
            var entity = old
            entity.name = entityNames[old.name]!
            if entity.name != old.name { entity.renamingIdentifier = old.name }
            entity.parent = old.parent.map { entityNames[$0]! }
            entity.attributes = old.attributes.map { old in
                var attribute = old
                attribute.name = propertyNames[entity.renamingIdentifier ?? entity.name]![old.name]!
                if attribute.name != old.name { attribute.renamingIdentifier = old.name }
                return attribute
            }
            // (A sub-entity inherits its parent's.)
            if old.parent == nil {
                var added = AttributeDescription(name: "added", type: .int16)
                added.defaultValue = .integer(7)
                entity.attributes.append(added)
            }
            entity.relationships = old.relationships.map { old in
                var relationship = old
                relationship.name = propertyNames[entity.renamingIdentifier ?? entity.name]![old.name]!
                if relationship.name != old.name { relationship.renamingIdentifier = old.name }
                relationship.destination = entityNames[old.destination]!
                relationship.inverse = old.inverse.map { propertyNames[old.destination]![$0]! }
                return relationship
            }
            return entity
        }
        return ObjectModel(version: version, entities: entities)
    }

    /// `model` without some of its entities' `extra` and `name` attributes, and one time in
    /// four without a relationship and its inverse.
    static func drop(from model: inout ObjectModel, _ random: inout SeededGenerator) {
        for i in model.entities.indices {
            model.entities[i].attributes.removeAll { attribute in
                let name = attribute.renamingIdentifier ?? attribute.name
                return (name == "extra" && Bool.random(using: &random))
                    || (name == "name" && Int.random(in: 0..<4, using: &random) == 0)
            }
        }
        guard Int.random(in: 0..<4, using: &random) == 0,
            let owner = model.entities.firstIndex(where: { !$0.relationships.isEmpty })
        else { return }
        let relationship = model.entities[owner].relationships[0]
        model.entities[owner].relationships.removeFirst()
        if let inverse = relationship.inverse,
            let other = model.entities.firstIndex(where: { $0.name == relationship.destination })
        {
            model.entities[other].relationships.removeAll { $0.name == inverse }
        }
    }

    /// `configuration` under older names (the first entity's always, others' and
    /// relationships' at random), and the model of `configuration`'s first version that
    /// renames them: a version a renaming step reaches from the older one.
    static func older(
        _ configuration: RandomLinkDifferentialTests.Configuration, _ random: inout SeededGenerator
    ) throws -> (RandomLinkDifferentialTests.Configuration, ObjectModel) {
        let entities = configuration.entities.enumerated().map { index, name in
            index == 0 || Bool.random(using: &random) ? name + "Old" : name
        }
        let pairs = configuration.pairs.map { pair in
            let near = Bool.random(using: &random) ? pair.near + "Old" : pair.near
            let far = Bool.random(using: &random) ? pair.far + "Old" : pair.far
            // (A relationship that is its own inverse keeps one name.)
            return RandomLinkDifferentialTests.Pair(
                kind: pair.kind, from: pair.from, to: pair.to, near: near, far: pair.isOwnInverse ? near : far,
                nearOrdered: pair.nearOrdered, farOrdered: pair.farOrdered)
        }
        let old = RandomLinkDifferentialTests.Configuration(
            entities: entities, pairs: pairs, parent: configuration.parent)
        var new = try model(configuration.model(0))
        for (index, name) in configuration.entities.enumerated() {
            let e = new.entities.firstIndex { $0.name == name }!
            if entities[index] != name { new.entities[e].renamingIdentifier = entities[index] }
            for (pair, oldPair) in zip(configuration.pairs, pairs) {
                for (relationship, oldName) in [(pair.near, oldPair.near), (pair.far, oldPair.far)]
                where relationship != oldName {
                    if let r = new.entities[e].relationships.firstIndex(where: { $0.name == relationship }) {
                        new.entities[e].relationships[r].renamingIdentifier = oldName
                    }
                }
            }
        }
        return (old, new)
    }

    /// The mapping `inferred` (from `source`) as Xcode writes a mapping model that does the
    /// same: entity mappings named `<A>To<B>`, fetches with `$manager.sourceContext` (or
    /// none), attributes read as `$source.a`, relationships looked up through the mapping
    /// that makes their targets, and now and then a same-named property left out for the
    /// engine to map.
    ///
    /// `bothSides` (the version it reaches) links each relationship inference sets only
    /// through its ordered inverse too, as Xcode fills every relationship mapping: the
    /// order then depends on which mapping links first.
    static func asXcodeWritesIt(
        _ inferred: MappingModel, from source: ObjectModel, bothSides destination: ObjectModel? = nil,
        _ random: inout SeededGenerator
    ) throws -> MappingModel {
        func name(_ mapping: EntityMapping) -> String {
            guard mapping.type == .copy || mapping.type == .transform else { return mapping.name }
            return "\(mapping.sourceEntity ?? "")To\(mapping.destinationEntity ?? "")"
        }
        let entityMappings = try inferred.entityMappings.map { original in
            var mapping = original
            mapping.name = name(original)
            guard let entity = original.sourceEntity.flatMap(source.entity(named:)),
                original.type == .copy || original.type == .transform
            else { return mapping }
            if Bool.random(using: &random) {
                mapping.sourceExpression =
                    XcodeMapping.standardFetch(of: entity.name, predicate: "TRUEPREDICATE")
                    .description
            } else {
                mapping.sourceExpression = nil
            }
            mapping.attributeMappings = try original.attributeMappings.compactMap { property in
                guard property.valueExpression != nil else { return property }
                let read = try #require(
                    property.valueExpression.map { try FormatExpression(parsing: $0) }.flatMap(
                        EntityMappingRunner.copiedAttribute))
                if read == property.name, Int.random(in: 0..<3, using: &random) == 0 { return nil }
                return PropertyMapping(name: property.name, valueExpression: "$source.\(read)")
            }
            mapping.relationshipMappings = try original.relationshipMappings.compactMap { property in
                let relationship: String
                if property.valueExpression == nil {
                    // (Set through its ordered inverse by inference.)
                    guard let destination,
                        let described = original.destinationEntity.flatMap(destination.entity(named:)).flatMap({
                            destination.allRelationships(of: $0).first { $0.name == property.name }
                        })
                    else { return property }
                    relationship = described.renamingIdentifier ?? described.name
                } else {
                    let lookup = try #require(
                        property.valueExpression.map { try FormatExpression(parsing: $0) }.flatMap(SQLLink.lookup))
                    relationship = try #require(lookup.relationship)
                }
                let targets = try #require(
                    source.allRelationships(of: entity).first { $0.name == relationship }
                        .flatMap { source.entity(named: $0.destination) })
                let kinds = source.descendants(of: targets).map(\.name)
                let makers = inferred.entityMappings.filter {
                    $0.sourceEntity.map(kinds.contains) == true && ($0.type == .copy || $0.type == .transform)
                }
                // (Xcode looks them up by relationship where several mappings make them.)
                guard makers.count == 1 else { return property }
                if property.valueExpression != nil, relationship == property.name,
                    Int.random(in: 0..<3, using: &random) == 0
                {
                    return nil
                }
                return PropertyMapping(
                    name: property.name,
                    valueExpression:
                        #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "\#(name(makers[0]))", $source.\#(relationship))"#
                )
            }
            return mapping
        }
        return MappingModel(
            sourceModel: inferred.sourceModel, destinationModel: inferred.destinationModel,
            entityMappings: entityMappings, file: "\(inferred.sourceModel)-\(inferred.destinationModel).xcmappingmodel")
    }

    /// Seeds past CI's 120 that once failed, run with them: 1716, an ordered to-many
    /// whose members a step moved between owners, leaving gaps in their positions, which
    /// a renaming after it numbers 1, 2, 3… again.
    static let regressions: [UInt64] = [1716]

    @Test func aRenamingStepRunWithTheStepBeforeGivesWhatTheStepsGiveOneByOne() throws {
        let directory = try TemporaryDirectory()
        var policies = PolicyRegistry()
        policies.register("Hooked") { LinksWithInstancesTests.Hooked() }
        var fusedChains = 0, fusedBefore = 0, fusedFiles = 0, fusedFilesBefore = 0, fusedDropping = 0,
            fusedDroppingAfter = 0, fusedSelf = 0, fusedCheckedAhead = 0, fusedOrdered = 0,
            fusedComputing = 0, fusedIntoAHierarchy = 0, fusedOneToOneWithin = 0, fusedOwnInverse = 0,
            fusedOrderedManyToMany = 0, linkedBothSides = 0, failures = 0
        let environment = ProcessInfo.processInfo.environment
        let count = environment["REMODEL_FUSION_SEEDS"].flatMap { UInt64($0) } ?? 120
        let first = environment["REMODEL_FUSION_SEEDS_FROM"].flatMap { UInt64($0) } ?? 1
        let seeds =
            Array(first..<(first + count)) + (environment["REMODEL_FUSION_SEEDS"] == nil ? Self.regressions : [])
        for seed in seeds {
            var random = SeededGenerator(seed: seed)
            var configuration = RandomLinkDifferentialTests.configuration(&random)
            // No entity related to itself, two times in three, and unordered in the
            // later versions most of the time: a renaming step with an ordered
            // relationship is run on its own.
            if seed % 3 != 0 {
                configuration.pairs = configuration.pairs.map { pair in
                    guard pair.from == pair.to else { return pair }
                    return RandomLinkDifferentialTests.Pair(
                        kind: pair.kind, from: pair.from, to: (pair.from + 1) % configuration.entities.count,
                        near: pair.near, far: pair.far, nearOrdered: pair.nearOrdered, farOrdered: pair.farOrdered)
                }
            }
            configuration = RandomLinkDifferentialTests.withOwnInverses(configuration, seed: seed)
            if seed % 4 != 0 {
                for i in configuration.pairs.indices {
                    for version in seed % 2 == 1 ? [0, 1] : [1] {
                        configuration.pairs[i].nearOrdered[version] = false
                        configuration.pairs[i].farOrdered[version] = false
                    }
                }
            }
            let damaged = Int.random(in: 0..<6, using: &random) == 0
            var v1 = try model(configuration.model(0))
            let v2 = try model(configuration.model(1))
            var v3 = Self.renamed(v2, version: "R3", &random)
            // A third of the time, R3 drops attributes (and now and then a relationship pair)
            // that R2 has: drawn apart, so that the chains drawn before drops were added stay
            // the same.
            var trailing = SeededGenerator(seed: seed &* 0x85EB_CA6B)
            let dropsAfter = Int.random(in: 0..<3, using: &trailing) == 0
            if dropsAfter { Self.drop(from: &v3, &trailing) }
            // Half the time, a renaming step before: the store starts at R0.
            var v0: ObjectModel?
            var generated = configuration
            // Half the time again, R0 has properties the renaming step drops: an
            // attribute of each entity that holds values its type never does, and a
            // relationship pair.
            // (Drawn apart, so that the chains drawn before drops were added stay the same.)
            var dropping = SeededGenerator(seed: seed &* 0x9E37_79B9)
            var drops = false
            if seed % 2 == 1 {
                drops = Bool.random(using: &dropping)
                var (old, renaming) = try Self.older(configuration, &random)
                if drops {
                    let kind = RandomLinkDifferentialTests.Kind.allCases.randomElement(using: &dropping)!
                    old.pairs.append(
                        RandomLinkDifferentialTests.Pair(
                            kind: kind,
                            from: Int.random(in: 0..<old.entities.count, using: &dropping),
                            to: Int.random(in: 0..<old.entities.count, using: &dropping), near: "legacyNear",
                            far: "legacyFar", nearOrdered: [false, false, false], farOrdered: [false, false, false]))
                }
                v0 = try model(old.model(0))
                v0!.version = "R0"
                if drops {
                    let type = [AttributeType.int16, .string, .double].randomElement(using: &dropping)!
                    for i in v0!.entities.indices where v0!.entities[i].parent == nil {
                        v0!.entities[i].attributes.append(AttributeDescription(name: "legacy", type: type))
                    }
                }
                v1 = renaming
                generated = old
            }
            let source = directory.path("F\(seed).sqlite")
            try RandomLinkDifferentialTests.makeSource(
                at: source, generated, v1: v0 ?? v1, damaged: damaged, &random)
            if drops, let v0 {
                let store = try Store.open(at: source, model: v0)
                for layout in Set(v0.entities.compactMap { store.layout.entities[$0.name] }.map(\.table)) {
                    let column = try #require(
                        v0.entities.lazy.compactMap { store.layout.entities[$0.name] }.first { $0.table == layout }?
                            .attributeColumns["legacy"])
                    try store.database.execute(
                        "UPDATE \(layout) SET \(column) = CASE Z_PK % 5 WHEN 0 THEN NULL WHEN 1 THEN 'text' "
                            + "WHEN 2 THEN 70000 WHEN 3 THEN CAST(X'66C328' AS TEXT) ELSE Z_PK * 1.5 END")
                }
            }
            let mappingText = RandomLinkDifferentialTests.mappingText(configuration, &random)
            // The first step's own mapping, or (with a sub-entity, or a quarter of the
            // time) none: two inferred steps.
            let first: [MappingModel] =
                configuration.parent != nil || Int.random(in: 0..<4, using: &random) == 0
                ? [] : [try mapping(mappingText)]
            let models = (v0.map { [$0] } ?? []) + [v1, v2, v3]
            // A third of the time the renaming steps have mapping models, as Xcode writes
            // them for steps that only copy; a third of the time the last one alone.
            var mappings = first
            let written = Int.random(in: 0..<3, using: &random)
            // Half of those link both sides of an ordered relationship, as Xcode does.
            // (Drawn apart, so that the chains drawn before stay the same.)
            var linking = SeededGenerator(seed: seed &* 0x27D4_EB2F)
            var bothSidesOrdered = false
            for (older, newer) in [(v2, v3), (v0, v1)].prefix(written) {
                guard let older, let inferred = try? MappingModel.inferred(from: older, to: newer) else { continue }
                let bothSides = Bool.random(using: &linking)
                if bothSides, newer.entities.contains(where: { !$0.relationships.filter(\.isOrdered).isEmpty }) {
                    bothSidesOrdered = true
                }
                mappings.append(
                    try Self.asXcodeWritesIt(inferred, from: older, bothSides: bothSides ? newer : nil, &random))
            }
            // Half the time the renaming step before has a mapping model that computes
            // each name instead of copying it: a step that computes (docs/engine.md, "Steps
            // that compute"). (Drawn apart, so that the chains drawn before stay the same.)
            var computing = SeededGenerator(seed: seed &* 0xC2B2_AE35)
            let computes = v0 != nil && Bool.random(using: &computing)
            if computes, written < 2, let v0 {
                mappings.append(
                    try Self.asXcodeWritesIt(MappingModel.inferred(from: v0, to: v1), from: v0, &computing))
            }
            if computes {
                let name = PropertyMapping(
                    name: "name", valueExpression: "TERNARY($source.name == nil, '-', $source.name)")
                mappings[mappings.count - 1].entityMappings = mappings[mappings.count - 1].entityMappings.map {
                    mapping in
                    var mapping = mapping
                    guard mapping.type == .copy || mapping.type == .transform,
                        let entity = mapping.destinationEntity.flatMap(v1.entity(named:)),
                        v1.allAttributes(of: entity).contains(where: { $0.name == "name" })
                    else { return mapping }
                    mapping.attributeMappings.removeAll { $0.name == "name" }
                    mapping.attributeMappings.append(name)
                    return mapping
                }
            }
            let path = directory.path("chain\(seed).sqlite")
            // A quarter of the time, chunks of three keys checked ahead of the statements,
            // each waiting for the check (docs/pushdown.md, "Checked ahead").
            var options = MigrationOptions(chunkSize: 700)
            if seed % 4 == 2 {
                options.sqlChunkRows = 3
                options.checkAhead = .waiting
            }
            let (oneByOne, fused) = try Self.bothWays(
                models, mappings, source: source, at: path, policies: policies, options: options,
                "seed \(seed), \(configuration.model(0))\n\(configuration.model(1))\n\(first.isEmpty ? "(inferred)" : mappingText)"
            )
            if fused.fused.contains(true) { fusedChains += 1 }
            if drops, fused.fused.first == true { fusedDropping += 1 }
            if dropsAfter, fused.fused.last == true { fusedDroppingAfter += 1 }
            if configuration.pairs.contains(where: { $0.from == $0.to }), fused.fused.contains(true) { fusedSelf += 1 }
            if v0 != nil, fused.fused.first == true { fusedBefore += 1 }
            if written > 0, fused.fused.last == true { fusedFiles += 1 }
            if written > 1, v0 != nil, fused.fused.first == true { fusedFilesBefore += 1 }
            if computes, fused.fused.first == true { fusedComputing += 1 }
            if fused.fused.contains(true),
                configuration.pairs.contains(where: { $0.kind == .oneToOne && $0.from == $0.to })
            {
                fusedOneToOneWithin += 1
            }
            if bothSidesOrdered, fused.fused.contains(true) { linkedBothSides += 1 }
            if fused.fused.contains(true), configuration.pairs.contains(where: \.isOwnInverse) {
                fusedOwnInverse += 1
            }
            if let parent = configuration.parent, fused.fused.contains(true),
                configuration.pairs.contains(where: { $0.from == parent || $0.to == parent })
            {
                fusedIntoAHierarchy += 1
            }
            if case .failure = oneByOne.outcome { failures += 1 }
            if fused.fused.contains(true), fused.chunksCheckedAhead > 0 { fusedCheckedAhead += 1 }
            // (The renaming step before reads version 0's relationships; the one after,
            // version 1's.)
            func ordered(_ version: Int, manyToMany: Bool = false) -> Bool {
                configuration.pairs.contains {
                    ($0.nearOrdered[version] || $0.farOrdered[version]) && (!manyToMany || $0.kind == .manyToMany)
                }
            }
            if (v0 != nil && fused.fused.first == true && ordered(0)) || (fused.fused.last == true && ordered(1)) {
                fusedOrdered += 1
            }
            if (v0 != nil && fused.fused.first == true && ordered(0, manyToMany: true))
                || (fused.fused.last == true && ordered(1, manyToMany: true))
            {
                fusedOrderedManyToMany += 1
            }
            try? FileManager.default.removeItem(atPath: source)
        }
        // The generator reaches both: chains run in one pass, and chains that fail.
        #expect(
            fusedChains > count / 4 && fusedBefore > count / 8,
            "\(fusedChains) chains fused, \(fusedBefore) from the first step")
        // Renaming steps that drop properties join the step after them.
        #expect(fusedDropping > count / 40, "\(fusedDropping) chains fused with a step that drops properties")
        #expect(
            fusedDroppingAfter > count / 40, "\(fusedDroppingAfter) chains fused with a last step that drops properties"
        )
        // And chains with a relationship between an entity's own objects.
        #expect(fusedSelf > count / 40, "\(fusedSelf) chains fused with a relationship to its own entity")
        // Renaming steps with mapping models join passes too, before and after.
        #expect(
            fusedFiles > count / 12 && fusedFilesBefore > count / 40,
            "\(fusedFiles) chains fused through a mapping model, \(fusedFilesBefore) from the first step")
        #expect(failures > 0, "no chain failed")
        // And renaming steps with an ordered to-many.
        #expect(
            fusedOrdered > count / 60, "\(fusedOrdered) chains fused with a renaming step that has an ordered to-many")
        // And renaming steps that compute.
        #expect(fusedComputing > count / 40, "\(fusedComputing) chains fused with a step that computes")
        // And chains with a relationship to an entity with a sub-entity.
        #expect(
            fusedIntoAHierarchy > count / 80,
            "\(fusedIntoAHierarchy) chains fused with a relationship to an entity with a sub-entity")
        // And chains with a one-to-one within an entity.
        #expect(
            fusedOneToOneWithin > count / 80,
            "\(fusedOneToOneWithin) chains fused with a one-to-one within an entity")
        // And renaming steps with an ordered many-to-many, over a longer search.
        if count >= 1000 {
            #expect(
                fusedOrderedManyToMany > 0,
                "\(fusedOrderedManyToMany) chains fused with a renaming step that has an ordered many-to-many")
        }
        // And renaming steps that link both sides of an ordered relationship, in a pass.
        #expect(linkedBothSides > 0, "no chain fused with a step that links both sides of an ordered relationship")
        // And chains with a relationship that is its own inverse.
        #expect(fusedOwnInverse > 0, "\(fusedOwnInverse) chains fused with a relationship that is its own inverse")
        // And passes whose chunks were checked ahead.
        #expect(fusedCheckedAhead > count / 40, "\(fusedCheckedAhead) chains fused with chunks checked ahead")
    }

    /// Items of `a` (name; two seeded) through `b` (an inferred step) to C (name, label),
    /// by a mapping file that computes the label: both ways (``bothWays``).
    static func itemsThroughARenaming(_ a: ObjectModel, _ b: ObjectModel, _ what: String) throws -> (
        oneByOne: Chain, fused: Chain
    ) {
        let c = try model(
            #"{"version": "C", "entities": {"Item": {"attributes": {"name": "string", "label": "string"}}}}"#)
        let second = try mapping(
            #"{"sourceModel": "B", "destinationModel": "C", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"name": "$source.name", "label": "FUNCTION($source.name, 'uppercaseString')"}}]}"#
        )
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        try seededStore(at: source, model: a, seed: #"{"Item": [{"name": "a"}, {"name": "b"}]}"#)
        let path = directory.path("Items.sqlite")
        return try Self.bothWays([a, b, c], [second], source: source, at: path, what)
    }

    /// Writes into `store` `owners.count` rows of the entity `owners.entity`, its text
    /// attribute `owners.attribute` `'<prefix> i'`, and `members.count` rows of
    /// `members.entity`, each row `i`'s text attribute, key and position of its ordered
    /// to-one `members.relationship` the SQL expressions of `i` given; the keys' counters
    /// moved past them.
    static func writeOwnersAndMembers(
        in store: Store, owners: (entity: String, attribute: String, prefix: String, count: Int),
        members: (
            entity: String, attribute: String, relationship: String, count: Int, text: String, owner: String,
            position: String
        )
    ) throws {
        let (o, m) = (store.layout.entities[owners.entity]!, store.layout.entities[members.entity]!)
        let key = m.toOneColumns[members.relationship]!
        try store.database.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(owners.count))
            INSERT INTO \(o.table) (Z_PK, Z_ENT, Z_OPT, \(o.attributeColumns[owners.attribute]!))
            SELECT i, \(o.number), 1, '\(owners.prefix) ' || i FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(members.count))
            INSERT INTO \(m.table) (Z_PK, Z_ENT, Z_OPT, \(m.attributeColumns[members.attribute]!), \(key.key), \(key.order!))
            SELECT i, \(m.number), 1, \(members.text), \(members.owner), \(members.position) FROM n;
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(owners.count) WHERE Z_ENT = \(o.number);
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(members.count) WHERE Z_ENT = \(m.number);
            """)
    }

    /// A renaming step that adds what its defaults cannot satisfy (a bound its default
    /// breaks, a required to-one, a to-many of at least one): step by step, its validation
    /// fails; the pass, which never writes that version, must not take it.
    @Test(arguments: [
        #""rating": {"type": "int16", "default": 0, "min": 1}"#,
        #""owner": {"destination": "Owner", "inverse": "items", "optional": false}"#,
        #""tags": {"destination": "Owner", "inverse": "items", "toMany": true, "optional": false, "minCount": 1}"#
    ])
    func aRenamingStepWhoseAdditionsFailItsRulesRunsOnItsOwn(_ added: String) throws {
        let relationship = added.contains("destination")
        let owner =
            relationship
            ? #", "Owner": {"attributes": {"label": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "\#(added.hasPrefix(#""owner""#) ? "owner" : "tags")", "toMany": true}}}"#
            : ""
        let a = try model(#"{"version": "A", "entities": {"Item": {"attributes": {"name": "string"}}}}"#)
        let b = try model(
            relationship
                ? #"{"version": "B", "entities": {"Item": {"attributes": {"name": "string"}, "relationships": {\#(added)}}\#(owner)}}"#
                : #"{"version": "B", "entities": {"Item": {"attributes": {"name": "string", \#(added)}}}}"#)
        let (oneByOne, _) = try Self.itemsThroughARenaming(a, b, added)
        if case .store = oneByOne.outcome { Issue.record("step by step did not fail: \(oneByOne.outcome)") }
    }

    /// A renaming step that adds relationships the validation lets be empty (a
    /// non-optional to-many with no minimum, as Xcode writes one; an optional to-one with a
    /// minimum of 1, as Xcode writes one): step by step its validation passes, and it runs
    /// in one pass with the step after it, with the same store.
    @Test(arguments: [
        #""tags": {"destination": "Owner", "inverse": "items", "toMany": true, "optional": false, "minCount": 0}"#,
        #""owner": {"destination": "Owner", "inverse": "items", "minCount": 1}"#
    ])
    func aRenamingStepWhoseAdditionsPassItsRulesEmptyJoinsThePass(_ added: String) throws {
        let inverse = added.hasPrefix(#""owner""#) ? "owner" : "tags"
        let a = try model(#"{"version": "A", "entities": {"Item": {"attributes": {"name": "string"}}}}"#)
        let b = try model(
            #"{"version": "B", "entities": {"Item": {"attributes": {"name": "string"}, "relationships": {\#(added)}}, "Owner": {"attributes": {"label": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "\#(inverse)", "toMany": true}}}}}"#
        )
        #expect(
            b.entity(named: "Item").flatMap { b.allRelationships(of: $0).first }.map(\.isOptional)
                == (inverse == "owner"))
        let (oneByOne, fused) = try Self.itemsThroughARenaming(a, b, added)
        if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
        #expect(fused.fused == [true, false])
    }

    /// A renaming step that adds an entity (`Tag`) and relationships (an owner's `items`
    /// and `tags`, an item's `owner`), before a mapping file that maps them as Xcode
    /// writes it, each side looked up (the owners filtered, so that it is no renaming
    /// itself; their mapping first): the rows of the new entity and the new relationships are empty in the
    /// version in between. Read through the renaming, the tags' mapping makes nothing and
    /// the relationships are left unlinked, as step by step, where they find nothing: one
    /// pass, the same store and counts (an item's `owner`, set to nil, is counted for each
    /// item). Where an owner's `items` are linked from a relationship the renaming
    /// carries (`held`), setting an item's `owner` to nil after unlinks it: the renaming
    /// runs apart, and `passes` says why. With the items' mapping first, the owners' link
    /// finds every item's `owner` still nil and sets it: one pass.
    @Test(arguments: ["to-many", "to-one", "to-one, its inverse linked", "to-one, its inverse linked after"])
    func aMappingOfWhatARenamingAddsJoinsThePassWhereItsLinksFindNothing(_ what: String) throws {
        let toOne = what.hasPrefix("to-one"), inverseLinked = what.contains("its inverse linked")
        let itemsFirst = what.hasSuffix("after")
        let a = try model(
            #"{"version": "A", "entities": {"Item": {"attributes": {"name": "string"}, "relationships": {"holder": {"destination": "Owner", "inverse": "held"}}}, "Owner": {"attributes": {"label": "string"}, "relationships": {"held": {"destination": "Item", "inverse": "holder", "toMany": true}}}}}"#
        )
        func linked(_ version: String) throws -> ObjectModel {
            try model(
                #"{"version": "\#(version)", "entities": {"Item": {"attributes": {"name": "string"}, "relationships": {"owner": {"destination": "Owner", "inverse": "items"}, "holder": {"destination": "Owner", "inverse": "held"}}}, "Owner": {"attributes": {"label": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "owner", "toMany": true}, "held": {"destination": "Item", "inverse": "holder", "toMany": true}, "tags": {"destination": "Tag", "inverse": "owner", "toMany": true}}}, "Tag": {"attributes": {"word": "string"}, "relationships": {"owner": {"destination": "Owner", "inverse": "tags"}}}}}"#
            )
        }
        let (b, c) = (try linked("B"), try linked("C"))
        func lookup(_ mapping: String, _ relationship: String) -> String {
            "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', '\(mapping)', $source.\(relationship))"
        }
        // (Without an expression, the owner would be looked up as Xcode's compiler fills
        // it in.)
        let owner = toOne ? #""\#(lookup("OwnerToOwner", "owner"))""# : "null"
        let items = lookup("ItemToItem", inverseLinked ? "held" : "items")
        let owners =
            #"{"name": "OwnerToOwner", "type": "transform", "sourceEntity": "Owner", "destinationEntity": "Owner", "sourceExpression": "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Owner', 'label != nil'), $manager.sourceContext, NO)", "attributeMappings": {"label": "$source.label"}, "relationshipMappings": {"items": "\#(items)", "held": "\#(lookup("ItemToItem", "held"))", "tags": "\#(lookup("TagToTag", "tags"))"}}"#
        let itemMappings =
            #"{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"name": "$source.name"}, "relationshipMappings": {"owner": \#(owner), "holder": "\#(lookup("OwnerToOwner", "holder"))"}}"#
        let second = try mapping(
            #"{"sourceModel": "B", "destinationModel": "C", "entityMappings": [\#(itemsFirst ? itemMappings : owners), \#(itemsFirst ? owners : itemMappings), {"name": "TagToTag", "type": "transform", "sourceEntity": "Tag", "destinationEntity": "Tag", "attributeMappings": {"word": "$source.word"}, "relationshipMappings": {"owner": "\#(lookup("OwnerToOwner", "owner"))"}}]}"#
        )
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        let store = try seededStore(
            at: source, model: a, seed: #"{"Item": [{"name": "a"}, {"name": "b"}], "Owner": [{"label": "x"}]}"#)
        try store.database.execute("UPDATE ZITEM SET ZHOLDER = (SELECT Z_PK FROM ZOWNER)")
        let (oneByOne, fused) = try Self.bothWays(
            [a, b, c], [second], source: source, at: directory.path("Items.sqlite"), what)
        guard case .store(_, let counts) = oneByOne.outcome else {
            Issue.record("step by step failed: \(oneByOne.outcome)")
            return
        }
        // (The owner gains its `held`, and its `items` when they are read from `held`;
        // the items' mapping sets every holder, and every owner where it has an
        // expression; the tags' mapping reads no row and sets nothing.)
        // (With the items first, their holders give the owner its `held` before its own link.)
        let (ownerCounts, itemCounts) = ([1, 1, inverseLinked && !itemsFirst ? 2 : 1], [2, 2, toOne ? 4 : 2])
        #expect(
            counts.suffix(3)
                == (itemsFirst ? [itemCounts, ownerCounts] : [ownerCounts, itemCounts]) + [[0, 0, 0]], "\(what)")
        let apart = inverseLinked && !itemsFirst
        #expect(fused.fused == (apart ? [false, false] : [true, false]), "\(what)")
        var migrator = StoreMigrator(models: [a, b, c], mappings: [second])
        migrator.fusesSteps = true
        let passes = migrator.passes(of: try migrator.plan(from: "A", to: "C"))
        if apart {
            #expect(passes.map(\.steps) == [0..<1, 1..<2])
            #expect(
                passes[1].apart?.before
                    == "entity mapping ItemToItem of the step after fills owner: it reads Item.owner, which the step before does not carry from its source"
            )
        } else {
            #expect(passes.map(\.steps) == [0..<2])
        }
    }

    /// A mapping of what a renaming adds makes nothing read through it; an expression that
    /// looks up what that mapping makes from anything else keeps the renaming apart (the
    /// lookup would name a mapping that reads no source).
    @Test func aLookupThroughAMappingOfWhatARenamingAddsKeepsItApart() throws {
        let a = try model(#"{"version": "A", "entities": {"Owner": {"attributes": {"label": "string"}}}}"#)
        func tagged(_ version: String) throws -> ObjectModel {
            try model(
                #"{"version": "\#(version)", "entities": {"Owner": {"attributes": {"label": "string"}, "relationships": {"tags": {"destination": "Tag", "inverse": "owner", "toMany": true}}}, "Tag": {"attributes": {"word": "string"}, "relationships": {"owner": {"destination": "Owner", "inverse": "tags"}}}}}"#
            )
        }
        let (b, c) = (try tagged("B"), try tagged("C"))
        let second = try mapping(
            #"{"sourceModel": "B", "destinationModel": "C", "entityMappings": [{"name": "OwnerToOwner", "type": "transform", "sourceEntity": "Owner", "destinationEntity": "Owner", "sourceExpression": "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Owner', 'label != nil'), $manager.sourceContext, NO)", "attributeMappings": {"label": "$source.label"}, "relationshipMappings": {"tags": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'TagToTag', $source)"}}, {"name": "TagToTag", "type": "transform", "sourceEntity": "Tag", "destinationEntity": "Tag", "attributeMappings": {"word": "$source.word"}, "relationshipMappings": {"owner": null}}]}"#
        )
        var migrator = StoreMigrator(models: [a, b, c], mappings: [second])
        migrator.fusesSteps = true
        let passes = migrator.passes(of: try migrator.plan(from: "A", to: "C"))
        #expect(passes.map(\.steps) == [0..<1, 1..<2])
        #expect(
            passes.last?.apart?.before
                == "entity mapping OwnerToOwner of the step after looks up what TagToTag makes, from an entity the step adds"
        )
    }

    /// A renaming that makes an ordered one-to-many unordered (a shelf's `books`, as
    /// AltStore 12 → 13 makes an app's permissions) carries the same members in no order.
    /// After a step that filters the books, it joins the pass, which writes them
    /// unordered. Before that step, it joins where the step keeps them unordered: its
    /// lookup of them finds the same books in whatever order. Where the step orders them
    /// again, in the order it reads them, which through the renaming would be the older
    /// version's, it runs apart and says why. The same stores either way, from positions
    /// out of key order.
    @Test(arguments: [(false, false), (true, false), (true, true)])
    func aRenamingThatMakesAnOrderedToManyUnorderedJoinsThePass(_ before: Bool, _ reordered: Bool) throws {
        func version(_ name: String, ordered: Bool) throws -> ObjectModel {
            try model(
                #"{"version": "\#(name)", "entities": {"Shelf": {"attributes": {"label": "string"}, "relationships": {"books": {"destination": "Book", "inverse": "shelf", "toMany": true, "ordered": \#(ordered)}}}, "Book": {"attributes": {"title": "string"}, "relationships": {"shelf": {"destination": "Shelf", "inverse": "books"}}}}}"#
            )
        }
        // (The filtering step first, or second, the renaming beside it.)
        let models = try [
            version("A", ordered: true), version("B", ordered: !before), version("C", ordered: reordered)
        ]
        let (from, to) = before ? ("B", "C") : ("A", "B")
        let filtering = try mapping(
            #"{"sourceModel": "\#(from)", "destinationModel": "\#(to)", "entityMappings": [{"name": "ShelfToShelf", "type": "transform", "sourceEntity": "Shelf", "destinationEntity": "Shelf", "attributeMappings": {"label": "$source.label"}, "relationshipMappings": {"books": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'BookToBook', $source.books)"}}, {"name": "BookToBook", "type": "transform", "sourceEntity": "Book", "destinationEntity": "Book", "sourceExpression": "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Book', 'title != nil'), $manager.sourceContext, NO)", "attributeMappings": {"title": "$source.title"}, "relationshipMappings": {"shelf": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'ShelfToShelf', $source.shelf)"}}]}"#
        )
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        let store = try Store.create(at: source, model: models[0])
        try Self.writeOwnersAndMembers(
            in: store, owners: ("Shelf", "label", "shelf", 4),
            members: (
                "Book", "title", "shelf", 30, text: "CASE WHEN i % 7 = 0 THEN NULL ELSE 'book ' || i END",
                owner: "(i * 3) % 4 + 1", position: "(i * 37) % 17"
            ))
        let (oneByOne, fused) = try Self.bothWays(
            models, [filtering], source: source, at: directory.path("Books.sqlite"),
            "before: \(before), reordered: \(reordered)")
        if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
        #expect(fused.fused == (reordered ? [false, false] : before ? [true, false] : [false, true]))
        var migrator = StoreMigrator(models: models, mappings: [filtering])
        migrator.fusesSteps = true
        let passes = migrator.passes(of: try migrator.plan(from: "A", to: "C"))
        if reordered {
            #expect(
                passes.last?.apart?.before
                    == "entity mapping ShelfToShelf of the step after fills books: it reads Shelf.books, which the step before makes unordered, in an order: read through, it would be the older version's (only a lookup into an unordered to-many, or a count, reads it)"
            )
        }
    }

    /// What the step after may read of a to-many the renaming before makes unordered: its
    /// count, and a lookup of it into an unordered to-many; not its members in an order,
    /// nor a lookup of them into an ordered one.
    @Test func aToManyMadeUnorderedIsReadThroughByItsCountAndByALookup() throws {
        let shelf = try model(
            #"{"version": "B", "entities": {"Shelf": {"attributes": {"label": "string"}, "relationships": {"books": {"destination": "Book", "inverse": "shelf", "toMany": true}}}, "Book": {"attributes": {"title": "string"}, "relationships": {"shelf": {"destination": "Shelf", "inverse": "books"}}}}}"#
        )
        let renamer = SourceRenamer(
            model: shelf, entities: ["Shelf": "Shelf", "Book": "Book"],
            properties: ["Shelf": ["label": "label", "books": "volumes"], "Book": ["title": "title", "shelf": "shelf"]],
            unordered: ["Shelf": ["books"]])
        let lookup =
            "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'BookToBook', $source.books)"
        var unordered = RelationshipDescription(name: "books", destination: "Book")
        unordered.isToMany = true
        var ordered = unordered
        ordered.isOrdered = true
        #expect(renamer.expression("$source.books.@count", source: "Shelf") == "$source.volumes.@count")
        #expect(renamer.expression(lookup, source: "Shelf", into: unordered)?.contains("$source.volumes") == true)
        #expect(renamer.expression(lookup, source: "Shelf", into: ordered) == nil)
        #expect(renamer.expression("$source.books[FIRST].title", source: "Shelf") == nil)
        #expect(renamer.expression("$source.books.title", source: "Shelf") == nil)
    }

    /// Two renamings before a step that cannot read through both: the first computes `n2`
    /// (a mapping file, `$source.name` under another name), the second renames it `twice`,
    /// and the step after filters on `twice.length`, which a fetch can read through the
    /// renaming but not as the first's expression (a key path through a computed
    /// attribute). The first pass takes the first renaming before the second, which runs
    /// its own mapping, rather than each step on its own; the chain ends as step by step.
    @Test func aPassTakesAsManyRenamingsBeforeItsStepAsTheStepCanRead() throws {
        let a = try model(
            #"{"version": "A", "entities": {"Item": {"attributes": {"name": "string", "n": "int64"}}}}"#)
        let b = try model(
            #"{"version": "B", "entities": {"Item": {"attributes": {"name": "string", "n": "int64", "n2": "string"}}}}"#
        )
        let c = try model(
            #"{"version": "C", "entities": {"Item": {"attributes": {"name": "string", "n": "int64", "twice": {"type": "string", "renamingIdentifier": "n2"}}}}}"#
        )
        let d = try model(
            #"{"version": "D", "entities": {"Item": {"attributes": {"name": "string", "twice": "string", "label": "string"}}}}"#
        )
        let first = try mapping(
            #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"name": "$source.name", "n": "$source.n", "n2": "$source.name"}}]}"#
        )
        let last = try mapping(
            #"{"sourceModel": "C", "destinationModel": "D", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "sourceExpression": "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Item', 'twice.length > 1'), $manager.sourceContext, NO)", "attributeMappings": {"name": "$source.name", "twice": "$source.twice", "label": "FUNCTION($source.name, 'uppercaseString')"}}]}"#
        )
        var migrator = StoreMigrator(models: [a, b, c, d], mappings: [first, last])
        migrator.fusesSteps = true
        let passes = migrator.passes(of: try migrator.plan(from: "A", to: "D"))
        #expect(passes.map(\.steps) == [0..<2, 2..<3])
        #expect(passes.first?.base == 1)
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        try seededStore(at: source, model: a, seed: #"{"Item": [{"name": "a", "n": 1}, {"name": "bb", "n": 2}]}"#)
        let (oneByOne, fused) = try Self.bothWays(
            [a, b, c, d], [first, last], source: source, at: directory.path("Items.sqlite"))
        if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
        #expect(fused.fused == [true, false, false])
    }

    /// Items (name, `value` of `type`) through an inferred renaming (B adds a note) to C,
    /// whose mapping keeps the named items and shows `shown` (an expression of
    /// `$source.value`) as text, dropping the value; the first item's value stored as the
    /// SQL `stored`: both ways (``bothWays``).
    static func throughARenamingThatCarries(_ type: String, stored: String, shown: String) throws -> (
        oneByOne: Chain, fused: Chain
    ) {
        func version(_ name: String, _ extra: String = "") throws -> ObjectModel {
            try model(
                #"{"version": "\#(name)", "entities": {"Item": {"attributes": {"name": "string", "value": "\#(type)"\#(extra)}}}}"#
            )
        }
        let (a, b) = (try version("A"), try version("B", #", "note": "string""#))
        let c = try model(
            #"{"version": "C", "entities": {"Item": {"attributes": {"name": "string", "shown": "string"}}}}"#)
        let second = try mapping(
            #"{"sourceModel": "B", "destinationModel": "C", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "sourceExpression": "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Item', 'name != nil'), $manager.sourceContext, NO)", "attributeMappings": {"name": "$source.name", "shown": "\#(shown)"}}]}"#
        )
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        try seededStore(at: source, model: a, seed: #"{"Item": [{"name": "a"}, {"name": "b"}]}"#)
        try Database(path: source).execute("UPDATE ZITEM SET ZVALUE = \(stored) WHERE Z_PK = 1")
        return try Self.bothWays(
            [a, b, c], [second], source: source, at: directory.path("Items.sqlite"), "\(type) \(stored)")
    }

    /// A renaming that carries a Decimal attribute reads each value as a decimal and
    /// writes it back as a double: the same double, and so the same decimal, where the
    /// column holds a double a Decimal holds. It joins the pass before the step after it
    /// where the pass's scan finds every value so (the double nearest 19.99). A store
    /// that holds another (an integer beyond 2^53, which the renaming rounds to a double;
    /// text; 1e300, which it reads as 0) runs the steps one by one, with the same store
    /// either way: the step after shows the decimal it reads.
    @Test(arguments: [
        ("19.99", true), ("-2.5e-7", true), ("9007199254740993", false), ("'12 apples'", false),
        ("1e300", false)
    ])
    func aRenamingThatCarriesADecimalJoinsThePassWhereItsValuesAreKept(_ price: (sql: String, kept: Bool)) throws {
        let (oneByOne, fused) = try Self.throughARenamingThatCarries(
            "decimal", stored: price.sql, shown: "CAST($source.value, 'NSString')")
        if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
        #expect(fused.fused == (price.kept ? [true, false] : [false, false]), "price \(price.sql)")
    }

    /// A renaming that carries a UUID attribute reads each value as its text and writes
    /// it back as 16 bytes: the same bytes where the column holds 16 bytes, as Core Data
    /// writes one. It joins the pass before the step after it where the pass's scan finds
    /// every value so; a store that holds a UUID as text (read in upper case, written back
    /// as bytes) or text that is no UUID (which the renaming refuses, where the step after,
    /// which shows it as text and drops it, would not) runs the steps one by one, with the
    /// same store or error either way.
    @Test(arguments: [
        ("X'6F9619FF8B86D011B42D00C04FC964FF'", true), ("'6f9619ff-8b86-d011-b42d-00c04fc964ff'", false),
        ("'not a uuid'", false)
    ])
    func aRenamingThatCarriesAUUIDJoinsThePassWhereItsValuesAreKept(_ code: (sql: String, kept: Bool)) throws {
        let (oneByOne, fused) = try Self.throughARenamingThatCarries("uuid", stored: code.sql, shown: "$source.value")
        if code.kept, case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
        if case .store = oneByOne.outcome {
            #expect(fused.fused == (code.kept ? [true, false] : [false, false]), "code \(code.sql)")
        }
    }

    /// After a step, a renaming that carries a Decimal attribute composes with what that
    /// step writes to it. Where that is a decimal or an integer read as it is, the double
    /// nearest it reads back as itself; where it is a double, the pass's scan checks that
    /// each row's is one a Decimal writes back as itself (1e300 read as a decimal is 0;
    /// written, NULL).
    @Test func aRenamingAfterAStepCarriesTheDecimalsItWrites() throws {
        let a = try model(
            #"{"version": "A", "entities": {"Item": {"attributes": {"ratio": "double", "amount": "decimal", "count": "int64"}}}}"#
        )
        let b = try model(
            #"{"version": "B", "entities": {"Item": {"attributes": {"ratio": "double", "amount": "decimal", "count": "int64", "total": "decimal"}}}}"#
        )
        let c = try model(
            #"{"version": "C", "entities": {"Item": {"attributes": {"ratio": "double", "amount": "decimal", "count": "int64", "total": "decimal", "note": "string"}}}}"#
        )
        let relabeling = try Relabeling(try StoreMigrator(models: [a, b, c], mappings: []).plan(from: "B", to: "C")[0])
        for (total, checked) in [
            ("$source.amount", false), ("$source.count", false), ("$source.ratio", true),
            ("$source.ratio * 1.03", true)
        ] {
            let before = try mapping(
                #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"total": "\#(total)"}}]}"#
            )
            let composed = try relabeling.compose(before, source: a, policies: PolicyRegistry())
            #expect(
                composed.checks.filter(\.isWrittenAgain).map(\.expression) == (checked ? [total] : []), "\(total)")
        }
        // Run: one pass, the same stores as the steps one by one, whatever the ratios: the
        // scan finds each decimal written reads back as written, past 1e127 too (2.9e144
        // * 3, read as 87 followed by 16 zeros times 10^127), and NULL where no Decimal
        // holds it (1e300 * 3). (Before Decimals past 1e127 were read so, 2.9e144 and 4e145
        // read back as 0, and the steps ran one by one.)
        let computing = try mapping(
            #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"ratio": "$source.ratio", "amount": "$source.amount", "count": "$source.count", "total": "TERNARY($source.ratio == nil, nil, $source.ratio * 3)"}}]}"#
        )
        for odd in ["0.5", "1e300", "-0.0", "1e-130", "2.9e144", "4e145", "1.1e164", "2e165"] {
            let directory = try TemporaryDirectory()
            let source = directory.path("A.sqlite")
            let store = try Store.create(at: source, model: a)
            let item = try #require(store.layout.entities["Item"])
            let ratio = try #require(item.attributeColumns["ratio"])
            try store.database.execute(
                """
                WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 40)
                INSERT INTO \(item.table) (Z_PK, Z_ENT, Z_OPT, \(ratio))
                SELECT i, \(item.number), 1, CASE i % 5 WHEN 0 THEN NULL WHEN 1 THEN 19.99 WHEN 2 THEN \(odd)
                    ELSE i * 0.1 END FROM k;
                UPDATE Z_PRIMARYKEY SET Z_MAX = 40 WHERE Z_ENT = \(item.number);
                """)
            let (oneByOne, fused) = try Self.bothWays(
                [a, b, c], [computing], source: source, at: directory.path("Items.sqlite"), "odd ratio \(odd)")
            guard case .store(let tables, _) = oneByOne.outcome else {
                Issue.record("step by step failed: \(oneByOne.outcome)")
                continue
            }
            let apart = try Self.apart([a, b, c], [computing])
            #expect(fused.fused == [false, true], "odd ratio \(odd): \(apart)")
            #expect(tables["ZITEM"]?.count == 40)
        }
    }

    /// Uniqueness constraints are carried, not enforced: a renaming whose versions add,
    /// drop, or change them, or put a computed attribute in one, writes the same rows,
    /// duplicates kept. It runs in one pass with the step after it, with the same stores
    /// as step by step.
    @Test(arguments: [
        (#"[["code"]]"#, #"[["code", "name"]]"#), ("[]", #"[["code"]]"#), (#"[["name"]]"#, "[]"),
        (#"[["code"]]"#, #"[["rank"]]"#)
    ])
    func aRenamingThatChangesUniquenessConstraintsJoinsThePass(_ constraints: (a: String, b: String)) throws {
        func version(_ name: String, _ constraints: String, _ extra: String = "") throws -> ObjectModel {
            try model(
                #"{"version": "\#(name)", "entities": {"Item": {"uniquenessConstraints": \#(constraints), "attributes": {"name": "string", "code": "int32"\#(extra)}}}}"#
            )
        }
        let a = try version("A", constraints.a), b = try version("B", constraints.b, #", "rank": "int64""#)
        let c = try version("C", "[]", #", "rank": "int64", "label": "string""#)
        #expect(a.entity(named: "Item")?.uniquenessConstraints != b.entity(named: "Item")?.uniquenessConstraints)
        // A → B renames and computes rank, which one of B's constraints holds; B → C filters.
        let first = try mapping(
            #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"name": "$source.name", "code": "$source.code", "rank": "$source.code * 2"}}]}"#
        )
        let second = try mapping(
            #"{"sourceModel": "B", "destinationModel": "C", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Item\", \"code > 1\"), $manager.sourceContext, NO)", "attributeMappings": {"name": "$source.name", "code": "$source.code", "rank": "$source.rank", "label": "FUNCTION($source.name, 'lowercaseString')"}}]}"#
        )
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        try seededStore(
            at: source, model: a,
            seed:
                #"{"Item": [{"name": "a", "code": 2}, {"name": "a", "code": 2}, {"name": "b", "code": 3}, {"name": "c", "code": 1}]}"#
        )
        let (oneByOne, fused) = try Self.bothWays(
            [a, b, c], [first, second], source: source, at: directory.path("Items.sqlite"), "\(constraints)")
        if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
        #expect(fused.fused == [true, false], "\(constraints)")
    }

    /// A renaming of entities that share a table, before a step that reads them together
    /// (a fetch that includes sub-entities): the rows come in another order after the
    /// renaming, which numbers them entity by entity, so the renaming runs on its own.
    /// Versions A, B and C of a chain whose renaming step is the first or the last:
    /// `version(name, renamed, from)` gives each, with the new names where `renamed`, and
    /// the old ones as renaming identifiers where `from` (from the version the renaming
    /// reaches on: an identifier is compared with the one of the version before, which
    /// is its name where it has none).
    static func aroundARenaming(
        renamingFirst: Bool, _ version: (String, Bool, Bool) throws -> ObjectModel
    ) throws -> [ObjectModel] {
        [
            try version("A", false, false), try version("B", renamingFirst, renamingFirst),
            try version("C", true, true)
        ]
    }

    /// The inferred renaming from `from` to `to` as a mapping file that also links the
    /// unordered side of an ordered relationship, `relationship`, which inference sets
    /// only through the ordered side: by the lookup inference gives a relationship, and
    /// first among its mapping's links.
    static func renaming(_ from: ObjectModel, _ to: ObjectModel, linking relationship: String) throws -> MappingModel {
        var renaming = try MappingModel.inferred(from: from, to: to)
        for i in renaming.entityMappings.indices {
            guard
                let j = renaming.entityMappings[i].relationshipMappings.firstIndex(where: {
                    $0.name == relationship
                })
            else { continue }
            var linked = renaming.entityMappings[i].relationshipMappings.remove(at: j)
            linked.valueExpression = MappingInference.relationshipRead(relationship)
            renaming.entityMappings[i].relationshipMappings.insert(linked, at: 0)
        }
        renaming.file = "renaming.mapping.json"
        return renaming
    }

    /// The mapping of the step beside a renaming in `models` (A → B → C, the renaming
    /// first or last): the inferred one, with `attribute` of each entity in `entities`
    /// (all, with nil) computed by `expression`.
    static func computing(
        _ models: [ObjectModel], renamingFirst: Bool, _ attribute: String = "name",
        as expression: String = "TERNARY($source.name == nil, '-', $source.name)", of entities: Set<String>? = nil
    ) throws -> MappingModel {
        let (from, to) = renamingFirst ? (models[1], models[2]) : (models[0], models[1])
        var computing = try MappingModel.inferred(from: from, to: to)
        computing.entityMappings = computing.entityMappings.map { mapping in
            var mapping = mapping
            guard entities?.contains(mapping.sourceEntity ?? "") ?? true else { return mapping }
            mapping.attributeMappings.removeAll { $0.name == attribute }
            mapping.attributeMappings.append(PropertyMapping(name: attribute, valueExpression: expression))
            return mapping
        }
        computing.file = "computing.mapping.json"
        return computing
    }

    /// Runs the chain `models` (A → B → C) both ways (``bothWays``), which `plan` runs in
    /// one pass: the counts step by step and the fused run; nil, the failure recorded,
    /// where step by step fails.
    static func aroundARenamingBothWays(
        _ models: [ObjectModel], _ mappings: [MappingModel], source: String, at path: String,
        _ what: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> (counts: [[Int]], fused: Chain)? {
        let (oneByOne, fused) = try bothWays(models, mappings, source: source, at: path, what)
        let apart = try Self.apart(models, mappings)
        #expect(apart.isEmpty, "\(what): \(apart)", sourceLocation: sourceLocation)
        guard case .store(_, let counts) = oneByOne.outcome else {
            Issue.record("step by step failed: \(oneByOne.outcome)", sourceLocation: sourceLocation)
            return nil
        }
        return (counts, fused)
    }

    /// Why each pass of the chain `models` (from A to C) with `mappings` runs apart from
    /// the one before, as `plan` says it.
    static func apart(_ models: [ObjectModel], _ mappings: [MappingModel]) throws -> [StoreMigrator.Pass.Apart] {
        let migrator = StoreMigrator(models: models, mappings: mappings)
        return migrator.passes(of: try migrator.plan(from: "A", to: "C")).compactMap(\.apart)
    }

    /// A renaming of people whose cars are `Car` and `SportCar` rows of one table, each
    /// entity copied by a mapping of its own, before or after a step that computes the
    /// cars' models. Where the renaming copies cars, then people, then sport cars, a
    /// person's `cars` and `favorites` (a many-to-many) gain only their sport cars when it
    /// links them, and its report counts those owners alone; a car's `fans` counts cars,
    /// not sport cars, which share its table. Ordered, the cars keep their order (the
    /// renaming, inferred, sets a car's owner only through the people's `cars`). After the
    /// step, the renaming numbers the table's rows entity after entity in the order of its
    /// mappings: where that is the order the step writes them in (cars, then sport cars),
    /// it joins the pass; sport cars first, it runs on its own.
    @Test(arguments: [
        (true, false, ["Car", "Person", "SportCar"], true), (false, false, ["Car", "Person", "SportCar"], true),
        (true, true, ["Person", "Car", "SportCar"], true), (true, true, ["Car", "Person", "SportCar"], true),
        (false, true, ["Person", "SportCar", "Car"], false)
    ])
    func aRenamingOfRelationshipsIntoAHierarchyJoinsThePass(
        _ renamingFirst: Bool, _ ordered: Bool, _ order: [String], _ joins: Bool
    ) throws {
        func version(_ name: String, renamed: Bool, from old: Bool) throws -> ObjectModel {
            let person = renamed ? "Driver" : "Person"
            let identifier = old ? #", "renamingIdentifier": "Person""# : ""
            return try model(
                #"{"version": "\#(name)", "entities": {"\#(person)": {"attributes": {"name": "string"}\#(identifier), "relationships": {"cars": {"destination": "Car", "inverse": "owner", "toMany": true, "ordered": \#(ordered)}, "favorites": {"destination": "Car", "inverse": "fans", "toMany": true}}}, "Car": {"attributes": {"model": "string"}, "relationships": {"owner": {"destination": "\#(person)", "inverse": "cars"}, "fans": {"destination": "\#(person)", "inverse": "favorites", "toMany": true}}}, "SportCar": {"parent": "Car", "attributes": {"speed": "int32"}}}}"#
            )
        }
        let models = try Self.aroundARenaming(renamingFirst: renamingFirst, version)
        let a = models[0]
        // The renaming's mappings in `order`; the other step's computes each car's model.
        let (renamingFrom, renamingTo) = renamingFirst ? (models[0], models[1]) : (models[1], models[2])
        let inferred = try MappingModel.inferred(from: renamingFrom, to: renamingTo)
        let renaming = MappingModel(
            sourceModel: inferred.sourceModel, destinationModel: inferred.destinationModel,
            entityMappings: order.map { entity in inferred.entityMappings.first { $0.sourceEntity == entity }! },
            file: "renaming.mapping.json")
        let computing = try Self.computing(
            models, renamingFirst: renamingFirst, "model", as: "FUNCTION($source.model, 'uppercaseString')",
            of: ["Car", "SportCar"])
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        try seededStore(
            at: source, model: a,
            seed: #"""
                {"Person": [{"$id": "p1", "name": "p1"}, {"$id": "p2", "name": "p2"}, {"$id": "p3", "name": "p3"}, {"$id": "p4", "name": "p4"}],
                 "Car": [{"model": "c1", "owner": {"$ref": "p1"}, "fans": [{"$ref": "p2"}, {"$ref": "p3"}]}, {"model": "c2", "owner": {"$ref": "p2"}}, {"model": "c3", "fans": [{"$ref": "p1"}]}],
                 "SportCar": [{"model": "s1", "speed": 1, "owner": {"$ref": "p3"}, "fans": [{"$ref": "p4"}]}, {"model": "s2", "speed": 2, "owner": {"$ref": "p1"}}, {"model": "s3", "speed": 3, "owner": {"$ref": "p1"}, "fans": [{"$ref": "p1"}, {"$ref": "p2"}]}, {"model": "s4", "speed": 4}]}
                """#)
        let (oneByOne, fused) = try Self.bothWays(
            models, [renaming, computing], source: source, at: directory.path("Cars.sqlite"),
            "renaming first: \(renamingFirst), ordered: \(ordered), \(order)")
        guard case .store(_, let counts) = oneByOne.outcome else {
            Issue.record("step by step failed: \(oneByOne.outcome)")
            return
        }
        let apart = try Self.apart(models, [renaming, computing])
        #expect(fused.fused.contains(true) == joins, "\(apart)")
        // (The renaming's people gain sport cars from two owners, and favorites from three.)
        let people = (renamingFirst ? 0 : 3) + order.firstIndex(of: "Person")!
        if !ordered, order == ["Car", "Person", "SportCar"] { #expect(counts[people][2] == 2 + 3) }
    }

    /// A renaming of one-to-ones within an entity (a node's `next` and `previous`, a
    /// person's `spouse`, its own inverse), before or after a step that computes names. Each
    /// side counts every instance, and the partners come out the same. From a store whose
    /// partners disagree (a node's `previous` that is not the node whose `next` it is), the
    /// renaming first would take a partner from an earlier node: the pass leaves the store
    /// to the steps one by one.
    @Test(arguments: [(true, false, true), (false, false, true), (true, true, false)])
    func aRenamingOfOneToOnesWithinAnEntityJoinsThePass(_ renamingFirst: Bool, _ disagreeing: Bool, _ joins: Bool)
        throws
    {
        func version(_ name: String, renamed: Bool, from old: Bool) throws -> ObjectModel {
            let (next, spouse) = renamed ? ("following", "partner") : ("next", "spouse")
            let (nextID, spouseID) =
                old ? (#", "renamingIdentifier": "next""#, #", "renamingIdentifier": "spouse""#) : ("", "")
            return try model(
                #"{"version": "\#(name)", "entities": {"Node": {"attributes": {"name": "string"}, "relationships": {"\#(next)": {"destination": "Node", "inverse": "previous"\#(nextID)}, "previous": {"destination": "Node", "inverse": "\#(next)"}}}, "Person": {"attributes": {"name": "string"}, "relationships": {"\#(spouse)": {"destination": "Person", "inverse": "\#(spouse)"\#(spouseID)}}}}}"#
            )
        }
        let models = try Self.aroundARenaming(renamingFirst: renamingFirst, version)
        // (Upper-cased: no value SQL can check, so the step is the one whose mapping runs,
        // and a renaming before it is read through.)
        let computing = try Self.computing(
            models, renamingFirst: renamingFirst, as: "FUNCTION($source.name, 'uppercaseString')")
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        let store = try seededStore(
            at: source, model: models[0],
            seed: #"""
                {"Node": [{"$id": "n1", "name": "n1", "next": {"$ref": "n2"}}, {"$id": "n2", "name": "n2", "next": {"$ref": "n3"}}, {"$id": "n3", "name": "n3", "next": {"$ref": "n4"}}, {"$id": "n4", "name": "n4"}, {"name": "n5"}],
                 "Person": [{"$id": "p1", "name": "p1", "spouse": {"$ref": "p2"}}, {"$id": "p2", "name": "p2"}, {"name": "p3"}]}
                """#)
        if disagreeing {
            let layout = try #require(store.layout.entities["Node"])
            // (n3's `next` names n2 too, whose `previous` is n1: linked object by object,
            // n3 takes n2 from n1; n4's `previous` still names n3.)
            let next = try #require(layout.toOneColumns["next"]?.key)
            try store.database.execute(
                "UPDATE \(layout.table) SET \(next) = (SELECT Z_PK FROM \(layout.table) WHERE ZNAME = 'n2') WHERE ZNAME = 'n3'"
            )
        }
        guard
            let (counts, fused) = try Self.aroundARenamingBothWays(
                models, [computing], source: source, at: directory.path("Nodes.sqlite"),
                "renaming first: \(renamingFirst), disagreeing: \(disagreeing)")
        else { return }
        #expect(fused.fused.contains(true) == joins)
        // (Each node counts both its sides, each person its spouse.)
        #expect(counts.prefix(2).map { $0[2] } == [5 * 2, 3], "\(counts)")
    }

    /// A renaming of an ordered many-to-many (a playlist's ordered `songs`, a song's
    /// unordered `playlists`), before or after a step that computes names, from positions
    /// with gaps and ties out of key order. Inferred, it sets the songs' side only through
    /// the playlists' (`MappingInference`); by a mapping file that links both sides, the
    /// playlists' mapping first, the songs' links, after, find every pair made. Either
    /// way it links each playlist's songs in the order the store gives, at 1, 2, 3…: it
    /// joins the pass, which after the step numbers them so. With the songs' mapping
    /// first, each would join its playlist's end as the songs are linked: it runs apart,
    /// and says why. The same stores and counts either way.
    @Test(arguments: [
        (true, false, false), (false, false, false), (true, true, false), (false, true, false), (true, true, true),
        (false, true, true)
    ])
    func aRenamingOfAnOrderedManyToManyJoinsThePassWhereItKeepsItsOrder(
        _ renamingFirst: Bool, _ linksBoth: Bool, _ songsFirst: Bool
    ) throws {
        func version(_ name: String, renamed: Bool, from old: Bool) throws -> ObjectModel {
            let songs = renamed ? "tracks" : "songs"
            let identifier = old ? #", "renamingIdentifier": "songs""# : ""
            return try model(
                #"{"version": "\#(name)", "entities": {"Playlist": {"attributes": {"name": "string"}, "relationships": {"\#(songs)": {"destination": "Song", "inverse": "playlists", "toMany": true, "ordered": true\#(identifier)}}}, "Song": {"attributes": {"name": "string"}, "relationships": {"playlists": {"destination": "Playlist", "inverse": "\#(songs)", "toMany": true}}}}}"#
            )
        }
        let models = try Self.aroundARenaming(renamingFirst: renamingFirst, version)
        // (Upper-cased: no value SQL can check, so the step is the one whose mapping runs,
        // and the renaming is read through or written through.)
        var mappings = [
            try Self.computing(models, renamingFirst: renamingFirst, as: "FUNCTION($source.name, 'uppercaseString')")
        ]
        if linksBoth {
            let (from, to) = renamingFirst ? (models[0], models[1]) : (models[1], models[2])
            var renaming = try Self.renaming(from, to, linking: "playlists")
            renaming.entityMappings.sort {
                ($0.sourceEntity == "Song") == songsFirst && $1.sourceEntity != $0.sourceEntity
            }
            mappings.append(renaming)
        }
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        let store = try seededStore(
            at: source, model: models[0],
            seed: #"""
                {"Playlist": [{"name": "p1", "songs": [{"$ref": "s3"}, {"$ref": "s1"}, {"$ref": "s4"}, {"$ref": "s2"}]}, {"name": "p2", "songs": [{"$ref": "s2"}, {"$ref": "s4"}]}, {"name": "p3"}],
                 "Song": [{"$id": "s1", "name": "s1"}, {"$id": "s2", "name": "s2"}, {"$id": "s3", "name": "s3"}, {"$id": "s4", "name": "s4"}]}
                """#)
        let side = try #require(store.layout.entities["Playlist"]?.joinTables["songs"])
        let order = try #require(side.orderColumn)
        // (p1's songs at 2, 4, 6, 6: a gap and a tie, which key order breaks.)
        try store.database.execute(
            "UPDATE \(side.table) SET \(order) = min(\(order) * 2, 6) WHERE \(side.sourceColumn) = 1")
        let what = "renaming first: \(renamingFirst), both sides: \(linksBoth), songs first: \(songsFirst)"
        let (oneByOne, fused) = try Self.bothWays(
            models, mappings, source: source, at: directory.path("Songs.sqlite"), what)
        guard case .store(_, let counts) = oneByOne.outcome else {
            Issue.record("step by step failed: \(oneByOne.outcome)")
            return
        }
        let apart = try Self.apart(models, mappings)
        #expect(fused.fused.contains(true) == !songsFirst, "\(what): \(apart)")
        if songsFirst {
            #expect(
                apart.map { renamingFirst ? $0.before : $0.after }
                    == ["Playlist.songs is ordered, and the step may change its order"], "\(what): \(apart)")
        }
        // (The renaming's mappings count the two playlists with songs, and the four songs
        // where their link comes first.)
        let renaming = counts[(renamingFirst ? 0 : 2)...].prefix(2).map { $0[2] }
        #expect(renaming.sorted() == (songsFirst ? [0, 4] : [0, 2]), "\(what): \(counts)")
    }

    /// After a step, the pass gives an ordered many-to-many a renaming keeps in order the
    /// positions the renaming gives, in its join table: each owner's members 1, 2, 3… in
    /// the order a context reads them (gaps, a position that is no integer, one missing).
    /// (A step's links only add pairs, each at its owner's end, so no run has given it
    /// positions to number yet: the scan before finds none. Here the store is made so.)
    @Test func thePassNumbersAnOrderedManyToManyInItsJoinTable() throws {
        func version(_ name: String, _ songs: String, _ identifier: String = "") throws -> ObjectModel {
            try model(
                #"{"version": "\#(name)", "entities": {"Playlist": {"attributes": {"name": "string"}, "relationships": {"\#(songs)": {"destination": "Song", "inverse": "playlists", "toMany": true, "ordered": true\#(identifier)}}}, "Song": {"attributes": {"name": "string"}, "relationships": {"playlists": {"destination": "Playlist", "inverse": "\#(songs)", "toMany": true}}}}}"#
            )
        }
        let (b, c) = (try version("B", "songs"), try version("C", "tracks", #", "renamingIdentifier": "songs""#))
        let relabeling = try Relabeling(try StoreMigrator(models: [b, c], mappings: []).plan(from: "B", to: "C")[0])
        #expect(relabeling.keptInOrder == [Relabeling.Member("Playlist", "songs")])
        let directory = try TemporaryDirectory()
        let store = try seededStore(
            at: directory.path("C.sqlite"), model: c,
            seed: #"""
                {"Playlist": [{"name": "p1", "tracks": [{"$ref": "s1"}, {"$ref": "s2"}, {"$ref": "s3"}, {"$ref": "s4"}, {"$ref": "s5"}]}, {"name": "p2", "tracks": [{"$ref": "s2"}, {"$ref": "s1"}]}],
                 "Song": [{"$id": "s1", "name": "s1"}, {"$id": "s2", "name": "s2"}, {"$id": "s3", "name": "s3"}, {"$id": "s4", "name": "s4"}, {"$id": "s5", "name": "s5"}]}
                """#)
        let side = try #require(store.layout.entities["Playlist"]?.joinTables["tracks"])
        let order = try #require(side.orderColumn)
        let (owner, member) = (side.sourceColumn, side.destinationColumn)
        // (p1's songs at 7, 3.5, 3, NULL, 2: a context reads s5 s2 s3 s1 s4, the one
        // without a position last, and 3.5 as 3, tied with s3 and before it, as SQL gives
        // them.)
        try store.database.execute(
            "UPDATE \(side.table) SET \(order) = CASE \(member) WHEN 1 THEN 7 WHEN 2 THEN 3.5 WHEN 3 THEN 3 WHEN 4 THEN NULL ELSE 2 END WHERE \(owner) = 1"
        )
        func positions() throws -> [[Int64]] {
            let statement = try store.database.prepare(
                "SELECT \(owner), \(member), \(order) FROM \(side.table) ORDER BY \(owner), \(member)")
            var rows: [[Int64]] = []
            while try statement.step() {
                rows.append([statement.int64(at: 0), statement.int64(at: 1), statement.int64(at: 2)])
            }
            return rows
        }
        // (The order a context reads, which numbering must keep.)
        func read() throws -> [String] {
            let context = ObjectContext(store: try Store.open(at: directory.path("C.sqlite"), model: c))
            let p1 = try #require(
                try context.fetch(FetchRequest(entityName: "Playlist", predicate: "name == 'p1'")).first)
            return try (p1.value(forKey: "tracks").collectionElements ?? []).compactMap {
                guard case .string(let name)? = $0.managedObject?["name"] else { return nil }
                return name
            }
        }
        let before = try read()
        #expect(before == ["s5", "s3", "s2", "s1", "s4"])
        try relabeling.givePositions(in: store.database, layout: store.layout, locate: relabeling.locateAfter([]))
        #expect(try positions() == [[1, 1, 4], [1, 2, 3], [1, 3, 2], [1, 4, 5], [1, 5, 1], [2, 1, 2], [2, 2, 1]])
        #expect(try read() == before)
    }

    /// A renaming of a folder's ordered `children` whose `parent` it links too, as an
    /// Xcode mapping model maps them (either first), before or after a step that computes
    /// names. Object by object in key order, a folder's children whose own link ran first
    /// join its end in key order, and its own link adds the others as the store holds
    /// them: after the step, the pass numbers them so; before it, the pass reads the
    /// store through where it holds them so, and leaves it to the steps one by one where
    /// not (f3's children f5, f1, f6, which the renaming makes f1, f5, f6). A folder that is
    /// its own child (f7) is among those linked first where the parent is linked first:
    /// f7, f8 then, f8, f7 otherwise. The same stores and counts either way.
    @Test(arguments: [
        (true, false, true), (true, true, true), (true, false, false), (true, true, false), (false, false, false),
        (false, true, false)
    ])
    func aRenamingOfAnOrderedToManyWithinAnEntityWhoseToOneItLinksJoinsThePass(
        _ renamingFirst: Bool, _ parentFirst: Bool, _ heldSo: Bool
    ) throws {
        func version(_ name: String, renamed: Bool, from old: Bool) throws -> ObjectModel {
            let children = renamed ? "subfolders" : "children"
            let identifier = old ? #", "renamingIdentifier": "children""# : ""
            return try model(
                #"{"version": "\#(name)", "entities": {"Folder": {"attributes": {"name": "string"}, "relationships": {"\#(children)": {"destination": "Folder", "inverse": "parent", "toMany": true, "ordered": true\#(identifier)}, "parent": {"destination": "Folder", "inverse": "\#(children)"}}}}}"#
            )
        }
        let models = try Self.aroundARenaming(renamingFirst: renamingFirst, version)
        let (from, to) = renamingFirst ? (models[0], models[1]) : (models[1], models[2])
        var renaming = try Self.renaming(from, to, linking: "parent")
        if !parentFirst { renaming.entityMappings[0].relationshipMappings.reverse() }
        let mappings = [
            try Self.computing(models, renamingFirst: renamingFirst, as: "FUNCTION($source.name, 'uppercaseString')"),
            renaming
        ]
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        let f3 =
            heldSo
            ? #"[{"$ref": "f1"}, {"$ref": "f5"}, {"$ref": "f6"}]"#
            : #"[{"$ref": "f5"}, {"$ref": "f1"}, {"$ref": "f6"}]"#
        let f7 = heldSo == parentFirst ? #"[{"$ref": "f7"}, {"$ref": "f8"}]"# : #"[{"$ref": "f8"}, {"$ref": "f7"}]"#
        try seededStore(
            at: source, model: models[0],
            seed: #"""
                {"Folder": [{"$id": "f1", "name": "f1"}, {"$id": "f2", "name": "f2"}, {"$id": "f3", "name": "f3", "children": \#(f3)}, {"$id": "f4", "name": "f4"}, {"$id": "f5", "name": "f5"}, {"$id": "f6", "name": "f6", "children": [{"$ref": "f2"}, {"$ref": "f4"}]}, {"$id": "f7", "name": "f7", "children": \#(f7)}, {"$id": "f8", "name": "f8"}]}
                """#)
        let what = "renaming first: \(renamingFirst), parent first: \(parentFirst), held so: \(heldSo)"
        let (oneByOne, fused) = try Self.bothWays(
            models, mappings, source: source, at: directory.path("Folders.sqlite"), what)
        guard case .store = oneByOne.outcome else {
            Issue.record("step by step failed: \(oneByOne.outcome)")
            return
        }
        #expect(try Self.apart(models, mappings).isEmpty, "\(what)")
        #expect(fused.fused == (renamingFirst ? [heldSo, false] : [false, true]), "\(what)")
    }

    /// A renaming of a to-many that is its own inverse (a person's `friends`), before or
    /// after a step that computes names. A context reads an owner's members from the join
    /// table rows that name it first, and links them so: each owner with a member gains
    /// them when its own link runs, whether or not the rows that name it second hold the
    /// same pairs, and the report counts it. The renaming copies the rows as they are.
    @Test(arguments: [true, false])
    func aRenamingOfAToManyThatIsItsOwnInverseJoinsThePass(_ renamingFirst: Bool) throws {
        func version(_ name: String, renamed: Bool, from old: Bool) throws -> ObjectModel {
            let friends = renamed ? "companions" : "friends"
            let identifier = old ? #", "renamingIdentifier": "friends""# : ""
            return try model(
                #"{"version": "\#(name)", "entities": {"Person": {"attributes": {"name": "string"}, "relationships": {"\#(friends)": {"destination": "Person", "inverse": "\#(friends)", "toMany": true\#(identifier)}}}}}"#
            )
        }
        let models = try Self.aroundARenaming(renamingFirst: renamingFirst, version)
        let computing = try Self.computing(models, renamingFirst: renamingFirst)
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        // (p2 and p4 name each other; p1 names p2 and p3, which name it not; p3 is its own
        // friend; p5 has none.)
        try seededStore(
            at: source, model: models[0],
            seed: #"""
                {"Person": [{"$id": "p1", "name": "p1", "friends": [{"$ref": "p2"}, {"$ref": "p3"}]}, {"$id": "p2", "name": "p2", "friends": [{"$ref": "p4"}]}, {"$id": "p3", "name": "p3", "friends": [{"$ref": "p3"}]}, {"$id": "p4", "name": "p4", "friends": [{"$ref": "p2"}]}, {"name": "p5"}]}
                """#)
        guard
            let (counts, fused) = try Self.aroundARenamingBothWays(
                models, [computing], source: source, at: directory.path("People.sqlite"),
                "renaming first: \(renamingFirst)")
        else { return }
        #expect(fused.fused.contains(true))
        // (p1 to p4 have a member each.)
        #expect(counts[renamingFirst ? 0 : 1][2] == 4, "\(counts)")
    }

    /// A renaming of an ordered to-many within an entity (a folder's `children`, whose
    /// `parent` inference sets only through it), before or after a step that computes
    /// names: the renaming links each folder's children in the order the store gives, and
    /// counts every folder that has one. The step after it moves no child, so it keeps the
    /// order; before it, it reads the store's.
    @Test(arguments: [true, false])
    func aRenamingOfAnOrderedToManyWithinAnEntityJoinsThePass(_ renamingFirst: Bool) throws {
        func version(_ name: String, renamed: Bool, from old: Bool) throws -> ObjectModel {
            let children = renamed ? "subfolders" : "children"
            let identifier = old ? #", "renamingIdentifier": "children""# : ""
            return try model(
                #"{"version": "\#(name)", "entities": {"Folder": {"attributes": {"name": "string"}, "relationships": {"\#(children)": {"destination": "Folder", "inverse": "parent", "toMany": true, "ordered": true\#(identifier)}, "parent": {"destination": "Folder", "inverse": "\#(children)"}}}}}"#
            )
        }
        let models = try Self.aroundARenaming(renamingFirst: renamingFirst, version)
        let computing = try Self.computing(models, renamingFirst: renamingFirst)
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        // (Children in an order other than their keys': f5 before f3 in f1.)
        let store = try seededStore(
            at: source, model: models[0],
            seed: #"""
                {"Folder": [{"$id": "f1", "name": "f1", "children": [{"$ref": "f2"}, {"$ref": "f5"}, {"$ref": "f3"}]}, {"$id": "f2", "name": "f2", "children": [{"$ref": "f4"}]}, {"$id": "f3", "name": "f3"}, {"$id": "f4", "name": "f4"}, {"$id": "f5", "name": "f5"}, {"name": "f6"}]}
                """#)
        let layout = try #require(store.layout.entities["Folder"])
        let order = try #require(layout.toOneColumns["parent"]?.order)
        // (And positions with a gap and a tie, which the renaming numbers 1, 2, 3… again.)
        try store.database.execute("UPDATE \(layout.table) SET \(order) = \(order) * 2 WHERE ZNAME = 'f3'")
        try store.database.execute("UPDATE \(layout.table) SET \(order) = 1 WHERE ZNAME = 'f5'")
        guard
            let (counts, fused) = try Self.aroundARenamingBothWays(
                models, [computing], source: source, at: directory.path("Folders.sqlite"),
                "renaming first: \(renamingFirst)")
        else { return }
        #expect(fused.fused.contains(true))
        // (The renaming counts the two folders with children.)
        #expect(counts[renamingFirst ? 0 : 1][2] == 2, "\(counts)")
    }

    @Test func aRenamingOfAHierarchyRunsOnItsOwnBeforeAFetchOfSeveralOfItsEntities() throws {
        let a = try model(
            #"{"version": "A", "entities": {"Person": {"attributes": {"name": "string"}}, "Employee": {"parent": "Person", "attributes": {"salary": "int64"}}}}"#
        )
        let b = try model(
            #"{"version": "B", "entities": {"Person": {"attributes": {"fullName": {"type": "string", "renamingIdentifier": "name"}}}, "Employee": {"parent": "Person", "attributes": {"salary": "int64"}}}}"#
        )
        let c = try model(#"{"version": "C", "entities": {"Person": {"attributes": {"fullName": "string"}}}}"#)
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        try seededStore(
            at: source, model: a,
            seed: #"{"Person": [{"name": "p1"}], "Employee": [{"name": "e2", "salary": 2}]}"#)
        // A person after the employee: keys interleave the two entities.
        try Database(path: source).execute(
            "INSERT INTO ZPERSON (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (3, (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Person'), 1, 'p3'); UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_NAME = 'Person'"
        )
        let everyone = try mapping(
            #"{"sourceModel": "B", "destinationModel": "C", "entityMappings": [{"name": "Everyone", "type": "transform", "sourceEntity": "Person", "destinationEntity": "Person", "sourceExpression": "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:includesSubentities:', 'Person', 'TRUEPREDICATE', YES), $manager.sourceContext, NO)", "attributeMappings": {"fullName": "$source.fullName"}}]}"#
        )
        let path = directory.path("People.sqlite")
        let (oneByOne, fused) = try Self.bothWays([a, b, c], [everyone], source: source, at: path)
        if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
        #expect(fused.fused == [false, false])
    }

    /// A renaming after a step whose entities change hierarchy. Taken out of one (each
    /// to a table of its own), their rows are numbered 1, 2, 3… entity by entity, in the
    /// order the step wrote them: the pass writes them so, and takes the renaming. Put into
    /// one (a table they share), their rows are numbered entity after entity in the order
    /// of the renaming's mappings, which here is not the order the step writes them in:
    /// the renaming runs on its own. The step writes its mappings of a table in the
    /// order opposite to the renaming's (`Teacher` before `Student`), and links both ways.
    @Test(arguments: [(true, [false, true]), (false, [false, false])])
    func aRenamingAfterAStepTakesEntitiesOutOfAHierarchyButNotIntoOne(_ out: Bool, _ fused: [Bool]) throws {
        let (inside, apart) = (
            #""Person": {"abstract": true, "attributes": {"name": "string"}}, "Student": {"parent": "Person", "relationships": {"teacher": {"destination": "Teacher", "inverse": "students"}}}, "Teacher": {"parent": "Person", "relationships": {"students": {"destination": "Student", "inverse": "teacher", "toMany": true}}}"#,
            #""Student": {"attributes": {"name": "string"}, "relationships": {"teacher": {"destination": "Teacher", "inverse": "students"}}}, "Teacher": {"attributes": {"name": "string"}, "relationships": {"students": {"destination": "Student", "inverse": "teacher", "toMany": true}}}"#
        )
        let a = try model(#"{"version": "A", "entities": {\#(out ? inside : apart)}}"#)
        let b = try model(#"{"version": "B", "entities": {\#(out ? inside : apart)}}"#)
        let c = try model(#"{"version": "C", "entities": {\#(out ? apart : inside)}}"#)
        let first = try mapping(
            #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [{"name": "TeacherToTeacher", "type": "transform", "sourceEntity": "Teacher", "destinationEntity": "Teacher", "attributeMappings": {"name": "FUNCTION($source.name, 'uppercaseString')"}, "relationshipMappings": {"students": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'StudentToStudent', $source.students)"}}, {"name": "StudentToStudent", "type": "transform", "sourceEntity": "Student", "destinationEntity": "Student", "attributeMappings": {"name": "FUNCTION($source.name, 'uppercaseString')"}, "relationshipMappings": {"teacher": "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', 'TeacherToTeacher', $source.teacher)"}}]}"#
        )
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        try seededStore(
            at: source, model: a,
            seed:
                #"{"Student": [{"name": "s1", "teacher": {"$ref": "t2"}}, {"name": "s2", "teacher": {"$ref": "t1"}}, {"name": "s3"}], "Teacher": [{"$id": "t1", "name": "t1"}, {"$id": "t2", "name": "t2"}]}"#
        )
        let (oneByOne, chain) = try Self.bothWays(
            [a, b, c], [first], source: source, at: directory.path("People.sqlite"), "out: \(out)")
        if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
        #expect(chain.fused == fused)
    }

    /// A renaming that also links a shortcut through a chain (an item's `room`, looked up
    /// as `$source.shelf.room`, and a room's `items`, as
    /// `$source.shelves.@distinctUnionOfSets.items`, as Xcode mapping models link a
    /// relationship a version adds), before a step that reads nothing of it: the pass
    /// reads through it where the to-many is linked after its inverse (it then finds every
    /// member there already, and counts none), and where every key the chain follows
    /// names a row (else the interpreter reports the key, and the steps run one by one; the
    /// renaming drops a shelf's room, which holds it, so only that check finds it).
    /// A step after that reads the shortcut, or a to-many linked first, keeps it apart.
    @Test(arguments: [
        (true, false, false, [true, false]), (false, false, false, [false, false]),
        (true, true, false, []), (true, false, true, [false, false])
    ])
    func aRenamingThatLinksAShortcutThroughAChainIsReadThroughByAStepThatReadsNothingOfIt(
        _ toManyLast: Bool, _ dangling: Bool, _ readsIt: Bool, _ fused: [Bool]
    ) throws {
        let entities =
            #""Item": {"attributes": {"name": "string"}, "relationships": {"shelf": {"destination": "Shelf", "inverse": "items"}}}, "Shelf": {"attributes": {"name": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "shelf", "toMany": true}, "room": {"destination": "Room", "inverse": "shelves"}}}, "Room": {"attributes": {"name": "string"}, "relationships": {"shelves": {"destination": "Shelf", "inverse": "room", "toMany": true}}}"#
        let a = try model(#"{"version": "A", "entities": {\#(entities)}}"#)
        // (B links items to rooms, and no longer shelves: only the chain reads a shelf's room.)
        let b = try model(
            #"{"version": "B", "entities": {"Item": {"attributes": {"name": "string"}, "relationships": {"shelf": {"destination": "Shelf", "inverse": "items"}, "room": {"destination": "Room", "inverse": "items"}}}, "Shelf": {"attributes": {"name": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "shelf", "toMany": true}}}, "Room": {"attributes": {"name": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "room", "toMany": true}}}}}"#
        )
        let c = try model(
            #"{"version": "C", "entities": {"Item": {"attributes": {"name": "string", "label": "string"}, "relationships": {"shelf": {"destination": "Shelf", "inverse": "items"}}}, "Shelf": {"attributes": {"name": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "shelf", "toMany": true}}}, "Room": {"attributes": {"name": "string"}}}}"#
        )
        func lookup(_ mapping: String, _ path: String) -> String {
            "FUNCTION($manager, 'destinationInstancesForEntityMappingNamed:sourceInstances:', '\(mapping)', $source.\(path))"
        }
        let item =
            #"{"name": "ItemToItem", "type": "copy", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"name": "$source.name"}, "relationshipMappings": {"shelf": "\#(lookup("ShelfToShelf", "shelf"))", "room": "\#(lookup("RoomToRoom", "shelf.room"))"}}"#
        let shelf =
            #"{"name": "ShelfToShelf", "type": "copy", "sourceEntity": "Shelf", "destinationEntity": "Shelf", "attributeMappings": {"name": "$source.name"}, "relationshipMappings": {"items": "\#(lookup("ItemToItem", "items"))"}}"#
        let room =
            #"{"name": "RoomToRoom", "type": "copy", "sourceEntity": "Room", "destinationEntity": "Room", "attributeMappings": {"name": "$source.name"}, "relationshipMappings": {"items": "\#(lookup("ItemToItem", "shelves.@distinctUnionOfSets.items"))"}}"#
        let first = try mapping(
            #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [\#((toManyLast ? [item, shelf, room] : [room, shelf, item]).joined(separator: ", "))]}"#
        )
        let label = readsIt ? "$source.room.name" : "FUNCTION($source.name, 'uppercaseString')"
        let second = try mapping(
            #"{"sourceModel": "B", "destinationModel": "C", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"label": "\#(label)"}}, {"name": "ShelfToShelf", "type": "copy", "sourceEntity": "Shelf", "destinationEntity": "Shelf"}, {"name": "RoomToRoom", "type": "copy", "sourceEntity": "Room", "destinationEntity": "Room"}]}"#
        )
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        try seededStore(
            at: source, model: a,
            seed:
                #"{"Room": [{"$id": "r1", "name": "r1"}, {"$id": "r2", "name": "r2"}], "Shelf": [{"$id": "s1", "name": "s1", "room": {"$ref": "r1"}}, {"$id": "s2", "name": "s2", "room": {"$ref": "r2"}}, {"$id": "s3", "name": "s3", "room": {"$ref": "r2"}}, {"$id": "s4", "name": "s4"}], "Item": [{"name": "i1", "shelf": {"$ref": "s2"}}, {"name": "i2", "shelf": {"$ref": "s1"}}, {"name": "i3", "shelf": {"$ref": "s3"}}, {"name": "i4", "shelf": {"$ref": "s4"}}, {"name": "i5"}]}"#
        )
        if dangling { try Database(path: source).execute("UPDATE ZSHELF SET ZROOM = 99 WHERE ZNAME = 's3'") }
        let what = "to-many last: \(toManyLast), dangling: \(dangling), read: \(readsIt)"
        let (oneByOne, chain) = try Self.bothWays(
            [a, b, c], [first, second], source: source, at: directory.path("Items.sqlite"), what)
        switch oneByOne.outcome {
        case .failure(let error):
            // (The key that names no row, which the interpreter reads.)
            if !dangling || !error.contains("Room/99: no such object") { Issue.record("step by step failed: \(error)") }
        case .store: if dangling { Issue.record("a key that names no row was not reported") }
        }
        #expect(chain.fused == fused, "\(what)")
    }

    /// A last step that drops an attribute the step before writes: run in one pass only
    /// where writing it can neither fail nor break a rule, whatever the store holds, or
    /// where the pass's check finds it does not in this store (`$source.n * 2`, an
    /// expression SQL says); the same store or error as step by step either way.
    @Test(arguments: [
        // (B's `d`, its value in A → B, and whether the pass takes the last step. A → B
        // computes `name`: it is no renaming.)
        (#""d": "string""#, "$source.x", true),
        (#""d": "string""#, "nil", true),
        (#""d": "int64""#, "$source.n", true),
        (#""d": "int16""#, "$source.n", false),
        (#""d": "int32""#, "$source.n * 2", true),
        (#""d": {"type": "string", "optional": false}"#, "$source.x", false),
        (#""d": {"type": "string", "max": 3}"#, "$source.x", false),
        (#""d": "int64""#, "$source.n / $source.zero", false),
        (#""d": "string""#, "FUNCTION($source.x, 'uppercaseString')", false)
    ])
    func aLastStepThatDropsAnAttributeRunsInThePassOnlyWhereWritingItCannotFail(
        _ d: String, _ value: String, _ fuses: Bool
    ) throws {
        let a = try model(
            #"{"version": "A", "entities": {"Item": {"attributes": {"x": "string", "n": "int64", "zero": "int64"}}}}"#)
        let b = try model(#"{"version": "B", "entities": {"Item": {"attributes": {"name": "string", \#(d)}}}}"#)
        let c = try model(#"{"version": "C", "entities": {"Item": {"attributes": {"name": "string"}}}}"#)
        let first = try mapping(
            #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings": {"name": "FUNCTION($source.x, 'uppercaseString')", "d": "\#(value)"}}]}"#
        )
        let directory = try TemporaryDirectory()
        let source = directory.path("A.sqlite")
        try seededStore(
            at: source, model: a,
            seed: #"{"Item": [{"x": "abcdef", "n": 70000, "zero": 0}, {"n": 1, "zero": 0}]}"#)
        let path = directory.path("Items.sqlite")
        let (oneByOne, fused) = try Self.bothWays([a, b, c], [first], source: source, at: path, "\(d) ← \(value)")
        if fuses {
            #expect(fused.fused == [false, true])
        } else if case .store = oneByOne.outcome {
            #expect(fused.fused == [false, false])
        }
    }

    /// An ordered one-to-many in the renaming steps around a mapping step (X0 → X1 and
    /// X2 → X3), its positions tied, missing and out of key order, or tied and in key
    /// order. Where a step sets the members' to-one only through the owners' to-many (as
    /// inference maps it), or sets the owners' to-many first (their mapping first), the
    /// order goes through unchanged, and the steps run in one pass; where it sets the
    /// members' to-one first, each member joins its owner's end in key order: the first
    /// step joins the pass only where the store holds them in key order already, which
    /// the pass checks, and the last, whose rows the mapping step writes, joins it too: the
    /// pass gives each owner's members their positions in key order, as the step would.
    /// The same stores and counts either way.
    @Test(arguments: [("Album", "Track", true), ("Shelf", "Book", false)], [false, true])
    func anOrderedToManyInARenamingStepKeepsItsOrderWhereItsMembersFollowIt(
        _ names: (owner: String, member: String, ownersFirst: Bool), keyOrder: Bool
    ) throws {
        let (owner, member, ownersFirst) = names
        func version(_ n: Int) throws -> ObjectModel {
            // (Each version's names in the same alphabetical order: the mappings' order.
            // An entity's identity after X0 is its X0 name.)
            let (o, m) = n == 1 || n == 2 ? (owner, member) : (owner + "\(n)", member + "\(n)")
            let (items, of) = n >= 3 ? ("entries", "holder") : ("items", "owner")
            func renamed(_ old: String) -> String { #", "renamingIdentifier": "\#(old)""# }
            let (ownerID, memberID) = n == 0 ? ("", "") : (renamed(owner + "0"), renamed(member + "0"))
            let (itemsID, ofID) = n == 3 ? (renamed("items"), renamed("owner")) : ("", "")
            let extra = n >= 2 ? #", "note": "string""# : ""
            return try model(
                #"{"version": "X\#(n)", "entities": {"\#(o)": {"attributes": {"name": "string"}, "relationships": {"\#(items)": {"destination": "\#(m)", "inverse": "\#(of)", "toMany": true, "ordered": true\#(itemsID)}}\#(ownerID)}, "\#(m)": {"attributes": {"title": "string"\#(extra)}, "relationships": {"\#(of)": {"destination": "\#(o)", "inverse": "\#(items)"\#(ofID)}}\#(memberID)}}}"#
            )
        }
        let models = try (0...3).map(version)
        // X1 → X2 computes a note: no renaming.
        var inferred = try MappingModel.inferred(from: models[1], to: models[2])
        for i in inferred.entityMappings.indices
        where inferred.entityMappings[i].sourceEntity == member && inferred.entityMappings[i].destinationEntity != nil {
            inferred.entityMappings[i].attributeMappings.append(
                PropertyMapping(name: "note", valueExpression: "FUNCTION($source.title, 'uppercaseString')"))
        }
        inferred.file = "X1_to_X2.mapping.json"
        let directory = try TemporaryDirectory()
        let source = directory.path("X0.sqlite")
        let store = try Store.create(at: source, model: models[0])
        let members = store.layout.entities[member + "0"]!
        let key = members.toOneColumns["owner"]!
        try Self.writeOwnersAndMembers(
            in: store, owners: (owner + "0", "name", "owner", 5),
            members: (
                member + "0", "title", "owner", 60, text: "'item ' || i",
                owner: "CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7) % 5 + 1 END",
                position: "CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 37) % 17 END"
            ))
        if keyOrder { try store.database.execute("UPDATE \(members.table) SET \(key.order!) = Z_PK / 7") }
        // The same rows at X1, to start after the first step.
        let middle = directory.path("X1.sqlite")
        let atX1 = try Store.create(at: middle, model: models[1])
        try Self.writeOwnersAndMembers(
            in: atX1, owners: (owner, "name", "owner", 5),
            members: (
                member, "title", "owner", 60, text: "'item ' || i",
                owner: "CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7) % 5 + 1 END",
                position: "CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 37) % 17 END"
            ))
        if keyOrder {
            let rows = atX1.layout.entities[member]!
            try atX1.database.execute("UPDATE \(rows.table) SET \(rows.toOneColumns["owner"]!.order!) = Z_PK / 7")
        }
        let path = directory.path("X.sqlite")
        // The renaming steps as inference maps them (the members' to-one set through the
        // owners' to-many), then as mapping files that set both sides.
        for bothSides in [false, true] {
            var mappings = [inferred]
            if bothSides {
                for (older, newer) in [(0, 1), (2, 3)] {
                    var renaming = try MappingModel.inferred(from: models[older], to: models[newer])
                    let owners = renaming.entityMappings.first { $0.sourceEntity?.hasPrefix(owner) == true }!.name
                    for i in renaming.entityMappings.indices {
                        for j in renaming.entityMappings[i].relationshipMappings.indices
                        where renaming.entityMappings[i].relationshipMappings[j].valueExpression == nil {
                            renaming.entityMappings[i].relationshipMappings[j].valueExpression =
                                #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "\#(owners)", $source.owner)"#
                        }
                    }
                    renaming.file = "X\(older)_to_X\(newer).mapping.json"
                    mappings.append(renaming)
                }
            }
            let (oneByOne, fused) = try Self.bothWays(models, mappings, source: source, at: path, owner)
            if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
            let fuses = !bothSides || ownersFirst
            var migrator = StoreMigrator(models: models, mappings: mappings)
            migrator.fusesSteps = true
            let passes = migrator.passes(of: try migrator.plan(from: "X0", to: "X3"))
            #expect(passes.first?.inKeyOrder == (fuses ? [] : [0]), "\(passes)")
            #expect(
                fused.fused == [fuses || keyOrder, false, true],
                "\(owner), both sides set: \(bothSides), in key order: \(keyOrder)")
            // (Without the last step, which would put the members in key order again.)
            let (_, first) = try Self.bothWays(
                Array(models.prefix(3)), Array(mappings.prefix(2)), source: source, at: path, "\(owner) to X2")
            #expect(first.fused == [fuses || keyOrder, false], "\(owner) to X2, in key order: \(keyOrder)")
            // From X1: the mapping step keeps the order the store holds, which the last
            // step, in the pass, keeps or puts in key order.
            let (_, last) = try Self.bothWays(
                Array(models[1...]), mappings.filter { $0.sourceModel != "X0" }, source: middle, at: path,
                "\(owner) from X1")
            #expect(last.fused == [false, true], "\(owner) from X1, in key order: \(keyOrder)")
        }
    }

    /// The notes chain (mappings/notes-chain) from its Notes1 store, clean and damaged in
    /// each way the renaming first step would convert, refuse or fail to validate: the
    /// same store or error one step at a time and in one pass; the first step joins the
    /// pass only when its store holds nothing it would change. Its rows are checked ahead
    /// of the statements that write them, in chunks of two keys.
    @Test(
        arguments: [
            ("clean", ""),
            ("a required name missing", "UPDATE ZFOLDER SET ZNAME = NULL WHERE Z_PK = 3"),
            ("text in a number", "UPDATE ZNOTE SET ZPRIORITY = 'high' WHERE Z_PK = 1"),
            ("a number out of its type's range", "UPDATE ZNOTE SET ZPRIORITY = 70000 WHERE Z_PK = 2"),
            ("a number out of its attribute's range", "UPDATE ZNOTE SET ZPRIORITY = 3 WHERE Z_PK = 2"),
            ("a boolean neither 0 nor 1", "UPDATE ZNOTE SET ZTRASHED = 5 WHERE Z_PK = 2"),
            ("a key that names no row", "UPDATE ZNOTE SET ZFOLDER = 99 WHERE Z_PK = 4"),
            ("ill-formed text", "UPDATE ZNOTE SET ZBODY = CAST(X'66C328' AS TEXT) WHERE Z_PK = 3"),
            ("a date stored as an integer", "UPDATE ZNOTE SET ZCREATED = 700000000 WHERE Z_PK = 6")
        ], [false, true])
    func theNotesChainEndsTheSameInOnePass(damage: (String, String), renamingByMappingModels: Bool) throws {
        let (damage, sql) = damage
        let folder = Repository.root.appendingPathComponent("mappings/notes-chain")
        let models = try ObjectModel.loadVersions(at: folder)
        var mappings = try MappingModel.loadAll(in: folder, models: models)
        if renamingByMappingModels {
            // Its inferred steps as mapping models that copy, as Xcode writes them.
            var random = SeededGenerator(seed: 7)
            for (older, newer) in [(models[0], models[1]), (models[2], models[3])] {
                let inferred = try MappingModel.inferred(from: older, to: newer)
                mappings.append(try Self.asXcodeWritesIt(inferred, from: older, &random))
            }
        }
        let directory = try TemporaryDirectory()
        let source = directory.path("Notes1.sqlite")
        try FileManager.default.copyItem(
            at: folder.appendingPathComponent("Notes1.sqlite"), to: URL(fileURLWithPath: source))
        if !sql.isEmpty { try Database(path: source).execute(sql) }
        let path = directory.path("Notes.sqlite")
        // Chunks of two keys, checked ahead (docs/pushdown.md, "Checked ahead"), the pass
        // waiting for the check: Notes1 is a store from elsewhere, read with the check.
        var options = MigrationOptions(chunkSize: 700)
        options.sqlChunkRows = 2
        options.checkAhead = .waiting
        let (oneByOne, fused) = try Self.bothWays(
            models, mappings, source: source, at: path, options: options, damage)
        if damage == "clean" { #expect(oneByOne.chunksCheckedAhead > 0 && fused.chunksCheckedAhead > 0) }
        if case .store = oneByOne.outcome {
            let clean = ["clean", "ill-formed text", "a date stored as an integer"].contains(damage)
            #expect(fused.fused == [clean, false, true], "\(damage)")
            // (The renaming steps ran the mapping models: inferred ones name every mapping IEM_….)
            let inferred = [0, 2].map { fused.entityMappings[$0].allSatisfy { $0.hasPrefix("IEM_") } }
            #expect(inferred == [!renamingByMappingModels, !renamingByMappingModels], "\(fused.entityMappings)")
        }
    }
}

/// Which mapping files make a step a renaming one (``Relabeling/inInferredTerms(_:from:to:)``):
/// those that say what inference says, in Xcode's words or inference's.
@Suite struct MappingFileRelabelingTests {
    /// `Shelf.books` ⟷ `Book.shelf`, `Shelf.label`, `Book.title`, in versions B and C.
    static func model(_ version: String) -> ObjectModel {
        var shelf = EntityDescription(name: "Shelf")
        shelf.attributes = [AttributeDescription(name: "label", type: .string)]
        shelf.relationships = [
            RelationshipDescription(name: "books", destination: "Book", inverse: "shelf", isToMany: true)
        ]
        var book = EntityDescription(name: "Book")
        book.attributes = [AttributeDescription(name: "title", type: .string)]
        book.relationships = [RelationshipDescription(name: "shelf", destination: "Shelf", inverse: "books")]
        return ObjectModel(version: version, entities: [shelf, book])
    }

    static let lookup = "destinationInstancesForEntityMappingNamed:sourceInstances:"
    static let byRelationship = "destinationInstancesForSourceRelationshipNamed:sourceInstances:"
    static let fetch =
        #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Book", "TRUEPREDICATE"), $manager.sourceContext, NO)"#

    /// The step B → C with a mapping file: ShelfToShelf copies every shelf as Xcode writes
    /// it; BookToBook copies books with `fetch`, `title` and `shelf`, each given only
    /// when not nil (the engine maps a same-named property left out), and `policy`.
    static func step(
        fetch: String? = nil, title: String? = nil, shelf: String? = nil, policy: String? = nil,
        explicitlyUnmapped: Bool = false
    ) -> StoreMigrator.Step {
        var books = EntityMapping(name: "BookToBook", type: .copy, sourceEntity: "Book", destinationEntity: "Book")
        books.sourceExpression = fetch
        books.policy = policy
        if let title { books.attributeMappings.append(PropertyMapping(name: "title", valueExpression: title)) }
        if explicitlyUnmapped { books.attributeMappings.append(PropertyMapping(name: "title", valueExpression: nil)) }
        if let shelf { books.relationshipMappings.append(PropertyMapping(name: "shelf", valueExpression: shelf)) }
        var shelves = EntityMapping(
            name: "ShelfToShelf", type: .copy, sourceEntity: "Shelf", destinationEntity: "Shelf")
        shelves.sourceExpression = fetch.map { _ in Self.fetch.replacingOccurrences(of: #""Book""#, with: #""Shelf""#) }
        shelves.attributeMappings = [PropertyMapping(name: "label", valueExpression: "$source.label")]
        shelves.relationshipMappings = [
            PropertyMapping(
                name: "books", valueExpression: #"FUNCTION($manager, "\#(lookup)", "BookToBook", $source.books)"#)
        ]
        let mapping = MappingModel(
            sourceModel: "B", destinationModel: "C", entityMappings: [shelves, books], file: "B-C.xcmappingmodel")
        return StoreMigrator.Step(source: model("B"), destination: model("C"), mapping: mapping)
    }

    @Test(arguments: [
        (
            "as Xcode writes it",
            step(
                fetch: fetch, title: "$source.title",
                shelf: #"FUNCTION($manager, "\#(lookup)", "ShelfToShelf", $source.shelf)"#)
        ),
        ("every property left to the engine, no fetch", step()),
        (
            "in inference's words",
            step(
                fetch: fetch.replacingOccurrences(
                    of: "$manager.sourceContext", with: #"FUNCTION($manager, "sourceContext")"#),
                title: #"FUNCTION($source, "valueForKey:", "title")"#,
                shelf: #"FUNCTION($manager, "\#(byRelationship)", "shelf", FUNCTION($source, "valueForKey:", "shelf"))"#
            )
        ),
        (
            "a fetch that says whether to include sub-entities",
            step(
                fetch: fetch.replacingOccurrences(
                    of: #"predicateString:", "Book", "TRUEPREDICATE""#,
                    with: #"predicateString:includesSubentities:", "Book", "TRUEPREDICATE", NO"#))
        )
    ])
    func aMappingFileThatOnlyCopiesRenames(_ what: String, _ step: StoreMigrator.Step) {
        #expect((try? Relabeling(step)) != nil, "\(what)")
    }

    /// Each refused with its reason, which `plan` prints.
    @Test(arguments: [
        (
            "a value computed", step(title: "FUNCTION($source.title, 'uppercaseString')"),
            "entity mapping BookToBook computes title"
        ),
        ("another attribute", step(title: "$source.shelf.label"), "entity mapping BookToBook computes title"),
        (
            "a filter", step(fetch: fetch.replacingOccurrences(of: "TRUEPREDICATE", with: "title != nil")),
            "entity mapping BookToBook does not fetch every Book"
        ),
        (
            "a count", step(fetch: fetch.replacingOccurrences(of: ", NO)", with: ", YES)")),
            "entity mapping BookToBook does not fetch every Book"
        ),
        (
            "the destination's context",
            step(fetch: fetch.replacingOccurrences(of: "sourceContext", with: "destinationContext")),
            "entity mapping BookToBook does not fetch every Book"
        ),
        (
            "sub-entities included",
            step(
                fetch: fetch.replacingOccurrences(
                    of: #"predicateString:", "Book", "TRUEPREDICATE""#,
                    with: #"predicateString:includesSubentities:", "Book", "TRUEPREDICATE", YES"#)),
            "entity mapping BookToBook does not fetch every Book"
        ),
        (
            "targets looked up through the wrong mapping",
            step(shelf: #"FUNCTION($manager, "\#(lookup)", "BookToBook", $source.shelf)"#),
            "entity mapping BookToBook links shelf by FUNCTION"
        ),
        (
            "targets looked up by another relationship",
            step(shelf: #"FUNCTION($manager, "\#(byRelationship)", "books", $source.shelf)"#),
            "entity mapping BookToBook links shelf by FUNCTION"
        ),
        ("a policy", step(policy: "BookPolicy"), "entity mapping BookToBook has a custom policy (BookPolicy)")
    ])
    func aMappingFileThatDoesMoreDoesNot(_ what: String, _ step: StoreMigrator.Step, _ reason: String) {
        #expect(throws: Relabeling.Refusal.self, "\(what)") { try Relabeling(step) }
        do {
            _ = try Relabeling(step)
        } catch {
            #expect(error.description.hasPrefix(reason), "\(what): \(error)")
        }
    }

    /// A property the mapping leaves without a value is dropped: the step reads nothing
    /// of it, so it may run with the step after it; after a step that writes it, only where
    /// that step copies it as it is (`title`, optional text), or computes it in a way SQL
    /// can check (the pass then checks it), not in one it cannot (a string method SQL asks
    /// the interpreter for, a key of a value).
    @Test func aPropertyLeftWithoutAValueIsDropped() throws {
        let relabeling = try Relabeling(Self.step(explicitlyUnmapped: true))
        #expect(relabeling.dropped == ["Book": ["title"]])
        func before(_ title: String) throws -> MappingModel {
            try mapping(
                #"{"sourceModel": "A", "destinationModel": "B", "entityMappings": [{"name": "BookToBook", "type": "copy", "sourceEntity": "Book", "destinationEntity": "Book", "attributeMappings": {"title": "\#(title)"}}]}"#
            )
        }
        let a = Self.model("A")
        #expect(try relabeling.compose(before("$source.title"), source: a, policies: PolicyRegistry()).checks.isEmpty)
        #expect(throws: Relabeling.Refusal.self) {
            try relabeling.compose(
                before("FUNCTION($source.title, 'uppercaseString')"), source: a, policies: PolicyRegistry())
        }
        #expect(throws: Relabeling.Refusal.self) {
            try relabeling.compose(before("$source.title.length"), source: a, policies: PolicyRegistry())
        }
        let checked = try relabeling.compose(
            before("TERNARY($source.title == nil, 'none', $source.title)"), source: a, policies: PolicyRegistry())
        #expect(checked.checks.map(\.attribute.name) == ["title"])
    }
}

/// What `SourceRenamer` renames back through a renaming step, and what it refuses.
@Suite struct SourceRenamerTests {
    /// After the renaming: `Shelf.books` ⟷ `Book.shelf`, `Book.title`; before it, `Rack`,
    /// `volumes`, `rack`, `name`.
    static let renamer = SourceRenamer(
        model: ObjectModel(
            version: "B",
            entities: [
                {
                    var shelf = EntityDescription(name: "Shelf")
                    shelf.attributes = [AttributeDescription(name: "label", type: .string)]
                    shelf.relationships = [
                        RelationshipDescription(name: "books", destination: "Book", inverse: "shelf", isToMany: true)
                    ]
                    return shelf
                }(),
                {
                    var book = EntityDescription(name: "Book")
                    book.attributes = [AttributeDescription(name: "title", type: .string)]
                    book.relationships = [
                        RelationshipDescription(name: "shelf", destination: "Shelf", inverse: "books")
                    ]
                    return book
                }()
            ]),
        entities: ["Shelf": "Rack", "Book": "Book"],
        properties: ["Shelf": ["label": "label", "books": "volumes"], "Book": ["title": "name", "shelf": "rack"]])

    @Test(arguments: [
        ("$source.title", "$source.name"),
        ("$source.shelf.label", "$source.rack.label"),
        ("$source.shelf.books.@count", "$source.rack.volumes.@count"),
        ("$source.shelf.books.@distinctUnionOfSets.title", "$source.rack.volumes.@distinctUnionOfSets.name"),
        ("FUNCTION($source, 'valueForKey:', 'title')", #"FUNCTION($source, "valueForKey:", "name")"#),
        (
            "FUNCTION($source, 'valueForKeyPath:', 'shelf.label')",
            #"FUNCTION($source, "valueForKeyPath:", "rack.label")"#
        ),
        ("FUNCTION($source.title, 'uppercaseString')", #"FUNCTION($source.name, "uppercaseString")"#),
        (
            "TERNARY($source.title == nil, 'none', $source.title)",
            #"TERNARY($source.name == nil, "none", $source.name)"#
        ),
        (
            "SUBQUERY($source.shelf.books, $b, $b.title BEGINSWITH 'A').@count",
            #"SUBQUERY($source.rack.volumes, $b, $b.name BEGINSWITH "A").@count"#
        ),
        (
            #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "shelf", $source.shelf)"#,
            #"FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "rack", $source.rack)"#
        ),
        (
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "BookToBook", $source)"#,
            #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "BookToBook", $source)"#
        )
    ])
    func renamesWhatItReadsOfTheSource(expression: String, renamed: String) throws {
        let result = try #require(Self.renamer.expression(expression, source: "Book"))
        // (Compared as parsed: the printer may quote and space otherwise.)
        #expect(try FormatParser(result).parseExpression() == FormatParser(renamed).parseExpression(), "\(result)")
    }

    @Test(arguments: [
        "FUNCTION($source, 'someMethodOfTheObject')",
        "FUNCTION($entityPolicy, 'anything:', $source)",
        "$destination.title",
        "$source.objectID",
        "$source.missing",
        #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Book", "TRUEPREDICATE"), $manager.sourceContext, NO)"#,
        "FUNCTION($source.shelf, 'valueForKey:', 'label')"
    ])
    func refusesWhatItCannotTellTheNamesOf(expression: String) {
        #expect(Self.renamer.expression(expression, source: "Book") == nil)
    }

    /// `Book.title` computed by the renaming step: read from `$source` as the expression
    /// that computes it, and not at all any other way.
    static let computing = SourceRenamer(
        model: renamer.model, entities: renamer.entities,
        properties: ["Shelf": ["label": "label", "books": "volumes"], "Book": ["shelf": "rack"]],
        computed: ["Book": ["title": try! FormatParser("FUNCTION($source.name, 'uppercaseString')").parseExpression()]])

    @Test(arguments: [
        ("$source.title", "FUNCTION($source.name, 'uppercaseString')"),
        ("FUNCTION($source, 'valueForKey:', 'title')", "FUNCTION($source.name, 'uppercaseString')"),
        (
            "TERNARY($source.title == nil, 'none', $source.title)",
            "TERNARY(FUNCTION($source.name, 'uppercaseString') == nil, 'none', FUNCTION($source.name, 'uppercaseString'))"
        ),
        ("$source.shelf.label", "$source.rack.label")
    ])
    func readsAComputedAttributeAsItsExpression(expression: String, read: String) throws {
        let result = try #require(Self.computing.expression(expression, source: "Book"))
        #expect(try FormatParser(result).parseExpression() == FormatParser(read).parseExpression(), "\(result)")
    }

    @Test(arguments: [
        "$source.shelf.books.@distinctUnionOfSets.title",
        "SUBQUERY($source.shelf.books, $b, $b.title BEGINSWITH 'A').@count",
        "$source.title.length",
        "FUNCTION($source, 'valueForKeyPath:', 'title.length')"
    ])
    func refusesAComputedAttributeReadAnyOtherWay(expression: String) {
        #expect(Self.computing.expression(expression, source: "Book") == nil)
    }

    /// A fetch's predicate reads a computed attribute as its expression on the row
    /// (`$source` read as the row itself), where nothing in it could then read anything
    /// else; not through a key path past it.
    @Test(
        arguments: [
            ("shelf.label != 'x'", "rack.label != 'x'"),
            ("title BEGINSWITH 'A'", "FUNCTION(name, 'uppercaseString') BEGINSWITH 'A'"),
            ("code == 'x' OR title == code", "rack.label == 'x' OR FUNCTION(name, 'uppercaseString') == rack.label"),
            ("title.length > 1", nil),
            // (SELF and a key path read from it are no source in a mapping's expression; a
            // SUBQUERY's predicate keeps its own SELF; `$manager` is bound in no fetch.)
            ("bare == 1", nil), ("counted > 0", nil), ("managed != nil", nil)
        ] as [(String, String?)])
    func readsAComputedAttributeInAFetchsPredicateAsItsExpression(_ predicate: String, _ read: String?) throws {
        func fetch(_ predicate: String) -> String {
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Book", "\#(predicate)"), $manager.sourceContext, NO)"#
        }
        var renamer = Self.computing
        for (name, text) in [
            ("code", "$source.rack.label"), ("bare", "TERNARY(name == nil, 0, 1)"),
            ("counted", "SUBQUERY($source.rack.volumes, $b, $b.name == name).@count"),
            ("managed", #"FUNCTION($manager, "sourceContext")"#)
        ] {
            renamer.computed["Book"]![name] = try FormatParser(text).parseExpression()
        }
        let renamed = renamer.sourceExpression(fetch(predicate), entity: "Book")
        /// The predicate `expression` fetches with.
        func fetched(_ expression: String?) throws -> FormatPredicate? {
            guard let expression, let fetch = MappingCompiler.standardFetch(try FormatExpression(parsing: expression))
            else { return nil }
            return try FormatPredicate(parsing: fetch.predicate)
        }
        #expect(try fetched(renamed) == read.map { try FormatPredicate(parsing: $0) }, "\(renamed ?? "nil")")
    }

    @Test func renamesTheSourceFetchAndItsPredicate() throws {
        let fetch =
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Shelf", "label != 'x' AND ANY books.title BEGINSWITH 'A'"), $manager.sourceContext, NO)"#
        let result = try #require(Self.renamer.sourceExpression(fetch, entity: "Shelf"))
        #expect(result.contains(#""Rack""#), "\(result)")
        #expect(result.contains("ANY volumes.name BEGINSWITH"), "\(result)")
        #expect(Self.renamer.sourceExpression(fetch, entity: "Book") == nil)
    }
}
