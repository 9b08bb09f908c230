import ExpressionLanguage
import Foundation
import ObjectGraph
import Testing
import TestSupport

@testable import Migration

/// The real projects' models in the shared fixtures, each with a store of generated rows:
/// every step that infers runs both ways (SQL, and the interpreter with `pushdown` off),
/// and so does every two consecutive inferable steps as a chain, whose second step reads
/// the store the first wrote as well-typed. The stores must be the same, row for row, and
/// the reports too, or both runs must fail with the same error (docs/pushdown.md, "How
/// exactness is tested").
@Suite struct RealModelsDifferentialTests {
    /// The versions of each `.xcdatamodeld` of the fixtures, in order.
    static func modelFolders() throws -> [[ObjectModel]] {
        var folders: [[ObjectModel]] = []
        let walker = FileManager.default.enumerator(atPath: SharedFixtures.root.path)
        while let path = walker?.nextObject() as? String {
            guard path.hasSuffix(".xcdatamodeld") else { continue }
            walker?.skipDescendants()
            folders.append(
                try XcodeModelImporter.importVersions(at: SharedFixtures.root.appendingPathComponent(path)).versions)
        }
        return folders
    }

    /// Whether the mapping Core Data would infer from `source` to `destination` runs.
    static func infers(_ source: ObjectModel, _ destination: ObjectModel) -> Bool {
        let inference = MappingInference(from: source, to: destination)
        return inference.errors.isEmpty
            && MigrationManager.check(inference.mapping, source: source, destination: destination).isEmpty
    }

    /// Where two outcomes first differ: the failures, the counts, or a table's first
    /// different row (the interpreter's, then SQL's).
    static func difference(_ a: PushdownDifferentialTests.Outcome, _ b: PushdownDifferentialTests.Outcome) -> String {
        switch (a, b) {
        case (.store(let x, let xc), .store(let y, let yc)):
            for table in Set(x.keys).union(y.keys).sorted() where x[table] != y[table] {
                let (r, s) = (x[table] ?? [], y[table] ?? [])
                if let i = r.indices.first(where: { $0 < s.count && r[$0] != s[$0] }) {
                    return "\(table): \(r[i]) / \(s[i])"
                }
                return "\(table): \(r.count) / \(s.count) rows"
            }
            return "counts \(xc) / \(yc)"
        default:
            return "\(a) / \(b)"
        }
    }

