import CSQLiteBaseline
import Foundation
import Remodel

// remodel-bench moody-chain: objc.io's Moody chain (../shared/fixtures/realworld/
// objcio+core-data, the models and Xcode mapping models as Xcode wrote them) from a
// generated Moody store of N moods, 250 countries and 7 continents, to Moody 5: Moody →
// Moody 2 is inferred (a mood's `remoteIdentifier` renamed `remoteID`, a `rating` added);
// Moody 2 → Moody 3 links a mood's continent through its country
// (`$source.country.continent`) and a continent's moods; Moody 3 → Moody 4 drops the
// abstract `GeographicRegion` (countries and continents each get a table); Moody 4 →
// Moody 5 drops `Continent`, a country keeping its continent's code. StoreMigrator in
// one pass and step by step, against the one pass a careful engineer writes by hand.
// See docs/performance.md.

/// The Moody chain's folder: `--fixtures`, else ../shared/fixtures beside the repository.
func moodyFolder(_ options: Options) -> URL {
    let fixtures =
        options.fixtures.map { URL(fileURLWithPath: $0) }
        ?? repositoryRoot(options.mappingsFolder).deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    return fixtures.appendingPathComponent("realworld/objcio+core-data/Migrations/Migrations")
}

/// The versions Moody … Moody 5.
func moodyVersions(_ options: Options) -> [ObjectModel] {
    let models = moodyFolder(options).appendingPathComponent("Moody.xcdatamodeld")
    do {
        let versions = Array(try ObjectModel.loadVersions(at: models).prefix(5))
        guard versions.map(\.version) == ["Moody", "Moody 2", "Moody 3", "Moody 4", "Moody 5"] else {
            die("\(models.path) holds \(versions.map(\.version)), not Moody … Moody 5")
        }
        return versions
    } catch {
        die("\(models.path): \(error) (the fixtures are ../shared/fixtures, or --fixtures DIR)")
    }
}

let moodyCountries = 250
let moodyContinents = 7

/// A Moody store at `path` of `moods` moods: the regions share a table (keys 1…257), a
/// continent every 40th key from 1, each country in a continent but every 50th; each mood
/// in a country (a key past the continents'), but every 40th.
func generateMoodyStore(_ path: String, moods: Int, model: ObjectModel) {
    createEmptyStore(path, model)
    let db = RawSQLite.open(path)
    RawSQLite.exec(db, "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF")
    let (continent, country, mood) = (
        RawSQLite.entityNumber(db, "Continent"), RawSQLite.entityNumber(db, "Country"),
        RawSQLite.entityNumber(db, "Mood")
    )
    let regions = moodyCountries + moodyContinents
    RawSQLite.exec(
        db,
        """
        BEGIN;
        WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < \(regions))
        INSERT INTO ZGEOGRAPHICREGION (Z_PK, Z_ENT, Z_OPT, ZMARKEDFORDELETIONDATE, ZNUMBEROFMOODS,
            ZNUMERICISO3166CODE, ZUNIQUENESSDUMMY, ZUPDATEDAT, ZNUMBEROFCOUNTRIES, ZCONTINENT)
        SELECT i, CASE WHEN (i - 1) % 40 = 0 THEN \(continent) ELSE \(country) END, 1,
            CASE WHEN i % 9 = 0 THEN 700000000.5 + i END, i * 3, i % 900, 0, 600000000.25 + i,
            CASE WHEN (i - 1) % 40 = 0 THEN 36 END,
            CASE WHEN (i - 1) % 40 <> 0 AND i % 50 <> 0 THEN 1 + 40 * (i % \(moodyContinents)) END
        FROM k;
        WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < \(moods))
        INSERT INTO ZMOOD (Z_PK, Z_ENT, Z_OPT, ZCOLORS, ZCREATORID, ZDATE, ZLATITUDE, ZLONGITUDE,
            ZMARKEDFORDELETIONDATE, ZMARKEDFORREMOTEDELETION, ZREMOTEIDENTIFIER, ZCOUNTRY)
        SELECT i, \(mood), 1, zeroblob(12), 'creator ' || (i % 1000), 500000000.0 + i * 7.5,
            (i % 180) - 90.25, (i % 360) - 180.5, CASE WHEN i % 97 = 0 THEN 710000000.0 + i END,
            i % 2, 'remote-' || i,
            CASE WHEN i % 40 <> 0 THEN 2 + (i % \(regions - 1)) + ((1 + i % \(regions - 1)) % 40 = 0) END
        FROM k;
        UPDATE Z_PRIMARYKEY SET Z_MAX = \(regions) WHERE Z_NAME IN ('GeographicRegion', 'Continent', 'Country');
        UPDATE Z_PRIMARYKEY SET Z_MAX = \(moods) WHERE Z_ENT = \(mood);
        COMMIT
        """)
    RawSQLite.exec(db, "PRAGMA journal_mode = DELETE")
    RawSQLite.close(db)
}

