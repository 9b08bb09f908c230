#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import CSQLiteBaseline
import Foundation
import Remodel

// remodel-bench chain: a generated Notes1 store of N notes taken through the progressive
// chain of mappings/notes-chain, Notes1 → Notes2 (inferred: renames) → Notes3 (the mapping
// file: trashed notes dropped, titles filled in and trimmed, priority 0/1/2 → low/normal/
// high, word counts) → Notes4 (inferred: a new required attribute with its default, a new
// entity), by StoreMigrator and by hand with pure SQL. See docs/performance.md.

// MARK: - The generated store

/// One Notes1 note.
struct NoteRow {
    var title: String?
    var body: String?
    /// Seconds since 2001, whole milliseconds.
    var created: Double
    var priority: Int64
    var trashed: Bool
    /// The folder's key, 1…folders.
    var folder: Int64?
}

/// The rows of the chain benchmark, a pure function of the row number (as
/// ``ProductGenerator``). Strings come from pools made once: 997 titles (about 4 in 100
/// NULL, 3 in 100 empty, 6 in 100 with spaces, tabs or newlines around them), 1,019 bodies
/// of 3–14 words (3 in 100 NULL, 1 in 100 empty, some with two spaces in a row, a few words
/// not ASCII). Priorities are 0, 1, 2 (40%, 40%, 20%), 5 in 100 notes are trashed, 1 in 10
/// has no folder; there is one folder per 50 notes.
final class NotesGenerator {
    let notes: Int
    let folders: Int
    private let titles: [String?]
    private let bodies: [String?]
    private let folderNames: [String]

    init(notes: Int) {
        self.notes = notes
        folders = max(1, notes / 50)
        let words = [
            "the", "a", "call", "plumber", "about", "sink", "draft", "numbers", "for", "Q3", "milk", "eggs", "bread",
            "book", "venue", "twelve", "meeting", "with", "design", "team", "review", "budget", "before", "Friday",
            "café", "order", "new", "chairs", "pick", "up", "kids", "at", "five", "renew", "passport", "Zürich",
            "trip", "notes", "from", "offsite", "ideas", "blog", "post", "fix", "bike", "tyre", "send", "invoice",
            "to", "client", "water", "plants", "gym", "on", "Monday", "read", "chapter", "three", "résumé", "update"
        ]
        let headings = [
            "Groceries", "Quarterly report", "Team offsite", "Ideas", "Trip to Zürich", "Call back", "Reading list",
            "Weekly plan", "Birthday gift", "Car service", "Recipes", "Meeting notes", "Garden", "Taxes", "Café list"
        ]
        titles = (0..<997).map { k -> String? in
            switch k % 100 {
            case 0..<4: return nil
            case 4..<7: return ""
            case 7..<9: return "  \(headings[k % headings.count]) \(k)  "
            case 9..<11: return "\t\(headings[k % headings.count])\n"
            case 11: return "   "
            case 12: return " \(headings[k % headings.count]) "
            default: return k % 3 == 0 ? headings[k % headings.count] : "\(headings[k % headings.count]) \(k / 15)"
            }
        }
        bodies = (0..<1_019).map { k -> String? in
            switch k % 100 {
            case 0..<3: return nil
            case 3: return ""
            default:
                let count = 3 + (k * 7) % 12
                var text = (0..<count).map { j in words[(k * 31 + j * 17) % words.count] }.joined(separator: " ")
                if k % 25 == 7 { text = text.replacingOccurrences(of: " a ", with: "  a ") + " " }
                return text
            }
        }
        folderNames = ["Work", "Home", "Someday", "Projects", "Travel", "Reading", "Family", "Archive"]
    }