    @Test func everyInferableStepGivesWhatTheInterpreterGives() throws {
        guard SharedFixtures.isAvailable else { try Test.cancel(SharedFixtures.missingMessage) }
        let directory = try TemporaryDirectory()
        var (steps, sqlMappings, linksAsSQL) = (0, 0, [0, 0])
        for (f, versions) in try Self.modelFolders().enumerated() {
            for (i, (source, destination)) in zip(versions, versions.dropFirst()).enumerated()
            where Self.infers(source, destination) {
                let name = "\(f)-\(i)"
                let mapping = try MappingModel.inferred(from: source, to: destination)
                for consistent in [false, true] {
                    let name = "\(name)\(consistent ? "c" : "")"
                    let store = directory.path("\(name).sqlite")
                    try GeneratedRows.makeStore(
                        at: store, model: source, seed: UInt64(f * 100 + i), consistent: consistent)
                    let (interpreted, _) = try PushdownDifferentialTests.run(
                        mapping, source, destination, source: store, to: directory.path("i\(name).sqlite"),
                        pushdown: false)
                    let (pushed, report) = try PushdownDifferentialTests.run(
                        mapping, source, destination, source: store, to: directory.path("s\(name).sqlite"),
                        pushdown: true)
                    #expect(
                        pushed == interpreted,
                        "\(source.version) → \(destination.version): \(Self.difference(interpreted, pushed))")
                    steps += 1
                    sqlMappings += report?.entityMappings.filter { $0.execution?.instancesAsSQL == true }.count ?? 0
                    linksAsSQL[consistent ? 1 : 0] +=
                        report?.entityMappings.filter { $0.execution?.relationshipsAsSQL == true }.count ?? 0
                }
            }
        }
        print(
            "real models: \(steps) runs of inferable steps, \(sqlMappings) entity mappings as SQL, "
                + "linked by SQL \(linksAsSQL[0]) (random one-to-ones) and \(linksAsSQL[1]) (consistent ones)")
        #expect(steps >= 40, "\(steps) runs")
        #expect(sqlMappings >= 100, "\(sqlMappings) entity mappings as SQL")
        // Consistent one-to-ones are linked by SQL where random ones (two rows on one
        // target) leave them to the interpreter.
        #expect(linksAsSQL[1] > linksAsSQL[0], "\(linksAsSQL)")
    }

    @Test func everyTwoInferableStepsInAChainGiveWhatTheInterpreterGives() throws {
        guard SharedFixtures.isAvailable else { try Test.cancel(SharedFixtures.missingMessage) }
        let directory = try TemporaryDirectory()
        var chains = 0
        for (f, versions) in try Self.modelFolders().enumerated() where versions.count >= 3 {
            for i in 0..<(versions.count - 2)
            where Self.infers(versions[i], versions[i + 1]) && Self.infers(versions[i + 1], versions[i + 2]) {
                let models = Array(versions[i...(i + 2)])
                let name = "\(f)-\(i)"
                let original = directory.path("\(name).sqlite")
                try GeneratedRows.makeStore(at: original, model: models[0], seed: UInt64(7_000 + f * 100 + i))
                var outcomes: [PushdownDifferentialTests.Outcome] = []
                for pushdown in [false, true] {
                    var migrator = StoreMigrator(
                        models: models, mappings: [], options: MigrationOptions(chunkSize: 300, pushdown: pushdown))
                    migrator.keepsBackup = false
                    let path = directory.path("\(name)-\(pushdown).sqlite")
                    try FileManager.default.copyItem(atPath: original, toPath: path)
                    do {
                        let reports = try migrator.migrate(storeAt: path, from: models[0].version)
                        let counts = reports.flatMap(\.report.entityMappings).map {
                            [$0.sourceInstances, $0.destinationInstances, $0.relationshipsSet]
                        }
                        outcomes.append(.store(try PushdownDifferentialTests.dump(path), counts))
                    } catch {
                        outcomes.append(.failure("\((error as? MigrationError)?.kind.rawValue ?? "?"): \(error)"))
                    }
                }
                #expect(
                    outcomes[0] == outcomes[1],
                    "\(models.map(\.version)): \(Self.difference(outcomes[0], outcomes[1]))")
                chains += 1
            }
        }
        print("real models: \(chains) chains of two inferable steps")
        #expect(chains >= 15, "\(chains) chains")
    }
}

extension RealModelsDifferentialTests {
    /// Every two consecutive inferable steps of the real projects' models, run with
    /// steps fused and one by one, from generated stores whose entities' keys interleave:
    /// one as Core Data keeps a store (well-typed, one-to-ones agreeing), one damaged.
    /// Each chain ends the same both ways; most run in one pass (AltStore's hierarchies
    /// and ordered relationships, Moody's, CoreDataPlus's cars).
    @Test func everyTwoInferableStepsInAChainEndTheSameInOnePass() throws {
        guard SharedFixtures.isAvailable else { try Test.cancel(SharedFixtures.missingMessage) }
        let directory = try TemporaryDirectory()
        var chains = 0, fused = 0
        for (f, versions) in try Self.modelFolders().enumerated() where versions.count >= 3 {
            for i in 0..<(versions.count - 2)
            where Self.infers(versions[i], versions[i + 1]) && Self.infers(versions[i + 1], versions[i + 2]) {
                let models = Array(versions[i...(i + 2)])
                for (s, kept) in [true, false].enumerated() {
                    let source = directory.path("\(f)-\(i)-\(s).sqlite")
                    try GeneratedRows.makeStore(
                        at: source, model: models[0], seed: UInt64(9_000 + f * 100 + i * 2 + s), consistent: kept,
                        wellTyped: kept, interleaved: true)
                    let (_, chain) = try StepFusionTests.bothWays(
                        models, [], source: source, at: directory.path("chain.sqlite"),
                        "\(models.map(\.version)), \(kept ? "kept" : "damaged")")
                    chains += 1
                    if chain.fused.contains(true) { fused += 1 }
                }
            }
        }
        #expect(chains >= 30 && fused > chains / 2, "\(fused) of \(chains) chains in one pass")
    }
}

