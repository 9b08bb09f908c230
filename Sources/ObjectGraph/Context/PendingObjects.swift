/// The objects a context's next save writes: the ones inserted since the last save, in the
/// order they were inserted, and the saved ones changed or deleted since, by ID.
///
/// Inserted objects are kept in a plain array because a context that imports data inserts
/// thousands of them between saves and looks few of them up: hashing each one's ID cost
/// inserts a tenth of their time. Keys are handed out in increasing order per table, so
/// the array is in key order within each table, which is the order a save writes them in.
/// Lookups by ID index the inserted objects the first time they are needed.
struct PendingObjects {
    private(set) var inserted: [ManagedObject] = []
    /// Saved objects that were changed or deleted.
    private(set) var changed: [ObjectID: ManagedObject] = [:]
    /// Inserted objects by ID, built as lookups need it. A class, so that a lookup does
    /// not mutate the struct (lookups happen while callers iterate it).
    private let index = InsertedIndex()
    /// Pending objects by the object one of their to-ones was set to since the last save:
    /// where a to-many relationship's unsaved members are, without walking every pending
    /// object on each read (stage 2 of a migration reads one for every destination). It
    /// may list an object that points elsewhere since, or twice; never misses one that
    /// points there. Objects that point there as saved are the store's to find.
    private var pointingTo: [ObjectID: [ManagedObject]] = [:]

    private final class InsertedIndex {
        var objects: [ObjectID: ManagedObject] = [:]
        /// How many of `inserted` are in `objects`.
        var count = 0
    }

    var isEmpty: Bool { inserted.isEmpty && changed.isEmpty }

    /// Inserted objects (deleted ones among them) and changed or deleted saved objects.
    var count: Int { inserted.count + changed.count }

    mutating func append(inserted object: ManagedObject) {
        inserted.append(object)
    }

    /// Records that a saved object was changed or deleted; inserted objects are pending
    /// already.
    mutating func add(changed object: ManagedObject) {
        guard !object.isInserted else { return }
        changed[object.objectID] = object
    }

    /// Records that a to-one of `member`, which is pending, was set to `destination`.
    mutating func note(_ member: ManagedObject, pointsTo destination: ObjectID) {
        pointingTo[destination, default: []].append(member)
    }

    /// The pending objects whose to-ones were set to `destination` since the last save
    /// (some may point elsewhere now; callers check).
    func objects(pointingTo destination: ObjectID) -> [ManagedObject] {
        pointingTo[destination] ?? []
    }

    /// The pending object with `id`, if there is one.
    func object(_ id: ObjectID) -> ManagedObject? {
        if let object = changed[id] { return object }
        if index.count < inserted.count {
            index.objects.reserveCapacity(inserted.count)
            for object in inserted[index.count...] { index.objects[object.objectID] = object }
            index.count = inserted.count
        }
        return index.objects[id]
    }

    /// Whether a saved row has unsaved changes (inserted objects have no saved rows).
    func hasChanges(savedRow id: ObjectID) -> Bool {
        changed[id] != nil
    }

    /// Every pending object, in no particular order.
    var all: FlattenSequence<[[ManagedObject]]> { [inserted, Array(changed.values)].joined() }

    /// The changed and deleted saved objects in primary-key order.
    func changedInKeyOrder() -> [ManagedObject] {
        changed.values.sorted { $0.objectID.primaryKey < $1.objectID.primaryKey }
    }

    /// The tables of the pending objects.
    var tables: Set<String> {
        var tables = Set(changed.keys.map(\.table))
        var last: String? = nil
        for object in inserted where object.objectID.table != last {
            last = object.objectID.table
            tables.insert(object.objectID.table)
        }
        return tables
    }

    /// Empties the set and hands back what it held (the only references the context had).
    mutating func takeAll() -> [ManagedObject] {
        var all = inserted
        inserted = []
        all.append(contentsOf: changed.values)
        changed = [:]
        index.objects = [:]
        index.count = 0
        pointingTo = [:]
        return all
    }
}