    /// Note `i` (0-based; its primary key is `i + 1`).
    @inline(__always)
    func row(_ i: Int) -> NoteRow {
        var h = UInt64(i) &* 0x9E37_79B9_7F4A_7C15 &+ 0x2545_F491_4F6C_DD1D
        h = (h ^ (h >> 30)) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ (h >> 27)) &* 0x94D0_49BB_1331_11EB
        h ^= h >> 31
        let p = (h >> 40) % 5
        return NoteRow(
            title: titles[Int(h % 997)],
            body: bodies[Int((h >> 10) % 1_019)],
            created: 441_763_200 + Double((h >> 20) % 315_360_000_000) / 1_000,
            priority: p < 2 ? 0 : p < 4 ? 1 : 2,
            trashed: (h >> 50) % 20 == 0,
            folder: (h >> 56) % 10 == 0 ? nil : Int64(1 + (h >> 3) % UInt64(folders)))
    }

    /// Folder `k` (0-based; its key is `k + 1`).
    func folderName(_ k: Int) -> String { "\(folderNames[k % folderNames.count]) \(k / folderNames.count + 1)" }

    /// What Notes2_to_Notes3.mapping.json's expressions make of a note, computed here in
    /// Swift as the functions the mapping calls define them (FunctionRegistry+Standard).
    static func title3(_ title: String?) -> String {
        guard let title, title != "" else { return "Untitled" }
        return title.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func priority3(_ priority: Int64) -> String { priority >= 2 ? "high" : priority == 1 ? "normal" : "low" }

    static func wordCount3(_ text: String?) -> Int64? { text.map { Int64($0.components(separatedBy: " ").count) } }

    /// The checksums the final Notes4 store must have, computed from the generated rows.
    func expectedNotes4() -> (notes: Int, noteChecksum: Checksum, folderChecksum: Checksum) {
        var checksum = Checksum()
        var key: Int64 = 0
        for i in 0..<notes {
            let row = row(i)
            if row.trashed { continue }
            key += 1
            checksum.add(integer: key)
            if let folder = row.folder { checksum.add(integer: folder) } else { checksum.addNull() }
            checksum.add(string: Self.title3(row.title))
            if let body = row.body { checksum.add(string: body) } else { checksum.addNull() }
            checksum.add(real: row.created)
            checksum.add(string: Self.priority3(row.priority))
            if let count = Self.wordCount3(row.body) { checksum.add(integer: count) } else { checksum.addNull() }
            checksum.add(integer: 0)  // archived: NO
        }
        var folderChecksum = Checksum()
        for k in 0..<folders {
            folderChecksum.add(integer: Int64(k + 1))
            folderChecksum.add(string: folderName(k))
        }
        return (Int(key), checksum, folderChecksum)
    }
}

/// A Notes1 store of `notes` generated notes (`Notes1.sqlite` in `directory`), a benchmark's
/// source: its generator, its path, and how many of its notes are in the trash.
func generateNotesSource(_ notes: Int, in directory: String, model: ObjectModel, quiet: Bool) -> (
    generator: NotesGenerator, source: String, trashed: Int
) {
    let generator = NotesGenerator(notes: notes)
    let source = directory + "/Notes1.sqlite"
    if !quiet { progressLine("generating \(notes) notes and \(generator.folders) folders in \(source) …") }
    return (generator, source, generateNotesStore(source, generator: generator, model: model))
}

/// Writes the generated folders and notes into a new Notes1 store with raw inserts (no
/// journal, no syncing). Returns the number of trashed notes.
func generateNotesStore(_ path: String, generator: NotesGenerator, model: ObjectModel) -> Int {
    createEmptyStore(path, model)
    let db = RawSQLite.open(path)
    RawSQLite.exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
    let folderEntity = RawSQLite.entityNumber(db, "Folder")
    let noteEntity = RawSQLite.entityNumber(db, "Note")
    RawSQLite.exec(db, "BEGIN")
    let insertFolder = RawSQLite.prepare(db, "INSERT INTO ZFOLDER (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, ?)")
    for k in 0..<generator.folders {
        sqlite3_bind_int64(insertFolder, 1, Int64(k + 1))
        sqlite3_bind_int64(insertFolder, 2, folderEntity)
        sqlite3_bind_text(insertFolder, 3, generator.folderName(k), -1, sqliteTransient)
        RawSQLite.run(insertFolder, db)
    }
    let insertNote = RawSQLite.prepare(
        db,
        """
        INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZFOLDER, ZTITLE, ZBODY, ZCREATED, ZPRIORITY, ZTRASHED)
        VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?)
        """)
    var trashed = 0
    for i in 0..<generator.notes {
        let row = generator.row(i)
        sqlite3_bind_int64(insertNote, 1, Int64(i + 1))
        sqlite3_bind_int64(insertNote, 2, noteEntity)
        if let folder = row.folder {
            sqlite3_bind_int64(insertNote, 3, folder)
        } else {
            sqlite3_bind_null(insertNote, 3)
        }
        if let title = row.title {
            sqlite3_bind_text(insertNote, 4, title, -1, sqliteTransient)
        } else {
            sqlite3_bind_null(insertNote, 4)
        }
        if let body = row.body {
            sqlite3_bind_text(insertNote, 5, body, -1, sqliteTransient)
        } else {
            sqlite3_bind_null(insertNote, 5)
        }
        sqlite3_bind_double(insertNote, 6, row.created)
        sqlite3_bind_int64(insertNote, 7, row.priority)
        sqlite3_bind_int64(insertNote, 8, row.trashed ? 1 : 0)
        if row.trashed { trashed += 1 }
        RawSQLite.run(insertNote, db)
    }
    RawSQLite.exec(
        db,
        """
        UPDATE Z_PRIMARYKEY SET Z_MAX = \(generator.folders) WHERE Z_ENT = \(folderEntity);
        UPDATE Z_PRIMARYKEY SET Z_MAX = \(generator.notes) WHERE Z_ENT = \(noteEntity);
        COMMIT
        """)
    RawSQLite.exec(db, "PRAGMA journal_mode = DELETE")
    sqlite3_finalize(insertFolder)
    sqlite3_finalize(insertNote)
    RawSQLite.close(db)
    return trashed
}

