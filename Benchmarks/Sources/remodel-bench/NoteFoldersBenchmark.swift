import CSQLiteBaseline
import Foundation
import Remodel

// remodel-bench note-folders: a Notes1 store of N notes (one folder per 50) migrated to a
// version whose notes keep their folder's name, `folderName = $source.folder.name`: an
// attribute read through a to-one. MigrationManager (SQL, where the folder's row is a
// LEFT JOIN of each note's; and --no-pushdown) against the same INSERT … SELECT with its
// LEFT JOIN, written by hand. See docs/performance.md.

/// Notes1 with `Note.folderName`.
let noteFoldersModel = """
    {"version": "NotesF", "entities": {
      "Folder": {"attributes": {"name": {"type": "string", "optional": false}},
                 "relationships": {"notes": {"destination": "Note", "inverse": "folder", "toMany": true}}},
      "Note": {"attributes": {"title": "string", "body": "string", "folderName": "string",
                              "created": {"type": "date", "optional": false},
                              "priority": {"type": "int16", "optional": false, "default": 0, "min": 0, "max": 2},
                              "trashed": {"type": "boolean", "optional": false, "default": false}},
               "relationships": {"folder": {"destination": "Folder", "inverse": "notes"}}}}}
    """

/// Every property implied (copied, re-linked) but the folder's name, read by `expression`.
func noteFoldersMapping(_ expression: String) -> String {
    """
    {"sourceModel": "Notes1", "destinationModel": "NotesF", "entityMappings": [
      {"name": "FolderToFolder", "type": "copy", "sourceEntity": "Folder", "destinationEntity": "Folder"},
      {"name": "NoteToNote", "type": "transform", "sourceEntity": "Note", "destinationEntity": "Note",
       "attributeMappings": {"folderName": "\(expression.replacingOccurrences(of: "\"", with: "\\\""))"}}]}
    """
}

/// The folder's name as SQL reads it (a `LEFT JOIN`), and the same name by a form SQL does
/// not translate, which the statement asks of each note's source object.
let noteFolderNames = [
    "plain": "$source.folder.name", "object": "FUNCTION($source.folder, 'valueForKey:', 'name')"
]

func noteFoldersModels(_ options: Options, reading: String = "plain") -> (ObjectModel, ObjectModel, MappingModel) {
    do {
        let v1 = loadModel(options.mappingsFolder, "notes-chain/Notes1.model.json")
        let v2 = try ObjectModel(json: JSON.parse(noteFoldersModel), file: "note-folders")
        let mapping = try MappingModel(
            json: JSON.parse(noteFoldersMapping(noteFolderNames[reading]!)), file: "note-folders")
        return (v1, v2, mapping)
    } catch {
        die("note-folders: \(error)")
    }
}

/// MigrationManager with default options (or `pushdown` off).
func migrateNoteFoldersWithManager(_ options: Options, pushdown: Bool, reading: String = "plain") -> VariantResult {
    let (v1, v2, mapping) = noteFoldersModels(options, reading: reading)
    var rows = 0
    let (_, seconds) = timed {
        do {
            let manager = try MigrationManager(
                mapping: mapping, source: v1, destination: v2, options: MigrationOptions(pushdown: pushdown))
            let report = try manager.migrateStore(from: options.source!, to: options.destination!)
            rows = report.entityMappings.reduce(0) { $0 + $1.sourceInstances }
        } catch {
            die("MigrationManager: \(error)")
        }
    }
    return VariantResult(seconds: seconds, rows: rows)
}

/// What a careful engineer writes: one `INSERT … SELECT` per table, the notes' with a
/// `LEFT JOIN` of their folder, the index built after the rows (as the engine builds
/// it), with the engine's destination pragmas.
func migrateNoteFoldersSQL(_ options: Options) -> VariantResult {
    let (_, v2, _) = noteFoldersModels(options)
    var rows = 0
    let (_, seconds) = timed {
        rows = handWrittenStep(
            from: options.source!, to: options.destination!, model: v2,
            count: "SELECT (SELECT count(*) FROM ZNOTE) + (SELECT count(*) FROM ZFOLDER)"
        ) { entity in
            """
            INSERT INTO ZFOLDER (Z_PK, Z_ENT, Z_OPT, ZNAME) SELECT Z_PK, \(entity("Folder")), 1, ZNAME FROM src.ZFOLDER ORDER BY Z_PK;
            INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZFOLDER, ZTITLE, ZBODY, ZFOLDERNAME, ZCREATED, ZPRIORITY, ZTRASHED)
                SELECT n.Z_PK, \(entity("Note")), 1, n.ZFOLDER, n.ZTITLE, n.ZBODY, f.ZNAME, n.ZCREATED, n.ZPRIORITY, n.ZTRASHED
                FROM src.ZNOTE AS n LEFT JOIN src.ZFOLDER AS f ON f.Z_PK = n.ZFOLDER ORDER BY n.Z_PK;
            UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT ifnull(max(Z_PK), 0) FROM ZFOLDER) WHERE Z_NAME = 'Folder';
            UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT ifnull(max(Z_PK), 0) FROM ZNOTE) WHERE Z_NAME = 'Note';
            """
        }
    }
    return VariantResult(seconds: seconds, rows: rows)
}

