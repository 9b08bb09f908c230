import Foundation
import Remodel
import Testing
import TestSupport

/// `mapping-migrate infer`, and steps without a mapping file, as a user runs them.
@Suite struct MappingMigrateInferTests {
    /// The Library models and seed that the library's inference tests use.
    static let libraryFolder = Repository.root.appendingPathComponent("Tests/MigrationTests/Fixtures/library")
    static func library(_ name: String) -> String {
        try! String(contentsOf: libraryFolder.appendingPathComponent(name), encoding: .utf8)
    }
    static let library1 = library("Library1.model.json")
    static let library2 = library("Library2.model.json")
    static let seed = library("Library1.seed.json")

    /// A temporary folder removed when the test ends.
    final class Folder {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("mapping-migrate-infer-\(UUID())")
        init() throws { try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(at: url) }

        /// Writes `files` (name → text) into the subfolder `name`; returns its path.
        func folder(_ name: String, _ files: [String: String]) throws -> String {
            let folder = url.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (file, text) in files { try Data(text.utf8).write(to: folder.appendingPathComponent(file)) }
            return folder.path
        }

        func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    }

    let cli = MappingMigrateBinaryTests()

    static let models = ["Library1.model.json": library1, "Library2.model.json": library2]

    /// Every object of the store, one line each, with relationships as the objects they hold.
    static func dump(_ path: String, models folder: String) throws -> [String] {
        let model = try #require(try ObjectModel.loadVersions(at: URL(fileURLWithPath: folder)).last)
        let context = ObjectContext(store: try Store.open(at: path, model: model, mode: .readOnly))
        var lines: [String] = []
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            for object in try context.fetch(FetchRequest(entityName: entity.name)) {
                var fields = [object.objectID.description]
                for attribute in model.allAttributes(of: entity) {
                    fields.append("\(attribute.name)=\(object[attribute.name].json.serialized())")
                }
                for relationship in model.allRelationships(of: entity) {
                    let value = try object.value(forKey: relationship.name)
                    let elements: [Value] = value.collectionElements ?? (value.isNull ? [] : [value])
                    let targets: [String] = elements.compactMap { element -> String? in
                        guard case .object(let reference) = element, let target = reference.object as? ManagedObject
                        else { return nil }
                        return target.objectID.description
                    }
                    fields.append("\(relationship.name)=[\(targets.sorted().joined(separator: ","))]")
                }
                lines.append(fields.joined(separator: " "))
            }
        }
        return lines
    }

    @Test func inferPrintsAMappingFileThatChecksAndMigratesLikeTheInferredStep() throws {
        let folder = try Folder()
        let models = try folder.folder("models", Self.models.merging(["Library1.seed.json": Self.seed]) { a, _ in a })
        let inferred = try cli.run("infer", "--models", models, "--from", "Library1", "--to", "Library2")
        #expect(inferred.status == 0, "\(inferred.stderr)")
        #expect(inferred.stderr == "")
        let versions = try ObjectModel.loadVersions(at: URL(fileURLWithPath: models))
        #expect(
            inferred.stdout == MappingInference(from: versions[0], to: versions[1]).mappingFile()!.serialized(
                pretty: true) + "\n")
        #expect(
            inferred.stdout.hasPrefix(
                """
                {
                  "comment": "Inferred from Library1 to Library2 by Core Data's lightweight rules (docs/engine.md, \\"Inferred mappings\\"); edit it as you need.",
                  "sourceModel": "Library1",
                  "destinationModel": "Library2",
                  "entityMappings": [
                    {
                      "name": "IEM_Transform_Author",
                """))
        // --to defaults to the next version.
        #expect(try cli.run("infer", "--models", models, "--from", "Library1").stdout == inferred.stdout)

        // A store migrated through the inferred step…
        let store = folder.path("Inferred.sqlite"), other = folder.path("File.sqlite")
        #expect(
            try cli.run(
                "seed", store, "--models", models, "--version", "Library1", "--seed", "\(models)/Library1.seed.json"
            ).status == 0)
        try FileManager.default.copyItem(atPath: store, toPath: other)
        let plan = try cli.run("plan", store, "--models", models)
        #expect(
            plan.stdout == "\(store) is at Library1\nLibrary1 → Library2: inferred (5 entity mappings)\n"
                + "  note: does not carry over Book.obsolete, Shelf (the whole entity): nothing in Library2 has their name or renaming identifier; "
                + "if the data must be kept, give what replaces them the old name as renaming identifier, or write a mapping file for the step\n"
                + "  IEM_Transform_Author: SQL\n"
                + "    read as they are on well-typed rows: born, name\n"
                + "  IEM_Transform_Book: SQL\n"
                + "    read as they are on well-typed rows: code, isbn, pages, rating, title\n"
                + "    checks: rating 0 or 1\n"
                + "  IEM_Add_Review: interpreted: the mapping has no source entity, so it makes nothing\n"
                + "  IEM_Remove_Shelf: interpreted: the mapping makes no destination instances\n"
                + "  IEM_Copy_Tag: SQL\n"
                + "    read as they are on well-typed rows: label\n")
        let run = try cli.run("run", store, "--models", models, "--no-backup")
        #expect(run.status == 0, "\(run.stderr)")

        // …and one through the printed file saved in the mappings folder.
        let withFile = try folder.folder(
            "with-file", Self.models.merging(["Library1_to_Library2.mapping.json": inferred.stdout]) { a, _ in a })
        let check = try cli.run("check", "--models", withFile)
        #expect(
            check.stdout == "2 model versions (Library1, Library2), 1 mapping files: no problems\n", "\(check.stderr)")
        #expect(
            try cli.run("plan", other, "--models", withFile).stdout.hasPrefix(
                "\(other) is at Library1\nLibrary1 → Library2: \(withFile)/Library1_to_Library2.mapping.json (5 entity mappings)\n  IEM_Transform_Author: SQL\n    read as they are on well-typed rows: born, name\n"
            ))
        let runWithFile = try cli.run("run", other, "--models", withFile, "--no-backup")
        #expect(runWithFile.status == 0, "\(runWithFile.stderr)")
        func mappingLines(_ output: String) -> [String] {
            output.split(separator: "\n").filter { $0.hasPrefix("  ") }.map(String.init)
        }
        #expect(
            mappingLines(run.stdout) == [
                "  IEM_Transform_Author: 2 read, 2 created, 2 relationships set (SQL)",
                "  IEM_Transform_Book: 3 read, 3 created, 0 relationships set (SQL)",
                "  IEM_Add_Review: 0 read, 0 created, 0 relationships set (interpreted)",
                "  IEM_Remove_Shelf: 0 read, 0 created, 0 relationships set (interpreted)",
                "  IEM_Copy_Tag: 1 read, 1 created, 0 relationships set (SQL)"
            ])
        #expect(mappingLines(runWithFile.stdout) == mappingLines(run.stdout))
        let migrated = try Self.dump(store, models: models)
        #expect(migrated.count == 6)
        #expect(try Self.dump(other, models: withFile) == migrated)
    }

    @Test func outputWritesAFileAndNeverOverwritesOne() throws {
        let folder = try Folder()
        let models = try folder.folder("models", Self.models)
        let file = folder.path("Library1_to_Library2.mapping.json")
        let wrote = try cli.run("infer", "--models", models, "--from", "Library1", "--output", file)
        #expect(wrote.status == 0)
        #expect(wrote.stdout == "wrote \(file): the mapping inferred for Library1 → Library2 (5 entity mappings)\n")
        let printed = try cli.run("infer", "--models", models, "--from", "Library1")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == printed.stdout)
        let again = try cli.run("infer", "--models", models, "--from", "Library1", "--output", file)
        #expect(again.status == 2)
        #expect(
            again.stderr
                == "mapping-migrate: \(file) exists; remove it or choose another --output (infer does not overwrite a mapping file)\n"
        )
    }

    static let priceModels = [
        "V1.model.json":
            #"{"version": "V1", "entities": {"E": {"attributes": {"price": "string", "title": "string"}}}}"#,
        "V2.model.json":
            #"{"version": "V2", "entities": {"E": {"attributes": {"price": "double", "title": {"type": "string", "optional": false}}}}}"#
    ]
    static let priceProblem =
        #"E.price: it is a string attribute in V1 and a double attribute in V2, and an inferred mapping converts only between numbers and booleans (int16, int32, int64, decimal, double, float, boolean) (Core Data: "Source and destination attribute types are incompatible"); map it in a mapping file, such as "price": "CAST($source.price, 'NSNumber')""#

    @Test func whatCannotBeInferredExitsWithTwoOrMakesADraft() throws {
        let folder = try Folder()
        let models = try folder.folder("models", Self.priceModels)
        let failed = try cli.run("infer", "--models", models, "--from", "V1", "--to", "V2")
        #expect(failed.status == 2)
        #expect(failed.stdout == "")
        #expect(
            failed.stderr == """
                mapping-migrate: a mapping cannot be inferred for V1 → V2:
                  \(Self.priceProblem)
                write a mapping file for the step; --draft prints what can be inferred, with a comment at each part left to finish

                """)

        let draft = try cli.run("infer", "--models", models, "--from", "V1", "--draft")
        #expect(draft.status == 0)
        #expect(
            draft.stderr == """
                mapping-migrate: a draft: 1 thing could not be inferred for V1 → V2:
                  \(Self.priceProblem)
                mapping-migrate: warning: E.title: optional in V1 and required in V2 without a default value, so the migration fails validation if any E has no 'title'; give it a default value, or map it in a mapping file

                """)
        #expect(draft.stdout.contains(#""valueExpression": "$source.price""#))
        // Saved, the draft is found and checked: the conversion is what is left to write.
        try Data(draft.stdout.utf8).write(
            to: URL(fileURLWithPath: models).appendingPathComponent("V1_to_V2.mapping.json"))
        let check = try cli.run("check", "--models", models)
        #expect(check.status == 2)
        #expect(
            check.stderr == """
                mapping-migrate: 1 problem in the mapping files:
                \(models)/V1_to_V2.mapping.json: entityMappings[0] "IEM_Transform_E" .attributeMappings.price: 1:1: 'price' is a double attribute, but the expression gives a string; convert it with CAST(…, 'NSNumber')
                  $source.price
                  ^~~~~~~~~~~~~

                """)
    }

    @Test func aStepThatCannotBeInferredStopsRunAndPlanWithTwo() throws {
        let folder = try Folder()
        let models = try folder.folder("models", Self.priceModels)
        let store = folder.path("E.sqlite")
        #expect(
            try cli.run(
                "seed", store, "--models", models, "--version", "V1", "--seed",
                try folder.folder("seed", ["s.json": #"{"E": [{"price": "1", "title": "a"}]}"#]) + "/s.json"
            ).status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        for command in ["plan", "run"] {
            let result = try cli.run(command, store, "--models", models)
            #expect(result.status == 2)
            #expect(
                result.stderr == """
                    mapping-migrate: no mapping file maps V1 → V2, and a mapping cannot be inferred:
                      \(Self.priceProblem)
                    write a mapping file for the step ("sourceModel": "V1", "destinationModel": "V2") in the mappings folder; `mapping-migrate infer --models <models> --from V1 --to V2 --draft` starts one with what can be inferred

                    """)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        let check = try cli.run("check", "--models", models)
        #expect(check.status == 2)
        #expect(
            check.stderr.hasPrefix(
                "mapping-migrate: 1 problem in the mapping files:\nno mapping file maps V1 → V2, and a mapping cannot be inferred:\n"
            ))
    }

    /// docs/mapping-migrate.md shows what `infer` prints for the library and what a step
    /// that cannot be inferred says.
    @Test func theGuideShowsWhatInferPrints() throws {
        let guide = try String(
            contentsOf: MappingMigrateBinaryTests.root.appendingPathComponent("docs/mapping-migrate.md"),
            encoding: .utf8)
        let section = try #require(guide.range(of: "### `infer`")).upperBound
        let start = try #require(guide.range(of: "```json\n", range: section..<guide.endIndex)).upperBound
        let end = try #require(guide.range(of: "\n```", range: start..<guide.endIndex)).lowerBound
        let shown = try JSON.parse(String(guide[start..<end]))
        let folder = try Folder()
        let printed = try JSON.parse(
            try cli.run("infer", "--models", try folder.folder("models", Self.models), "--from", "Library1").stdout)
        for key in ["comment", "sourceModel", "destinationModel"] { #expect(shown[key] == printed[key], "\(key)") }
        let all = try #require(printed["entityMappings"]?.arrayValue)
        let excerpt = try #require(shown["entityMappings"]?.arrayValue)
        #expect(excerpt.count == 2)
        for mapping in excerpt { #expect(all.contains(mapping), "\(mapping.serialized())") }
        #expect(guide.contains(Self.priceProblem))
        #expect(
            guide.contains(
                "'price' is a double attribute, but the expression gives a string; convert it with CAST(…, 'NSNumber')\n    $source.price\n    ^~~~~~~~~~~~~\n"
            ))
        let plan: String = """
            Library1 → Library2: inferred (5 entity mappings)
              note: does not carry over Book.obsolete, Shelf (the whole entity): nothing in Library2 has their name or renaming identifier; \
            if the data must be kept, give what replaces them the old name as renaming identifier, or write a mapping file for the step
              IEM_Transform_Author: SQL
                read as they are on well-typed rows: born, name
              IEM_Transform_Book: SQL
                read as they are on well-typed rows: code, isbn, pages, rating, title
                checks: rating 0 or 1
              IEM_Add_Review: interpreted: the mapping has no source entity, so it makes nothing
              IEM_Remove_Shelf: interpreted: the mapping makes no destination instances
              IEM_Copy_Tag: SQL
                read as they are on well-typed rows: label

            """
        #expect(guide.contains(plan))
    }

    @Test func planAndRunPrintTheWarningsOfAnInferredStep() throws {
        let folder = try Folder()
        let models = try folder.folder(
            "models",
            [
                "V1.model.json": #"{"version": "V1", "entities": {"E": {"attributes": {"title": "string"}}}}"#,
                "V2.model.json":
                    #"{"version": "V2", "entities": {"E": {"attributes": {"title": {"type": "string", "optional": false}}}}}"#,
                "seed.json": #"{"E": [{"title": "a"}]}"#
            ])
        let store = folder.path("E.sqlite")
        #expect(
            try cli.run("seed", store, "--models", models, "--version", "V1", "--seed", "\(models)/seed.json").status
                == 0)
        let warning =
            "E.title: optional in V1 and required in V2 without a default value, so the migration fails validation if any E has no 'title'; give it a default value, or map it in a mapping file"
        let plan = try cli.run("plan", store, "--models", models)
        #expect(
            plan.stdout.hasPrefix(
                "\(store) is at V1\nV1 → V2: inferred (1 entity mappings)\n  warning: \(warning)\n  IEM_Transform_E: SQL"
            ))
        let run = try cli.run("run", store, "--models", models, "--no-backup", "--quiet")
        #expect(run.status == 0)
        #expect(run.stderr == "mapping-migrate: warning: inferred V1 → V2: \(warning)\n")
        #expect(
            run.stdout.contains(
                "\n  IEM_Transform_E: 1 read, 1 created, 0 relationships set (SQL)\ndone: \(store) is at V2 after 1 step ("
            ))
    }

    /// An inferred step that drops an attribute runs in one pass with the step after it,
    /// which reads nothing of it, and the plan says so; the store ends as step by step.
    @Test func aStepThatDropsAnAttributeRunsWithTheStepAfterIt() throws {
        let folder = try Folder()
        let mapping = #"""
            {"sourceModel": "B", "destinationModel": "C", "entityMappings": [{"name": "ItemToItem",
             "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "attributeMappings":
             {"name": "$source.name", "label": "FUNCTION($source.name, 'uppercaseString')"}}]}
            """#
        let models = try folder.folder(
            "models",
            [
                "A.model.json":
                    #"{"version": "A", "entities": {"Item": {"attributes": {"name": "string", "legacy": "int16"}}}}"#,
                "B.model.json": #"{"version": "B", "entities": {"Item": {"attributes": {"name": "string"}}}}"#,
                "C.model.json":
                    #"{"version": "C", "entities": {"Item": {"attributes": {"name": "string", "label": "string"}}}}"#,
                "B_to_C.mapping.json": mapping,
                "seed.json": #"{"Item": [{"name": "a", "legacy": 3}, {"name": "b"}]}"#
            ])
        let store = folder.path("Items.sqlite"), other = folder.path("Other.sqlite")
        #expect(
            try cli.run("seed", store, "--models", models, "--version", "A", "--seed", "\(models)/seed.json").status
                == 0)
        try FileManager.default.copyItem(atPath: store, toPath: other)
        let plan = try cli.run("plan", store, "--models", models)
        #expect(
            plan.stdout.contains(
                "one pass: A → C (A → B only renames or drops properties; `run --step-by-step` runs each step on its own)\n  as one mapping, A → C:\n    ItemToItem: SQL\n"
            ), "\(plan.stdout)")
        let run = try cli.run("run", store, "--models", models, "--no-backup", "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("A → B (inferred): in one pass with B → C\n"), "\(run.stdout)")
        let steps = try cli.run("run", other, "--models", models, "--no-backup", "--quiet", "--step-by-step")
        #expect(steps.status == 0, "\(steps.stderr)")
        #expect(try Self.dump(store, models: models) == Self.dump(other, models: models))
        #expect(
            try Self.dump(store, models: models).contains { $0.contains(#"label="A""#) && $0.contains(#"name="a""#) })
    }

    /// Two steps that each filter items with tags run one pass each, and the plan says
    /// why the second cannot join the first's pass, either way.
    @Test func thePlanSaysWhyAStepStartsANewPass() throws {
        let folder = try Folder()
        func file(_ from: String, _ to: String) -> String {
            #"{"sourceModel": "\#(from)", "destinationModel": "\#(to)", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", "sourceExpression": "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Item', 'name != nil'), $manager.sourceContext, NO)"}, {"name": "TagToTag", "type": "copy", "sourceEntity": "Tag", "destinationEntity": "Tag"}]}"#
        }
        let version = { (name: String) in
            #"{"version": "\#(name)", "entities": {"Item": {"attributes": {"name": "string"}, "relationships": {"tags": {"destination": "Tag", "inverse": "item", "toMany": true}}}, "Tag": {"attributes": {"label": "string"}, "relationships": {"item": {"destination": "Item", "inverse": "tags"}}}}}"#
        }
        let models = try folder.folder(
            "models",
            [
                "A.model.json": version("A"), "B.model.json": version("B"), "C.model.json": version("C"),
                "A_to_B.mapping.json": file("A", "B"), "B_to_C.mapping.json": file("B", "C")
            ])
        let plan = try cli.run("plan", folder.path("Items.sqlite"), "--models", models, "--from", "A")
        #expect(plan.status == 0, "\(plan.stderr)")
        let filters =
            "entity mapping ItemToItem does not fetch every Item (its source expression filters or reads more)"
        #expect(
            plan.stdout.hasSuffix(
                """
                B → C starts a new pass:
                  it cannot run after A → B, in the pass before: \(filters)
                  A → B cannot run before it, in its pass: \(filters)

                """), "\(plan.stdout)")
    }

    /// Items A (name, price) → B (name, net) → C (name, gross) by `first` and `second`,
    /// from three seeded items: the plan ends with `pass`, and `run` takes the store to C
    /// in one pass, reporting `step` as run in the pass of `other` (the step whose mapping
    /// runs), and ending as step by step.
    func runsInOnePass(first: String, second: String, pass: String, step: String, with other: String) throws {
        let folder = try Folder()
        func file(_ from: String, _ to: String, _ mapping: String) -> String {
            #"{"sourceModel": "\#(from)", "destinationModel": "\#(to)", "entityMappings": [{"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item", \#(mapping)}]}"#
        }
        func version(_ name: String, _ attribute: String) -> String {
            #"{"version": "\#(name)", "entities": {"Item": {"attributes": {"name": "string", "\#(attribute)": "double"}}}}"#
        }
        let models = try folder.folder(
            "models",
            [
                "A.model.json": version("A", "price"), "B.model.json": version("B", "net"),
                "C.model.json": version("C", "gross"), "A_to_B.mapping.json": file("A", "B", first),
                "B_to_C.mapping.json": file("B", "C", second),
                "seed.json": #"{"Item": [{"name": "a", "price": 12}, {"name": "b"}, {"name": "c", "price": 0.1}]}"#
            ])
        let store = folder.path("Items.sqlite"), copy = folder.path("Other.sqlite")
        #expect(
            try cli.run("seed", store, "--models", models, "--version", "A", "--seed", "\(models)/seed.json").status
                == 0)
        try FileManager.default.copyItem(atPath: store, toPath: copy)
        let plan = try cli.run("plan", store, "--models", models)
        #expect(
            plan.stdout.contains(
                "one pass: A → C (\(pass); `run --step-by-step` runs each step on its own)\n  as one mapping, A → C:\n"),
            "\(plan.stdout)")
        let run = try cli.run("run", store, "--models", models, "--no-backup", "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        let reported = run.stdout.split(separator: "\n").contains { line in
            line.hasPrefix("\(step) (") && line.hasSuffix(": in one pass with \(other)")
        }
        #expect(reported, "\(run.stdout)")
        let steps = try cli.run("run", copy, "--models", models, "--no-backup", "--quiet", "--step-by-step")
        #expect(steps.status == 0, "\(steps.stderr)")
        #expect(try Self.dump(store, models: models) == Self.dump(copy, models: models))
        #expect(try Self.dump(store, models: models).contains { $0.contains("gross=12.5") })
    }

    /// Two mapping files that both compute values run in one pass where the first
    /// writes each value as it is read back: the second reads `$source.net` as the
    /// expression that computes it.
    @Test func aStepThatComputesValuesRunsWithTheStepAfterIt() throws {
        try runsInOnePass(
            first: #""attributeMappings": {"net": "TERNARY($source.price == nil, 0.0, $source.price / 1.2)"}"#,
            second: #""attributeMappings": {"gross": "$source.net * 1.25"}"#,
            pass: "A → B computes values the step after it reads", step: "A → B", with: "B → C")
    }

    /// A step that computes after a step that filters: the pass writes gross from the
    /// first step's expression for net directly (the item without a price, which the
    /// filter rejects, left out of its check).
    @Test func aStepThatComputesAfterAFilterRunsInItsPass() throws {
        let fetch =
            #"FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Item\", \"price != nil\"), $manager.sourceContext, NO)"#
        try runsInOnePass(
            first: #""sourceExpression": "\#(fetch)", "attributeMappings": {"net": "$source.price / 1.2"}"#,
            second: #""attributeMappings": {"gross": "$source.net * 1.25"}"#,
            pass: "B → C computes values from what the step before it writes", step: "B → C", with: "A → B")
    }

    /// Two steps that filter, the second by what the first copies: one pass, which
    /// fetches the items both filters select (the item without a price, and the one
    /// whose net the second filter rejects, left out).
    @Test func twoStepsThatFilterRunInOnePass() throws {
        func fetch(_ predicate: String) -> String {
            #""sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Item\", \"\#(predicate)\"), $manager.sourceContext, NO)""#
        }
        try runsInOnePass(
            first: #"\#(fetch("price != nil")), "attributeMappings": {"net": "$source.price"}"#,
            second: #"\#(fetch("net > 1")), "attributeMappings": {"gross": "$source.net + 0.5"}"#,
            pass:
                "B → C computes values from what the step before it writes; B → C copies only the rows its filter selects: in the pass where SQL tells which rows the step before fetches",
            step: "B → C", with: "A → B")
    }

    @Test func badVersionsExitWithTwo() throws {
        let folder = try Folder()
        let models = try folder.folder("models", Self.models)
        let unknown = try cli.run("infer", "--models", models, "--from", "Library9")
        #expect(unknown.status == 2)
        #expect(unknown.stderr == "mapping-migrate: no model version 'Library9'; the versions are Library1, Library2\n")
        let newest = try cli.run("infer", "--models", models, "--from", "Library2")
        #expect(newest.status == 2)
        #expect(
            newest.stderr
                == "mapping-migrate: Library2 is the newest version; name the version to infer a mapping to with --to\n"
        )
        let same = try cli.run("infer", "--models", models, "--from", "Library1", "--to", "Library1")
        #expect(
            same.stderr
                == "mapping-migrate: --from and --to are both Library1; a mapping goes from one version to another\n")
        let missing = try cli.run("infer", "--models", models)
        #expect(missing.status == 2)
    }
}
