import CSQLiteBaseline
import Foundation
import Remodel

// remodel-bench price-chain: a Products1 store of N rows taken through two mapping files
// that both compute values, Products1 → Products2 (price * 1.03, weight widened to a
// double) → Products3 (gross = price * 1.2, price dropped), by StoreMigrator in one pass
// (the first step computes what the second reads: docs/engine.md, "Steps that compute"),
// by StoreMigrator step by step, and by hand in one INSERT … SELECT. With --filtered, the
// first step keeps the products with a quantity of 100 or more: the second then computes
// after the step whose mapping runs. With --filtered-twice, the second also keeps only the
// active products (docs/engine.md, "Steps that filter"); with --filtered-on-price, only the
// second filters, on the price the first computes (read as its expression on each row).
// See docs/performance.md.

/// A version of mappings/product-price's `Product` after Products1: `price` (or `gross`,
/// where `gross`), `quantity` of `quantityType`, `weight` of `weightType`.
func productsVersion(_ version: String, gross: Bool, quantityType: String, weightType: String) -> String {
    """
    {"version": "\(version)", "entities": {"Product": {"attributes": {
      "name": {"type": "string", "optional": false}, "sku": "string", "\(gross ? "gross" : "price")": {"type": "double", "default": 0},
      "quantity": {"type": "\(quantityType)", "default": 0}, "weight": "\(weightType)", "added": "date",
      "active": {"type": "boolean", "default": true}, "notes": "string"}}}}
    """
}

/// The chain's versions after Products1 (mappings/product-price's), and its two mapping
/// files, by file name.
let priceChainFiles: [String: String] = [
    "Products2.model.json": productsVersion("Products2", gross: false, quantityType: "int32", weightType: "double"),
    "Products3.model.json": productsVersion("Products3", gross: true, quantityType: "int32", weightType: "double"),
    "Products1_to_Products2.mapping.json": """
    {"sourceModel": "Products1", "destinationModel": "Products2", "entityMappings": [{"name": "ProductToProduct",
      "type": "transform", "sourceEntity": "Product", "destinationEntity": "Product",
      "attributeMappings": {"price": "$source.price * 1.03"}}]}
    """,
    "Products2_to_Products3.mapping.json": """
    {"sourceModel": "Products2", "destinationModel": "Products3", "entityMappings": [{"name": "ProductToProduct",
      "type": "transform", "sourceEntity": "Product", "destinationEntity": "Product",
      "attributeMappings": {"gross": "$source.price * 1.2"}}]}
    """
]

/// With `--widening`: Products1 → Products2 inferred (quantity an Integer 32 made a
/// Double, as lightweight migration allows), → Products3 by a mapping file that keeps the
/// products with a quantity of 100 or more and computes gross = price * 1.2 (its fetch
/// makes it the step whose mapping runs; it reads quantity as the inferred step before
/// wrote it: through `doubleValue`, and in the fetch as the Integer 32 itself, the same
/// number: docs/engine.md, "Steps that compute").
let priceChainWideningFiles: [String: String] = [
    "Products2.model.json": productsVersion("Products2", gross: false, quantityType: "double", weightType: "float"),
    "Products3.model.json": productsVersion("Products3", gross: true, quantityType: "double", weightType: "float"),
    "Products2_to_Products3.mapping.json": """
    {"sourceModel": "Products2", "destinationModel": "Products3", "entityMappings": [{"name": "ProductToProduct",
      "type": "transform", "sourceEntity": "Product", "destinationEntity": "Product",
      "sourceExpression": "FETCH(FUNCTION($manager, \\"fetchRequestForSourceEntityNamed:predicateString:\\", \\"Product\\", \\"quantity >= 100\\"), $manager.sourceContext, NO)",
      "attributeMappings": {"gross": "$source.price * 1.2"}}]}
    """
]

/// The fetch of the products the first step keeps, with `--filtered`.
let priceChainFilter =
    #"FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Product\", \"quantity >= 100\"), $manager.sourceContext, NO)"#