/// A step written by hand into a new store of `model` at `destination`: its tables
/// without their indexes, `sql` (given each entity's number) run with `source` attached
/// as `src`, in one transaction with the index built after the rows, as the engine builds
/// it, and the engine's destination pragmas; the file is not synced (MigrationManager's
/// is not either). The rows `count` counts in the new store.
func handWrittenStep(
    from source: String, to destination: String, model: ObjectModel, count: String,
    _ sql: (_ entity: (String) -> Int64) -> String
) -> Int {
    do { _ = try Store.create(at: destination, model: model, deferringIndexes: true) } catch {
        die("\(destination): \(error)")
    }
    let db = RawSQLite.open(destination, uri: true)
    applyMigrationPragmas(db)
    RawSQLite.exec(db, "ATTACH DATABASE '\(fileURI(source, readOnly: true))' AS src")
    RawSQLite.exec(db, "BEGIN IMMEDIATE")
    RawSQLite.exec(db, sql({ RawSQLite.entityNumber(db, $0) }))
    RawSQLite.exec(db, "PRAGMA cache_size = -2048")
    for statement in StoreLayout(model: model).indexStatements { RawSQLite.exec(db, statement) }
    RawSQLite.exec(db, "PRAGMA cache_size = -16384")
    RawSQLite.exec(db, "COMMIT; DETACH DATABASE src")
    let rows = Int(RawSQLite.integer(db, count))
    restorePragmas(db)
    RawSQLite.close(db)
    return rows
}

let noteFoldersVariants = [
    Variant(id: "note-folders-remodel", label: "MigrationManager", role: .remodel),
    Variant(id: "note-folders-object", label: "MigrationManager, the name asked of each object", role: .remodel),
    Variant(id: "note-folders-interpreted", label: "MigrationManager, --no-pushdown", role: .remodel),
    Variant(id: "note-folders-sql", label: "pure SQL", role: .reference)
]

/// The notes' columns compared across the variants' stores (and folder names).
let noteFoldersColumns: [(String, ColumnKind)] = [
    ("Z_PK", .integer), ("ZFOLDER", .integer), ("ZTITLE", .text), ("ZBODY", .text), ("ZFOLDERNAME", .text),
    ("ZCREATED", .real), ("ZPRIORITY", .integer), ("ZTRASHED", .integer)
]

func runNoteFoldersBenchmark(_ options: Options) {
    let notes = options.notes ?? 1_000_000
    let parent = options.directory
    let mappings = options.mappingsFolder
    checkNotInRepository(parent, mappings)
    requireFreeSpace(notes * 400 + (50 << 20), at: parent, for: "a source and a destination store of \(notes) notes")
    let directory = makeTemporaryDirectory(in: parent)
    defer { removeTemporaryDirectory() }
    let loadBefore = Machine.loadAverage
    let started = Date()
    let quiet = options.markdown

    let (v1, v2, _) = noteFoldersModels(options)
    let (generator, source, _) = generateNotesSource(notes, in: directory, model: v1, quiet: quiet)
    let common = ["--mappings", mappings.path, "--notes", "\(notes)", "--source", source]

    let idle = runVariant("idle", common, resultFile: resultFilePath())
    var destinationBytes: [String: Int] = [:]
    var agreed: (rows: Int, checksum: Checksum)?
    let runs = measureVariants(
        "note-folders", noteFoldersVariants, rounds: options.roundCount, quiet: quiet,
        arguments: { variant, _ in common + ["--destination", "\(directory)/\(variant.id).sqlite"] },
        check: { variant, _, measurement in
            let path = "\(directory)/\(variant.id).sqlite"
            defer { removeStore(path) }
            let contents = tableChecksum(path, table: "ZNOTE", columns: noteFoldersColumns)
            guard contents.0 == notes, measurement.result.rows == notes + generator.folders else {
                die("\(variant.label) wrote \(contents.0) notes and read \(measurement.result.rows) rows")
            }
            if let agreed, agreed.rows != contents.0 || agreed.checksum != contents.1 {
                die("\(variant.label)'s notes (\(contents.1.hex)) differ from the others' (\(agreed.checksum.hex))")
            }
            agreed = contents
            let db = RawSQLite.open(path, readOnly: true)
            let named = RawSQLite.integer(
                db,
                "SELECT count(*) FROM ZNOTE AS n JOIN ZFOLDER AS f ON f.Z_PK = n.ZFOLDER WHERE n.ZFOLDERNAME IS f.ZNAME"
            )
            let linked = RawSQLite.integer(db, "SELECT count(*) FROM ZNOTE WHERE ZFOLDER IS NOT NULL")
            RawSQLite.close(db)
            guard named == linked, named > 0 else {
                die("\(variant.label): \(named) of \(linked) notes in a folder hold its name")
            }
            verifyStoreOpens(path, v2)
            destinationBytes[variant.label] = fileSize(path)
        })

    var report = BenchmarkReport(
        title:
            "note-folders: \(notes) notes and \(generator.folders) folders, Notes1 → NotesF (folderName = $source.folder.name)",
        header: interleavedHeader(options, loadBefore: loadBefore, started: started),
        groups: [runs])
    report.footnotes =
        [
            "the four stores' notes agree (key, folder, title, body, folderName, created, priority, trashed: "
                + "\(agreed.map { $0.checksum.hex } ?? "-")); every note in a folder holds its name; each opens as a NotesF store",
            "MigrationManager reads \(noteFolderNames["plain"]!); \"the name asked of each object\" reads "
                + "\(noteFolderNames["object"]!), which SQL does not translate: the statement has it evaluated on each note's source object",
            "pure SQL: the notes' INSERT … SELECT with a LEFT JOIN of their folder, the index built after the rows",
            speedFootnote(
                ["MigrationManager", "the name asked of each object", "--no-pushdown"], runs, against: runs[3])
        ] + migrationFootnotes(source: source, destinationBytes: destinationBytes, idle: idle, engine: runs[0])
    if options.markdown { report.printMarkdown() } else { report.printText() }
}
