import Testing
import TestSupport

@testable import Migration

/// The association table against a plain list of pairs, on the shapes a run produces.
@Suite struct AssociationTableTests {
    typealias Object = (entity: UInt16, key: Int64)

    /// Entities 0 and 1 share table 0; entity 2 has table 1.
    static let tables: [UInt16] = [0, 0, 1]

    /// Checks the table made of `pairs` against the pairs themselves: each association by
    /// position, and the lookups of each side. Where `inBulk`, each stretch of pairs whose
    /// keys follow each other on both sides is associated at once, as the SQL path does.
    static func check(_ pairs: [(Object, Object)], runsAtMost: Int? = nil, inBulk: Bool = false) {
        var table = AssociationTable(sourceTables: tables, destinationTables: tables)
        if inBulk {
            var i = 0
            while i < pairs.count {
                var n = 1
                while i + n < pairs.count, pairs[i + n].0.entity == pairs[i].0.entity,
                    pairs[i + n].1.entity == pairs[i].1.entity, pairs[i + n].0.key == pairs[i].0.key + Int64(n),
                    pairs[i + n].1.key == pairs[i].1.key + Int64(n)
                {
                    n += 1
                }
                table.associate(source: pairs[i].0, destination: pairs[i].1, count: n)
                i += n
            }
        } else {
            for (s, d) in pairs { table.associate(source: s, destination: d) }
        }
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

    /// The rows a filter keeps: source keys that ascend with gaps (some wider than a
    /// window of 64), destination keys 1, 2, 3…; one window of 64 keys is one run, however
    /// many of its keys are kept.
    @Test(arguments: [false, true])
    func keysThatAscendWithGapsShareARunForEachWindow(inBulk: Bool) {
        var generator = SeededGenerator(seed: 11)
        var pairs: [(Object, Object)] = []
        var key: Int64 = 0
        for i in 0..<1_200 {
            key += [1, 1, 2, 3, 5, 9, 63, 64, 65, 200].randomElement(using: &generator)!
            // (Another entity of the same table now and then, and the largest keys.)
            let entity: UInt16 = i % 500 == 499 ? 1 : 0
            pairs.append(((entity, i == 1_199 ? .max : key), (2, Int64(i + 1))))
        }
        let span = Int(key / 64) + 20
        Self.check(pairs, inBulk: inBulk)
        var table = AssociationTable(sourceTables: Self.tables, destinationTables: Self.tables)
        for (s, d) in pairs { table.associate(source: s, destination: d) }
        #expect(table.sources.runCount <= span && table.sources.runCount < pairs.count / 2, "\(table.sources.runCount)")
        #expect(table.destinations.runCount == 1)
    }

    /// Runs of consecutive keys after a window of scattered ones, and scattered keys after
    /// them, as a filtered mapping's statement appends them in bulk.
    @Test func consecutiveAndScatteredKeysInBulk() {
        var pairs: [(Object, Object)] = []
        var key: Int64 = 1, destination: Int64 = 1
        for stretch in 0..<80 {
            let n = [1, 2, 40, 70, 1, 3][stretch % 6]
            for j in 0..<n { pairs.append(((0, key + Int64(j)), (2, destination + Int64(j)))) }
            key += Int64(n) + Int64([1, 2, 30, 64, 100][stretch % 5])
            destination += Int64(n)
        }
        Self.check(pairs, inBulk: true)
        Self.check(pairs)
    }

    /// A stage 1's key pairs (``EntityMappingRunner/KeyPairs``) read back stretch by
    /// stretch give the pairs recorded, in order; sources that ascend with gaps beside
    /// consecutive destinations (a filter's rows) share a run for each window of 64.
    @Test func keyPairsGiveBackThePairsRecorded() {
        var generator = SeededGenerator(seed: 5)
        var recorded: [(Int64, Int64)] = []
        var source: Int64 = 0, destination: Int64 = 0
        for i in 0..<5_000 {
            source += [1, 1, 2, 7, 63, 64, 65].randomElement(using: &generator)!
            // (The destinations jump now and then, as an interpreted stage 1's may.)
            destination += i % 997 == 996 ? 10 : 1
            recorded.append((i == 4_999 ? .max : source, destination))
        }
        let pairs = EntityMappingRunner.KeyPairs()
        for (s, d) in recorded { pairs.append(source: s, destination: d) }
        var read: [(Int64, Int64)] = []
        for run in pairs.runs {
            run.forEachStretch { s, d, n in
                for j in 0..<n { read.append((s + Int64(j), d + Int64(j))) }
            }
        }
        #expect(read.map(\.0) == recorded.map(\.0) && read.map(\.1) == recorded.map(\.1))
        #expect(pairs.count == recorded.count)
        // (Every other key, as a filter keeping a scattered half of the rows: 32 a run.)
        let half = EntityMappingRunner.KeyPairs()
        for i in 0..<5_000 { half.append(source: Int64(2 * i + 1 + (i % 3 == 0 ? 1 : 0)), destination: Int64(i + 1)) }
        #expect(half.runs.count <= 5_000 / 30, "\(half.runs.count) runs")
    }
}