/// What the second step keeps, where it filters: the active products
/// (`--filtered-twice`), or those whose price, as the first step computes it, is over 50
/// (`--filtered-on-price`).
enum PriceChainSecondFilter {
    case active, price

    /// Its predicate, over Products2.
    var predicate: String { self == .active ? "active == YES" : "price > 50" }
    /// Its condition over a Products1 row, for the hand-written pass.
    var sql: String { self == .active ? "ZACTIVE = 1" : "ZPRICE * 1.03 > 50" }
    /// Its fetch.
    var fetch: String {
        #"FETCH(FUNCTION($manager, \"fetchRequestForSourceEntityNamed:predicateString:\", \"Product\", \"\#(predicate)\"), $manager.sourceContext, NO)"#
    }

    /// Whether it keeps `row`, a Products1 row.
    func keeps(_ row: ProductRow) -> Bool { self == .active ? row.active : row.price * 1.03 > 50 }
}

/// The chain's folder in `directory`: Products1 from `mappings`, the rest
/// (``priceChainFiles``, or ``priceChainWideningFiles`` where `widening`), the first step
/// with ``priceChainFilter`` where `filtered`, the second with `second`'s fetch.
func writePriceChain(
    in directory: String, mappings: URL, filtered: Bool, second: PriceChainSecondFilter? = nil,
    widening: Bool = false
) -> String {
    let folder = directory + "/price-chain"
    do {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: mappings.appendingPathComponent(productsModelPath),
            to: URL(fileURLWithPath: folder + "/Products1.model.json"))
        for (name, text) in widening ? priceChainWideningFiles : priceChainFiles {
            let filter =
                filtered && name.hasPrefix("Products1_to")
                ? priceChainFilter : name.hasPrefix("Products2_to") ? second?.fetch : nil
            let written =
                filter.map {
                    text.replacingOccurrences(
                        of: #""destinationEntity": "Product","#,
                        with: #""destinationEntity": "Product", "sourceExpression": "\#($0)","#)
                } ?? text
            try written.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }
    } catch {
        die("cannot write the price chain in \(folder): \(error)")
    }
    return folder
}

/// StoreMigrator on the store at `--source` (a copy of the generated store), in place, with
/// the chain in `--mappings`, backups off: in one pass, or step by step.
func migratePriceChainWithStoreMigrator(_ options: Options, fusesSteps: Bool) -> VariantResult {
    var reports: [StoreMigrator.StepReport] = []
    let (_, seconds) = timed {
        do {
            var migrator = try StoreMigrator(models: options.mappingsFolder)
            migrator.keepsBackup = false
            migrator.fusesSteps = fusesSteps
            reports = try migrator.migrate(storeAt: options.source!)
        } catch {
            die("StoreMigrator: \(error)")
        }
    }
    guard reports.count == 2, reports.contains(where: \.isFused) == fusesSteps else {
        die("StoreMigrator ran \(reports.map { "\($0.source) → \($0.destination), fused \($0.isFused)" })")
    }
    var splits: [String: Double] = [:]
    for step in reports where !step.isFused { splits["\(step.source) → \(step.destination)"] = step.report.seconds }
    splits["files and setup"] = seconds - splits.values.reduce(0, +)
    // (The rows the chain writes, as pure SQL counts them.)
    return VariantResult(
        seconds: seconds, rows: reports[1].report.entityMappings.first?.destinationInstances ?? 0, splits: splits)
}

