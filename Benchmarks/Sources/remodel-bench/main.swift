import ExpressionLanguage
import Foundation

// remodel-bench: throughput of the expression language against hand-written Swift, and of
// the store and the migration engine against raw SQLite C-API loops and pure SQL.
//
//     swift run -c release --package-path Benchmarks remodel-bench expressions
//     swift run -c release --package-path Benchmarks remodel-bench store
//     swift run -c release --package-path Benchmarks remodel-bench migrate-products
//     swift run -c release --package-path Benchmarks remodel-bench item-images
//     swift run -c release --package-path Benchmarks remodel-bench chain
//     swift run -c release --package-path Benchmarks remodel-bench note-folders
//     swift run -c release --package-path Benchmarks remodel-bench price-chain
//     swift run -c release --package-path Benchmarks remodel-bench decimal-copy
//     swift run -c release --package-path Benchmarks remodel-bench moody-chain
//
// See docs/performance.md.

let usage = """
    usage: remodel-bench expressions [--markdown] [--rounds N] [--scale X] [--only ID,…] [--phases P,…]
           remodel-bench store [--rows N] [--chunk N] [--rounds N] [--dir DIR] [--markdown]
           remodel-bench migrate-products [--rows N] [--rounds N] [--dir DIR] [--markdown]
           remodel-bench item-images [--items N] [--size BYTES] [--external] [--rounds N] [--dir DIR] [--markdown]
           remodel-bench chain [--notes N] [--rounds N] [--dir DIR] [--markdown]
           remodel-bench note-folders [--notes N] [--rounds N] [--dir DIR] [--markdown]
           remodel-bench price-chain [--rows N] [--filtered | --filtered-twice | --filtered-on-price | --widening] [--rounds N] [--dir DIR] [--markdown]
           remodel-bench decimal-copy [--rows N] [--rounds N] [--dir DIR] [--markdown]
           remodel-bench moody-chain [--rows N] [--fixtures DIR] [--rounds N] [--dir DIR] [--markdown]
           remodel-bench list

    expressions       measure parse, compile and evaluate of each expression and predicate, and
                      the hand-written closure doing the same work over the same rows
    store             insert N Product rows (8 attributes) through ObjectContext and read them
                      back through a FetchCursor, against raw SQLite C-API loops
    migrate-products  migrate a generated Products1 store of N rows to Products2
                      (mappings/product-price) with MigrationManager, against a raw C-API loop
                      and pure SQL
    item-images       migrate a generated Items1 store of N items with large random images to
                      Items2 (mappings/item-images), against a raw C-API loop and pure SQL
    chain             take a generated Notes1 store of N notes through mappings/notes-chain
                      (Notes1 → Notes2 → Notes3 → Notes4) with StoreMigrator, against the
                      same steps done by hand in pure SQL
    note-folders      migrate a generated Notes1 store of N notes to a version whose notes
                      keep their folder's name ($source.folder.name, read through a to-one)
                      with MigrationManager, against the INSERT … SELECT with a LEFT JOIN
    price-chain       take a generated Products1 store of N rows through two mapping files
                      that both compute values (price * 1.03, then gross = price * 1.2) with
                      StoreMigrator, in one pass and step by step, against one INSERT … SELECT
    decimal-copy      migrate a generated store of N products whose price is a Decimal by an
                      inferred step (a Decimal discount added) with MigrationManager, against
                      the INSERT … SELECT that copies the column
    moody-chain       take a generated Moody store of N moods through objc.io's Moody chain to
                      Moody 5 (its Xcode mapping models, from ../shared/fixtures) with
                      StoreMigrator, in one pass and step by step, against one pass by hand
    list              the expressions and predicates, by ID

    --markdown    print the results as Markdown (for docs/performance.md)
    --rounds N    measured rounds; figures are the median (default 7 for expressions,
                  3 for the store and migration benchmarks)
    --scale X     expressions: multiply every phase's iteration count by X (default 1)
    --only IDs    expressions: only these (comma-separated IDs from `list`)
    --phases P    expressions: only these phases (comma-separated: parse, compile, evaluate,
                  closure, …); for profiling one loop under valgrind
    --rows N      store, migrate-products, price-chain, decimal-copy: rows; moody-chain:
                  moods (default 1,000,000)
    --fixtures D  moody-chain: the shared fixtures folder (default: ../shared/fixtures beside
                  the repository)
    --notes N     chain, note-folders: notes (default 1,000,000), and one folder per 50 notes
    --chunk N     store: objects per save or commit when inserting (default 10,000)
    --items N     item-images: items (default 2,000)
    --size BYTES  item-images: bytes per image; K and M suffixes are KiB and MiB (default 600K)
    --external    item-images: images in files of the store's _EXTERNAL_DATA folder, as Core
                  Data keeps values over its threshold, moved into Image.data with external
                  storage too (new files); against a raw loop of reads and writes
    --filtered    price-chain: the first step keeps only the products with a quantity of 100
                  or more (a filter), so the second computes after the step whose mapping
                  runs
    --filtered-twice
                  price-chain: as --filtered, and the second step keeps only the active
                  products (a second filter, reading what the first copies: one pass)
    --filtered-on-price
                  price-chain: the second step keeps only the products whose price, as
                  the first computes it, is over 50 (read as its expression: one pass)
    --widening    price-chain: the first step is inferred and makes quantity a double; the
                  second keeps only the products with a quantity of 100 or more and
                  computes gross
    --dir DIR     where the temporary stores go (default $TMPDIR, else /tmp); a directory of
                  their own is made there and removed at the end. Not inside the repository.
    --mappings D  the repository's mappings/ folder (default: found from the source path)

    Every store and migration variant runs in a child process of its own (this binary
    again, with a hidden --variant flag), so that its peak memory is its own.
    """