extension RealModelsDifferentialTests {
    /// The projects' Xcode mapping models (AltStore's fifteen, Moody's four, CoreDataPlus's
    /// and MWKCoreData's one each), their custom policies and functions stood in for (by
    /// default ones, or, for the last two, by ones that do what the projects' do, as
    /// `XcodeMappingTests` has them): each step over generated rows both ways. A mapping with a custom policy is
    /// interpreted both times; the step's others run as SQL.
    @Test func everyXcodeMappingModelGivesWhatTheInterpreterGives() throws {
        guard SharedFixtures.isAvailable else { try Test.cancel(SharedFixtures.missingMessage) }
        let realworld = XcodeMappingTests.realworld
        let projects: [(models: URL, mappings: URL, policies: PolicyRegistry)] = [
            (
                realworld.appendingPathComponent("altstoreio+AltStore/AltStoreCore/Model/AltStore.xcdatamodeld"),
                realworld.appendingPathComponent("altstoreio+AltStore/AltStoreCore/Model/Migrations"),
                RealWorldMappingModelTests.registry(
                    policies: [
                        "InstalledAppToInstalledAppMigrationPolicy", "StoreApp10ToStoreApp11Policy",
                        "Source13To14MigrationPolicy", "StoreAppToStoreAppMigrationPolicy"
                    ],
                    functions: ["defaultIsActiveForBundleID:team:", "migrateIconURL", "migrateScreenshotURLs"])
            ),
            (
                realworld.appendingPathComponent("objcio+core-data/Migrations/Migrations/Moody.xcdatamodeld"),
                realworld.appendingPathComponent("objcio+core-data/Migrations/Migrations"),
                RealWorldMappingModelTests.registry(policies: ["Country5ToCountry6Policy"])
            ),
            (
                XcodeMappingTests.coreDataPlus.appendingPathComponent("SampleModel.xcdatamodeld"),
                XcodeMappingTests.coreDataPlus.appendingPathComponent("MappingModels"),
                {
                    var r = PolicyRegistry(); r.register("V2to3MakerPolicy") { MakerPolicy() }; return r
                }()
            ),
            (
                XcodeMappingTests.mwk.appendingPathComponent("Model/MWKCoreDataTests.xcdatamodeld"),
                XcodeMappingTests.mwk.appendingPathComponent("Model/MappingModels"),
                {
                    var r = PolicyRegistry(); r.register("EmployeeToEmployeePolicy") { EmployeeNamePolicy() }; return r
                }()
            )
        ]
        let directory = try TemporaryDirectory()
        var (runs, completed, linksAsSQL, instancesAsSQL) = (0, 0, 0, 0)
        for (p, project) in projects.enumerated() {
            let models = try ObjectModel.loadVersions(at: project.models)
            for (m, mapping) in try MappingModel.loadAll(in: project.mappings, models: models).enumerated() {
                guard let source = models.first(where: { $0.version == mapping.sourceModel }),
                    let destination = models.first(where: { $0.version == mapping.destinationModel })
                else { continue }
                for consistent in [false, true] {
                    let name = "x\(p)-\(m)\(consistent ? "c" : "")"
                    let store = directory.path("\(name).sqlite")
                    try GeneratedRows.makeStore(
                        at: store, model: source, seed: UInt64(9_000 + p * 100 + m), consistent: consistent)
                    let (interpreted, _) = try PushdownDifferentialTests.run(
                        mapping, source, destination, source: store, to: directory.path("i\(name).sqlite"),
                        pushdown: false, policies: project.policies)
                    let (pushed, report) = try PushdownDifferentialTests.run(
                        mapping, source, destination, source: store, to: directory.path("s\(name).sqlite"),
                        pushdown: true, policies: project.policies)
                    #expect(
                        pushed == interpreted,
                        "\(source.version) → \(destination.version): \(Self.difference(interpreted, pushed))")
                    runs += 1
                    if case .store = pushed { completed += 1 }
                    if consistent {
                        linksAsSQL +=
                            report?.entityMappings.filter { $0.execution?.relationshipsAsSQL == true }.count ?? 0
                        instancesAsSQL +=
                            report?.entityMappings.filter { $0.execution?.instancesAsSQL == true }.count ?? 0
                    }
                }
            }
        }
        print(
            "real models: \(runs / 2) Xcode mapping models run twice, \(completed) of the \(runs) runs completed, "
                + "with consistent one-to-ones \(instancesAsSQL) entity mappings made by SQL and \(linksAsSQL) linked by SQL"
        )
        #expect(runs == 42)
        // 115 before links that follow a custom policy's interpreted ones (AltStore's
        // ordered relationships and one-to-ones) ran as SQL when they change nothing; 123
        // before a many-to-many whose members several mappings make did (CoreDataPlus's
        // `Person.previousCars`); 124 before links read through a chain of relationships
        // did (Moody's `$source.country.continent` and its inverse).
        #expect(linksAsSQL >= 126, "\(linksAsSQL) entity mappings linked by SQL")
        // 125 before an attribute read through a to-one (Moody's
        // `$source.continent.numericISO3166Code`) was translated.
        #expect(instancesAsSQL >= 126, "\(instancesAsSQL) entity mappings made by SQL")
    }
}

