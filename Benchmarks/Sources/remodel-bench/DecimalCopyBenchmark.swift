import CSQLiteBaseline
import Foundation
import Remodel

// remodel-bench decimal-copy: a generated store of N products whose price is a Decimal
// attribute (as an app's amounts often are), taken to the next version by an inferred
// step that adds a Decimal `discount` with a default. MigrationManager (SQL: each price
// read as it is where the row's check finds a Decimal writes it back as itself, else as
// `remodel_decimal` converts it; and --no-pushdown) against the INSERT … SELECT that
// copies the column, written by hand. See docs/performance.md.

/// mappings/product-price's Products1 with its price a Decimal; with `discount`, the
/// version after, which adds a Decimal `discount` of default 0.
func decimalProductsVersion(_ version: String, discount: Bool) -> String {
    """
    {"version": "\(version)", "entities": {"Product": {"attributes": {
      "name": {"type": "string", "optional": false}, "sku": "string", "price": {"type": "decimal", "default": 0},
      "quantity": {"type": "int32", "default": 0}, "weight": "float", "added": "date",
      "active": {"type": "boolean", "default": true}, "notes": "string"\(discount ? #", "discount": {"type": "decimal", "default": 0}"# : "")}}}}
    """
}

/// The two versions, and the inferred mapping between them.
func decimalCopyModels() -> (ObjectModel, ObjectModel, MappingModel) {
    do {
        let v1 = try ObjectModel(json: JSON.parse(decimalProductsVersion("ProductsD1", discount: false)), file: "D1")
        let v2 = try ObjectModel(json: JSON.parse(decimalProductsVersion("ProductsD2", discount: true)), file: "D2")
        return (v1, v2, try MappingModel.inferred(from: v1, to: v2))
    } catch {
        die("decimal-copy: \(error)")
    }
}

/// MigrationManager with default options (or `pushdown` off).
func migrateDecimalCopyWithManager(_ options: Options, pushdown: Bool) -> VariantResult {
    let (v1, v2, mapping) = decimalCopyModels()
    var rows = 0
    var execution = ""
    let (_, seconds) = timed {
        do {
            let manager = try MigrationManager(
                mapping: mapping, source: v1, destination: v2, options: MigrationOptions(pushdown: pushdown))
            let report = try manager.migrateStore(from: options.source!, to: options.destination!)
            rows = report.entityMappings.reduce(0) { $0 + $1.sourceInstances }
            execution = report.entityMappings.first?.execution.map { "\($0)" } ?? ""
        } catch {
            die("MigrationManager: \(error)")
        }
    }
    // (The benchmark measures the mapping as it is planned: as SQL, or interpreted.)
    guard execution.hasPrefix(pushdown ? "SQL" : "interpreted") else {
        die("MigrationManager ran the mapping as \(execution)")
    }
    return VariantResult(seconds: seconds, rows: rows)
}

/// What a careful engineer writes: one `INSERT … SELECT` that copies every column, the
/// discount its default, the index built after the rows (as the engine builds it), with
/// the engine's destination pragmas.
func migrateDecimalCopySQL(_ options: Options) -> VariantResult {
    let (_, v2, _) = decimalCopyModels()
    var rows = 0
    let (_, seconds) = timed {
        rows = handWrittenStep(
            from: options.source!, to: options.destination!, model: v2, count: "SELECT count(*) FROM ZPRODUCT"
        ) { entity in
            """
            INSERT INTO ZPRODUCT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZSKU, ZPRICE, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES, ZDISCOUNT)
                SELECT Z_PK, \(entity("Product")), 1, ZNAME, ZSKU, ZPRICE, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES, 0
                FROM src.ZPRODUCT ORDER BY Z_PK;
            UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT ifnull(max(Z_PK), 0) FROM ZPRODUCT) WHERE Z_NAME = 'Product';
            """
        }
    }
    return VariantResult(seconds: seconds, rows: rows)
}

let decimalCopyVariants = [
    Variant(id: "decimal-copy-remodel", label: "MigrationManager", role: .remodel),
    Variant(id: "decimal-copy-interpreted", label: "MigrationManager, --no-pushdown", role: .remodel),
    Variant(id: "decimal-copy-sql", label: "pure SQL", role: .reference)
]

/// `Z_PK`, the eight attributes and the discount, as checksummed.
let decimalCopyColumns: [(String, ColumnKind)] = productColumns + [("ZDISCOUNT", .real)]

func runDecimalCopyBenchmark(_ options: Options) {
    let rows = options.rowCount
    let parent = options.directory
    let mappings = options.mappingsFolder
    checkNotInRepository(parent, mappings)
    requireFreeSpace(rows * 400 + (50 << 20), at: parent, for: "a source and a destination store of \(rows) rows")
    let directory = makeTemporaryDirectory(in: parent)
    defer { removeTemporaryDirectory() }
    let loadBefore = Machine.loadAverage
    let started = Date()
    let quiet = options.markdown

    let (v1, v2, _) = decimalCopyModels()
    let source = directory + "/ProductsD1.sqlite"
    if !quiet { progressLine("generating \(rows) products in \(source) …") }
    generateProductsStore(source, rows: rows, model: v1)
    // The generated rows, each price as the generator made it (a double a Decimal keeps:
    // cents plus a half), the discount 0.
    let generator = ProductGenerator()
    var expected = Checksum()
    for i in 0..<rows {
        expected.add(integer: Int64(i + 1))
        expected.add(generator.row(i))
        expected.add(real: 0)
    }
    let common = ["--rows", "\(rows)", "--source", source]
    let idle = runVariant("idle", common, resultFile: resultFilePath())
    var destinationBytes: [String: Int] = [:]
    let runs = measureVariants(
        "decimal-copy", decimalCopyVariants, rounds: options.roundCount, quiet: quiet,
        arguments: { variant, _ in common + ["--destination", "\(directory)/\(variant.id).sqlite"] },
        check: { variant, _, measurement in
            let path = "\(directory)/\(variant.id).sqlite"
            defer { removeStore(path) }
            let (count, checksum) = tableChecksum(path, table: "ZPRODUCT", columns: decimalCopyColumns)
            guard count == rows, checksum == expected, measurement.result.rows == rows else {
                die(
                    "\(variant.label) wrote \(count) rows with checksum \(checksum.hex) (read \(measurement.result.rows)); "
                        + "expected \(rows), \(expected.hex)")
            }
            verifyPrimaryKeyMax(path, entity: "Product", rows)
            verifyStoreOpens(path, v2)
            destinationBytes[variant.label] = fileSize(path)
        })

    var report = BenchmarkReport(
        title:
            "decimal-copy: \(rows) rows, ProductsD1 → ProductsD2 (inferred; price a Decimal, a Decimal discount added)",
        header: interleavedHeader(options, loadBefore: loadBefore, started: started),
        groups: [runs])
    report.footnotes =
        [
            "checksums: every store agrees with the generated rows (\(rows) rows, \(expected.hex)), "
                + "Z_PRIMARYKEY.Z_MAX is \(rows), and each opens as a ProductsD2 store",
            "MigrationManager runs the mapping as SQL, each price read as it is where the row's check finds a Decimal "
                + "writes it back as itself; --no-pushdown runs it interpreted",
            speedFootnote(["MigrationManager", "--no-pushdown"], runs, against: runs[2])
        ] + migrationFootnotes(source: source, destinationBytes: destinationBytes, idle: idle, engine: runs[0])
    if options.markdown { report.printMarkdown() } else { report.printText() }
}
