// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Remodel",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Remodel", targets: ["Remodel"]),
        .library(name: "ExpressionLanguage", targets: ["ExpressionLanguage"]),
        // For test targets: migrated copies of fixture stores (docs/testing-migrations.md).
        .library(name: "RemodelTesting", targets: ["RemodelTesting"]),
        .executable(name: "mapping-eval", targets: ["mapping-eval"]),
        .executable(name: "mapping-migrate", targets: ["mapping-migrate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
    ],
    targets: [
        // System libraries. The store's hot path and MATCHES talk to the C APIs directly.
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "CPCRE2",
            pkgConfig: "libpcre2-8",
            providers: [.apt(["libpcre2-dev"]), .brew(["pcre2"])]
        ),
        .systemLibrary(
            name: "CEditLine",
            providers: [.apt(["libedit-dev"])]
        ),
        // Inflates the compressed model Core Data keeps in a store (Z_MODELCACHE).
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),

        // The library, one module per layer; dependencies point one way.
        .target(
            name: "ExpressionLanguage",
            dependencies: [
                "CPCRE2",
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        .target(
            name: "ObjectGraph",
            dependencies: [
                "ExpressionLanguage",
                "CSQLite",
                "CZlib",
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "Migration",
            dependencies: ["ObjectGraph", "ExpressionLanguage", .product(name: "OrderedCollections", package: "swift-collections")]
        ),
        .target(name: "Remodel", dependencies: ["ExpressionLanguage", "ObjectGraph", "Migration"]),
        // What users' test suites link, and their apps do not (docs/architecture.md).
        .target(name: "RemodelTesting", dependencies: ["Remodel"]),

        // The logic behind the command-line tools, kept out of the thin executables so
        // that it can be tested as a library too.
        .target(
            name: "RemodelCLI",
            dependencies: [
                "Remodel",
                "CEditLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "OrderedCollections", package: "swift-collections"),
            ]
        ),
        .executableTarget(name: "mapping-eval", dependencies: ["RemodelCLI"]),
        .executableTarget(name: "mapping-migrate", dependencies: ["RemodelCLI"]),
        // libFuzzer targets (scripts/fuzz builds them with the fuzzer and address sanitizer).
        .executableTarget(name: "remodel-fuzz", dependencies: ["ExpressionLanguage", "ObjectGraph", "Migration"]),

        // The book-authors example (mappings/book-authors): the article's policies, and
        // mapping-migrate with them registered.
        .target(name: "BookMigrationPolicies", dependencies: ["Remodel"], path: "mappings/book-authors/Policies"),
        // The person-name example's policy variant (mappings/person-name).
        .target(name: "PersonNamePolicies", dependencies: ["Remodel"], path: "mappings/person-name/Policies"),
        .executableTarget(
            name: "book-migration",
            dependencies: ["BookMigrationPolicies", "RemodelCLI"],
            path: "mappings/book-authors/book-migration"
        ),

        // What the test targets share (repository paths, shared fixtures, temporary
        // folders, a seeded generator).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        // A SQLite VFS that fails the Nth I/O operation (FaultInjectionTests).
        .target(name: "FaultVFS", path: "Tests/FaultVFS", linkerSettings: [.linkedLibrary("sqlite3")]),
        .testTarget(
            name: "ExpressionLanguageTests",
            dependencies: ["ExpressionLanguage", "TestSupport"],
            // Case tables the tests read by path.
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "ObjectGraphTests", dependencies: ["ObjectGraph", "TestSupport"]),
        .testTarget(
            name: "MigrationTests",
            dependencies: ["Migration", "RemodelTesting", "BookMigrationPolicies", "PersonNamePolicies", "book-migration", "TestSupport"],
            // Broken mapping files the checking tests read by path.
            exclude: ["Fixtures"]
        ),
        .testTarget(name: "CLITests", dependencies: ["RemodelCLI", "mapping-eval", "mapping-migrate", "TestSupport", "FaultVFS"]),
    ]
)