/// Rows for every entity of a model, written straight into a new store as an app's Core
/// Data might have left them: each attribute a value of its type (nil for some optional
/// ones; now and then one SQLite converts when read, text in a number column), each to-one
/// a row of its destination (or nil when optional), join tables with pairs, positions for
/// ordered relationships. Seeded: the same rows every run.
enum GeneratedRows {
    ///
    /// With `consistent`, each one-to-one pairs rows one to one, its two keys agreeing, as
    /// Core Data keeps them; otherwise each side points at random rows (two may share one
    /// target), as a damaged store may. With `wellTyped`, every value is stored with its
    /// type's class, as Core Data stores it.
    static func makeStore(
        at path: String, model: ObjectModel, seed: UInt64, rowsPerEntity: Int = 40, consistent: Bool = false,
        wellTyped: Bool = false, interleaved: Bool = false
    ) throws {
        var random = SeededGenerator(seed: seed)
        let store = try Store.create(at: path, model: model)
        let layout = store.layout
        let database = store.database
        // Keys: each concrete entity's rows, numbered per table; entity after entity, or,
        // `interleaved`, the entities of a table mixed as an app's saves mix them.
        var owners: [String: [String]] = [:]
        for entity in model.entities where !entity.isAbstract {
            guard let e = layout.entities[entity.name] else { continue }
            owners[e.table, default: []] += Array(repeating: entity.name, count: rowsPerEntity)
        }
        var rows: [String: [(key: Int64, entity: Int)]] = [:]
        for (_, names) in owners.sorted(by: { $0.key < $1.key }) {
            let order = interleaved ? names.shuffled(using: &random) : names
            for (offset, name) in order.enumerated() {
                rows[name, default: []].append((Int64(offset + 1), layout.entities[name]!.number))
            }
        }
        /// The rows of `entity` and its sub-entities.
        func rowsOf(_ entity: String) -> [(key: Int64, entity: Int)] {
            model.descendants(of: model.entity(named: entity)!).flatMap { rows[$0.name] ?? [] }
        }
        // Consistent one-to-ones: a row's target, by the row's table and the relationship.
        var paired: [String: [Int64: (key: Int64, entity: Int)?]] = [:]
        if consistent {
            for entity in model.entities {
                for r in entity.relationships where !r.isToMany && !r.isTransient {
                    guard let inverse = r.inverse, let d = model.entity(named: r.destination),
                        let i = model.allRelationships(of: d).first(where: { $0.name == inverse }), !i.isToMany,
                        paired["\(layout.entities[d.name]!.table).\(inverse)"] == nil
                    else { continue }
                    let owners = rowsOf(entity.name).shuffled(using: &random)
                    let targets = rowsOf(r.destination).shuffled(using: &random)
                    let count = min(owners.count, targets.count) * 3 / 4
                    var forward: [Int64: (key: Int64, entity: Int)?] = [:]
                    var backward: [Int64: (key: Int64, entity: Int)?] = [:]
                    for (o, t) in zip(owners, targets).prefix(count) {
                        forward[o.key] = t
                        backward[t.key] = o
                    }
                    for o in owners where forward[o.key] == nil { forward[o.key] = .some(nil) }
                    for t in targets where backward[t.key] == nil { backward[t.key] = .some(nil) }
                    paired["\(layout.entities[entity.name]!.table).\(r.name)"] = forward
                    paired["\(layout.entities[d.name]!.table).\(inverse)"] = backward
                }
            }
        }
        try database.execute("BEGIN")
        for entity in model.entities where !entity.isAbstract {
            guard let e = layout.entities[entity.name] else { continue }
            var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
            var values: [[SQLiteValue]] = rows[entity.name]!.map {
                [.integer($0.key), .integer(Int64($0.entity)), .integer(1)]
            }
            for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
                guard let column = e.attributeColumns[attribute.name] else { continue }
                columns.append(column)
                for r in values.indices { values[r].append(value(for: attribute, wellTyped: wellTyped, &random)) }
            }
            for relationship in model.allRelationships(of: entity)
            where !relationship.isToMany && !relationship.isTransient {
                guard let c = e.toOneColumns[relationship.name] else { continue }
                let targets = rowsOf(relationship.destination)
                columns.append(c.key)
                if let entityColumn = c.entity { columns.append(entityColumn) }
                if let order = c.order { columns.append(order) }
                let pairs = paired["\(e.table).\(relationship.name)"]
                for r in values.indices {
                    let target: (key: Int64, entity: Int)? =
                        if let pairs { pairs[rows[entity.name]![r].key] ?? nil } else {
                            targets.isEmpty || (relationship.isOptional && Int.random(in: 0..<5, using: &random) == 0)
                                ? nil : targets.randomElement(using: &random)
                        }
                    values[r].append(target.map { .integer($0.key) } ?? .null)
                    if c.entity != nil { values[r].append(target.map { .integer(Int64($0.entity)) } ?? .null) }
                    if c.order != nil {
                        values[r].append(target == nil ? .null : .integer(Int64.random(in: 1...9, using: &random)))
                    }
                }
            }
            let insert = try database.prepare(
                "INSERT INTO \(e.table) (\(columns.joined(separator: ", "))) VALUES (\(columns.indices.map { "?\($0 + 1)" }.joined(separator: ", ")))"
            )
            for row in values {
                for (i, v) in row.enumerated() { try insert.bind(v, at: Int32(i + 1)) }
                try insert.run()
            }
        }
        // Join tables, from the side that declares them first.
        var filled: Set<String> = []
        for entity in model.entities where !entity.isAbstract {
            guard let e = layout.entities[entity.name] else { continue }
            for relationship in model.allRelationships(of: entity)
            where relationship.isToMany && !relationship.isTransient {
                guard let side = e.joinTables[relationship.name], filled.insert(side.table).inserted else { continue }
                let targets = rowsOf(relationship.destination)
                let order = side.orderColumn.map { ", \($0)" } ?? ""
                let insert = try database.prepare(
                    "INSERT OR IGNORE INTO \(side.table) (\(side.sourceColumn), \(side.destinationColumn)\(order)) VALUES (?1, ?2\(side.orderColumn == nil ? "" : ", ?3"))"
                )
                for owner in rows[entity.name] ?? [] where !targets.isEmpty {
                    for position in 0..<Int.random(in: 0...3, using: &random) {
                        try insert.bind(.integer(owner.key), at: 1)
                        try insert.bind(.integer(targets.randomElement(using: &random)!.key), at: 2)
                        if side.orderColumn != nil { try insert.bind(.integer(Int64(position + 1)), at: 3) }
                        try insert.run()
                    }
                }
            }
        }
        for (name, e) in layout.entities {
            guard model.entity(named: name) != nil else { continue }
            try database.execute(
                "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT ifnull(max(Z_PK), 0) FROM \(e.table)) WHERE Z_ENT = \(e.number)"
            )
        }
        try database.execute("COMMIT")
    }

    /// A value of `attribute`'s type as its column holds it; nil (NULL) for some optional
    /// ones, and now and then a value of another storage class.
    static func value(
        for attribute: AttributeDescription, wellTyped: Bool = false, _ random: inout SeededGenerator
    ) -> SQLiteValue {
        let roll = Int.random(in: 0..<20, using: &random)
        if attribute.isOptional && roll < 3 { return .null }
        if attribute.isOptional && roll == 3 && !attribute.storesExternalEncoding && !wellTyped {
            // Stored with another class than the type's: SQLite converts it when read.
            return [.text("12"), .text("Zoë"), .real(2.5), .blob(Data([0xff, 0x00]))].randomElement(using: &random)!
        }
        let n = Int64.random(in: -40...40, using: &random)
        let value: Value
        switch attribute.type {
        case .int16, .int32, .int64:
            let range = attribute.type.integerRange!
            value = .integer(roll == 4 ? range.upperBound : roll == 5 ? range.lowerBound : n)
        case .boolean: value = .bool(n % 2 == 0)
        case .double, .float, .decimal: value = .double(Double(n) / 4 + (roll == 6 ? 1e300 : 0))
        case .date: value = .date(Date(timeIntervalSinceReferenceDate: Double(n) * 86_400.5))
        case .string, .uri:
            value = .string(["", "plain \(n)", "Zoë \(n)", " spaced ", "日本語", "a,b  c"].randomElement(using: &random)!)
        case .binary, .transformable: value = .data(Data((0..<Int(n & 7)).map { UInt8($0) }))
        case .uuid:
            value = .string(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, UInt8(n & 0x7f))).uuidString)
        case .undefined, .objectID, .composite: return .null
        }
        return (try? attribute.columnValue(value)) ?? .null
    }
}