/// What a careful engineer writes for the chain: Products1 to Products3 in one
/// `INSERT … SELECT`, gross computed as the two steps compute it, one after the other
/// (``sqlStep(from:to:model:countRows:indexesAfter:maxima:_:)``: the new file synced);
/// with `--filtered` (or `--widening`), the products kept numbered 1, 2, … in key order,
/// as the engine numbers them (a NULL `Z_PK`, the next rowid of the empty table).
func migratePriceChainSQL(_ options: Options) -> VariantResult {
    var rows = 0
    var stepSeconds = 0.0
    let conditions = (options.filtered ? ["ZQUANTITY >= 100"] : []) + (options.secondFilter.map { [$0.sql] } ?? [])
    let selection = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ") + " "
    let (_, seconds) = timed {
        let model = loadModel(options.mappingsFolder, "Products3.model.json")
        (stepSeconds, _) = sqlStep(
            from: options.source!, to: options.destination!, model: model, countRows: false,
            maxima: [("Product", "ZPRODUCT")]
        ) { entity in
            options.widening
                ? """
                INSERT INTO ZPRODUCT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZSKU, ZGROSS, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES)
                    SELECT NULL, \(entity("Product")), 1,
                        ZNAME, ZSKU, ZPRICE * 1.2, CAST(ZQUANTITY AS REAL), ZWEIGHT, ZADDED, ZACTIVE, ZNOTES
                    FROM src.ZPRODUCT WHERE ZQUANTITY >= 100 ORDER BY Z_PK;
                """
                : """
                INSERT INTO ZPRODUCT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZSKU, ZGROSS, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES)
                    SELECT \(options.filtered || options.secondFilter != nil ? "NULL" : "Z_PK"), \(entity("Product")), 1,
                        ZNAME, ZSKU, ZPRICE * 1.03 * 1.2, ZQUANTITY, ZWEIGHT, ZADDED, ZACTIVE, ZNOTES
                    FROM src.ZPRODUCT \(selection)ORDER BY Z_PK;
                """
        }
    }
    let db = RawSQLite.open(options.destination!, readOnly: true)
    rows = Int(RawSQLite.integer(db, "SELECT count(*) FROM ZPRODUCT"))
    RawSQLite.close(db)
    return VariantResult(seconds: seconds, rows: rows, splits: ["files and setup": seconds - stepSeconds])
}

let priceChainVariants = [
    Variant(id: "price-chain-remodel", label: "StoreMigrator, one pass", role: .remodel),
    Variant(id: "price-chain-remodel-step-by-step", label: "StoreMigrator, step by step", role: .remodel),
    Variant(id: "price-chain-sql", label: "pure SQL, one pass", role: .reference)
]

/// `Z_PK` and Products3's columns, in the order of ``Checksum/add(_:)``.
let products3Columns: [(String, ColumnKind)] = productColumns.map { $0.0 == "ZPRICE" ? ("ZGROSS", .real) : $0 }

