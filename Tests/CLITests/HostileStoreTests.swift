import Foundation
import ObjectGraph
import Testing

/// Files that are not stores, in the store's place: every command that reads a store
/// fails the same way, with the store's path and what is wrong, and changes nothing.
@Suite struct HostileStoreTests {
    let cli = MappingMigrateBinaryTests()
    static let models = "mappings/product-price"

    /// Each case: how to make the file at a path, and the message after the path.
    static let cases: [(name: String, message: String)] = [
        ("empty", "not a Core Data store: it has no Z_METADATA and Z_PRIMARYKEY tables"),
        ("truncated", "the file is damaged or truncated: SQLite cannot read it (database disk image is malformed)"),
        ("text", "not a Core Data store: it is not a SQLite database file"),
        ("plain SQLite", "not a Core Data store: it has no Z_METADATA and Z_PRIMARYKEY tables"),
        ("folder", "is a folder, not a store file; give the .sqlite file inside it"),
    ]

    static func make(_ name: String, at path: String) throws {
        switch name {
        case "empty": FileManager.default.createFile(atPath: path, contents: Data())
        case "truncated":
            let store = try Data(contentsOf: MappingMigrateBinaryTests.root.appendingPathComponent("mappings/product-price/Products1.sqlite"))
            try store.prefix(5000).write(to: URL(fileURLWithPath: path))
        case "text": try Data("hello\n".utf8).write(to: URL(fileURLWithPath: path))
        case "plain SQLite": try Database(path: path, mode: .create).execute("CREATE TABLE t (x)")
        case "folder": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        default: Issue.record("no such case \(name)")
        }
    }

    @Test func everyCommandSaysTheSame() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        for (name, message) in Self.cases {
            let path = directory.appendingPathComponent(name.replacingOccurrences(of: " ", with: "-") + ".sqlite").path
            try Self.make(name, at: path)
            let before = try SideFileTests.files(directory)
            for command in ["inspect", "plan", "run"] {
                let result = try cli.run([command, path, "--models", Self.models])
                #expect(result.status == 2, "\(name), \(command)")
                let separator = name == "folder" ? " " : ": "
                #expect(result.stderr == "mapping-migrate: \(path)\(separator)\(message)\n", "\(name), \(command)")
                #expect(try SideFileTests.files(directory) == before, "\(name), \(command) changed the folder")
            }
        }
    }

    /// A read-only store stays read-only after a run (and its backup too).
    @Test func aReadOnlyStoreStaysReadOnly() throws {
        let (directory, store) = try cli.temporaryCopy(of: "mappings/product-price/Products1.sqlite")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.setAttributes([.posixPermissions: 0o440], ofItemAtPath: store)
        let run = try cli.run("run", store, "--models", Self.models, "--quiet")
        #expect(run.status == 0, "\(run.stderr)")
        let permissions = try FileManager.default.attributesOfItem(atPath: store)[.posixPermissions] as? Int
        #expect(permissions == 0o440)
        let backup = try FileManager.default.attributesOfItem(atPath: store + ".Products1.bak")[.posixPermissions] as? Int
        #expect(backup == 0o440)
    }
}