let chainSteps = ["Notes1 → Notes2", "Notes2 → Notes3", "Notes3 → Notes4"]

// MARK: - Peak memory per step

/// Resets this process's VmHWM to its current RSS (Linux ≥ 4.0: `5` into
/// /proc/self/clear_refs), so that the next reading is the peak of what came after.
@discardableResult
func resetPeakResidentSetSize() -> Bool {
    let fd = open("/proc/self/clear_refs", O_WRONLY)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return write(fd, "5", 1) == 1
}

/// Splits named `peak <step>` hold a step's peak RSS in bytes (not seconds).
let peakPrefix = "peak "

// MARK: - The variants (each in its own process)

/// StoreMigrator on the store at `--source` (a copy of the generated store), in place,
/// with the models and the mapping file of mappings/notes-chain, backups off. Each step's
/// time is its report's `seconds` (the step's MigrationManager run: open, create, three
/// stages, pragmas); the rest of the whole (loading, planning and compiling the chain,
/// syncing and renaming each new file) is the split `files and setup`.
func migrateChainWithStoreMigrator(_ options: Options, pushdown: Bool = true, fusesSteps: Bool = true)
    -> VariantResult
{
    let folder = options.mappingsFolder.appendingPathComponent("notes-chain")
    let path = options.source!
    var splits: [String: Double] = [:]
    var current: String? = nil
    let canResetPeak = resetPeakResidentSetSize()
    var reports: [StoreMigrator.StepReport] = []
    let (_, seconds) = timed {
        do {
            var migrator = try StoreMigrator(models: folder, options: MigrationOptions(pushdown: pushdown))
            migrator.keepsBackup = false
            migrator.fusesSteps = fusesSteps
            reports = try migrator.migrate(storeAt: path) { step, _ in
                let name = "\(step.source.version) → \(step.destination.version)"
                if name != current {
                    // The first report of a step: the one before it is done, its file renamed.
                    if let current, canResetPeak { splits[peakPrefix + current] = Double(peakResidentSetSize() ?? 0) }
                    if canResetPeak { resetPeakResidentSetSize() }
                    current = name
                }
            }
        } catch {
            die("StoreMigrator: \(error)")
        }
    }
    if let current, canResetPeak { splits[peakPrefix + current] = Double(peakResidentSetSize() ?? 0) }
    guard reports.map({ "\($0.source) → \($0.destination)" }) == chainSteps else {
        die("StoreMigrator ran \(reports.map { "\($0.source) → \($0.destination)" }), not \(chainSteps)")
    }
    for step in reports { splits["\(step.source) → \(step.destination)"] = step.report.seconds }
    splits["files and setup"] = seconds - reports.map(\.report.seconds).reduce(0, +)
    let rows = reports.first?.report.entityMappings.map(\.sourceInstances).reduce(0, +) ?? 0
    return VariantResult(seconds: seconds, rows: rows, splits: splits)
}

/// The whitespace `stringByTrimmingWhitespace` trims that SQL's trim() is told about: the
/// ASCII part of `.whitespacesAndNewlines` (tab, newline, vertical tab, form feed,
/// carriage return, space). The generated titles have no other whitespace at their ends.
let sqlWhitespace = "char(9, 10, 11, 12, 13, 32)"

/// Notes2 → Notes3's attribute mappings in SQL, over a note's title, priority and text
/// columns:
/// title: TERNARY($source.title == nil OR $source.title == '', 'Untitled',
///   FUNCTION($source.title, 'stringByTrimmingWhitespace'));
/// priority: TERNARY(>= 2, 'high', TERNARY(== 1, 'normal', 'low'));
/// wordCount: FUNCTION(FUNCTION($source.text, 'componentsSeparatedByString:', ' '),
///   'count'): the pieces between single spaces, so the spaces plus one, untrimmed (an
///   empty text is 1, NULL stays NULL).
func notes3Columns(title: String, priority: String, text: String) -> String {
    """
    CASE WHEN \(title) IS NULL OR \(title) = '' THEN 'Untitled' ELSE trim(\(title), \(sqlWhitespace)) END,
    \(text), ZCREATED,
    CASE WHEN \(priority) >= 2 THEN 'high' WHEN \(priority) = 1 THEN 'normal' ELSE 'low' END,
    length(\(text)) - length(replace(\(text), ' ', '')) + 1
    """
}