extension RealModelsDifferentialTests {
    /// objc.io's Moody chain: Moody → Moody 2 is inferred and only renames (an attribute
    /// renamed, one added), in a hierarchy (`Continent` and `Country` below the abstract
    /// `GeographicRegion`) and beside a transformable attribute; Moody 2 → Moody 3 is an
    /// Xcode mapping model. From generated stores, the two run in one pass where the store
    /// holds nothing the first step would convert, and end as they do step by step.
    @Test func theMoodyChainRunsItsRenamingStepWithTheMappingModelAfterIt() throws {
        guard SharedFixtures.isAvailable else { try Test.cancel(SharedFixtures.missingMessage) }
        let folder = XcodeMappingTests.realworld.appendingPathComponent("objcio+core-data/Migrations/Migrations")
        let versions = try ObjectModel.loadVersions(at: folder.appendingPathComponent("Moody.xcdatamodeld"))
        let models = Array(versions.prefix(3))
        #expect(models.map(\.version) == ["Moody", "Moody 2", "Moody 3"])
        let mappings = try MappingModel.loadAll(in: folder, models: versions).filter {
            $0.sourceModel == "Moody 2" && $0.destinationModel == "Moody 3"
        }
        #expect(mappings.count == 1)
        let directory = try TemporaryDirectory()
        var fusedRuns = 0
        for seed in UInt64(1)...6 {
            let source = directory.path("Moody\(seed).sqlite")
            // Half the stores hold values of other classes than their types', which the first
            // step would convert: it then runs on its own.
            try GeneratedRows.makeStore(
                at: source, model: models[0], seed: 11_000 + seed, consistent: true, wellTyped: seed % 2 == 0)
            let path = directory.path("Moody.sqlite")
            let (_, fused) = try StepFusionTests.bothWays(models, mappings, source: source, at: path, "seed \(seed)")
            if fused.fused.first == true { fusedRuns += 1 }
        }
        #expect(fusedRuns == 3, "the first step ran in the pass \(fusedRuns) times in 6")
    }
}