/// StoreMigrator from Moody to Moody 5 with the fixture's mapping models, in place.
func migrateMoodyChainWithStoreMigrator(_ options: Options, fusesSteps: Bool) -> VariantResult {
    let models = moodyFolder(options).appendingPathComponent("Moody.xcdatamodeld")
    var reports: [StoreMigrator.StepReport] = []
    let (_, seconds) = timed {
        do {
            var migrator = try StoreMigrator(models: models)
            migrator.keepsBackup = false
            migrator.fusesSteps = fusesSteps
            reports = try migrator.migrate(storeAt: options.source!, to: "Moody 5")
        } catch {
            die("StoreMigrator: \(error)")
        }
    }
    let passes = Set(reports.map(\.pass)).count
    guard reports.count == 4, passes == (fusesSteps ? 1 : 4) else {
        die("StoreMigrator ran \(reports.count) steps in \(passes) passes")
    }
    let rows = reports.first?.report.entityMappings.map(\.sourceInstances).reduce(0, +) ?? 0
    return VariantResult(seconds: seconds, rows: rows)
}

/// What a careful engineer writes for Moody → Moody 5: each country numbered by its key
/// among the countries (a temporary table of old and new keys), with its continent's code;
/// each mood as it is, its country's new key looked up; the indexes after the rows.
func migrateMoodyChainSQL(_ options: Options) -> VariantResult {
    let v5 = moodyVersions(options)[4]
    let source = RawSQLite.open(options.source!, readOnly: true)
    let (country, moods) = (
        RawSQLite.entityNumber(source, "Country"), Int(RawSQLite.integer(source, "SELECT count(*) FROM ZMOOD"))
    )
    RawSQLite.close(source)
    var rows = 0
    let (_, seconds) = timed {
        rows = handWrittenStep(
            from: options.source!, to: options.destination!, model: v5, count: "SELECT count(*) FROM ZMOOD"
        ) { entity in
            """
            CREATE TEMP TABLE keys (old INTEGER PRIMARY KEY, new INTEGER);
            INSERT INTO keys SELECT Z_PK, row_number() OVER (ORDER BY Z_PK)
                FROM src.ZGEOGRAPHICREGION WHERE Z_ENT = \(country);
            INSERT INTO ZCOUNTRY (Z_PK, Z_ENT, Z_OPT, ZISOCONTINENT, ZMARKEDFORDELETIONDATE, ZNUMBEROFMOODS,
                ZNUMERICISO3166CODE, ZUNIQUENESSDUMMY, ZUPDATEDAT)
                SELECT k.new, \(entity("Country")), 1, c.ZNUMERICISO3166CODE, r.ZMARKEDFORDELETIONDATE,
                    r.ZNUMBEROFMOODS, r.ZNUMERICISO3166CODE, r.ZUNIQUENESSDUMMY, r.ZUPDATEDAT
                FROM keys AS k JOIN src.ZGEOGRAPHICREGION AS r ON r.Z_PK = k.old
                LEFT JOIN src.ZGEOGRAPHICREGION AS c ON c.Z_PK = r.ZCONTINENT ORDER BY k.new;
            INSERT INTO ZMOOD (Z_PK, Z_ENT, Z_OPT, ZCOLORS, ZCREATORID, ZDATE, ZLATITUDE, ZLONGITUDE,
                ZMARKEDFORDELETIONDATE, ZMARKEDFORREMOTEDELETION, ZRATING, ZREMOTEID, ZCOUNTRY)
                SELECT m.Z_PK, \(entity("Mood")), 1, m.ZCOLORS, m.ZCREATORID, m.ZDATE, m.ZLATITUDE, m.ZLONGITUDE,
                    m.ZMARKEDFORDELETIONDATE, m.ZMARKEDFORREMOTEDELETION, 0, m.ZREMOTEIDENTIFIER, k.new
                FROM src.ZMOOD AS m LEFT JOIN keys AS k ON k.old = m.ZCOUNTRY ORDER BY m.Z_PK;
            DROP TABLE keys;
            UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT ifnull(max(Z_PK), 0) FROM ZCOUNTRY) WHERE Z_NAME = 'Country';
            UPDATE Z_PRIMARYKEY SET Z_MAX = \(moods) WHERE Z_NAME = 'Mood';
            """
        }
    }
    return VariantResult(seconds: seconds, rows: rows)
}