/// One step by hand: a new store of `model` made by `Store.create` (tables, Z_PRIMARYKEY,
/// Z_METADATA), the engine's destination pragmas, `previous` ATTACHed read-only, the
/// INSERTs of `sql` (given the destination's entity numbers) and the Z_MAX of the
/// `maxima` entities, each from its table, in one transaction; then the new file synced (StoreMigrator syncs each new file too). Returns
/// the step's seconds (without the sync) and, when `countRows`, the notes and folders of
/// the source.
///
/// With `indexesAfter`, the store is made without its indexes, and they are built after
/// the INSERTs, in the same transaction, with the page cache at 2 MiB while they are:
/// what ``Store/createDeferredIndexes()`` does for the engine.
func sqlStep(
    from previous: String, to path: String, model: ObjectModel, countRows: Bool, indexesAfter: Bool = false,
    maxima: [(entity: String, table: String)] = [("Note", "ZNOTE"), ("Notebook", "ZNOTEBOOK")],
    _ sql: (_ entity: (String) -> Int64) -> String
) -> (seconds: Double, rows: Int) {
    var rows = 0
    let (_, seconds) = timed {
        do { _ = try Store.create(at: path, model: model, deferringIndexes: indexesAfter) } catch {
            die("\(path): \(error)")
        }
        let db = RawSQLite.open(path, uri: true)
        applyMigrationPragmas(db)
        RawSQLite.exec(db, "ATTACH DATABASE '\(fileURI(previous, readOnly: true))' AS src")
        if countRows {
            rows = Int(
                RawSQLite.integer(db, "SELECT (SELECT count(*) FROM src.ZNOTE) + (SELECT count(*) FROM src.ZFOLDER)"))
        }
        RawSQLite.exec(db, "BEGIN IMMEDIATE")
        RawSQLite.exec(db, sql({ RawSQLite.entityNumber(db, $0) }))
        if indexesAfter {
            RawSQLite.exec(db, "PRAGMA cache_size = -2048")
            for statement in StoreLayout(model: model).indexStatements { RawSQLite.exec(db, statement) }
            RawSQLite.exec(db, "PRAGMA cache_size = -16384")
        }
        for (entity, table) in maxima {
            RawSQLite.exec(
                db,
                "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT ifnull(max(Z_PK), 0) FROM \(table)) WHERE Z_NAME = '\(entity)'"
            )
        }
        RawSQLite.exec(db, "COMMIT; DETACH DATABASE src")
        restorePragmas(db)
        RawSQLite.close(db)
    }
    let fd = open(path, O_RDONLY)
    guard fd >= 0, fsync(fd) == 0 else { die("cannot sync \(path)") }
    close(fd)
    return (seconds, rows)
}