extension RealModelsDifferentialTests {
    /// AltStore's chain: AltStore 7 → AltStore 8 (inferred) and AltStore 9 → AltStore 10
    /// (an Xcode mapping model that only copies) only rename, beside ordered one-to-manys
    /// (a source's `apps` and `newsItems`, an app's `permissions`) whose members' to-one
    /// they set through them or after them. Each runs in one pass with the mapping model
    /// before it, and from generated stores the two steps end as they do one by one.
    /// AltStore 6 → AltStore 7, an Xcode mapping model that copies, links an app's
    /// permissions before the apps, so puts them in key order: it joins the pass of the
    /// steps after it (the four steps in one, AltStore 9 → AltStore 10's mapping running
    /// with the three renamings before it) where the store holds every ordered to-many in
    /// key order (`inKeyOrder`
    /// stores, their positions made so, and their values of their types' classes);
    /// otherwise its mapping runs, and the three steps after it join it, the pass putting
    /// an app's permissions in key order as AltStore 8 → AltStore 9 would.
    /// Its models' URIs are read and written as text.
    /// AltStore 14 → AltStore 15 (which also puts ordered to-manys in key order) adds the
    /// entities `Pledge`, `PledgeReward` and `PledgeTier` and an account's `pledges`,
    /// which AltStore 15 → AltStore 16's mapping model maps: read through the renaming,
    /// those mappings make nothing and that to-many is left unlinked, as step by step,
    /// where they read no row. AltStore 15 → AltStore 16, which carries a decimal (a
    /// pledge's `amount`) and computes a tier's `name` (no tier has a row before it),
    /// runs before AltStore 16 → AltStore 17 with it: the three steps in one pass (from a
    /// store out of key order, AltStore 14 → AltStore 15 runs on its own, and writes the
    /// store the other two then run from in one pass).
    @Test(arguments: [
        ("AltStore 6", "AltStore 8", false, [false, true]), ("AltStore 8", "AltStore 10", false, [false, true]),
        ("AltStore 6", "AltStore 10", false, [false, true, true, true]),
        ("AltStore 6", "AltStore 10", true, [true, true, true, false]),
        ("AltStore 14", "AltStore 16", true, [true, false]), ("AltStore 14", "AltStore 16", false, [false, false]),
        ("AltStore 14", "AltStore 17", true, [true, true, false]),
        ("AltStore 14", "AltStore 17", false, [false, true, false])
    ])
    func altStoresRenamingStepsWithOrderedRelationshipsRunInOnePass(
        _ window: (from: String, to: String, inKeyOrder: Bool, fused: [Bool])
    ) throws {
        guard SharedFixtures.isAvailable else { try Test.cancel(SharedFixtures.missingMessage) }
        let model = XcodeMappingTests.realworld.appendingPathComponent("altstoreio+AltStore/AltStoreCore/Model")
        let versions = try ObjectModel.loadVersions(at: model.appendingPathComponent("AltStore.xcdatamodeld"))
        let models = try Self.window(of: versions, from: window.from, to: window.to)
        let mappings = try MappingModel.loadAll(in: model.appendingPathComponent("Migrations"), models: versions)
            .filter { mapping in models.dropLast().contains { $0.version == mapping.sourceModel } }
        let policies = RealWorldMappingModelTests.registry(
            policies: [
                "InstalledAppToInstalledAppMigrationPolicy", "StoreApp10ToStoreApp11Policy",
                "Source13To14MigrationPolicy", "StoreAppToStoreAppMigrationPolicy"
            ],
            functions: ["defaultIsActiveForBundleID:team:", "migrateIconURL", "migrateScreenshotURLs"])
        let directory = try TemporaryDirectory()
        for seed in UInt64(1)...3 {
            let source = directory.path("A\(seed).sqlite")
            try GeneratedRows.makeStore(
                at: source, model: models[0], seed: 12_000 + seed, consistent: true, wellTyped: window.inKeyOrder)
            if window.inKeyOrder {
                let layout = StoreLayout(model: models[0])
                let database = try Database(path: source)
                for rows in layout.entities.values {
                    for order in rows.toOneColumns.values.compactMap(\.order) {
                        try database.execute("UPDATE \(rows.table) SET \(order) = Z_PK")
                    }
                }
            }
            let (oneByOne, fused) = try StepFusionTests.bothWays(
                models, mappings, source: source, at: directory.path("A.sqlite"), policies: policies,
                "\(window.from) → \(window.to), seed \(seed)")
            if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
            #expect(fused.fused == window.fused, "\(window.from) → \(window.to), seed \(seed)")
        }
    }
}

