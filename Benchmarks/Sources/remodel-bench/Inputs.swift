import ExpressionLanguage

/// A small deterministic generator (SplitMix64), so that every run sees the same inputs.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The rows the expressions are evaluated against: `count` different dictionaries, cycled
/// through in order, so that branches (which names begin with "jo", which emails are
/// valid) and memory (1,000 dictionaries, their keys and strings) behave as over the rows
/// of a store rather than one row repeated.
///
/// Each row looks like a row of a `Person`/`Book` entity: `id`, `name`, `age`, `price`,
/// `email`, `title`. About a third of the names begin with "jo" once case and diacritics
/// are folded (`John`, `JOHAN`, `José`, `Jörg`); about a quarter of the names are not
/// ASCII (`Émile`, `Zoë`, `… Müller`), which takes the library's and the closure's slow
/// path; about one email in five is invalid.
struct Inputs {
    /// The rows as the closures take them.
    let dictionaries: [[String: Value]]
    /// The same rows as the library takes them (`.dictionary`).
    let values: [Value]

    init(count: Int = 1_000, seed: UInt64 = 2001) {
        var random = SplitMix64(seed: seed)
        let joNames = [
            "John", "Joanna", "Joseph", "jonas", "JOHAN", "Josephine", "Jordan", "Joel", "Joy", "Joan",
            "José", "Jörg", "Jóhanna"
        ]
        let otherNames = [
            "Anna", "Bob", "Carla", "David", "Emma", "Frank", "Grace", "Henry", "Irene", "Kevin",
            "Laura", "Mark", "Nina", "Oscar", "Paula", "Quentin", "Rosa", "Sam", "Tina", "Victor",
            "Walter", "Xena", "Yann", "Zack", "Ajo", "Émile", "Zoë", "Chloé", "Björn", "Ñora"
        ]
        let surnames = ["Smith", "Doe", "Martin", "Nguyen", "Garcia", "Müller", "Rossi", "Kowalski", "Brown", "Silva"]
        let domains = ["example.com", "mail.example.org", "store.test", "x.io"]
        let titles = ["Swift", "Core Data", "SQLite", "Migrations", "Predicates", "Regular Expressions"]

        var dictionaries: [[String: Value]] = []
        dictionaries.reserveCapacity(count)
        for i in 0..<count {
            let first =
                random.next() % 3 == 0
                ? joNames.randomElement(using: &random)!
                : otherNames.randomElement(using: &random)!
            let last = surnames.randomElement(using: &random)!
            let local = "\(first.lowercased()).\(last.lowercased())\(i)"
                .unicodeScalars.filter { $0.isASCII }.map(String.init).joined()
            let email: String
            switch random.next() % 10 {
            case 0: email = "\(local) at \(domains.randomElement(using: &random)!)"  // no @
            case 1: email = "\(local)@\(domains.randomElement(using: &random)!)."  // trailing dot
            default: email = "\(local)@\(domains.randomElement(using: &random)!)"
            }
            dictionaries.append([
                "id": .integer(Int64(i)),
                "name": .string("\(first) \(last)"),
                "age": .integer(Int64(random.next() % 90) + 1),
                "price": .double(Double(random.next() % 100_000) / 100 + 0.5),
                "email": .string(email),
                "title": .string(titles.randomElement(using: &random)!)
            ])
        }
        self.dictionaries = dictionaries
        self.values = dictionaries.map { .dictionary($0) }
    }
}