func runPriceChainBenchmark(_ options: Options) {
    let rows = options.rowCount
    let parent = options.directory
    let mappings = options.mappingsFolder
    checkNotInRepository(parent, mappings)
    requireFreeSpace(rows * 500 + (50 << 20), at: parent, for: "four stores of \(rows) rows")
    let directory = makeTemporaryDirectory(in: parent)
    defer { removeTemporaryDirectory() }
    let loadBefore = Machine.loadAverage
    let started = Date()
    let quiet = options.markdown

    if (options.filtered || options.secondFilter != nil) && options.widening {
        die("--filtered, --filtered-twice, --filtered-on-price and --widening are chains of their own: give one")
    }
    let chain = writePriceChain(
        in: directory, mappings: mappings, filtered: options.filtered, second: options.secondFilter,
        widening: options.widening)
    let source = directory + "/Products1.sqlite"
    if !quiet { progressLine("generating \(rows) products in \(source) …") }
    generateProductsStore(source, rows: rows, model: loadModel(mappings, productsModelPath))
    let v3 = loadModel(URL(fileURLWithPath: chain), "Products3.model.json")
    // The rows through both steps, computed here: gross is (price * 1.03) * 1.2; with
    // --filtered, only the quantities of 100 or more, numbered again (and with a second
    // filter, only those it keeps); with --widening,
    // gross is price * 1.2 of the quantities of 100 or more, and quantity a double.
    let generator = ProductGenerator()
    var expected = Checksum()
    var kept = 0
    for i in 0..<rows {
        var row = generator.row(i)
        if options.filtered || options.widening, row.quantity < 100 { continue }
        if let second = options.secondFilter, !second.keeps(row) { continue }
        kept += 1
        row.price = options.widening ? row.price * 1.2 : row.price * 1.03 * 1.2
        expected.add(integer: Int64(kept))
        expected.add(row, quantityAsReal: options.widening)
    }
    let columns = products3Columns.map { options.widening && $0.0 == "ZQUANTITY" ? ($0.0, ColumnKind.real) : $0 }
    let common =
        ["--mappings", chain] + (options.filtered ? ["--filtered"] : [])
        + (options.secondFilter == .active
            ? ["--filtered-twice"] : options.secondFilter == .price ? ["--filtered-on-price"] : [])
        + (options.widening ? ["--widening"] : [])
    var destinationBytes: [String: Int] = [:]
    let runs = measureVariants(
        "chain", priceChainVariants.filter { options.only?.contains($0.id) ?? true }, rounds: options.roundCount,
        quiet: quiet,
        arguments: { variant, _ in
            chainArguments(variant, common, source: source, in: directory, inPlace: variant.id != "price-chain-sql")
        },
        check: { variant, _, measurement in
            let path = "\(directory)/\(variant.id).sqlite"
            defer { removeStore(path) }
            let (count, checksum) = tableChecksum(path, table: "ZPRODUCT", columns: columns)
            guard count == kept, checksum == expected, measurement.result.rows == kept else {
                die(
                    "\(variant.label) wrote \(count) rows with checksum \(checksum.hex) (read \(measurement.result.rows)); "
                        + "expected \(kept) of \(rows), \(expected.hex)")
            }
            verifyPrimaryKeyMax(path, entity: "Product", kept)
            verifyStoreOpens(path, v3)
            destinationBytes[variant.label] = fileSize(path)
        })

    let run = { (id: String) in runs.first { $0.variant.id == id } }
    var report = BenchmarkReport(
        title:
            options.widening
            ? "price-chain --widening: \(rows) rows, Products1 → Products2 (inferred: quantity to a double) → Products3 (quantity >= 100, gross = price * 1.2)"
            : "price-chain: \(rows) rows, Products1 → Products2 (\(options.filtered ? "quantity >= 100, " : "")price * 1.03, weight to a double) → Products3 (\(options.secondFilter.map { "\($0.predicate), " } ?? "")gross = price * 1.2)",
        header: interleavedHeader(options, loadBefore: loadBefore, started: started),
        groups: [runs])
    report.footnotes = [
        "checksums: every final store agrees with the generated rows put through both steps in Swift "
            + "(\(kept) of \(rows) rows, \(expected.hex)), Z_PRIMARYKEY.Z_MAX is \(kept), and each opens as a Products3 store",
        "StoreMigrator migrates a copy of the source in place (the copy not timed), syncing and replacing each new "
            + "file; pure SQL writes and syncs one new file",
        "source store \(formatBytes(fileSize(source))); final stores "
            + destinationBytes.sorted { $0.key < $1.key }.map { "\($0.key) \(formatBytes($0.value))" }.joined(
                separator: ", ")
    ]
    if let fused = run("price-chain-remodel") {
        report.targets =
            [
                ("price-chain-sql", "pure SQL's one pass"), ("price-chain-remodel-step-by-step", "step by step")
            ].compactMap { id, label in
                run(id).map {
                    "one pass against \(label): \(String(format: "%.2f×", fused.medianSeconds / $0.medianSeconds)) the time"
                }
            } + ["peak memory < 64 MB: \(formatMB(fused.peakRSS)) — \(verdict(fused.peakRSS < 64_000_000))"]
    }
    if options.markdown { report.printMarkdown() } else { report.printText() }
}
