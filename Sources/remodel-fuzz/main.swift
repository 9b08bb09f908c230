// Fuzz targets for libFuzzer (docs/testing.md, "Fuzzing"). `scripts/fuzz` builds this with
// `-sanitize=fuzzer,address -DFUZZING`, and runs one target per process, named by
// REMODEL_FUZZ_TARGET. Built as part of the package without them, it only says so.
import ExpressionLanguage
import Foundation
import Migration
import ObjectGraph

#if FUZZING
    /// What libFuzzer calls with each input.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func remodelFuzzOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
        FuzzTarget.current.run(bytes.map { Data(bytes: $0, count: count) } ?? Data())
        return 0
    }

    /// libFuzzer's driver, for a program with a `main` of its own, as SwiftPM gives every
    /// executable.
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, remodelFuzzOneInput))
#else
    print("remodel-fuzz: built without the fuzzer; run scripts/fuzz")
#endif

/// Each reader of outside input, fed arbitrary bytes: anything it returns or throws is
/// fine; a crash, a hang or a sanitizer report is a bug.
enum FuzzTarget: String, CaseIterable {
    /// The format parser, the compiler, and evaluation against a small object.
    case expression
    /// JSON mapping files, read and checked against two model versions.
    case mapping
    /// JSON model files, read, validated, laid out and hashed.
    case model
    /// Xcode's `.xcdatamodel` `contents` XML.
    case xcodeModel = "xcode-model"
    /// Xcode's `.xcmappingmodel` `xcmapping.xml`, read and compiled against two versions.
    case xcodeMapping = "xcode-mapping"
    /// Keyed archives: archived expressions and predicates, compiled models.
    case archive
    /// A store's `Z_METADATA` property list, read and written back.
    case metadata

    static let current: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["REMODEL_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            fatalError("set REMODEL_FUZZ_TARGET to one of \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return target
    }()

    static let models: [ObjectModel] = {
        let one =
            #"{"version": "V1", "entities": {"Item": {"attributes": {"name": "string", "price": "double", "count": "int32", "photo": "binary"}, "relationships": {"tags": {"destination": "Tag", "inverse": "items", "toMany": true}}}, "Tag": {"attributes": {"label": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "tags", "toMany": true}}}}}"#
        let two =
            #"{"version": "V2", "entities": {"Item": {"attributes": {"title": {"type": "string", "renamingIdentifier": "name"}, "price": "decimal", "count": "int64"}, "relationships": {"tags": {"destination": "Tag", "inverse": "items", "toMany": true, "ordered": true}}}, "Tag": {"attributes": {"label": "string"}, "relationships": {"items": {"destination": "Item", "inverse": "tags", "toMany": true}}}}}"#
        return [one, two].map { try! ObjectModel(json: try! JSON.parse($0)) }
    }()

    static let object: Value = .dictionary([
        "name": .string("Dune"), "price": .double(9.5), "count": .integer(3),
        "tags": .array([.string("sf"), .string("classic")]),
        "books": .array([
            .dictionary(["title": .string("A"), "price": .integer(2)]),
            .dictionary(["title": .string("B"), "price": .double(3.5)])
        ])
    ])

    func run(_ data: Data) {
        switch self {
        case .expression:
            let text = String(decoding: data, as: UTF8.self)
            let compiler = ExpressionCompiler()
            if let parsed = try? FormatExpression(parsing: text),
                let compiled = try? compiler.compile(parsed, source: text)
            {
                _ = try? compiled.evaluate(with: Self.object, variables: ["x": .integer(2), "s": .string("é")])
                _ = parsed.description
            }
            if let parsed = try? FormatPredicate(parsing: text) {
                _ = parsed.description
                _ = try? compiler.compilePredicate(text).evaluate(with: Self.object)
            }
        case .mapping:
            guard let json = try? JSON.parse(data),
                let mapping = try? MappingModel(json: json, file: "fuzz.mapping.json")
            else { return }
            _ = MigrationManager.check(mapping, source: Self.models[0], destination: Self.models[1])
        case .model:
            guard let json = try? JSON.parse(data), let model = try? ObjectModel(json: json, file: "fuzz.model.json")
            else { return }
            _ = model.warnings()
            guard (try? model.validate()) != nil else { return }
            _ = StoreLayout(model: model).createStatements
            _ = model.appleVersionHashes
        case .xcodeModel:
            guard let model = try? XcodeModelImporter.parse(data, version: "V", file: "contents") else { return }
            _ = model.warnings()
            if (try? model.validate()) != nil { _ = StoreLayout(model: model).createStatements }
        case .xcodeMapping:
            _ = try? MappingModel.parse(xcodeMapping: data, file: "xcmapping.xml", models: Self.models)
        case .archive:
            guard let root = try? KeyedArchive(data: data).topObject() else { return }
            _ = try? FormatExpression(archived: root).description
            _ = try? FormatPredicate(archived: root).description
            _ = try? root.foundationValue()
            if let model = try? CompiledModelReader.parse(data, version: "V", file: "V.mom") {
                _ = model.appleVersionHashes
            }
        case .metadata:
            guard let metadata = try? StoreMetadata(propertyList: data, uuid: nil) else { return }
            _ = try? metadata.propertyList()
        }
    }
}