extension RealModelsDifferentialTests {
    /// objc.io's Moody chain inferred throughout: Moody → Moody 2 and Moody 2 → Moody 3
    /// both only rename (the second adds a continent's `moods` and a mood's `continent`,
    /// a non-optional to-many with no minimum, which may be empty, and its inverse), and
    /// Moody 3 → Moody 4 reads through both, what the second adds read as empty (its
    /// lookups of them find nothing; the to-one it sets to nil is counted as it would be).
    /// The three steps run in one pass and end as step by step does.
    @Test func theInferredMoodyChainRunsInOnePass() throws {
        guard SharedFixtures.isAvailable else { try Test.cancel(SharedFixtures.missingMessage) }
        let folder = XcodeMappingTests.realworld.appendingPathComponent("objcio+core-data/Migrations/Migrations")
        let models = Array(
            try ObjectModel.loadVersions(at: folder.appendingPathComponent("Moody.xcdatamodeld")).prefix(4))
        #expect(models.map(\.version) == ["Moody", "Moody 2", "Moody 3", "Moody 4"])
        var migrator = StoreMigrator(models: models, mappings: [])
        migrator.fusesSteps = true
        let steps = try migrator.plan(from: "Moody", to: "Moody 4")
        #expect(steps.dropLast().allSatisfy { (try? Relabeling($0, computingWith: FunctionRegistry.standard)) != nil })
        #expect(migrator.passes(of: steps).map(\.steps) == [0..<3])
        let directory = try TemporaryDirectory()
        let source = directory.path("Moody.sqlite")
        try GeneratedRows.makeStore(at: source, model: models[0], seed: 11_100, consistent: true, wellTyped: true)
        let (oneByOne, fused) = try StepFusionTests.bothWays(
            models, [], source: source, at: directory.path("chain.sqlite"))
        if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
        #expect(fused.fused == [true, true, false])
    }
}

extension RealModelsDifferentialTests {
    /// The versions from `from` to `to`, both included.
    static func window(of versions: [ObjectModel], from: String, to: String) throws -> [ObjectModel] {
        let first = try #require(versions.firstIndex { $0.version == from }, "no \(from)")
        let last = try #require(versions.firstIndex { $0.version == to }, "no \(to)")
        return Array(versions[first...last])
    }

