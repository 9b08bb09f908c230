import Foundation
import Remodel
import Testing
import TestSupport

/// Four model versions of a notes store and a store of generated notes, for the
/// crash-safety tests: what each version of the store must hold is worked out here from
/// the generator, without the engine, so that a store left by a crash can be checked
/// against it.
///
/// - Chain1 → Chain2, inferred: `Folder` renamed `Notebook`, `body` renamed `text`,
///   `folder` renamed `notebook` (renaming identifiers);
/// - Chain2 → Chain3, through `Chain2_to_Chain3.mapping.json`: trashed notes (every fifth)
///   dropped, missing titles filled in, priorities made words, words counted;
/// - Chain3 → Chain4, inferred: a required `archived` flag and a required `summary` with a
///   long default (the store grows by about 600 bytes a note), and a new entity.
struct ChainFixture {
    static let versions = ["Chain1", "Chain2", "Chain3", "Chain4"]
    static let summary = String(repeating: "A summary to be written. ", count: 24)

    let notes: Int
    let folders: Int
    /// Holds `models/` and what the tests make.
    let directory: URL
    var models: URL { directory.appendingPathComponent("models") }

    /// Writes the models and the mapping file into a new folder of the temporary directory.
    init(notes: Int, folders: Int = 20) throws {
        self.notes = notes
        self.folders = folders
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("remodel-chain-\(UUID().uuidString)")
        let models = directory.appendingPathComponent("models")
        try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
        for (name, text) in Self.files {
            try Data(text.utf8).write(to: models.appendingPathComponent(name))
        }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// A new folder in ``directory``.
    func folder(_ name: String) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func loadModels() throws -> [ObjectModel] { try ObjectModel.loadVersions(at: models) }

    func migrator() throws -> StoreMigrator {
        StoreMigrator(models: try loadModels(), mappings: try MappingModel.loadAll(in: models))
    }

    // MARK: - The store

    /// The generated Chain1 store, as seed-file JSON.
    var seed: String {
        var folderList: [String] = []
        for i in 0..<folders { folderList.append(#"{"$id": "f\#(i)", "name": "Folder \#(i)"}"#) }
        var noteList: [String] = []
        for j in 0..<notes {
            let title = j % 7 == 0 ? "null" : #""Note \#(j)""#
            noteList.append(
                #"{"title": \#(title), "body": "\#(Self.body(j))", "created": {"$date": "\#(Self.created(j))"}, "#
                    + #""priority": \#(j % 3), "trashed": \#(j % 5 == 0), "folder": {"$ref": "f\#(j % folders)"}}"#)
        }
        return #"{"Folder": [\#(folderList.joined(separator: ","))], "Note": [\#(noteList.joined(separator: ",\n"))]}"#
    }

    /// Creates the Chain1 store at `path`.
    func makeStore(at path: String, journalMode: JournalMode = .delete) throws {
        let model = try #require(try loadModels().first)
        let store = try Store.create(at: path, model: model, journalMode: journalMode)
        let context = ObjectContext(store: store)
        try context.insertSeed(JSON.parse(seed))
        try context.save()
    }

    static func body(_ j: Int) -> String {
        Array(repeating: "word", count: j % 11 + 1).joined(separator: " ") + " \(j)"
    }

    static let base = Date(timeIntervalSinceReferenceDate: 700_000_000)

    static func created(_ j: Int) -> String {
        ISO8601DateFormatter().string(from: base.addingTimeInterval(Double(j) * 3600))
    }

    // MARK: - What each version holds

    /// The rows of the store at `version`, one line each, sorted.
    func expected(_ version: String) -> [String] {
        let index = Self.versions.firstIndex(of: version)!
        var lines = (0..<folders).map { "folder|Folder \($0)" }
        for j in 0..<notes {
            let title = j % 7 == 0 ? "nil" : "Note \(j)"
            let created = "\(Int(Self.base.timeIntervalSinceReferenceDate) + j * 3600)"
            let folder = "Folder \(j % folders)"
            switch index {
            case 0, 1:
                lines.append("note|\(title)|\(Self.body(j))|\(created)|\(j % 3)|\(j % 5 == 0 ? 1 : 0)|\(folder)")
            default:
                if j % 5 == 0 { continue }
                let priority = ["low", "normal", "high"][j % 3]
                var line =
                    "note|\(j % 7 == 0 ? "Untitled" : title)|\(Self.body(j))|\(created)|\(priority)|\(j % 11 + 2)|\(folder)"
                if index == 3 { line += "|0|\(Self.summary)" }
                lines.append(line)
            }
        }
        if index == 3 { lines.append("attachments|0") }
        return lines.sorted()
    }

    /// The rows of the store at `path`, read as `version` lays them out, one line each,
    /// sorted (the form of ``expected(_:)``).
    static func dump(_ path: String, version: String) throws -> [String] {
        let index = versions.firstIndex(of: version)!
        let database = try Database(path: path, mode: .readOnly)
        let folder = index == 0 ? "ZFOLDER" : "ZNOTEBOOK"
        let link = index == 0 ? "ZFOLDER" : "ZNOTEBOOK"
        let columns = [
            "n.ZTITLE, n.ZBODY, n.ZCREATED, n.ZPRIORITY, n.ZTRASHED",
            "n.ZTITLE, n.ZTEXT, n.ZCREATED, n.ZPRIORITY, n.ZTRASHED",
            "n.ZTITLE, n.ZTEXT, n.ZCREATED, n.ZPRIORITY, n.ZWORDCOUNT",
            "n.ZTITLE, n.ZTEXT, n.ZCREATED, n.ZPRIORITY, n.ZWORDCOUNT"
        ][index]
        var queries = [
            ("folder", "SELECT ZNAME FROM \(folder)"),
            (
                "note",
                "SELECT \(columns), f.ZNAME\(index == 3 ? ", n.ZARCHIVED, n.ZSUMMARY" : "") FROM ZNOTE n LEFT JOIN \(folder) f ON f.Z_PK = n.\(link)"
            )
        ]
        if index == 3 { queries.append(("attachments", "SELECT count(*) FROM ZATTACHMENT")) }
        var lines: [String] = []
        for (label, sql) in queries {
            let statement = try database.prepare(sql)
            while try statement.step() {
                let values = (0..<statement.columnCount).map { column -> String in
                    switch statement.value(at: column) {
                    case .null: "nil"
                    case .integer(let i): "\(i)"
                    case .real(let d): d == d.rounded() ? "\(Int(d))" : "\(d)"
                    case .text(let s): s
                    case .blob(let b): "<\(b.count) bytes>"
                    }
                }
                lines.append(([label] + values).joined(separator: "|"))
            }
        }
        return lines.sorted()
    }

    /// What is wrong with the store at `path` as a crash may have left it (empty when
    /// nothing), and the version it is at: no journal or WAL beside it, `PRAGMA
    /// integrity_check` ok, a version of the chain, and the rows of that version.
    func check(_ path: String) -> (version: String?, problems: [String]) {
        var problems: [String] = []
        for suffix in ["-journal", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
            problems.append("\(path + suffix) is beside the store")
        }
        do {
            let database = try Database(path: path, mode: .readOnly)
            let result = try database.scalar("PRAGMA integrity_check")
            if result != .text("ok") { problems.append("integrity_check: \(String(describing: result))") }
        } catch {
            problems.append("cannot check integrity: \(error)")
        }
        let version: String
        do {
            version = try migrator().version(ofStoreAt: path).version
        } catch {
            return (nil, problems + ["no version: \(error)"])
        }
        do {
            let rows = try Self.dump(path, version: version), expected = expected(version)
            if rows != expected {
                let missing = expected.filter { !rows.contains($0) }.prefix(3),
                    extra = rows.filter { !expected.contains($0) }.prefix(3)
                problems.append(
                    "\(version): \(rows.count) rows, \(expected.count) expected; missing \(Array(missing)), unexpected \(Array(extra))"
                )
            }
        } catch {
            problems.append("cannot read the rows of \(version): \(error)")
        }
        return (version, problems)
    }

    /// The versions a run keeps a backup of: Chain1 → Chain2 and Chain3 → Chain4 only
    /// rename and add, so they run in one pass with Chain2 → Chain3 (docs/engine.md,
    /// "Steps run as one"), and the store is never at Chain2 or Chain3 unless a run
    /// stopped there (or ran step by step).
    static let backedUp = ["Chain1"]

    /// The problems of the store after a complete run: at Chain4, and each backup (when
    /// `backups`) at its version (the others' when there are some); no new file or lock
    /// file left.
    func checkCompleted(_ path: String, backups: Bool = true) -> [String] {
        let (version, problems) = check(path)
        var all = problems
        if version != "Chain4" { all.append("at \(version ?? "no version"), not Chain4") }
        for version in Self.versions.dropLast() where backups {
            let backup = "\(path).\(version).bak"
            if !Self.backedUp.contains(version), !FileManager.default.fileExists(atPath: backup) { continue }
            let (at, problems) = check(backup)
            all += problems.map { "backup: \($0)" }
            if at != version { all.append("\(backup) is at \(at ?? "no version")") }
        }
        for suffix in [".remodel-new", ".remodel-new-journal", ".remodel-lock"]
        where FileManager.default.fileExists(atPath: path + suffix) {
            all.append("\(path + suffix) is left")
        }
        return all
    }

    /// The names in the folder of `path`, sorted.
    static func files(besides path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)) ?? [])
            .sorted()
    }

    // MARK: - Model and mapping files

    static let files: [(String, String)] = [
        (
            "Chain1.model.json",
            """
            {"version": "Chain1", "entities": {
              "Folder": {"attributes": {"name": {"type": "string", "optional": false}},
                         "relationships": {"notes": {"destination": "Note", "inverse": "folder", "toMany": true}}},
              "Note": {"attributes": {"title": "string", "body": "string", "created": {"type": "date", "optional": false},
                                      "priority": {"type": "int16", "optional": false, "default": 0, "min": 0, "max": 2},
                                      "trashed": {"type": "boolean", "optional": false, "default": false}},
                       "relationships": {"folder": {"destination": "Folder", "inverse": "notes"}}}}}
            """
        ),
        (
            "Chain2.model.json",
            """
            {"version": "Chain2", "entities": {
              "Notebook": {"renamingIdentifier": "Folder", "attributes": {"name": {"type": "string", "optional": false}},
                           "relationships": {"notes": {"destination": "Note", "inverse": "notebook", "toMany": true}}},
              "Note": {"attributes": {"title": "string", "text": {"type": "string", "renamingIdentifier": "body"},
                                      "created": {"type": "date", "optional": false},
                                      "priority": {"type": "int16", "optional": false, "default": 0, "min": 0, "max": 2},
                                      "trashed": {"type": "boolean", "optional": false, "default": false}},
                       "relationships": {"notebook": {"destination": "Notebook", "inverse": "notes", "renamingIdentifier": "folder"}}}}}
            """
        ),
        (
            "Chain3.model.json",
            """
            {"version": "Chain3", "entities": {
              "Notebook": {"attributes": {"name": {"type": "string", "optional": false}},
                           "relationships": {"notes": {"destination": "Note", "inverse": "notebook", "toMany": true}}},
              "Note": {"attributes": {"title": {"type": "string", "optional": false}, "text": "string",
                                      "created": {"type": "date", "optional": false},
                                      "priority": {"type": "string", "optional": false, "default": "normal"}, "wordCount": "int32"},
                       "relationships": {"notebook": {"destination": "Notebook", "inverse": "notes"}}}}}
            """
        ),
        (
            "Chain4.model.json",
            """
            {"version": "Chain4", "entities": {
              "Attachment": {"attributes": {"fileName": {"type": "string", "optional": false}},
                             "relationships": {"note": {"destination": "Note", "inverse": "attachments"}}},
              "Notebook": {"attributes": {"name": {"type": "string", "optional": false}},
                           "relationships": {"notes": {"destination": "Note", "inverse": "notebook", "toMany": true}}},
              "Note": {"attributes": {"title": {"type": "string", "optional": false}, "text": "string",
                                      "created": {"type": "date", "optional": false},
                                      "priority": {"type": "string", "optional": false, "default": "normal"}, "wordCount": "int32",
                                      "archived": {"type": "boolean", "optional": false, "default": false},
                                      "summary": {"type": "string", "optional": false, "default": "\(ChainFixture.summary)"}},
                       "relationships": {"notebook": {"destination": "Notebook", "inverse": "notes"},
                                         "attachments": {"destination": "Attachment", "inverse": "note", "toMany": true, "deleteRule": "cascade"}}}}}
            """
        ),
        (
            "Chain2_to_Chain3.mapping.json",
            #"""
            {"sourceModel": "Chain2", "destinationModel": "Chain3", "entityMappings": [
              {"name": "NotebookToNotebook", "type": "copy", "sourceEntity": "Notebook", "destinationEntity": "Notebook"},
              {"name": "NoteToNote", "type": "transform", "sourceEntity": "Note", "destinationEntity": "Note",
               "sourceExpression": "FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Note\", \"trashed == NO\"), $manager.sourceContext, NO)",
               "attributeMappings": {
                 "title": "TERNARY($source.title == nil OR $source.title == '', 'Untitled', FUNCTION($source.title, 'stringByTrimmingWhitespace'))",
                 "priority": "TERNARY($source.priority >= 2, 'high', TERNARY($source.priority == 1, 'normal', 'low'))",
                 "wordCount": "FUNCTION(FUNCTION($source.text, 'componentsSeparatedByString:', ' '), 'count')"}}]}
            """#
        )
    ]
}