struct Options {
    var command = ""
    var markdown = false
    var rounds: Int? = nil
    var scale = 1.0
    var only: Set<String>? = nil
    var phases: Set<String>? = nil
    var rows: Int? = nil
    var chunk = 10_000
    var items: Int? = nil
    var notes: Int? = nil
    var size: Int? = nil
    var external = false
    var filtered = false
    var secondFilter: PriceChainSecondFilter? = nil
    var widening = false
    var dir: String? = nil
    var mappings: String? = nil
    var fixtures: String? = nil
    // Hidden: what a variant's child process is told.
    var variant: String? = nil
    var result: String? = nil
    var source: String? = nil
    var destination: String? = nil

    var rowCount: Int { rows ?? 1_000_000 }
    var directory: String {
        if let dir { return dir }
        if let tmp = ProcessInfo.processInfo.environment["TMPDIR"], !tmp.isEmpty { return tmp }
        return "/tmp"
    }
    var mappingsFolder: URL { findMappingsFolder(mappings) }
    /// Rounds of the store and migration benchmarks.
    var roundCount: Int { rounds ?? 3 }
}

func parseOptions(_ arguments: [String]) -> Options {
    var options = Options()
    var rest = arguments[...]
    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("remodel-bench: \(message)\n\n\(usage)\n".utf8))
        exit(2)
    }
    func value(for flag: String) -> String {
        guard let v = rest.popFirst() else { fail("\(flag) needs a value") }
        return v
    }
    func positive(_ flag: String) -> Int {
        guard let n = Int(value(for: flag).replacingOccurrences(of: "_", with: "")), n > 0 else {
            fail("\(flag) needs a positive integer")
        }
        return n
    }
    while let argument = rest.popFirst() {
        switch argument {
        case "--markdown": options.markdown = true
        case "--rounds": options.rounds = positive(argument)
        case "--scale":
            guard let x = Double(value(for: argument)), x > 0 else { fail("--scale needs a positive number") }
            options.scale = x
        case "--only":
            options.only = Set(value(for: argument).split(separator: ",").map(String.init))
        case "--phases":
            options.phases = Set(value(for: argument).split(separator: ",").map(String.init))
        case "--rows": options.rows = positive(argument)
        case "--chunk": options.chunk = positive(argument)
        case "--items": options.items = positive(argument)
        case "--external": options.external = true
        case "--filtered": options.filtered = true
        case "--filtered-twice": (options.filtered, options.secondFilter) = (true, .active)
        case "--filtered-on-price": options.secondFilter = .price
        case "--widening": options.widening = true
        case "--notes": options.notes = positive(argument)
        case "--size":
            guard let n = parseSize(value(for: argument)), n > 0 else {
                fail("--size needs a positive number of bytes (600K, 1M, 614400)")
            }
            options.size = n
        case "--dir": options.dir = value(for: argument)
        case "--mappings": options.mappings = value(for: argument)
        case "--fixtures": options.fixtures = value(for: argument)
        case "--variant": options.variant = value(for: argument)
        case "--result": options.result = value(for: argument)
        case "--source": options.source = value(for: argument)
        case "--destination": options.destination = value(for: argument)
        case "-h", "--help", "help":
            print(usage)
            exit(0)
        default:
            guard options.command.isEmpty, !argument.hasPrefix("-") else { fail("unexpected argument '\(argument)'") }
            options.command = argument
        }
    }
    return options
}

