/// The slots of an object changed since its last save: attributes and to-one
/// relationships, each numbered from 0 by its own kind.
///
/// One set holds both kinds (to-ones as bitwise complements, so negative): an object
/// changes a slot or two between saves, and one small set per object is what stage 2 of
/// a migration, which links every destination it made, can afford.
struct ChangedSlots {
    private var raw: Set<Int> = []

    var isEmpty: Bool { raw.isEmpty }

    mutating func insert(attribute slot: Int) { raw.insert(slot) }
    mutating func insert(toOne slot: Int) { raw.insert(~slot) }

    func contains(attribute slot: Int) -> Bool { raw.contains(slot) }
    func contains(toOne slot: Int) -> Bool { raw.contains(~slot) }

    mutating func removeAll() { raw.removeAll() }

    /// The changed slots as bits (attributes from bit 0, to-ones from bit 32), or nil when
    /// a slot is too high for that: a key for statements that write these columns.
    var mask: UInt64? {
        var mask: UInt64 = 0
        for slot in raw {
            let bit = slot >= 0 ? slot : 32 + ~slot
            guard slot >= 0 ? slot < 32 : ~slot < 32 else { return nil }
            mask |= 1 << UInt64(bit)
        }
        return mask
    }
}