let moodyChainVariants = [
    Variant(id: "moody-chain-remodel", label: "StoreMigrator, one pass", role: .remodel),
    Variant(id: "moody-chain-remodel-step-by-step", label: "StoreMigrator, step by step", role: .remodel),
    Variant(id: "moody-chain-sql", label: "pure SQL, one pass", role: .reference)
]

/// Moody 5's moods and countries, as checksummed.
let moodyMoodColumns: [(String, ColumnKind)] = [
    ("Z_PK", .integer), ("Z_ENT", .integer), ("ZCOLORS", .blob), ("ZCREATORID", .text), ("ZDATE", .real),
    ("ZLATITUDE", .real), ("ZLONGITUDE", .real), ("ZMARKEDFORDELETIONDATE", .real),
    ("ZMARKEDFORREMOTEDELETION", .integer), ("ZRATING", .integer), ("ZREMOTEID", .text), ("ZCOUNTRY", .integer)
]
let moodyCountryColumns: [(String, ColumnKind)] = [
    ("Z_PK", .integer), ("Z_ENT", .integer), ("ZISOCONTINENT", .integer), ("ZMARKEDFORDELETIONDATE", .real),
    ("ZNUMBEROFMOODS", .integer), ("ZNUMERICISO3166CODE", .integer), ("ZUNIQUENESSDUMMY", .integer),
    ("ZUPDATEDAT", .real)
]

func runMoodyChainBenchmark(_ options: Options) {
    let moods = options.rowCount
    let parent = options.directory
    let mappings = options.mappingsFolder
    checkNotInRepository(parent, mappings)
    requireFreeSpace(moods * 400 + (50 << 20), at: parent, for: "three stores of \(moods) moods")
    let versions = moodyVersions(options)
    let directory = makeTemporaryDirectory(in: parent)
    defer { removeTemporaryDirectory() }
    let loadBefore = Machine.loadAverage
    let started = Date()
    let quiet = options.markdown

    let source = directory + "/Moody.sqlite"
    if !quiet { progressLine("generating \(moods) moods in \(source) …") }
    generateMoodyStore(source, moods: moods, model: versions[0])
    let common = ["--rows", "\(moods)"] + (options.fixtures.map { ["--fixtures", $0] } ?? [])
    let idle = runVariant("idle", common, resultFile: resultFilePath())
    var contents: [String: String] = [:]
    var destinationBytes: [String: Int] = [:]
    let runs = measureVariants(
        "moody-chain", moodyChainVariants, rounds: options.roundCount, quiet: quiet,
        arguments: { variant, _ in
            chainArguments(variant, common, source: source, in: directory, inPlace: variant.role != .reference)
        },
        check: { variant, _, measurement in
            let path = "\(directory)/\(variant.id).sqlite"
            defer { removeStore(path) }
            let (moodRows, moodSum) = tableChecksum(path, table: "ZMOOD", columns: moodyMoodColumns)
            let (countryRows, countrySum) = tableChecksum(path, table: "ZCOUNTRY", columns: moodyCountryColumns)
            guard moodRows == moods, countryRows == moodyCountries, measurement.result.rows > 0 else {
                die("\(variant.label) wrote \(moodRows) moods and \(countryRows) countries")
            }
            let summary = "\(moods) moods (\(moodSum.hex)), \(countryRows) countries (\(countrySum.hex))"
            if let other = contents.first, other.value != summary {
                die("the final stores differ: \(other.key) wrote \(other.value), \(variant.label) \(summary)")
            }
            contents[variant.label] = summary
            verifyPrimaryKeyMax(path, entity: "Mood", moods)
            verifyStoreOpens(path, versions[4])
            destinationBytes[variant.label] = fileSize(path)
        })

    var report = BenchmarkReport(
        title:
            "moody-chain: \(moods) moods, \(moodyCountries) countries, \(moodyContinents) continents, Moody → Moody 5 "
            + "(objc.io's models and Xcode mapping models)",
        header: interleavedHeader(options, loadBefore: loadBefore, started: started),
        groups: [runs])
    let sql = runs[2].medianSeconds
    report.footnotes =
        [
            "checksums: every final store agrees with the others: \(contents.values.first ?? ""); "
                + "Z_PRIMARYKEY.Z_MAX of Mood is \(moods), and each opens as a Moody 5 store",
            "StoreMigrator runs the four steps in one pass (Moody → Moody 4 read through, Moody 4 → Moody 5's "
                + "mapping running from the Moody store) or one by one, each writing and syncing its own file",
            "against pure SQL's one pass: "
                + zip(["one pass", "step by step"], runs).map {
                    String(format: "\($0) %.2f×", $1.medianSeconds / sql)
                }.joined(separator: ", ")
        ] + migrationFootnotes(source: source, destinationBytes: destinationBytes, idle: idle, engine: runs[0])
    if options.markdown { report.printMarkdown() } else { report.printText() }
}
