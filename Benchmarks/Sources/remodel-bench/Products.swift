import Foundation
import Remodel

/// One row of mappings/product-price's `Product` (Products1 and Products2 have the same
/// attributes): what the store and migration benchmarks write, read and migrate.
struct ProductRow {
    var name: String
    var sku: String?
    var price: Double
    var quantity: Int64
    /// A float attribute: the value is a `Float` widened, as the store keeps it.
    var weight: Double?
    /// Seconds since 2001 (Core Data's TIMESTAMP).
    var added: Double?
    var active: Bool
    var notes: String?
}

/// The rows of the benchmarks, a pure function of the row number so that every variant
/// and every process makes the same ones without storing them.
///
/// Strings come from pools made once (1,009 names of 14–30 bytes, 1,013 SKUs, 101 notes
/// of 20–70 bytes, a few not ASCII), so that generating a row costs a hash and a few
/// loads, not string formatting, and adds little to what is measured. About 1 SKU in 10,
/// 1 weight in 8, 1 date in 20 and half the notes are NULL.
final class ProductGenerator {
    private let names: [String]
    private let skus: [String]
    private let notes: [String]

    init() {
        let adjectives = [
            "Stainless", "Enamel", "Cast Iron", "Glass", "Bamboo", "Copper", "Ceramic", "Crème", "Nordic", "Smørrebrød"
        ]
        let nouns = [
            "Kettle", "Teapot", "Mug", "Strainer", "Saucepan", "Whisk", "Colander", "Tray", "Grinder", "Ladle", "Jar"
        ]
        names = (0..<1_009).map { k in
            "\(adjectives[k % adjectives.count]) \(nouns[(k / 10) % nouns.count]) \(1_000 + k * 7)"
        }
        skus = (0..<1_013).map { k in "SKU-\(String((k * 7_919) % 100_000))" }
        let phrases = [
            "steel", "seconds", "free with a teapot", "discontinued after the spring catalogue",
            "ships in a separate box from the Lyon warehouse", "fragile — pack with care", "limited edition, numbered",
            "returned by a customer, inspected and resealed", "display model", "café grade"
        ]
        notes = (0..<101).map { k in
            k % 3 == 0
                ? phrases[k % phrases.count] : "\(phrases[k % phrases.count]); \(phrases[(k / 3) % phrases.count])"
        }
    }

    /// Row `i` (0-based; its primary key is `i + 1`).
    @inline(__always)
    func row(_ i: Int) -> ProductRow {
        var h = UInt64(i) &* 0x9E37_79B9_7F4A_7C15 &+ 0x2545_F491_4F6C_DD1D
        h = (h ^ (h >> 30)) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ (h >> 27)) &* 0x94D0_49BB_1331_11EB
        h ^= h >> 31
        return ProductRow(
            name: names[Int(h % 1_009)],
            sku: (h >> 10) % 10 == 0 ? nil : skus[Int((h >> 14) % 1_013)],
            price: Double((h >> 20) % 100_000) / 100 + 0.5,
            quantity: Int64((h >> 37) % 1_000),
            weight: (h >> 47) % 8 == 0 ? nil : Double(Float(Double((h >> 50) % 5_000) / 1_000 + 0.05)),
            added: (h >> 3) % 20 == 0 ? nil : 700_000_000 + Double(i) * 31.25,
            active: (h >> 60) & 1 == 0,
            notes: (h >> 5) % 2 == 0 ? nil : notes[Int((h >> 25) % 101)])
    }

    /// The checksum of rows `0..<count` as the benchmarks read them back: the primary key,
    /// then the eight values, with `price` multiplied by `priceFactor` (1.03 after the
    /// product-price migration).
    func checksum(count: Int, priceFactor: Double? = nil) -> Checksum {
        var checksum = Checksum()
        for i in 0..<count {
            var row = row(i)
            if let priceFactor { row.price *= priceFactor }
            checksum.add(integer: Int64(i + 1))
            checksum.add(row)
        }
        return checksum
    }
}

extension Checksum {
    /// The eight values of a row, in the order of ``productColumns``; the quantity as a
    /// double where a step made it one.
    mutating func add(_ row: ProductRow, quantityAsReal: Bool = false) {
        add(string: row.name)
        if let sku = row.sku { add(string: sku) } else { addNull() }
        add(real: row.price)
        if quantityAsReal { add(real: Double(row.quantity)) } else { add(integer: row.quantity) }
        if let weight = row.weight { add(real: weight) } else { addNull() }
        if let added = row.added { add(real: added) } else { addNull() }
        add(integer: row.active ? 1 : 0)
        if let notes = row.notes { add(string: notes) } else { addNull() }
    }
}

/// The attributes of `Product`, in the order every variant reads and checksums them.
let productAttributes = ["name", "sku", "price", "quantity", "weight", "added", "active", "notes"]

/// `Z_PK` and the columns of the eight attributes, as checksummed.
let productColumns: [(String, ColumnKind)] = [
    ("Z_PK", .integer), ("ZNAME", .text), ("ZSKU", .text), ("ZPRICE", .real), ("ZQUANTITY", .integer),
    ("ZWEIGHT", .real), ("ZADDED", .real), ("ZACTIVE", .integer), ("ZNOTES", .text)
]

/// mappings/, found from this file's place in the repository unless `--mappings` says.
func findMappingsFolder(_ override: String?) -> URL {
    if let override { return URL(fileURLWithPath: override) }
    return URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("mappings")
}

/// The repository's root (where mappings/ is).
func repositoryRoot(_ mappings: URL) -> URL { mappings.deletingLastPathComponent() }

func loadModel(_ mappings: URL, _ path: String) -> ObjectModel {
    do {
        return try ObjectModel.load(contentsOf: mappings.appendingPathComponent(path))
    } catch {
        die("\(path): \(error)")
    }
}

func loadMapping(_ mappings: URL, _ path: String) -> MappingModel {
    do {
        return try MappingModel.load(contentsOf: mappings.appendingPathComponent(path))
    } catch {
        die("\(path): \(error)")
    }
}
