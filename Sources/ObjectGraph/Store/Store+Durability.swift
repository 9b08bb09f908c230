// How a store's connection is tuned for what a migration does with it: a new store
// written from scratch and thrown away on failure, a source read as one snapshot.

extension Store {
    /// Tunes a store that is being written from scratch and is thrown away if anything
    /// fails (a migration's new store): no journal, no syncing, a larger page cache, and
    /// the file's lock kept rather than taken and dropped around every read. Call
    /// ``endScratchWrites()`` before anyone else uses the file. External data files are
    /// not synced at each save either (``ExternalDataFiles/syncsEachSave``).
    public func beginScratchWrites() throws(StoreError) {
        externalData.syncsEachSave = false
        try Self.storeErrors(path: path, otherwise: .sqlite) {
            try database.execute("PRAGMA journal_mode = OFF")
            try database.execute("PRAGMA synchronous = OFF")
            try database.execute("PRAGMA cache_size = -16384")
            // Nobody else has the new file: keep its lock instead of taking and dropping it
            // around every read (fcntl and fstat calls each time). Its own file only: a
            // database attached later (a migration's source) keeps the normal mode, in
            // which a WAL database that another connection has open can be read.
            try database.execute("PRAGMA main.locking_mode = EXCLUSIVE")
        }
    }

    /// Makes the store durable again after ``beginScratchWrites()``: a rollback journal
    /// and full syncing, as a store handed to an app has.
    public func endScratchWrites() throws(StoreError) {
        externalData.syncsEachSave = true
        try Self.storeErrors(path: path, otherwise: .sqlite) {
            try database.execute("PRAGMA journal_mode = DELETE")
            try database.execute("PRAGMA synchronous = FULL")
        }
    }

    /// Reads everything from here on in one read transaction, which the connection's close
    /// ends: one snapshot of the store, and no lock taken and dropped around each read (a
    /// fifth of a chain's time went to those fcntl and fstat calls). Deferred: the first
    /// read takes the shared lock.
    public func beginReadSnapshot() throws(StoreError) {
        try Self.storeErrors(path: path, otherwise: .sqlite) {
            try database.execute("BEGIN")
        }
    }
}
