/// Where a run is: what ``MigrationManager/migrateStore(from:to:progress:)`` reports as
/// it goes, a few times a second and at every stage of every entity mapping.
public struct MigrationProgress: Sendable, Hashable {
    /// Core Data's three stages.
    public enum Stage: String, Sendable, Hashable {
        case createInstances = "create instances"
        case createRelationships = "create relationships"
        case validate
    }

    /// Of the whole run, 0…1: completed stages of entity mappings over three per mapping,
    /// plus the part done of the current one (Core Data's `migrationProgress`).
    public var fraction: Double
    public var stage: Stage
    public var entityMapping: String
    /// Rows of the current entity mapping and stage done so far.
    public var rows: Int
    /// Rows the current entity mapping and stage will do, when known.
    public var totalRows: Int?
    /// Rows per second in the current entity mapping and stage.
    public var rowsPerSecond: Double

    /// A report, for tests of progress handlers (the engine makes the real ones).
    public init(
        fraction: Double, stage: Stage, entityMapping: String, rows: Int, totalRows: Int?, rowsPerSecond: Double
    ) {
        self.fraction = fraction
        self.stage = stage
        self.entityMapping = entityMapping
        self.rows = rows
        self.totalRows = totalRows
        self.rowsPerSecond = rowsPerSecond
    }
}

/// What a run did, per entity mapping.
public struct MigrationReport: Sendable, Hashable {
    public struct EntityMappingReport: Sendable, Hashable {
        public var name: String
        /// Source instances read in stage 1.
        public var sourceInstances = 0
        /// Destination instances associated with the mapping.
        public var destinationInstances = 0
        /// Relationship values set in stage 2.
        public var relationshipsSet = 0
        /// Seconds spent in the mapping's hooks, all stages.
        public var seconds = 0.0
        /// Whether its stages ran as SQL or interpreted, and why (docs/pushdown.md).
        public var execution: MappingExecution?

        public init(name: String) { self.name = name }
    }

    public var entityMappings: [EntityMappingReport]
    /// Seconds for the whole run.
    public var seconds: Double
}

/// How a run writes.
public struct MigrationOptions: Sendable, Hashable {
    /// Destination objects written per transaction: memory holds at most about this many
    /// new objects (and their blobs) at once.
    public var chunkSize = 5_000
    /// Bytes of strings and data set per transaction: a chunk ends at whichever limit
    /// comes first, so large blobs are never held more than this many at once.
    public var chunkBytes = 32 << 20
    /// Whether entity mappings that SQL can run exactly run as SQL (docs/pushdown.md);
    /// false runs every mapping through the interpreter (`--no-pushdown`).
    public var pushdown = true
    /// Whether the manager keeps the run's contexts and associations after it succeeds, so
    /// that its lookups (``MigrationManager/destinationInstances(forEntityMappingNamed:sourceInstances:)``
    /// and the others) answer from the finished run, as `mapping-eval`'s dry run of a
    /// mapping uses them, until ``MigrationManager/releaseResults()`` (which also frees the
    /// manager: its expressions refer to it); a failed run keeps nothing.
    public var keepsResults = false
    /// Source keys per `INSERT … SELECT` of a mapping run as SQL: between two, progress is
    /// reported and cancellation checked (smaller in tests, to make many chunks of few rows).
    var sqlChunkRows = 50_000
    /// Whether the rows of a store from elsewhere are checked ahead of the statements that
    /// write them (``CheckAhead``).
    var checkAhead = CheckAhead.Mode.beside
    /// The runs the associations of a run keep in memory, the two sides of every entity
    /// mapping's together, each side its share, before a side moves its runs to its
    /// scratch database (smaller in tests, to read most of them from there): a run of many
    /// entity mappings keeps no more in memory than a run of one.
    var associationRunsInMemory = 2 * AssociationTable.runsInMemory

    public init(chunkSize: Int = 5_000, chunkBytes: Int = 32 << 20, pushdown: Bool = true, keepsResults: Bool = false) {
        self.chunkSize = max(1, chunkSize)
        self.chunkBytes = max(1, chunkBytes)
        self.pushdown = pushdown
        self.keepsResults = keepsResults
    }
}