// MARK: - Formatting

func formatNanoseconds(_ ns: Double) -> String {
    ns < 10 ? String(format: "%.2f", ns) : ns < 1_000 ? String(format: "%.1f", ns) : String(format: "%.0f", ns)
}

func formatRate(_ perSecond: Double) -> String {
    if perSecond >= 1e6 { return String(format: "%.2f M", perSecond / 1e6) }
    if perSecond >= 1e3 { return String(format: "%.1f k", perSecond / 1e3) }
    return String(format: "%.0f", perSecond)
}

func padded(_ s: String, _ width: Int, right: Bool = false) -> String {
    let pad = String(repeating: " ", count: max(0, width - s.count))
    return right ? pad + s : s + pad
}

struct CaseResult {
    let testCase: ExpressionCase
    let phases: [PhaseResult]

    var baseline: PhaseResult? { phases.first { $0.isBaseline } }

    func ratio(_ phase: PhaseResult) -> Double? {
        guard phase.comparedWithBaseline || phase.isBaseline, let baseline else { return nil }
        return phase.median / baseline.median
    }

    func phase(_ name: String) -> PhaseResult? { phases.first { $0.name == name } }
}

// MARK: - Running

func runExpressions(_ options: Options) {
    let cases = expressionCases.filter { options.only?.contains($0.id) ?? true }
    guard !cases.isEmpty else {
        FileHandle.standardError.write(Data("remodel-bench: no expression matches --only\n".utf8))
        exit(2)
    }
    let inputs = Inputs()
    let loadBefore = Machine.loadAverage
    let started = Date()

    // Same work: every compiled expression must agree with its closures on every row.
    for testCase in cases {
        do {
            if let mismatch = try testCase.verify(inputs) {
                FileHandle.standardError.write(Data("remodel-bench: \(mismatch)\n".utf8))
                exit(1)
            }
        } catch {
            FileHandle.standardError.write(Data("remodel-bench: \(testCase.text): \(error)\n".utf8))
            exit(1)
        }
    }

    var results: [CaseResult] = []
    for testCase in cases {
        let phases: [Phase]
        do {
            phases = try testCase.makePhases(inputs, options.scale).filter { options.phases?.contains($0.name) ?? true }
        } catch {
            FileHandle.standardError.write(Data("remodel-bench: \(testCase.text): \(error)\n".utf8))
            exit(1)
        }
        if !options.markdown {
            FileHandle.standardError.write(Data("measuring \(testCase.text) …\n".utf8))
        }
        results.append(CaseResult(testCase: testCase, phases: measure(phases, rounds: options.rounds ?? 7)))
    }
    let seconds = Date().timeIntervalSince(started)
    let loadAfter = Machine.loadAverage

    let header = [
        "machine: \(Machine.processors) processors, \(Machine.cpuModel); build: \(Machine.buildConfiguration)",
        "load average before: \(loadBefore); after: \(loadAfter); \(String(format: "%.0f", seconds)) s",
        "rows: \(inputs.values.count) different dictionaries, cycled; rounds: \(options.rounds ?? 7) (median); scale: \(options.scale)"
    ]
    if options.markdown {
        printMarkdown(results, header: header)
    } else {
        printText(results, header: header)
    }
}