/// Each step by hand (``sqlStep(from:to:model:countRows:indexesAfter:maxima:_:)``), one `INSERT … SELECT` per
/// entity doing what the step's mapping does; the previous intermediate file is removed
/// after each step. The last store is `--destination`.
func migrateChainSQL(_ options: Options) -> VariantResult {
    let (source, destination) = (options.source!, options.destination!)
    var splits: [String: Double] = [:]
    var rows = 0
    let canResetPeak = resetPeakResidentSetSize()
    let (_, seconds) = timed {
        let models = (2...4).map { loadModel(options.mappingsFolder, "notes-chain/Notes\($0).model.json") }
        let paths = [destination + ".Notes2", destination + ".Notes3", destination]
        // What each step's INSERTs do, given the destination's entity numbers.
        let statements: [(_ entity: (String) -> Int64) -> String] = [
            // Notes1 → Notes2 (inferred): Folder → Notebook, body → text, folder → notebook.
            // Every row is carried over, so the keys stay what they are (1…n, as the engine
            // numbers them).
            { entity in
                """
                INSERT INTO ZNOTEBOOK (Z_PK, Z_ENT, Z_OPT, ZNAME)
                    SELECT Z_PK, \(entity("Notebook")), 1, ZNAME FROM src.ZFOLDER ORDER BY Z_PK;
                INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZNOTEBOOK, ZTITLE, ZTEXT, ZCREATED, ZPRIORITY, ZTRASHED)
                    SELECT Z_PK, \(entity("Note")), 1, ZFOLDER, ZTITLE, ZBODY, ZCREATED, ZPRIORITY, ZTRASHED
                    FROM src.ZNOTE ORDER BY Z_PK;
                """
            },
            // Notes2 → Notes3 (Notes2_to_Notes3.mapping.json): notebooks copied; notes not
            // in the trash, numbered 1, 2, … in source order as the engine numbers them.
            { entity in
                """
                INSERT INTO ZNOTEBOOK (Z_PK, Z_ENT, Z_OPT, ZNAME)
                    SELECT Z_PK, \(entity("Notebook")), 1, ZNAME FROM src.ZNOTEBOOK ORDER BY Z_PK;
                INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZNOTEBOOK, ZTITLE, ZTEXT, ZCREATED, ZPRIORITY, ZWORDCOUNT)
                    SELECT row_number() OVER (ORDER BY Z_PK), \(entity("Note")), 1, ZNOTEBOOK,
                        \(notes3Columns(title: "ZTITLE", priority: "ZPRIORITY", text: "ZTEXT"))
                    FROM src.ZNOTE WHERE ZTRASHED = 0 ORDER BY Z_PK;
                """
            },
            // Notes3 → Notes4 (inferred): archived is new and required, default NO;
            // Attachment is new and stays empty.
            { entity in
                """
                INSERT INTO ZNOTEBOOK (Z_PK, Z_ENT, Z_OPT, ZNAME)
                    SELECT Z_PK, \(entity("Notebook")), 1, ZNAME FROM src.ZNOTEBOOK ORDER BY Z_PK;
                INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZNOTEBOOK, ZTITLE, ZTEXT, ZCREATED, ZPRIORITY, ZWORDCOUNT, ZARCHIVED)
                    SELECT Z_PK, \(entity("Note")), 1, ZNOTEBOOK, ZTITLE, ZTEXT, ZCREATED, ZPRIORITY, ZWORDCOUNT, 0
                    FROM src.ZNOTE ORDER BY Z_PK;
                """
            }
        ]
        var previous = source
        for (index, step) in chainSteps.enumerated() {
            let path = paths[index]
            let result = sqlStep(
                from: previous, to: path, model: models[index], countRows: index == 0, statements[index])
            splits[step] = result.seconds
            if index == 0 { rows = result.rows }
            if previous != source { removeStore(previous) }
            if canResetPeak {
                splits[peakPrefix + step] = Double(peakResidentSetSize() ?? 0)
                resetPeakResidentSetSize()
            }
            previous = path
        }
    }
    splits["files and setup"] = seconds - chainSteps.compactMap { splits[$0] }.reduce(0, +)
    return VariantResult(seconds: seconds, rows: rows, splits: splits)
}

/// What a careful engineer writes for the whole chain: Notes1 to Notes4 in one pass
/// (``sqlStep(from:to:model:countRows:indexesAfter:maxima:_:)``), one `INSERT … SELECT` per entity
/// doing what the three steps do together. Its time is the whole; it has no per-step
/// split. With `indexesAfter`, the index is built after the rows, as the engine builds it.
func migrateChainSQLOnePass(_ options: Options, indexesAfter: Bool = false) -> VariantResult {
    let (source, destination) = (options.source!, options.destination!)
    var rows = 0
    var stepSeconds = 0.0
    let (_, seconds) = timed {
        let model = loadModel(options.mappingsFolder, "notes-chain/Notes4.model.json")
        (stepSeconds, rows) = sqlStep(
            from: source, to: destination, model: model, countRows: true, indexesAfter: indexesAfter
        ) { entity in
            """
            INSERT INTO ZNOTEBOOK (Z_PK, Z_ENT, Z_OPT, ZNAME)
                SELECT Z_PK, \(entity("Notebook")), 1, ZNAME FROM src.ZFOLDER ORDER BY Z_PK;
            INSERT INTO ZNOTE (Z_PK, Z_ENT, Z_OPT, ZNOTEBOOK, ZTITLE, ZTEXT, ZCREATED, ZPRIORITY, ZWORDCOUNT, ZARCHIVED)
                SELECT row_number() OVER (ORDER BY Z_PK), \(entity("Note")), 1, ZFOLDER,
                    \(notes3Columns(title: "ZTITLE", priority: "ZPRIORITY", text: "ZBODY")), 0
                FROM src.ZNOTE WHERE ZTRASHED = 0 ORDER BY Z_PK;
            """
        }
    }
    return VariantResult(seconds: seconds, rows: rows, splits: ["files and setup": seconds - stepSeconds])
}

// MARK: - Checking a final store

