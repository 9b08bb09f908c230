import Foundation
import Remodel
import Testing

/// The notes-chain example (mappings/notes-chain) through the `mapping-migrate` binary, as
/// its README runs it: Notes1 → Notes2 inferred (renames), Notes2 → Notes3 through a mapping
/// file (expressions), Notes3 → Notes4 inferred (a new required attribute with a default),
/// from the Xcode models and from the JSON models, checking every store on the way.
@Suite struct NotesChainTests {
    static let example = MappingMigrateBinaryTests.root.appendingPathComponent("mappings/notes-chain")
    static let xcode = example.appendingPathComponent("Notes.xcdatamodeld").path
    static let fixture = example.appendingPathComponent("Notes1.sqlite").path
    /// The two ways to give the models: the .xcdatamodeld and the folder of JSON files.
    static let modelPaths = [xcode, example.path]

    let cli = MappingMigrateBinaryTests()

    /// A copy of the fixture in a new folder, removed when the value goes away.
    final class Scratch {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("notes-chain-\(UUID())")
        var store: String { url.appendingPathComponent("Notes.sqlite").path }
        init() throws {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: NotesChainTests.fixture, toPath: store)
        }
        deinit { try? FileManager.default.removeItem(at: url) }
        var files: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted() }
    }

    /// Every object of the store at `version`, one line each: attributes and relationships
    /// in name order, relationships as the objects they hold.
    static func dump(_ path: String, version: String) throws -> [String] {
        let model = try #require(try ObjectModel.loadVersions(at: example).first { $0.version == version })
        let context = ObjectContext(store: try Store.open(at: path, model: model, mode: .readOnly))
        var lines: [String] = []
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            for object in try context.fetch(FetchRequest(entityName: entity.name)) {
                var fields: [String] = []
                for attribute in model.allAttributes(of: entity) {
                    fields.append("\(attribute.name)=\(object[attribute.name].json.serialized())")
                }
                for relationship in model.allRelationships(of: entity) {
                    let value = try object.value(forKey: relationship.name)
                    let members = (value.collectionElements ?? (value.isNull ? [] : [value])).map(\.formatDescription)
                    fields.append("\(relationship.name)=[\(members.sorted().joined(separator: ","))]")
                }
                lines.append("\(object.objectID) " + fields.sorted().joined(separator: " "))
            }
        }
        return lines
    }

    static let notes1 = [
        #"Folder/1 name="Work" notes=[Note/1,Note/4,Note/6]"#,
        #"Folder/2 name="Home" notes=[Note/2,Note/3]"#,
        #"Folder/3 name="Someday" notes=[]"#,
        #"Note/1 body="Draft the numbers for Q3" created={"$date":"2024-09-02T09:00:00Z"} folder=[Folder/1] priority=2 title="Quarterly report" trashed=false"#,
        #"Note/2 body="milk eggs bread" created={"$date":"2024-09-03T18:30:00Z"} folder=[Folder/2] priority=0 title="Groceries" trashed=false"#,
        #"Note/3 body="Call the plumber about the sink" created={"$date":"2024-09-04T08:00:00Z"} folder=[Folder/2] priority=1 title=null trashed=false"#,
        #"Note/4 body="Something nobody needs" created={"$date":"2023-01-15T10:00:00Z"} folder=[Folder/1] priority=0 title="Old idea" trashed=true"#,
        #"Note/5 body=null created={"$date":"2024-09-05T12:00:00Z"} folder=[] priority=1 title="" trashed=false"#,
        #"Note/6 body="Book a venue for twelve" created={"$date":"2024-09-06T14:45:00Z"} folder=[Folder/1] priority=2 title="  Team offsite  " trashed=false"#
    ]

    /// Inferred: Folder is Notebook, body is text, folder is notebook; nothing else changes.
    static let notes2 = [
        #"Note/1 created={"$date":"2024-09-02T09:00:00Z"} notebook=[Notebook/1] priority=2 text="Draft the numbers for Q3" title="Quarterly report" trashed=false"#,
        #"Note/2 created={"$date":"2024-09-03T18:30:00Z"} notebook=[Notebook/2] priority=0 text="milk eggs bread" title="Groceries" trashed=false"#,
        #"Note/3 created={"$date":"2024-09-04T08:00:00Z"} notebook=[Notebook/2] priority=1 text="Call the plumber about the sink" title=null trashed=false"#,
        #"Note/4 created={"$date":"2023-01-15T10:00:00Z"} notebook=[Notebook/1] priority=0 text="Something nobody needs" title="Old idea" trashed=true"#,
        #"Note/5 created={"$date":"2024-09-05T12:00:00Z"} notebook=[] priority=1 text=null title="" trashed=false"#,
        #"Note/6 created={"$date":"2024-09-06T14:45:00Z"} notebook=[Notebook/1] priority=2 text="Book a venue for twelve" title="  Team offsite  " trashed=false"#,
        #"Notebook/1 name="Work" notes=[Note/1,Note/4,Note/6]"#,
        #"Notebook/2 name="Home" notes=[Note/2,Note/3]"#,
        #"Notebook/3 name="Someday" notes=[]"#
    ]

    /// The mapping file: the trashed note is gone (the others are numbered anew, in order),
    /// titles are filled in and trimmed, priorities are words, word counts computed.
    static let notes3 = [
        #"Note/1 created={"$date":"2024-09-02T09:00:00Z"} notebook=[Notebook/1] priority="high" text="Draft the numbers for Q3" title="Quarterly report" wordCount=5"#,
        #"Note/2 created={"$date":"2024-09-03T18:30:00Z"} notebook=[Notebook/2] priority="low" text="milk eggs bread" title="Groceries" wordCount=3"#,
        #"Note/3 created={"$date":"2024-09-04T08:00:00Z"} notebook=[Notebook/2] priority="normal" text="Call the plumber about the sink" title="Untitled" wordCount=6"#,
        #"Note/4 created={"$date":"2024-09-05T12:00:00Z"} notebook=[] priority="normal" text=null title="Untitled" wordCount=null"#,
        #"Note/5 created={"$date":"2024-09-06T14:45:00Z"} notebook=[Notebook/1] priority="high" text="Book a venue for twelve" title="Team offsite" wordCount=5"#,
        #"Notebook/1 name="Work" notes=[Note/1,Note/5]"#,
        #"Notebook/2 name="Home" notes=[Note/2,Note/3]"#,
        #"Notebook/3 name="Someday" notes=[]"#
    ]

    /// Inferred: every note gets archived = NO (the new required attribute's default);
    /// Attachment is new and empty.
    static let notes4 = [
        #"Note/1 archived=false attachments=[] created={"$date":"2024-09-02T09:00:00Z"} notebook=[Notebook/1] priority="high" text="Draft the numbers for Q3" title="Quarterly report" wordCount=5"#,
        #"Note/2 archived=false attachments=[] created={"$date":"2024-09-03T18:30:00Z"} notebook=[Notebook/2] priority="low" text="milk eggs bread" title="Groceries" wordCount=3"#,
        #"Note/3 archived=false attachments=[] created={"$date":"2024-09-04T08:00:00Z"} notebook=[Notebook/2] priority="normal" text="Call the plumber about the sink" title="Untitled" wordCount=6"#,
        #"Note/4 archived=false attachments=[] created={"$date":"2024-09-05T12:00:00Z"} notebook=[] priority="normal" text=null title="Untitled" wordCount=null"#,
        #"Note/5 archived=false attachments=[] created={"$date":"2024-09-06T14:45:00Z"} notebook=[Notebook/1] priority="high" text="Book a venue for twelve" title="Team offsite" wordCount=5"#,
        #"Notebook/1 name="Work" notes=[Note/1,Note/5]"#,
        #"Notebook/2 name="Home" notes=[Note/2,Note/3]"#,
        #"Notebook/3 name="Someday" notes=[]"#
    ]

    static let expected = ["Notes1": notes1, "Notes2": notes2, "Notes3": notes3, "Notes4": notes4]

    @Test func theXcodeModelsAreTheJSONModels() throws {
        let (xcode, current) = try XcodeModelImporter.importVersions(at: URL(fileURLWithPath: Self.xcode))
        let json = try ObjectModel.loadVersions(at: Self.example)
        #expect(current == "Notes4")
        #expect(xcode.map(\.version) == ["Notes1", "Notes2", "Notes3", "Notes4"])
        #expect(json.map(\.version) == xcode.map(\.version))
        /// A model with its entities and properties in name order (Xcode writes them so).
        func sorted(_ model: ObjectModel) -> ObjectModel {
            var model = model
            model.entities = model.entities.sorted { $0.name < $1.name }.map { entity in
                var entity = entity
                entity.attributes.sort { $0.name < $1.name }
                entity.relationships.sort { $0.name < $1.name }
                return entity
            }
            return model
        }
        for (x, j) in zip(xcode, json) {
            #expect(sorted(x) == sorted(j), "\(x.version)")
            #expect(x.entityVersionHashes == j.entityVersionHashes, "\(x.version)")
        }
    }

    @Test func theFixtureIsAtNotes1() throws {
        #expect(try Self.dump(Self.fixture, version: "Notes1") == Self.notes1)
        let inspect = try cli.run("inspect", Self.fixture, "--models", Self.xcode)
        #expect(
            inspect.stdout == "\(Self.fixture): model version Notes1 (by its version hashes)\n  Folder: 3\n  Note: 6\n")
    }

    @Test func checkAndPlan() throws {
        for models in Self.modelPaths {
            let check = try cli.run("check", "--models", models)
            #expect(
                check.stdout == "4 model versions (Notes1, Notes2, Notes3, Notes4), 1 mapping files: no problems\n",
                "\(check.stderr)")
            let plan = try cli.run("plan", Self.fixture, "--models", models)
            #expect(
                plan.stdout == """
                    \(Self.fixture) is at Notes1
                    Notes1 → Notes2: inferred (2 entity mappings)
                      IEM_Transform_Folder: SQL
                        read as they are on well-typed rows: name
                      IEM_Transform_Note: SQL
                        read as they are on well-typed rows: body, priority, title, trashed
                        checks: priority in range
                    Notes2 → Notes3: \(Self.example.path)/Notes2_to_Notes3.mapping.json (2 entity mappings)
                      note: reads the store the step before writes, whose values fit Notes2: SQL reads them as they are
                      NotebookToNotebook: SQL
                      NoteToNote: SQL
                    Notes3 → Notes4: inferred (3 entity mappings)
                      note: reads the store the step before writes, whose values fit Notes3: SQL reads them as they are
                      IEM_Add_Attachment: interpreted: the mapping has no source entity, so it makes nothing
                      IEM_Transform_Note: SQL
                      IEM_Copy_Notebook: SQL
                    one pass: Notes1 → Notes4 (Notes1 → Notes2 and Notes3 → Notes4 only rename; `run --step-by-step` runs each step on its own)
                      as one mapping, Notes1 → Notes4:
                        NotebookToNotebook: SQL
                          read as they are on well-typed rows: name
                        NoteToNote: SQL
                          evaluated where SQL cannot decide: title, priority, the source predicate
                          read as they are on well-typed rows: body, priority, title, trashed

                    """, "\(plan.stderr)")
        }
    }

    /// One step at a time, from each kind of models: every store on the way is checked.
    @Test(arguments: modelPaths) func stepByStep(models: String) throws {
        let scratch = try Scratch()
        let counts = [
            "Notes2": "  Note: 6\n  Notebook: 3\n", "Notes3": "  Note: 5\n  Notebook: 3\n",
            "Notes4": "  Attachment: 0\n  Note: 5\n  Notebook: 3\n"
        ]
        for (from, to) in [("Notes1", "Notes2"), ("Notes2", "Notes3"), ("Notes3", "Notes4")] {
            let run = try cli.run("run", scratch.store, "--models", models, "--to", to)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stdout.contains("\ndone: \(scratch.store) is at \(to) after 1 step ("))
            #expect(
                run.stdout.hasSuffix(
                    " s)\nthe store before the step is kept: \(scratch.store).\(from).bak (remove it when no longer needed)\n"
                ))
            #expect(try Self.dump(scratch.store, version: to) == Self.expected[to]!, "\(to)")
            #expect(try Self.dump(scratch.store + ".\(from).bak", version: from) == Self.expected[from]!, "\(from).bak")
            let inspect = try cli.run("inspect", scratch.store, "--models", models)
            #expect(inspect.stdout == "\(scratch.store): model version \(to) (by its version hashes)\n" + counts[to]!)
        }
        #expect(
            scratch.files == [
                "Notes.sqlite", "Notes.sqlite.Notes1.bak", "Notes.sqlite.Notes2.bak", "Notes.sqlite.Notes3.bak"
            ])
    }

    /// The whole chain in one run, as the README shows it.
    @Test(arguments: modelPaths) func wholeChain(models: String) throws {
        let scratch = try Scratch()
        let run = try cli.run("run", scratch.store, "--models", models, "--no-backup")
        #expect(run.status == 0, "\(run.stderr)")
        // The first and last steps only rename: the mapping file's step runs them in its
        // pass (docs/engine.md, "Steps run as one").
        #expect(
            run.stdout.hasPrefix(
                """
                Notes1 → Notes2 (inferred): in one pass with Notes2 → Notes3
                  IEM_Transform_Folder: 3 read, 3 created, 2 relationships set
                  IEM_Transform_Note: 6 read, 6 created, 6 relationships set
                Notes2 → Notes3 (Notes2_to_Notes3.mapping.json): 
                """))
        #expect(
            run.stdout.contains(
                """
                  NotebookToNotebook: 3 read, 3 created, 2 relationships set (SQL)
                  NoteToNote: 5 read, 5 created, 5 relationships set (SQL)
                Notes3 → Notes4 (inferred): in one pass with Notes2 → Notes3
                  IEM_Add_Attachment: 0 read, 0 created, 0 relationships set
                  IEM_Transform_Note: 5 read, 5 created, 5 relationships set
                  IEM_Copy_Notebook: 3 read, 3 created, 0 relationships set
                done: \(scratch.store) is at Notes4 after 3 steps (
                """))
        // Standard error is not a terminal here: plain progress lines, one per entity
        // mapping and stage with rows, one per validated step. The renaming steps are
        // done as the pass ends: Notes1 → Notes2's rows checked in the store beside the
        // pass, Notes3 → Notes4's validated with Notes2 → Notes3's.
        #expect(
            run.stderr == """
                [2/3] Notes2 → Notes3: NotebookToNotebook: create instances: 3 rows, done
                [2/3] Notes2 → Notes3: NoteToNote: create instances: 5 rows, done
                [2/3] Notes2 → Notes3: NotebookToNotebook: create relationships: 3 rows, done
                [2/3] Notes2 → Notes3: NoteToNote: create relationships: 5 rows, done
                [2/3] Notes2 → Notes3: validated
                [1/3] Notes1 → Notes2: validated
                [3/3] Notes3 → Notes4: validated

                """)
        #expect(try Self.dump(scratch.store, version: "Notes4") == Self.notes4)
        #expect(scratch.files == ["Notes.sqlite"])
        let again = try cli.run("run", scratch.store, "--models", models, "--quiet")
        #expect(again.stdout == "\(scratch.store) is already at Notes4; nothing to do\n")
        #expect(again.stderr == "")
    }

    /// The renaming steps saved as mapping files, as `infer` prints them: the steps still
    /// run in one pass, and end with the same store.
    @Test func inferredStepsSavedAsFilesStillRunInOnePass() throws {
        let scratch = try Scratch()
        let models = scratch.url.appendingPathComponent("models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.example.path)
        where name.hasSuffix(".model.json") || name.hasSuffix(".mapping.json") {
            try FileManager.default.copyItem(
                at: Self.example.appendingPathComponent(name), to: models.appendingPathComponent(name))
        }
        for (from, to) in [("Notes1", "Notes2"), ("Notes3", "Notes4")] {
            let inferred = try cli.run(
                "infer", "--models", models.path, "--from", from, "--to", to, "--output",
                models.appendingPathComponent("\(from)_to_\(to).mapping.json").path)
            #expect(inferred.status == 0, "\(inferred.stderr)")
        }
        let plan = try cli.run("plan", scratch.store, "--models", models.path)
        #expect(plan.stdout.contains("Notes3 → Notes4: \(models.path)/Notes3_to_Notes4.mapping.json"), "\(plan.stdout)")
        #expect(
            plan.stdout.contains(
                "one pass: Notes1 → Notes4 (Notes1 → Notes2 and Notes3 → Notes4 only rename; `run --step-by-step` runs each step on its own)\n  as one mapping, Notes1 → Notes4:\n"
            ), "\(plan.stdout)")
        let run = try cli.run("run", scratch.store, "--models", models.path, "--no-backup", "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains("Notes3 → Notes4 (Notes3_to_Notes4.mapping.json): in one pass with Notes2 → Notes3"))
        #expect(try Self.dump(scratch.store, version: "Notes4") == Self.notes4)
    }

    /// --step-by-step runs each step on its own, each with its backup, and ends with the
    /// same store and the same counts.
    @Test func stepByStepEndsTheSame() throws {
        let scratch = try Scratch()
        let run = try cli.run("run", scratch.store, "--models", Self.example.path, "--step-by-step", "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(
            run.stdout.contains(
                """
                  IEM_Transform_Folder: 3 read, 3 created, 2 relationships set (SQL)
                  IEM_Transform_Note: 6 read, 6 created, 6 relationships set (SQL)
                """))
        #expect(
            run.stdout.contains(
                """
                  IEM_Add_Attachment: 0 read, 0 created, 0 relationships set (interpreted)
                  IEM_Transform_Note: 5 read, 5 created, 5 relationships set (SQL)
                  IEM_Copy_Notebook: 3 read, 3 created, 0 relationships set (SQL)
                done: \(scratch.store) is at Notes4 after 3 steps (
                """))
        #expect(try Self.dump(scratch.store, version: "Notes4") == Self.notes4)
        #expect(
            scratch.files == [
                "Notes.sqlite", "Notes.sqlite.Notes1.bak", "Notes.sqlite.Notes2.bak", "Notes.sqlite.Notes3.bak"
            ])
    }

    @Test func dryRunChangesNothing() throws {
        let scratch = try Scratch()
        let before = try Data(contentsOf: URL(fileURLWithPath: scratch.store))
        let run = try cli.run("run", scratch.store, "--models", Self.example.path, "--dry-run", "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr == "")
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.store)) == before)
        #expect(scratch.files == ["Notes.sqlite"])
        #expect(
            run.stdout.hasPrefix(
                "dry run: \(scratch.store) is at Notes1; the 3 steps run into temporary files, and the store is not changed\nNotes1 → Notes2 (inferred): "
            ))
        // The JSON models list Note's attributes in the order of Notes*.model.json.
        #expect(
            run.stdout.contains(
                """
                  IEM_Transform_Note: 6 read, 6 created, 6 relationships set (SQL)
                  Note: 6 objects
                    Note/1 title="Quarterly report" text="Draft the numbers for Q3" created=2024-09-02T09:00:00Z priority=2 trashed=NO notebook=Notebook/1
                    Note/2 title="Groceries" text="milk eggs bread" created=2024-09-03T18:30:00Z priority=0 trashed=NO notebook=Notebook/2
                    Note/3 title=nil text="Call the plumber about the sink" created=2024-09-04T08:00:00Z priority=1 trashed=NO notebook=Notebook/2
                  Notebook: 3 objects
                    Notebook/1 name="Work" notes=[Note/1, Note/4, Note/6]
                    Notebook/2 name="Home" notes=[Note/2, Note/3]
                    Notebook/3 name="Someday" notes=[]
                Notes2 → Notes3 (Notes2_to_Notes3.mapping.json): 
                """))
        #expect(
            run.stdout.contains(
                """
                  Note: 5 objects
                    Note/1 title="Quarterly report" text="Draft the numbers for Q3" created=2024-09-02T09:00:00Z priority="high" wordCount=5 archived=NO notebook=Notebook/1 attachments=[]
                """))
        #expect(
            run.stdout.contains("\ndry run done: a run would take \(scratch.store) from Notes1 to Notes4 in 3 steps ("))
        #expect(run.stdout.hasSuffix(" s here); nothing was changed\n"))

        // Up to Notes2 only, with one sample.
        let short = try cli.run(
            "run", scratch.store, "--models", Self.xcode, "--dry-run", "--to", "Notes2", "--samples", "1", "--quiet")
        #expect(short.status == 0)
        #expect(
            short.stdout.contains(
                "  Note: 6 objects\n    Note/1 created=2024-09-02T09:00:00Z priority=2 text=\"Draft the numbers for Q3\" title=\"Quarterly report\" trashed=NO notebook=Notebook/1\n  Notebook: 3 objects\n    Notebook/1 name=\"Work\" notes=[Note/1, Note/4, Note/6]\ndry run done: "
            ))
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.store)) == before)
        #expect(scratch.files == ["Notes.sqlite"])
    }

    /// `--json`: JSON lines on standard output, a plan event, progress events, a result.
    @Test func jsonLines() throws {
        let scratch = try Scratch()
        let run = try cli.run("run", scratch.store, "--models", Self.xcode, "--json")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr == "")
        let events = try run.stdout.split(separator: "\n").map { try JSON.parse(Data($0.utf8)) }
        #expect(events.first?["event"] == "plan")
        #expect(
            events.first?["steps"]?.arrayValue?.map { $0["mapping"]?.stringValue ?? "" }
                == ["inferred", "\(Self.example.path)/Notes2_to_Notes3.mapping.json", "inferred"])
        let progress = events.dropFirst().dropLast()
        // One at the end of each stage of each entity mapping, one per validated step
        // (the renaming steps run in Notes2 → Notes3's pass: only their validation).
        #expect(progress.count == 7)
        for event in progress {
            #expect(event["event"] == "progress")
            let keys = event.objectValue.map { Array($0.keys) }
            #expect(
                keys == [
                    "event", "step", "steps", "source", "destination", "entityMapping", "stage", "rows", "totalRows",
                    "rowsPerSecond", "etaSeconds", "fraction", "overallFraction", "done"
                ])
        }
        #expect(progress.last?["overallFraction"] == 1.0)
        let result = try #require(events.last)
        #expect(result["event"] == "result")
        #expect(result["status"] == "migrated")
        #expect(result["exitCode"] == 0)
        #expect(result["from"] == "Notes1")
        #expect(result["to"] == "Notes4")
        #expect(result["at"] == "Notes4")
        #expect(result["error"] == .null)
        #expect(result["backups"] == [.string("\(scratch.store).Notes1.bak")])
        let steps = try #require(result["steps"]?.arrayValue)
        #expect(steps.map { $0["destination"]?.stringValue ?? "" } == ["Notes2", "Notes3", "Notes4"])
        #expect(
            steps[1]["entityMappings"]?.arrayValue?.map {
                [$0["name"], $0["read"], $0["created"], $0["relationshipsSet"]]
            }
                == [["NotebookToNotebook", 3, 3, 2], ["NoteToNote", 5, 5, 5]])
        // How each ran: both stages as SQL; the attachments' mapping, which has no
        // source, interpreted.
        #expect(
            steps[1]["entityMappings"]?.arrayValue?.map { [$0["instancesAsSQL"], $0["relationshipsAsSQL"]] } == [
                [true, true], [true, true]
            ])
        #expect(steps.map { $0["fused"] } == [true, false, true])
        #expect(
            steps[2]["entityMappings"]?.arrayValue?.map {
                [$0["name"], $0["read"], $0["created"], $0["relationshipsSet"]]
            }
                == [["IEM_Add_Attachment", 0, 0, 0], ["IEM_Transform_Note", 5, 5, 5], ["IEM_Copy_Notebook", 3, 3, 0]])
        #expect(steps[1]["entityMappings"]?.arrayValue?.first?["interpretedAs"] == nil)
        #expect(try Self.dump(scratch.store, version: "Notes4") == Self.notes4)

        // A dry run's steps carry the entities after them, with samples.
        let dry = try cli.run(
            "run", scratch.store + ".Notes1.bak", "--models", Self.xcode, "--json", "--dry-run", "--to", "Notes3")
        let last = try JSON.parse(Data(try #require(dry.stdout.split(separator: "\n").last).utf8))
        #expect(last["status"] == "dry run")
        #expect(last["at"] == "Notes1")
        let entities = try #require(last["steps"]?.arrayValue?.last?["entities"]?.arrayValue)
        #expect(entities.map { $0["entity"]?.stringValue ?? "" } == ["Note", "Notebook"])
        #expect(entities[0]["count"] == 5)
        #expect(
            entities[0]["samples"]?.arrayValue?.first == [
                "object": "Note/1",
                "attributes": [
                    "created": ["$date": "2024-09-02T09:00:00Z"], "priority": "high",
                    "text": "Draft the numbers for Q3",
                    "title": "Quarterly report", "wordCount": 5
                ],
                "relationships": ["notebook": "Notebook/1"]
            ])
        #expect(
            entities[1]["samples"]?.arrayValue?.first?["relationships"] == [
                "notes": ["count": 2, "first": ["Note/1", "Note/5"]]
            ])
    }

    @Test func samplesGoWithADryRun() throws {
        let scratch = try Scratch()
        let run = try cli.run("run", scratch.store, "--models", Self.xcode, "--samples", "1")
        #expect(run.status == 2)
        #expect(
            run.stderr.hasPrefix("mapping-migrate: --samples goes with --dry-run: a run shows no samples\n"),
            "\(run.stderr)")
        #expect(scratch.files == ["Notes.sqlite"])
    }

    @Test func jsonResultOfAFailure() throws {
        let scratch = try Scratch()
        let run = try cli.run("run", scratch.store, "--models", Self.xcode, "--json", "--to", "Notes9")
        #expect(run.status == 2)
        #expect(
            run.stderr
                == "mapping-migrate: no model version 'Notes9'; the versions are Notes1, Notes2, Notes3, Notes4\n")
        let result = try JSON.parse(Data(run.stdout.utf8))
        #expect(
            result == [
                "event": "result", "status": "bad input", "exitCode": 2, "store": .string(scratch.store),
                "dryRun": false,
                "from": "Notes1", "to": "Notes9", "at": .null, "steps": [], "backups": [],
                "error": [
                    "kind": "badInput",
                    "message": "no model version 'Notes9'; the versions are Notes1, Notes2, Notes3, Notes4"
                ]
            ])
    }

    /// A step that fails after another completed: the store is at the completed step's
    /// version, and the message says so.
    @Test func aFailureAfterACompletedStep() throws {
        let scratch = try Scratch()
        let models = scratch.url.appendingPathComponent("models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        for version in 1...4 {
            try FileManager.default.copyItem(
                at: Self.example.appendingPathComponent("Notes\(version).model.json"),
                to: models.appendingPathComponent("Notes\(version).model.json"))
        }
        // Integer division by zero on the notes of priority 1.
        try Data(
            """
            {"sourceModel": "Notes2", "destinationModel": "Notes3", "entityMappings": [
              {"name": "NotebookToNotebook", "sourceEntity": "Notebook", "destinationEntity": "Notebook"},
              {"name": "NoteToNote", "sourceEntity": "Note", "destinationEntity": "Note",
               "attributeMappings": {"title": "'t'", "priority": "'low'", "wordCount": "10 / ($source.priority - 1)"}}]}
            """.utf8
        ).write(to: models.appendingPathComponent("Notes2_to_Notes3.mapping.json"))
        let run = try cli.run("run", scratch.store, "--models", models.path, "--quiet")
        #expect(run.status == 1)
        #expect(
            run.stderr == """
                mapping-migrate: entity mapping "NoteToNote", source Note Z_PK 3, 'wordCount' = "10 / ($source.priority - 1)": 1:1: integer division by zero (10 / 0); divide by a double (10 / 0.0) for IEEE infinity
                \(scratch.store) is at Notes2: the steps before the failed one were completed; run again to continue from there

                """)
        #expect(try Self.dump(scratch.store, version: "Notes2") == Self.notes2)
        #expect(scratch.files == ["Notes.sqlite", "Notes.sqlite.Notes1.bak", "models"])

        // The same with --json: the result names the error's kind and code, and where the store is.
        let other = scratch.url.appendingPathComponent("Other.sqlite").path
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: other)
        let json = try cli.run("run", other, "--models", models.path, "--json")
        #expect(json.status == 1)
        let result = try JSON.parse(Data(try #require(json.stdout.split(separator: "\n").last).utf8))
        #expect(result["status"] == "failed")
        #expect(result["exitCode"] == 1)
        #expect(result["at"] == "Notes2")
        #expect(result["steps"] == [])
        #expect(result["backups"] == [.string(other + ".Notes1.bak")])
        #expect(result["error"]?["kind"] == "expression")
        #expect(result["error"]?["code"] == 134110)
        #expect(
            result["error"]?["message"]?.stringValue?.hasSuffix(
                "\n\(other) is at Notes2: the steps before the failed one were completed; run again to continue from there"
            ) == true)
    }
}