func printText(_ results: [CaseResult], header: [String]) {
    for line in header { print(line) }
    for result in results {
        print("")
        print(result.testCase.text)
        print(
            "  " + padded("phase", 20) + padded("ns/op", 10, right: true) + padded("ops/s", 12, right: true)
                + padded("× closure", 11, right: true) + padded("min–max ns/op", 20, right: true)
                + padded("iterations", 12, right: true))
        for phase in result.phases {
            let ratio = result.ratio(phase).map { String(format: "%.2f×", $0) } ?? ""
            print(
                "  " + padded(phase.name, 20)
                    + padded(formatNanoseconds(phase.median), 10, right: true)
                    + padded(formatRate(phase.operationsPerSecond), 12, right: true)
                    + padded(ratio, 11, right: true)
                    + padded("\(formatNanoseconds(phase.minimum))–\(formatNanoseconds(phase.maximum))", 20, right: true)
                    + padded("\(phase.iterations)", 12, right: true))
        }
    }
    print("")
    for line in targetLines(results) { print(line) }
}

func printMarkdown(_ results: [CaseResult], header: [String]) {
    for line in header { print("<!-- \(line) -->") }
    print("")
    print("| Expression | Phase | ns/op (median) | ops/s (median) | × closure | ns/op min–max |")
    print("|---|---|--:|--:|--:|--:|")
    for result in results {
        for (i, phase) in result.phases.enumerated() {
            let expression = i == 0 ? "`\(result.testCase.text.replacingOccurrences(of: "|", with: "\\|"))`" : ""
            let ratio = result.ratio(phase).map { String(format: "%.2f×", $0) } ?? ""
            print(
                "| \(expression) | \(phase.name) | \(formatNanoseconds(phase.median)) | \(formatRate(phase.operationsPerSecond)) "
                    + "| \(ratio) | \(formatNanoseconds(phase.minimum))–\(formatNanoseconds(phase.maximum)) |")
        }
    }
    print("")
    for line in targetLines(results) { print("- \(line)") }
}

/// The issue's targets, for `$source.price * 1.03`: compiled evaluation within 10× of the
/// closure and at least 5 million evaluations per second.
func targetLines(_ results: [CaseResult]) -> [String] {
    guard let price = results.first(where: { $0.testCase.id == "price" }),
        let evaluate = price.phase("evaluate"), let ratio = price.ratio(evaluate)
    else { return [] }
    let rate = evaluate.operationsPerSecond
    return [
        "target ≤ 10× closure for `\(price.testCase.text)`: \(String(format: "%.2f×", ratio)) — \(ratio <= 10 ? "met" : "NOT met")",
        "target ≥ 5 M evaluations/s for `\(price.testCase.text)`: \(formatRate(rate))/s — \(rate >= 5e6 ? "met" : "NOT met")"
    ]
}

// MARK: - Main