    /// objc.io's Moody 3 → Moody 4 drops the abstract `GeographicRegion` above
    /// `Continent` and `Country`: their rows leave the shared table for one table each,
    /// numbered anew entity by entity in the order of their keys. The step after reads
    /// each entity's rows in that order either way, so it reads through the step: with
    /// the Xcode mapping models, Moody 4 → Moody 5's mapping runs from Moody 3 (one pass
    /// of two steps); inferred throughout, Moody 5 → Moody 6 from Moody (one pass of
    /// five). From generated stores, each ends as it does step by step, or the steps
    /// run one by one where the store holds what a renaming would convert.
    @Test(arguments: [
        ("Moody 3", "Moody 5", true, true, [true, false]), ("Moody 3", "Moody 5", true, false, [false, false]),
        ("Moody", "Moody 6", false, true, [true, true, true, true, false]),
        ("Moody 2", "Moody 4", true, true, [false, true]), ("Moody 2", "Moody 4", true, false, [false, true]),
        ("Moody", "Moody 5", true, true, [true, true, true, false]),
        ("Moody 2", "Moody 5", true, true, [true, true, false])
    ])
    func theMoodyChainReadsThroughTheStepThatDropsAHierarchy(
        _ window: (from: String, to: String, mapped: Bool, wellTyped: Bool, fused: [Bool])
    ) throws {
        guard SharedFixtures.isAvailable else { try Test.cancel(SharedFixtures.missingMessage) }
        let folder = XcodeMappingTests.realworld.appendingPathComponent("objcio+core-data/Migrations/Migrations")
        let versions = try ObjectModel.loadVersions(at: folder.appendingPathComponent("Moody.xcdatamodeld"))
        let models = try Self.window(of: versions, from: window.from, to: window.to)
        let mappings =
            window.mapped
            ? try MappingModel.loadAll(in: folder, models: versions).filter { mapping in
                models.dropLast().contains { $0.version == mapping.sourceModel }
            } : []
        let directory = try TemporaryDirectory()
        for seed in UInt64(1)...3 {
            let source = directory.path("M\(seed).sqlite")
            try GeneratedRows.makeStore(
                at: source, model: models[0], seed: 11_200 + seed, consistent: true, wellTyped: window.wellTyped,
                interleaved: true)
            let (oneByOne, fused) = try StepFusionTests.bothWays(
                models, mappings, source: source, at: directory.path("M.sqlite"),
                "\(window.from) → \(window.to), seed \(seed)")
            if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
            #expect(fused.fused == window.fused, "\(window.from) → \(window.to), seed \(seed)")
        }
    }
}

extension RealModelsDifferentialTests {
    /// CoreDataPlus's SampleModel → SampleModel2 → SampleModel3, inferred: the first step
    /// renames (a person's `cars`, of `Car`, `SportCar` and `LuxuryCar` rows in one table,
    /// each entity copied by a mapping of its own), and runs with the second. From the
    /// store Apple's Core Data wrote, and from generated stores whose cars' keys
    /// interleave the three entities (the renaming numbers them entity by entity), each
    /// ends as it does step by step: the same rows and counts.
    @Test func coreDataPlusInferredRunsInOnePass() throws {
        guard SharedFixtures.isAvailable else { try Test.cancel(SharedFixtures.missingMessage) }
        let folder = XcodeMappingTests.coreDataPlus
        let models = try ObjectModel.loadVersions(at: folder.appendingPathComponent("SampleModel.xcdatamodeld"))
        #expect(models.map(\.version) == ["SampleModel", "SampleModel2", "SampleModel3"])
        let directory = try TemporaryDirectory()
        var sources = [folder.appendingPathComponent("Fixtures/SampleModel_V1.sqlite").path]
        for seed in UInt64(1)...3 {
            sources.append(directory.path("S\(seed).sqlite"))
            try GeneratedRows.makeStore(
                at: sources.last!, model: models[0], seed: 11_300 + seed, consistent: true, wellTyped: true,
                interleaved: true)
        }
        for source in sources {
            let (oneByOne, fused) = try StepFusionTests.bothWays(
                models, [], source: source, at: directory.path("S.sqlite"), source)
            if case .failure = oneByOne.outcome { Issue.record("step by step failed: \(oneByOne.outcome)") }
            #expect(fused.fused == [true, false], "\(source)")
        }
    }
}