/// What is compared of a Notes4 store: rows and checksums per entity, Z_MAX per entity,
/// the rows per Z_ENT and per Z_OPT (a migration's new rows are all at 1, however the
/// engine wrote them, as the hand-written SQL writes them).
struct Notes4Contents: Equatable {
    var notes: Int
    var noteChecksum: Checksum
    var notebooks: Int
    var notebookChecksum: Checksum
    var attachments: Int
    var maxima: [String: Int64]
    /// "table Z_ENT e: rows".
    var entityColumn: [String]
    /// "table Z_OPT v: rows".
    var versionColumn: [String]
}

/// The columns of Notes4's Note and Notebook, in the order of ``NotesGenerator/expectedNotes4()``.
let note4Columns: [(String, ColumnKind)] = [
    ("Z_PK", .integer), ("ZNOTEBOOK", .integer), ("ZTITLE", .text), ("ZTEXT", .text), ("ZCREATED", .real),
    ("ZPRIORITY", .text), ("ZWORDCOUNT", .integer), ("ZARCHIVED", .integer)
]
let notebook4Columns: [(String, ColumnKind)] = [("Z_PK", .integer), ("ZNAME", .text)]

func readNotes4(_ path: String) -> Notes4Contents {
    let (notes, noteChecksum) = tableChecksum(path, table: "ZNOTE", columns: note4Columns)
    let (notebooks, notebookChecksum) = tableChecksum(path, table: "ZNOTEBOOK", columns: notebook4Columns)
    let db = RawSQLite.open(path, readOnly: true)
    defer { RawSQLite.close(db) }
    let attachments = Int(RawSQLite.integer(db, "SELECT count(*) FROM ZATTACHMENT"))
    var maxima: [String: Int64] = [:]
    for entity in ["Attachment", "Note", "Notebook"] {
        maxima[entity] = RawSQLite.integer(db, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = '\(entity)'")
    }
    func groups(_ column: String) -> [String] {
        var lines: [String] = []
        for table in ["ZNOTE", "ZNOTEBOOK"] {
            let statement = RawSQLite.prepare(db, "SELECT \(column), count(*) FROM \(table) GROUP BY 1 ORDER BY 1")
            while sqlite3_step(statement) == SQLITE_ROW {
                lines.append(
                    "\(table) \(column) \(sqlite3_column_int64(statement, 0)): \(sqlite3_column_int64(statement, 1))")
            }
            sqlite3_finalize(statement)
        }
        return lines
    }
    return Notes4Contents(
        notes: notes, noteChecksum: noteChecksum, notebooks: notebooks, notebookChecksum: notebookChecksum,
        attachments: attachments, maxima: maxima, entityColumn: groups("Z_ENT"), versionColumn: groups("Z_OPT"))
}

// MARK: - The benchmark

let chainVariants = [
    Variant(id: "chain-remodel", label: "StoreMigrator", role: .remodel),
    Variant(id: "chain-remodel-step-by-step", label: "StoreMigrator, step by step", role: .remodel),
    Variant(id: "chain-interpreted", label: "StoreMigrator, --no-pushdown", role: .remodel),
    Variant(id: "chain-sql", label: "pure SQL", role: .reference),
    Variant(id: "chain-sql-one-pass", label: "pure SQL, one pass", role: .reference),
    Variant(id: "chain-sql-one-pass-indexes-after", label: "pure SQL, one pass, index after", role: .reference)
]

func runChainBenchmark(_ options: Options) {
    let notes = options.notes ?? 1_000_000
    let parent = options.directory
    let mappings = options.mappingsFolder
    checkNotInRepository(parent, mappings)
    // The source, a copy for StoreMigrator, and at most two stores of a step at once.
    requireFreeSpace(notes * 500 + (50 << 20), at: parent, for: "four stores of \(notes) notes")
    let directory = makeTemporaryDirectory(in: parent)
    defer { removeTemporaryDirectory() }
    let loadBefore = Machine.loadAverage
    let started = Date()
    let quiet = options.markdown

    let v1 = loadModel(mappings, "notes-chain/Notes1.model.json")
    let v4 = loadModel(mappings, "notes-chain/Notes4.model.json")
    let (generator, source, trashed) = generateNotesSource(notes, in: directory, model: v1, quiet: quiet)
    let expected = generator.expectedNotes4()
    guard expected.notes == notes - trashed else { die("the generator's trashed notes do not add up") }
    let sourceBytes = fileSize(source)
    let migrator: StoreMigrator
    do { migrator = try StoreMigrator(models: mappings.appendingPathComponent("notes-chain")) } catch {
        die("\(error)")
    }

    let common = ["--mappings", mappings.path]
    let idle = runVariant("idle", common, resultFile: resultFilePath())
    var finals: [String: Notes4Contents] = [:]
    var destinationBytes = 0
    let runs = measureVariants(
        "chain", chainVariants.filter { options.only?.contains($0.id) ?? true }, rounds: options.roundCount,
        quiet: quiet,
        arguments: { variant, _ in
            chainArguments(variant, common, source: source, in: directory, inPlace: !variant.id.hasPrefix("chain-sql"))
        },
        check: { variant, _, measurement in
            let path = "\(directory)/\(variant.id).sqlite"
            defer { removeStore(path) }
            let contents = readNotes4(path)
            guard contents.notes == expected.notes, contents.noteChecksum == expected.noteChecksum,
                contents.notebooks == generator.folders, contents.notebookChecksum == expected.folderChecksum,
                contents.attachments == 0,
                contents.maxima == [
                    "Attachment": 0, "Note": Int64(expected.notes), "Notebook": Int64(generator.folders)
                ]
            else {
                die(
                    """
                    \(variant.label)'s Notes4 store has \(contents.notes) notes (checksum \(contents.noteChecksum.hex)), \
                    \(contents.notebooks) notebooks (\(contents.notebookChecksum.hex)), \(contents.attachments) attachments, \
                    Z_MAX \(contents.maxima.sorted { $0.key < $1.key }); expected \(expected.notes) notes \
                    (\(expected.noteChecksum.hex)), \(generator.folders) notebooks (\(expected.folderChecksum.hex)), \
                    no attachments, Z_MAX \(expected.notes) and \(generator.folders)
                    """)
            }
            if let other = finals.values.first, other != contents {
                die("the final stores differ: \(finals) against \(variant.label): \(contents)")
            }
            finals[variant.label] = contents
            verifyStoreOpens(path, v4)
            do {
                let version = try migrator.version(ofStoreAt: path).version
                if version != "Notes4" { die("\(variant.label)'s final store is at \(version), not Notes4") }
            } catch { die("\(variant.label)'s final store: \(error)") }
            destinationBytes = fileSize(path)
            if measurement.result.rows != notes + generator.folders {
                die(
                    "\(variant.label) read \(measurement.result.rows) rows in the first step, not \(notes + generator.folders)"
                )
            }
        })

    var report = ChainReport(
        title:
            "chain: \(notes) notes and \(generator.folders) folders, Notes1 → Notes2 → Notes3 → Notes4 (mappings/notes-chain)",
        header: interleavedHeader(options, loadBefore: loadBefore, started: started),
        runs: runs,
        rowsIn: [notes + generator.folders, notes + generator.folders, expected.notes + generator.folders],
        rowsOut: [notes + generator.folders, expected.notes + generator.folders, expected.notes + generator.folders])
    let entityColumn = finals.values.first?.entityColumn.joined(separator: ", ") ?? ""
    let versionColumn = finals.values.first?.versionColumn.joined(separator: ", ") ?? ""
    report.footnotes = [
        "all final stores agree with each other and with the generated rows put through the three steps in Swift: "
            + "\(expected.notes) notes (\(trashed) trashed notes dropped; checksum \(expected.noteChecksum.hex) over key, notebook, "
            + "title, text, created, priority, wordCount, archived), \(generator.folders) notebooks (\(expected.folderChecksum.hex)), "
            + "no attachments; Z_MAX \(expected.notes), \(generator.folders) and 0; the same Z_ENT (\(entityColumn)) "
            + "and Z_OPT (\(versionColumn)); each opens as a Notes4 store and StoreMigrator says it is at Notes4",
        onePassFootnote(runs),
        "step times: StoreMigrator's are each step's MigrationReport.seconds (its MigrationManager run); pure SQL's are "
            + "Store.create, ATTACH, the INSERT … SELECTs and Z_MAX in one transaction, with the engine's destination pragmas. "
            + "\"files and setup\": loading, planning and compiling the chain, and syncing (fsync) and replacing each new file; "
            + "pure SQL syncs each new file too and removes the previous intermediate one",
        "peak RSS per step: the process's VmHWM reset (/proc/self/clear_refs) at each step's start (the first "
            + "step's includes loading the models, and for StoreMigrator compiling the chain); the total is the process's peak",
        "source store \(formatBytes(sourceBytes)); final store \(formatBytes(destinationBytes)); "
            + "process floor (runtime and a model loaded, nothing done): \(formatMB(idle.maxRSS)) peak RSS"
    ]
    if options.markdown { report.printMarkdown() } else { report.printText() }
}

/// A chain variant's arguments: StoreMigrator migrates in place (`inPlace`), so a fresh
/// copy of `source` each round (not timed) at the variant's path in `directory`; the
/// hand-written passes write a new store there from `source`.
func chainArguments(_ variant: Variant, _ common: [String], source: String, in directory: String, inPlace: Bool)
    -> [String]
{
    let path = "\(directory)/\(variant.id).sqlite"
    removeStore(path)
    guard inPlace else { return common + ["--source", source, "--destination", path] }
    do { try FileManager.default.copyItem(atPath: source, toPath: path) } catch {
        die("cannot copy the source: \(error)")
    }
    return common + ["--source", path]
}

/// Each variant's total against the one pass's (what a careful engineer writes for the
/// whole chain), the ratio the pushdown is measured by.
/// Also against the one pass that builds its index after the rows, as the engine does.
func onePassFootnote(_ runs: [VariantRuns]) -> String {
    var lines: [String] = []
    for (id, what) in [
        ("chain-sql-one-pass", "the one pass (Notes1 → Notes4 in one INSERT … SELECT per table"),
        ("chain-sql-one-pass-indexes-after", "the one pass with its index built after the rows (")
    ] {
        guard let onePass = runs.first(where: { $0.variant.id == id }) else { continue }
        let ratios = runs.filter { !$0.variant.id.hasPrefix("chain-sql-one-pass") }.map {
            "\($0.variant.label) \(String(format: "%.1f×", $0.medianSeconds / onePass.medianSeconds))"
        }
        lines.append(
            "against \(what)\(what.hasSuffix("(") ? "" : ", ")\(String(format: "%.2f", onePass.medianSeconds)) s): "
                + ratios.joined(separator: ", "))
    }
    return lines.joined(separator: "\n- ")
}

/// A table of steps × variants, and the totals.
struct ChainReport {
    var title: String
    var header: [String]
    var runs: [VariantRuns]
    var rowsIn: [Int]
    var rowsOut: [Int]
    var footnotes: [String] = []

    private let columns = [
        "step", "variant", "s (median)", "s min–max", "rows in → out", "rows/s", "× pure SQL", "peak RSS"
    ]

    private func median(_ runs: VariantRuns, _ key: String) -> Double {
        runs.runs.compactMap { $0.result.splits[key] }.median
    }

    private func range(_ values: [Double]) -> String {
        values.count > 1 ? String(format: "%.2f–%.2f", values.min()!, values.max()!) : ""
    }

    private var rows: [[String]] {
        var table: [[String]] = []
        let reference = runs.first { $0.variant.role == .reference }
        for (index, step) in chainSteps.enumerated() {
            for variant in runs {
                let seconds = variant.runs.compactMap { $0.result.splits[step] }
                guard !seconds.isEmpty else { continue }  // the one pass has no steps
                let s = seconds.median
                let ratio = reference.map { String(format: "%.1f×", s / median($0, step)) } ?? ""
                let peak =
                    variant.runs.compactMap { $0.result.splits[peakPrefix + step] }.max().map { formatMB(Int($0)) }
                    ?? ""
                table.append([
                    step, variant.variant.label, String(format: "%.2f", s), range(seconds),
                    "\(rowsIn[index]) → \(rowsOut[index])", formatRate(Double(rowsIn[index]) / s), ratio, peak
                ])
            }
        }
        for variant in runs {
            let seconds = variant.runs.compactMap { $0.result.splits["files and setup"] }
            let s = seconds.median
            let ratio = reference.map { String(format: "%.1f×", s / median($0, "files and setup")) } ?? ""
            table.append([
                "files and setup", variant.variant.label, String(format: "%.2f", s), range(seconds), "", "", ratio, ""
            ])
        }
        for variant in runs {
            let ratio = reference.map { String(format: "%.1f×", variant.medianSeconds / $0.medianSeconds) } ?? ""
            table.append([
                "**total**", variant.variant.label, String(format: "%.2f", variant.medianSeconds),
                range(variant.seconds),
                "\(rowsIn[0]) → \(rowsOut[2])", formatRate(Double(rowsIn[0]) / variant.medianSeconds), ratio,
                formatMB(totalPeak(variant)) + String(format: ", CPU %.2f s", variant.medianCPU)
            ])
        }
        return table
    }

    /// The process's peak: the highest of the steps' peaks and of what VmHWM says at the end
    /// (which, reset at each step's start, is the last step's).
    private func totalPeak(_ variant: VariantRuns) -> Int {
        let steps = variant.runs.flatMap { run in chainSteps.compactMap { run.result.splits[peakPrefix + $0] } }
        return max(variant.peakRSS, Int(steps.max() ?? 0))
    }

    func printText() {
        printReportTable(
            title: title, header: header, columns: columns, rows: rows, footnotes: footnotes, markdown: false)
    }

    func printMarkdown() {
        printReportTable(
            title: title, header: header, columns: columns, rows: rows, footnotes: footnotes, markdown: true)
    }
}
