// swift-tools-version: 6.0
// Benchmarks for Remodel, kept out of the library: a package of its own, so that the root
// package's build and tests never compile or run them.
//
//     swift run -c release --package-path Benchmarks remodel-bench expressions
//     swift run -c release --package-path Benchmarks remodel-bench store
//     swift run -c release --package-path Benchmarks remodel-bench migrate-products
//     swift run -c release --package-path Benchmarks remodel-bench item-images
//     swift run -c release --package-path Benchmarks remodel-bench chain
//
// See docs/performance.md for what is measured and how to read the figures.
import PackageDescription

let package = Package(
    name: "RemodelBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Remodel", path: ".."),
    ],
    targets: [
        // PCRE2 for the hand-written MATCHES baseline (the same engine the library uses,
        // called directly). Its own module name: the root package's CPCRE2 is not a product.
        .systemLibrary(
            name: "CPCRE2Baseline",
            pkgConfig: "libpcre2-8",
            providers: [.apt(["libpcre2-dev"]), .brew(["pcre2"])]
        ),
        // SQLite for the raw C-API loops the store and migration benchmarks compare with.
        // Its own module name: the root package's CSQLite is not a product.
        .systemLibrary(
            name: "CSQLiteBaseline",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .executableTarget(
            name: "remodel-bench",
            dependencies: [
                .product(name: "ExpressionLanguage", package: "Remodel"),
                .product(name: "Remodel", package: "Remodel"),
                "CPCRE2Baseline",
                "CSQLiteBaseline",
            ]
        ),
    ]
)
