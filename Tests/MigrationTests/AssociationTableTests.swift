import Testing
import TestSupport

@testable import Migration

/// The association table against a plain list of pairs, on the shapes a run produces.
@Suite struct AssociationTableTests {
    typealias Object = (entity: UInt16, key: Int64)

    /// Entities 0 and 1 share table 0; entity 2 has table 1.
    static let tables: [UInt16] = [0, 0, 1]

    /// The table made of `pairs`. Where `inBulk`, each stretch of pairs whose keys follow
    /// each other on both sides is associated at once, as the SQL path does.
    static func table(
        _ pairs: [(Object, Object)], inBulk: Bool, spillsAfter: Int = AssociationTable.runsInMemory
    ) -> AssociationTable {
        var table = AssociationTable(sourceTables: tables, destinationTables: tables, spillsAfter: spillsAfter)
        guard inBulk else {
            for (s, d) in pairs { table.associate(source: s, destination: d) }
            return table
        }
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
        return table
    }

    /// Checks the table made of `pairs` against the pairs themselves: each association by
    /// position, the lookups of each side, and its stretches. Each check runs twice: with
    /// every run in memory, and with all but the last three moved to the scratch database
    /// as they come (``AssociationTable/Side/spillsAfter``), lookups in order and not.
    static func check(_ pairs: [(Object, Object)], runsAtMost: Int? = nil, inBulk: Bool = false) throws {
        for spillsAfter in [AssociationTable.runsInMemory, 3] {
            var table = table(pairs, inBulk: inBulk, spillsAfter: spillsAfter)
            #expect(table.count == pairs.count)
            if let runsAtMost {
                #expect(table.sources.runCount <= runsAtMost && table.destinations.runCount <= runsAtMost)
            }
            if spillsAfter == 3 {
                let side = table.sources
                #expect(side.runCount - side.spilledRunCount <= 3 && (side.runCount <= 3 || side.spilledRunCount > 0))
            }
            func same(_ a: Object, _ b: Object) -> Bool {
                tables[Int(a.entity)] == tables[Int(b.entity)] && a.key == b.key
            }
            // (In order, then from the end, so that the scratch database's cache of the
            // run last found does not answer every lookup.)
            for (i, (s, d)) in Array(pairs.enumerated()) + pairs.enumerated().reversed() {
                let association = try table.association(at: i)
                #expect(association.source == s && association.destination == d)
                let expectedDestinations = pairs.filter { same($0.0, s) }.map(\.1)
                let foundDestinations = try table.destinations(ofSource: s.entity, key: s.key)
                #expect(foundDestinations.map(\.key) == expectedDestinations.map(\.key), "destinations of \(s)")
                let expectedSources = pairs.filter { same($0.1, d) }.map(\.0)
                #expect(
                    try table.sources(ofDestination: d.entity, key: d.key).map(\.key) == expectedSources.map(\.key),
                    "sources of \(d)")
            }
            #expect(try table.destinations(ofSource: 0, key: -5).isEmpty)
            #expect(try table.sources(ofDestination: 2, key: 1_000_000).isEmpty)
            var stretched: [(Object, Object)] = []
            try table.forEachStretch { source, destination, count in
                for j in 0..<count {
                    stretched.append(
                        ((source.entity, source.key + Int64(j)), (destination.entity, destination.key + Int64(j))))
                }
            }
            #expect(stretched.map(\.0.key) == pairs.map(\.0.key) && stretched.map(\.1.key) == pairs.map(\.1.key))
            #expect(stretched.map(\.0.entity) == pairs.map(\.0.entity))
        }
    }

    @Test func aTableWithoutGapsIsOneRun() throws {
        try Self.check((1...5_000).map { ((0, Int64($0)), (0, Int64($0 + 10))) }, runsAtMost: 1)
    }

    @Test func gapsAndEntitiesStartNewRuns() throws {
        var pairs: [(Object, Object)] = []
        var key: Int64 = 1
        for i in 0..<400 {
            key += i % 7 == 0 ? 3 : 1
            pairs.append(((UInt16(i % 50 == 0 ? 1 : 0), key), (2, Int64(i + 1))))
        }
        try Self.check(pairs)
    }

    @Test func outOfOrderAndRepeatedKeys() throws {
        var generator = SeededGenerator(seed: 7)
        var pairs: [(Object, Object)] = []
        for i in 0..<600 {
            let source = Int64.random(in: 1...150, using: &generator)
            // Long runs, short runs and repeats on the destination side.
            let destination = i < 200 ? Int64(i + 1) : Int64.random(in: 1...300, using: &generator)
            pairs.append(((UInt16(source % 3 == 0 ? 2 : 0), source), (UInt16(i % 2), destination)))
        }
        try Self.check(pairs)
    }

    /// The rows a filter keeps: source keys that ascend with gaps (some wider than a
    /// window of 64), destination keys 1, 2, 3…; one window of 64 keys is one run, however
    /// many of its keys are kept.
    @Test(arguments: [false, true])
    func keysThatAscendWithGapsShareARunForEachWindow(inBulk: Bool) throws {
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
        try Self.check(pairs, inBulk: inBulk)
        let table = Self.table(pairs, inBulk: inBulk)
        #expect(table.sources.runCount <= span && table.sources.runCount < pairs.count / 2, "\(table.sources.runCount)")
        #expect(table.destinations.runCount == 1)
        // (In bulk, a stretch's keys join the window they fall in, as they do one by one.)
        #expect(table.sources.runCount == Self.table(pairs, inBulk: !inBulk).sources.runCount)
    }

    /// Runs of consecutive keys after a window of scattered ones, and scattered keys after
    /// them, as a filtered mapping's statement appends them in bulk.
    @Test func consecutiveAndScatteredKeysInBulk() throws {
        var pairs: [(Object, Object)] = []
        var key: Int64 = 1, destination: Int64 = 1
        for stretch in 0..<80 {
            let n = [1, 2, 40, 70, 1, 3][stretch % 6]
            for j in 0..<n { pairs.append(((0, key + Int64(j)), (2, destination + Int64(j)))) }
            key += Int64(n) + Int64([1, 2, 30, 64, 100][stretch % 5])
            destination += Int64(n)
        }
        try Self.check(pairs, inBulk: true)
        try Self.check(pairs)
    }

    /// A stage 1's key pairs (``EntityMappingRunner/KeyPairs``) read back stretch by
    /// stretch give the pairs recorded, in order; sources that ascend with gaps beside
    /// consecutive destinations (a filter's rows) share a run for each window of 64.
    @Test func keyPairsGiveBackThePairsRecorded() throws {
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

/// A migration whose associations keep two runs a side in memory and read the rest from
/// their scratch databases writes the store it writes with every run in memory: through
/// SQL (keys tables written from the associations) and through the interpreter (its
/// lookups), over the differential test's rows, whose keys have gaps.
@Suite struct AssociationsOnDiskTests {
    @Test func associationsOnDiskGiveWhatAssociationsInMemoryGive() throws {
        typealias D = PushdownDifferentialTests
        let v1 = try model(D.source), v2 = try model(D.destination)
        let directory = try TemporaryDirectory()
        let source = directory.path("D1.sqlite")
        try D.makeSource(at: source, model: v1, rows: .clean, contiguousKeys: false)
        let forms: [(attribute: String, expression: String, predicate: String?)] = [
            // Stage 1 as SQL, keys counted; the groups' members linked through its keys table.
            ("outDouble", "$source.price * 2", nil),
            // … keeping some of the rows.
            ("outDouble", "$source.price * 2", "i32 > 0"),
            // Stage 1 interpreted: its lookups, and its keys table for the SQL links.
            ("outDouble", "$manager.userInfo.rate", nil),
            // A guarded row: the interpreter runs the mapping, and fails on it.
            ("out64", "$source.price * 2", nil)
        ]
        var spilled = 0, stores = 0
        for (n, form) in forms.enumerated() {
            let mapping = try D.mapping(form.attribute, form.expression, predicate: form.predicate)
            var outcomes: [D.Outcome] = []
            for pushdown in [false, true] {
                // (Eight runs for the two entity mappings' four sides: two a side.)
                for runs in [nil, 8] {
                    let (outcome, _) = try D.run(
                        mapping, v1, v2, source: source,
                        to: directory.path("a\(n)-\(pushdown)-\(runs ?? 0).sqlite"), pushdown: pushdown,
                        associationRunsInMemory: runs
                    ) { manager in
                        spilled += manager.associations.map {
                            $0.sources.spilledRunCount + $0.destinations.spilledRunCount
                        }.reduce(0, +)
                        manager.releaseResults()
                    }
                    outcomes.append(outcome)
                }
            }
            #expect(outcomes.allSatisfy { $0 == outcomes[0] }, "\(form)")
            if case .store = outcomes[0] { stores += 1 }
        }
        #expect(spilled > 0 && stores >= 3, "\(spilled) runs read from disk; \(stores) stores written")
    }
}