/// The variants a child process can be asked to run (`--variant`).
let childVariants: [String: (Options) -> VariantResult] = [
    "idle": idleVariant,
    "store-insert-remodel": storeInsertRemodel,
    "store-insert-raw": storeInsertRaw,
    "store-read-remodel": storeReadRemodel,
    "store-read-remodel-keys": storeReadRemodelKeys,
    "store-read-rows": storeReadRowReader,
    "store-insert-remodel-keys": storeInsertRemodelKeys,
    "store-insert-rows": storeInsertRowInserter,
    "store-read-raw": storeReadRaw,
    "store-read-raw-swift": storeReadRawSwift,
    "products-migrate-remodel": {
        migrateWithManager(
            $0, source: $0.source!, destination: $0.destination!,
            mappingPath: "product-price/Products1_to_Products2.mapping.json")
    },
    "products-migrate-interpreted": {
        migrateWithManager(
            $0, source: $0.source!, destination: $0.destination!,
            mappingPath: "product-price/Products1_to_Products2.mapping.json", pushdown: false)
    },
    "products-migrate-raw": migrateProductsRaw,
    "products-migrate-sql": { migrateProductsSQL($0, appending: false) },
    "products-migrate-sql-appending": { migrateProductsSQL($0, appending: true) },
    "images-migrate-remodel": {
        migrateWithManager(
            $0, source: $0.source!, destination: $0.destination!,
            mappingPath: "item-images/Items1_to_Items2.mapping.json")
    },
    "images-migrate-raw": migrateImagesRaw,
    "images-external-remodel": migrateExternalImagesWithManager,
    "images-external-raw": migrateExternalImagesRaw,
    "images-migrate-sql": migrateImagesSQL,
    "chain-remodel": { migrateChainWithStoreMigrator($0) },
    "chain-remodel-step-by-step": { migrateChainWithStoreMigrator($0, fusesSteps: false) },
    "chain-interpreted": { migrateChainWithStoreMigrator($0, pushdown: false) },
    "chain-sql": migrateChainSQL,
    "chain-sql-one-pass": { migrateChainSQLOnePass($0) },
    "chain-sql-one-pass-indexes-after": { migrateChainSQLOnePass($0, indexesAfter: true) },
    "note-folders-remodel": { migrateNoteFoldersWithManager($0, pushdown: true) },
    "note-folders-object": { migrateNoteFoldersWithManager($0, pushdown: true, reading: "object") },
    "note-folders-interpreted": { migrateNoteFoldersWithManager($0, pushdown: false) },
    "note-folders-sql": migrateNoteFoldersSQL,
    "price-chain-remodel": { migratePriceChainWithStoreMigrator($0, fusesSteps: true) },
    "price-chain-remodel-step-by-step": { migratePriceChainWithStoreMigrator($0, fusesSteps: false) },
    "price-chain-sql": migratePriceChainSQL,
    "decimal-copy-remodel": { migrateDecimalCopyWithManager($0, pushdown: true) },
    "decimal-copy-interpreted": { migrateDecimalCopyWithManager($0, pushdown: false) },
    "decimal-copy-sql": migrateDecimalCopySQL,
    "moody-chain-remodel": { migrateMoodyChainWithStoreMigrator($0, fusesSteps: true) },
    "moody-chain-remodel-step-by-step": { migrateMoodyChainWithStoreMigrator($0, fusesSteps: false) },
    "moody-chain-sql": migrateMoodyChainSQL,
    // Sources for profiling one variant by hand (docs/performance.md, "Profiling").
    "generate-products": { options in
        let (_, seconds) = timed {
            generateProductsStore(
                options.destination!, rows: options.rowCount,
                model: loadModel(options.mappingsFolder, productsModelPath))
        }
        return VariantResult(seconds: seconds, rows: options.rowCount)
    },
    "generate-decimal-products": { options in
        let (_, seconds) = timed {
            generateProductsStore(options.destination!, rows: options.rowCount, model: decimalCopyModels().0)
        }
        return VariantResult(seconds: seconds, rows: options.rowCount)
    },
    "generate-moody": { options in
        let (_, seconds) = timed {
            generateMoodyStore(options.destination!, moods: options.rowCount, model: moodyVersions(options)[0])
        }
        return VariantResult(seconds: seconds, rows: options.rowCount)
    },
    "generate-notes": { options in
        let notes = options.notes ?? 1_000_000
        let (_, seconds) = timed {
            _ = generateNotesStore(
                options.destination!, generator: NotesGenerator(notes: notes),
                model: loadModel(options.mappingsFolder, "notes-chain/Notes1.model.json"))
        }
        return VariantResult(seconds: seconds, rows: notes)
    },
    "generate-items": { options in
        let (count, size) = (options.items ?? 2_000, options.size ?? 600 * 1024)
        let (expected, seconds) = timed {
            generateItemsStore(
                options.destination!, count: count, size: size,
                model: loadModel(options.mappingsFolder, "item-images/Items1.model.json"))
        }
        return VariantResult(seconds: seconds, rows: count, bytes: expected.bytes)
    }
]

let options = parseOptions(Array(CommandLine.arguments.dropFirst()))
if let variant = options.variant {
    guard let run = childVariants[variant], let result = options.result else {
        die("unknown variant '\(variant)' or no --result")
    }
    writeResult(run(options), to: result)
    exit(0)
}
switch options.command {
case "expressions":
    runExpressions(options)
case "store":
    runStoreBenchmark(options)
case "migrate-products":
    runProductsMigrationBenchmark(options)
case "item-images":
    runItemImagesBenchmark(options)
case "chain":
    runChainBenchmark(options)
case "note-folders":
    runNoteFoldersBenchmark(options)
case "price-chain":
    runPriceChainBenchmark(options)
case "decimal-copy":
    runDecimalCopyBenchmark(options)
case "moody-chain":
    runMoodyChainBenchmark(options)
case "list":
    for c in expressionCases { print("\(padded(c.id, 12)) \(c.text)") }
case "":
    print(usage)
    exit(2)
default:
    FileHandle.standardError.write(Data("remodel-bench: unknown command '\(options.command)'\n\n\(usage)\n".utf8))
    exit(2)
}
