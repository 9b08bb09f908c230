import ExpressionLanguage
import Foundation
import Testing
import TestSupport
@testable import ObjectGraph

/// Apple's version hashes (`ObjectModel+AppleVersionHash.swift`) against what Apple's tools
/// wrote: every store's `NSStoreModelVersionHashes` and digest, every compiled model's
/// `VersionInfo.plist` hashes and checksums under ../shared/fixtures, each recomputed from
/// the `.xcdatamodel` beside it.
@Suite struct AppleVersionHashTests {
    // MARK: Fixtures written by Apple's tools

    /// Every file under the shared fixtures whose name ends with `suffix`, sorted by path.
    static func fixtureFiles(endingWith suffix: String) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: SharedFixtures.root, includingPropertiesForKeys: nil)
        var found: [URL] = []
        while let url = enumerator?.nextObject() as? URL {
            if url.lastPathComponent.hasSuffix(suffix) { found.append(url) }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The versions of the `.xcdatamodeld` folders nearest to `folder`: those anywhere
    /// below it, else below its parent, and so on up to the fixtures' root (a store or a
    /// compiled model sits beside its project's model, or in a folder near it).
    static func nearestModelVersions(to folder: URL) throws -> (bundles: [URL], versions: [ObjectModel]) {
        var current = folder.standardizedFileURL
        let root = SharedFixtures.root.standardizedFileURL.path
        while current.path.hasPrefix(root) && current.path != root {
            var bundles: [URL] = []
            let enumerator = FileManager.default.enumerator(at: current, includingPropertiesForKeys: nil)
            while let url = enumerator?.nextObject() as? URL {
                if url.pathExtension == "xcdatamodeld" { bundles.append(url); enumerator?.skipDescendants() }
            }
            bundles.sort { $0.path < $1.path }
            if !bundles.isEmpty {
                return (bundles, try bundles.flatMap { try XcodeModelImporter.importVersions(at: $0).versions })
            }
            current = current.deletingLastPathComponent()
        }
        return ([], [])
    }

    /// The path below the fixtures' root, for messages.
    static func relative(_ url: URL) -> String {
        String(url.standardizedFileURL.path.dropFirst(SharedFixtures.root.standardizedFileURL.path.count + 1))
    }

    /// What differs between Apple's hashes and `model`'s: one line per entity.
    static func differences(_ apple: [String: Data], _ model: ObjectModel) -> String {
        let ours = model.appleVersionHashes
        return Set(apple.keys).union(ours.keys).sorted().compactMap { name -> String? in
            switch (apple[name], ours[name]) {
            case let (a?, o?) where a == o: nil
            case (_?, _?): "\(name): hash differs"
            case (_?, nil): "\(name): not in \(model.version)"
            default: "\(name): only in \(model.version)"
            }
        }.joined(separator: "; ")
    }

    static func entities(_ n: Int) -> String { n == 1 ? "1 entity" : "\(n) entities" }

    @Test func storesHashAsAppleWroteThem() throws {
        try SharedFixtures.require()
        let stores = Self.fixtureFiles(endingWith: ".sqlite")
        #expect(!stores.isEmpty, "no *.sqlite under \(SharedFixtures.root.path)")
        var report: [String] = []
        var matchedStores = 0, matchedEntities = 0
        for store in stores {
            let name = Self.relative(store)
            let metadata = try Store.metadata(at: store.path)
            // The digest depends on the stored hashes alone: checked for every store with one.
            if let digest = metadata.versionHashesDigest {
                #expect(
                    ObjectModel.appleStoreDigest(of: metadata.versionHashes) == digest,
                    "\(name): NSStoreModelVersionHashesDigest")
            }
            let (bundles, versions) = try Self.nearestModelVersions(to: store.deletingLastPathComponent())
            guard !versions.isEmpty else {
                report.append("\(name): no .xcdatamodeld beside it or above it; only its digest was checked")
                continue
            }
            // The fixtures hold no model of some stores (one built in code): when no version
            // nearby has a single entity of the store's, the store's model is not here.
            guard
                versions.contains(where: { !Set($0.entities.map(\.name)).isDisjoint(with: metadata.versionHashes.keys) }
                )
            else {
                report.append(
                    "\(name): its model is not in the fixtures (no version nearby has any of its entities "
                        + "\(metadata.versionHashes.keys.sorted().joined(separator: ", "))); only its digest was checked"
                )
                continue
            }
            let matches = versions.filter { $0.appleVersionHashes == metadata.versionHashes }
            guard let version = matches.first else {
                let closest = versions.max { a, b in
                    a.appleVersionHashes.filter { metadata.versionHashes[$0.key] == $0.value }.count
                        < b.appleVersionHashes.filter { metadata.versionHashes[$0.key] == $0.value }.count
                }!
                let bundleNames = bundles.map(\.lastPathComponent).joined(separator: ", ")
                let problem =
                    "\(name): no version of \(bundleNames) hashes as the store; closest \(closest.version): "
                    + Self.differences(metadata.versionHashes, closest)
                Issue.record(Comment(rawValue: problem))
                continue
            }
            if let digest = metadata.versionHashesDigest {
                #expect(version.appleStoreDigest == digest, "\(name): digest of \(version.version)")
            }
            matchedStores += 1
            matchedEntities += metadata.versionHashes.count
            let digest = metadata.versionHashesDigest == nil ? "no digest" : "digest matches"
            report.append("\(name): \(version.version) (\(Self.entities(metadata.versionHashes.count)), \(digest))")
        }
        print(
            "Apple-written stores:\n  " + report.joined(separator: "\n  ")
                + "\n  \(matchedStores) of \(stores.count) stores, \(matchedEntities) entity hashes reproduced")
        #expect(matchedStores > 0)
    }

    @Test func compiledModelsHashAsXcodeWroteThem() throws {
        try SharedFixtures.require()
        let infos = Self.fixtureFiles(endingWith: "VersionInfo.plist")
        #expect(!infos.isEmpty, "no VersionInfo.plist under \(SharedFixtures.root.path)")
        var report: [String] = []
        var entities = 0, checksums = 0
        for info in infos {
            let name = Self.relative(info)
            let plist = try #require(
                PropertyListSerialization.propertyList(from: Data(contentsOf: info), format: nil) as? [String: Any],
                "\(name)")
            let hashesByVersion = try #require(
                plist["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]], "\(name)")
            let checksumByVersion = plist["NSManagedObjectModel_VersionChecksums"] as? [String: String] ?? [:]
            let momd = info.deletingLastPathComponent()
            let (_, versions) = try Self.nearestModelVersions(to: momd.deletingLastPathComponent())
            for (versionName, hashes) in hashesByVersion.sorted(by: { $0.key < $1.key }) {
                if let checksum = checksumByVersion[versionName] {
                    #expect(
                        ObjectModel.appleVersionChecksum(of: hashes) == checksum,
                        "\(name) \(versionName): checksum of its own hashes")
                }
                guard let model = versions.first(where: { $0.version == versionName }) else {
                    Issue.record("\(name): no \(versionName).xcdatamodel beside \(momd.lastPathComponent) or above it")
                    continue
                }
                #expect(
                    model.appleVersionHashes == hashes, "\(name) \(versionName): \(Self.differences(hashes, model))")
                if model.appleVersionHashes == hashes { entities += hashes.count }
                if let checksum = checksumByVersion[versionName] {
                    #expect(model.appleVersionChecksum == checksum, "\(name) \(versionName): versionChecksum")
                    if model.appleVersionChecksum == checksum { checksums += 1 }
                }
                report.append(
                    "\(name) \(versionName): \(Self.entities(hashes.count))"
                        + (checksumByVersion[versionName] == nil ? "" : ", checksum"))
            }
        }
        print(
            "Compiled models:\n  " + report.joined(separator: "\n  ")
                + "\n  \(entities) entity hashes and \(checksums) checksums reproduced")
    }

    /// Each entity mapping of a compiled mapping model (`.cdm`): source and destination
    /// entity names with their version hashes (nil for an added or removed entity).
    static func entityMappings(inCompiledMapping url: URL) throws -> [(
        source: (String, Data)?, destination: (String, Data)?
    )] {
        let root = try KeyedArchive(data: try Data(contentsOf: url)).topObject()
        var mappings: [(source: (String, Data)?, destination: (String, Data)?)] = []
        for mapping in try root.required("NSEntityMappings").elements() {
            func side(_ nameKey: String, _ hashKey: String) throws -> (String, Data)? {
                guard let name = try mapping.string(forKey: nameKey), let hash = try mapping.data(forKey: hashKey)
                else { return nil }
                return (name, hash)
            }
            mappings.append(
                (
                    try side("NSSourceEntityName", "NSSourceEntityVersionHash"),
                    try side("NSDestinationEntityName", "NSDestinationEntityVersionHash")
                ))
        }
        return mappings
    }

    @Test func compiledMappingModelsHashAsXcodeWroteThem() throws {
        try SharedFixtures.require()
        let files = Self.fixtureFiles(endingWith: ".cdm")
        var report: [String] = []
        for file in files {
            let name = Self.relative(file)
            let mappings = try Self.entityMappings(inCompiledMapping: file)
            #expect(!mappings.isEmpty, "\(name): no entity mappings with version hashes")
            let (_, versions) = try Self.nearestModelVersions(to: file.deletingLastPathComponent())
            // The source (destination) version: the one whose hash of every mapped source
            // (destination) entity is the one the mapping model holds.
            func version(_ sides: [(String, Data)]) -> ObjectModel? {
                versions.first { model in
                    sides.allSatisfy { entity, hash in
                        model.entity(named: entity).map { model.appleVersionHash(of: $0) } == hash
                    }
                }
            }
            let source = version(mappings.compactMap(\.source)),
                destination = version(mappings.compactMap(\.destination))
            #expect(
                source != nil,
                "\(name): no version nearby hashes as its source entities \(mappings.compactMap(\.source?.0))")
            #expect(
                destination != nil,
                "\(name): no version nearby hashes as its destination entities \(mappings.compactMap(\.destination?.0))"
            )
            let hashes = mappings.compactMap(\.source).count + mappings.compactMap(\.destination).count
            report.append(
                "\(name): \(source?.version ?? "?") → \(destination?.version ?? "?") "
                    + "(\(mappings.count) entity mappings, \(hashes) hashes)")
        }
        print("Compiled mapping models:\n  " + report.joined(separator: "\n  "))
    }

    // MARK: The algorithm on models written here

    static func model(_ entities: String) throws -> ObjectModel {
        let model = try ObjectModel(json: JSON.parse(#"{"version": "M", "entities": {\#(entities)}}"#))
        try model.validate()
        return model
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    /// Hashes computed by an independent implementation of the algorithm (a Python script
    /// run over these models while writing this test), one per feature; the unverified
    /// points (two constraints, both attribute flags, an entity modifier) pin the stated
    /// assumptions so that a change to them is deliberate.
    static let playlists =
        #""Playlist": {"attributes": {"title": "string"}, "relationships": {"songs": {"destination": "Song", "inverse": "playlist", "toMany": true, "ordered": true}}}, "Song": {"relationships": {"playlist": {"destination": "Playlist", "inverse": "songs", "optional": false}}}"#
    static let shelves =
        #""Shelf": {"relationships": {"books": {"destination": "Book", "toMany": true, "minCount": 2, "maxCount": 5}}}, "Book": {"relationships": {"shelf": {"destination": "Shelf", "minCount": 1}}}"#
    static let items =
        #""Item": {"abstract": true, "attributes": {"name": "string"}}, "Book": {"parent": "Item", "attributes": {"pages": "int32"}}"#

    @Test(arguments: [
        (
            "plain", #""Tag": {"attributes": {"name": {"type": "string", "optional": false}, "count": "int64"}}"#,
            "Tag",
            "c2d7a8c09d2629cb28e6a7089d6894766ec1669696fd4ce805e610921f4bd647"
        ),
        (
            "ordered to-many with inverse", playlists, "Playlist",
            "5cf1326f6983f2ec788bea18d21e4bb7cdb028a9db6cb9b43b211c1e36cd1d05"
        ),
        ("required to-one", playlists, "Song", "ca6ef1735313717f08269e6313749612c27daf5cbd65fc755352963b849c673f"),
        ("to-many counts", shelves, "Shelf", "2b22f29a9eda4521051b2731e955a3ad03614d55b52e66120509bbe9cb01eadb"),
        ("to-one minCount", shelves, "Book", "9d599e91d31aacaea3156163f274e6c249b52a304801b310f031c247ff68e78d"),
        ("abstract", items, "Item", "079aaa21e3466ca83aab3faf00e91ca155d5fe2af4c411bae812ab4f9ede5a2f"),
        ("sub-entity", items, "Book", "242d85d607075e7b836de5c020bc912c78f97ce70a84602295b407c25c7faf13"),
        (
            "unverified: two constraints, both attribute flags, every modifier",
            #""Photo": {"versionHashModifier": "v2", "uniquenessConstraints": [["id"], ["album", "index"]], "attributes": {"id": "int64", "album": "string", "index": {"type": "int16", "versionHashModifier": "m"}, "data": {"type": "binary", "allowsExternalBinaryDataStorage": true, "preservesValueInHistoryOnDeletion": true}}, "relationships": {"tags": {"destination": "Photo", "toMany": true, "versionHashModifier": "r"}}}"#,
            "Photo", "f51572b72b3a7a821037a084a893fb471b3f6b1d3e0fb90e21a0b3d5978cb920"
        )
    ])
    func vectors(label: String, entities: String, entity: String, hash: String) throws {
        let model = try Self.model(entities)
        #expect(Self.hex(model.appleVersionHash(of: try #require(model.entity(named: entity)))) == hash, "\(label)")
    }

    @Test func propertyHashesDoNotDependOnTheirEntity() throws {
        let model = try Self.model(
            #""User": {"attributes": {"name": "string"}}, "Pet": {"attributes": {"name": "string", "age": "int16"}}"#)
        #expect(
            model.entity(named: "User")!.attributes[0].appleVersionHash
                == model.entity(named: "Pet")!.attributes[0].appleVersionHash)
        #expect(model.appleVersionHashes["User"] != model.appleVersionHashes["Pet"])
    }

    @Test func whatChangesTheEntityHash() throws {
        let base = #""A": {"attributes": {"x": "string"}, "relationships": {"b": {"destination": "B"}}}, "B": {}"#
        let hash = try #require(Self.model(base).appleVersionHashes["A"])
        // Not in the hash: renaming identifiers, delete rules, defaults, transient properties, user info.
        for same in [
            #""A": {"renamingIdentifier": "Z", "attributes": {"x": {"type": "string", "default": "d"}}, "relationships": {"b": {"destination": "B", "deleteRule": "cascade"}}}, "B": {}"#,
            #""A": {"attributes": {"x": "string", "t": {"type": "int16", "transient": true}}, "relationships": {"b": {"destination": "B"}}, "userInfo": {"k": "v"}}, "B": {}"#
        ] {
            #expect(try Self.model(same).appleVersionHashes["A"] == hash, "\(same)")
        }
        for changed in [
            #""A": {"attributes": {"x": {"type": "string", "optional": false}}, "relationships": {"b": {"destination": "B"}}}, "B": {}"#,
            #""A": {"attributes": {"x": {"type": "string", "preservesValueInHistoryOnDeletion": true}}, "relationships": {"b": {"destination": "B"}}}, "B": {}"#,
            #""A": {"uniquenessConstraints": [["x"]], "attributes": {"x": "string"}, "relationships": {"b": {"destination": "B"}}}, "B": {}"#,
            #""A": {"attributes": {"x": "string"}, "relationships": {"b": {"destination": "B", "minCount": 1}}}, "B": {}"#,
            #""A": {"versionHashModifier": "2", "attributes": {"x": "string"}, "relationships": {"b": {"destination": "B"}}}, "B": {}"#
        ] {
            #expect(try Self.model(changed).appleVersionHashes["A"] != hash, "\(changed)")
        }
    }

    @Test func xcodeAndJSONModelsHashAlike() throws {
        try SharedFixtures.require()
        for url in Self.fixtureFiles(endingWith: ".xcdatamodeld") {
            for version in try XcodeModelImporter.importVersions(at: url).versions {
                let json = try ObjectModel(json: JSON.parse(version.json.serialized(pretty: false)))
                #expect(
                    json.appleVersionHashes == version.appleVersionHashes, "\(Self.relative(url)) \(version.version)")
            }
        }
    }
}
