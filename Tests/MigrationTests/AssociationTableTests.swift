import Testing
import TestSupport

@testable import Migration

/// The association table against a plain list of pairs, on the shapes a run produces.
@Suite struct AssociationTableTests {
    typealias Object = (entity: UInt16, key: Int64)

    /// Entities 0 and 1 share table 0; entity 2 has table 1.
    static let tables: [UInt16] = [0, 0, 1]

    static func check(_ pairs: [(Object, Object)], runsAtMost: Int? = nil) {
        var table = AssociationTable(sourceTables: tables, destinationTables: tables)
        for (s, d) in pairs { table.associate(source: s, destination: d) }
        #expect(table.count == pairs.count)
        if let runsAtMost { #expect(table.sources.runCount <= runsAtMost && table.destinations.runCount <= runsAtMost) }
        func same(_ a: Object, _ b: Object) -> Bool { tables[Int(a.entity)] == tables[Int(b.entity)] && a.key == b.key }
        for (i, (s, d)) in pairs.enumerated() {
            #expect(table[i].source == s && table[i].destination == d)
            let expectedDestinations = pairs.filter { same($0.0, s) }.map(\.1)
            let foundDestinations = table.destinations(ofSource: s.entity, key: s.key)
            #expect(foundDestinations.map(\.key) == expectedDestinations.map(\.key), "destinations of \(s)")
            let expectedSources = pairs.filter { same($0.1, d) }.map(\.0)
            #expect(
                table.sources(ofDestination: d.entity, key: d.key).map(\.key) == expectedSources.map(\.key),
                "sources of \(d)")
        }
        #expect(table.destinations(ofSource: 0, key: -5).isEmpty)
        #expect(table.sources(ofDestination: 2, key: 1_000_000).isEmpty)
    }

    @Test func aTableWithoutGapsIsOneRun() {
        Self.check((1...5_000).map { ((0, Int64($0)), (0, Int64($0 + 10))) }, runsAtMost: 1)
    }

    @Test func gapsAndEntitiesStartNewRuns() {
        var pairs: [(Object, Object)] = []
        var key: Int64 = 1
        for i in 0..<400 {
            key += i % 7 == 0 ? 3 : 1
            pairs.append(((UInt16(i % 50 == 0 ? 1 : 0), key), (2, Int64(i + 1))))
        }
        Self.check(pairs)
    }

    @Test func outOfOrderAndRepeatedKeys() {
        var generator = SeededGenerator(seed: 7)
        var pairs: [(Object, Object)] = []
        for i in 0..<600 {
            let source = Int64.random(in: 1...150, using: &generator)
            // Long runs, short runs and repeats on the destination side.
            let destination = i < 200 ? Int64(i + 1) : Int64.random(in: 1...300, using: &generator)
            pairs.append(((UInt16(source % 3 == 0 ? 2 : 0), source), (UInt16(i % 2), destination)))
        }
        Self.check(pairs)
    }
}
