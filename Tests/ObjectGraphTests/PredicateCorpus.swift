import Foundation

/// Predicates over the shop store (``ShopStore``) that ``PredicateSQLTests`` fetches through
/// SQL and checks against evaluating the predicate on every object.
///
/// One predicate per line: `sql` or `mem` (whether, in a context without unsaved changes,
/// some of it is pushed into SQL or all of it stays in memory), the entity, the predicate,
/// and after ` ;; ` its format arguments as a JSON array (`{"$object": "Maker/2"}` names
/// an object of the store). `#` starts a comment line. None of these predicates fails on
/// any object: a predicate that fails may fail on fewer rows once SQL narrows.
enum PredicateCorpus {
    static let text = #"""
        # Numbers: double, int32, int64, float, boolean
        sql Item    price > 10
        sql Item    price >= 10
        sql Item    price < 10
        sql Item    price <= 10.5
        sql Item    price == 10
        sql Item    price != 10
        sql Item    price == nil
        sql Item    price != nil
        sql Item    price < 1
        sql Item    NOT (price > 10)
        sql Item    NOT (price == 10)
        sql Item    NOT price != nil
        sql Item    price BETWEEN {1, 10}
        sql Item    price BETWEEN {10, 1}
        sql Item    NOT (price BETWEEN {1, 10})
        sql Item    price BETWEEN {nil, 10}
        sql Item    price IN {10, 1.5, 0}
        sql Item    price IN {10, 'ten', nil}
        sql Item    NOT (price IN {10, 1.5})
        sql Item    price == 'ten'
        mem Item    price != 'ten'
        sql Item    10 < price
        sql Item    10 == price
        sql Item    10 >= price
        sql Item    {1.5, 10} CONTAINS price
        sql Item    price > %@ ;; [10]
        sql Item    price < %@ ;; [{"$double": "Infinity"}]
        mem Item    price > %@ ;; [{"$double": "NaN"}]
        mem Item    price < %@ ;; [{"$double": "NaN"}]
        sql Item    price IN %@ ;; [[10, 1.5]]
        sql Item    quantity > 5
        sql Item    quantity == 10.0
        sql Item    quantity < 10.5
        sql Item    quantity <= 2
        sql Item    quantity >= -5
        sql Item    quantity IN {0, 1, 42}
        sql Item    quantity == TRUE
        sql Item    quantity BETWEEN {0, 11}
        sql Item    quantity > %d ;; [5]
        sql Item    big > 9007199254740992
        sql Item    big == 9007199254740993
        sql Item    big > 9007199254740992.0
        sql Item    big == 9007199254740992.0
        sql Item    big < 9.3e18
        sql Item    big >= 0
        sql Item    ratio > 0.5
        sql Item    ratio == 0.25
        sql Item    active == YES
        sql Item    active == NO
        sql Item    active != YES
        sql Item    active == nil
        sql Item    active == 1
        sql Item    active == 2
        sql Item    active > 0
        sql Item    NOT active == YES
        sql Item    (price > 10 OR quantity < 5) AND active == YES
        sql Item    NOT (NOT (price > 10))

        # Dates, binary, UUID, decimal
        sql Item    created > %@ ;; [{"$date": "2001-01-02T00:00:00Z"}]
        sql Item    created == %@ ;; [{"$date": "2001-01-01T00:00:00Z"}]
        sql Item    created <= %@ ;; [{"$date": "2001-01-01T00:00:01Z"}]
        sql Item    created < %@ ;; [{"$date": "2001-01-01T00:00:01Z"}]
        sql Item    created BETWEEN %@ ;; [[{"$date": "2000-12-31T00:00:00Z"}, {"$date": "2001-01-02T00:00:00Z"}]]
        sql Item    created == nil
        sql Item    created == 0
        sql Item    NOT (created > %@) ;; [{"$date": "2001-01-02T00:00:00Z"}]
        sql Item    blob == %@ ;; [{"$data": "AQID"}]
        sql Item    blob != %@ ;; [{"$data": ""}]
        sql Item    blob == nil
        sql Item    blob IN %@ ;; [[{"$data": "AQID"}, {"$data": "AA=="}]]
        sql Item    code == nil
        mem Item    code == 'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'
        sql Item    cost != nil
        mem Item    cost > 1
        mem Item    cost == 1.5

        # Strings: equality and order, with options
        sql Item    name == 'alpha'
        sql Item    name ==[c] 'ALPHA'
        sql Item    name ==[d] 'beta'
        sql Item    name ==[cd] 'BETA'
        sql Item    name ==[n] 'alpha'
        sql Item    name ==[cn] 'ALPHA'
        sql Item    name ==[l] 'alpha'
        sql Item    name ==[c] 'abc'
        sql Item    name == 'Kelvin'
        sql Item    name == '\u212Aelvin'
        sql Item    name ==[c] 'KELVIN'
        sql Item    name == 'béta'
        sql Item    name == 'be\u0301ta'
        sql Item    name ==[c] 'strasse'
        sql Item    name ==[c] 'straße'
        sql Item    name ==[c] 'οδος'
        sql Item    name ==[d] 'quebec'
        sql Item    name ==[cd] 'QUEBEC'
        sql Item    name ==[d] 'o'
        sql Item    name ==[c] 'ﬁne'
        sql Item    name == ''
        sql Item    name != ''
        sql Item    name != 'alpha'
        sql Item    name !=[c] 'alpha'
        sql Item    name == nil
        sql Item    name != nil
        sql Item    name == %@ ;; [null]
        sql Item    %K == %@ ;; ["name", "alpha"]
        sql Item    NOT (name == 'alpha')
        sql Item    name == 'ABC'
        sql Item    name < 'b'
        sql Item    name <= 'alpha'
        sql Item    name > 'Z'
        sql Item    name >= 'é'
        sql Item    name <[c] 'b'
        sql Item    name >[c] 'zeta'
        sql Item    name < 'e\u0301'
        sql Item    name > 'f'
        sql Item    name BETWEEN {'a', 'b'}
        sql Item    name BETWEEN {'A', 'z'}
        sql Item    name IN {'alpha', 'beta', 'Zeta'}
        sql Item    name IN[c] {'ALPHA', 'zeta'}
        sql Item    name IN {'alpha', 1, nil}
        sql Item    name IN %@ ;; [{"$set": ["alpha", "fine"]}]
        sql Item    name IN %@ ;; [{"a": "alpha", "b": "100"}]
        mem Item    name IN 'alphabet soup'
        sql Item    'ph' IN name

        # Strings: BEGINSWITH, ENDSWITH, CONTAINS, LIKE
        sql Item    name BEGINSWITH 'al'
        sql Item    name BEGINSWITH[c] 'AL'
        sql Item    name BEGINSWITH ''
        mem Item    NOT name BEGINSWITH ''
        sql Item    name BEGINSWITH[d] '\u0301'
        sql Item    name BEGINSWITH 'a*'
        sql Item    name BEGINSWITH 'a?'
        sql Item    name BEGINSWITH 'a['
        sql Item    name BEGINSWITH 'e'
        sql Item    name BEGINSWITH[c] 'K'
        sql Item    name ENDSWITH 'ta'
        sql Item    name ENDSWITH[c] 'TA'
        sql Item    name ENDSWITH[cd] 'ETA'
        sql Item    name ENDSWITH 'break'
        sql Item    name ENDSWITH '\n'
        sql Item    name ENDSWITH 'pha'
        sql Item    name CONTAINS 'ph'
        sql Item    name CONTAINS[c] 'PH'
        sql Item    name CONTAINS 'a'
        sql Item    name CONTAINS ''
        sql Item    name CONTAINS[c] 'SS'
        sql Item    name CONTAINS '\\'
        sql Item    name CONTAINS 'e\u0301'
        sql Item    name CONTAINS[d] 'e'
        sql Item    NOT name CONTAINS 'a'
        sql Item    name LIKE 'a*'
        sql Item    name LIKE '*a'
        sql Item    name LIKE 'a?b'
        sql Item    name LIKE 'a\\*b'
        sql Item    name LIKE 'a\\?b'
        sql Item    name LIKE '*'
        sql Item    name LIKE ''
        sql Item    name LIKE '?'
        sql Item    name LIKE '??'
        sql Item    name LIKE[c] 'ALPHA*'
        sql Item    name LIKE[cd] 'b?ta'
        sql Item    name LIKE[c] 'STRA??E'
        sql Item    name LIKE 'line?break'
        sql Item    name LIKE 'a[b]'
        sql Item    name LIKE '*[*'
        sql Item    name LIKE '\u212A*'
        sql Item    NOT name LIKE 'a*'

        # What stays in memory, alone or beside what SQL can do
        mem Item    name MATCHES 'a.*'
        sql Item    name MATCHES 'a.*' AND price > 1
        mem Item    price > 10 OR name MATCHES 'a.*'
        mem Item    NOT (name MATCHES 'a.*' AND price > 10)
        sql Item    NOT (name MATCHES 'a.*' OR price > 10)
        mem Item    name == name
        mem Item    price > quantity
        mem Item    name.length > 3
        mem Item    FUNCTION(name, 'uppercaseString') == 'ALPHA'
        mem Item    TRUEPREDICATE
        sql Item    FALSEPREDICATE
        sql Item    NOT TRUEPREDICATE
        mem Item    price > 10 OR TRUEPREDICATE
        sql Item    price > 10 AND TRUEPREDICATE
        sql Item    NOT (price > 10 OR name == 'alpha')
        sql Item    NOT (price > 10 AND NOT (name BEGINSWITH 'a'))
        mem Item    tags.name == 'red'
        mem Item    tags.name CONTAINS 'red'
        mem Item    ANY tags.items.name == 'alpha'

        # To-one relationships, objects, SELF
        sql Item    maker.name == 'Acme'
        sql Item    maker.name ==[c] 'acme'
        sql Item    maker.name == nil
        sql Item    maker.name != 'Acme'
        sql Item    NOT (maker.name == 'Acme')
        sql Item    maker.name BEGINSWITH 'A'
        sql Item    maker.name == 'renamed'
        sql Item    %K == %@ ;; ["maker.name", "Acme"]
        sql Item    maker == nil
        sql Item    maker != nil
        sql Item    maker == %@ ;; [{"$object": "Maker/2"}]
        sql Item    maker != %@ ;; [{"$object": "Maker/2"}]
        sql Item    maker IN %@ ;; [[{"$object": "Maker/2"}, {"$object": "Maker/3"}]]
        sql Item    maker == %@ ;; [{"$object": "Tag/1"}]
        sql Item    maker.founded > %@ ;; [{"$date": "2001-01-02T00:00:00Z"}]
        sql Item    maker.parent.name == 'Acme'
        sql Item    maker.parent == nil
        sql Item    maker.parent.parent.name == nil
        sql Item    NOT (maker.parent.name == 'Acme')
        sql Item    maker.items.@count > 3
        sql Item    maker.items.@count == 0
        sql Item    SELF == %@ ;; [{"$object": "Book/5"}]
        sql Item    SELF IN %@ ;; [[{"$object": "Book/5"}, {"$object": "Item/1"}, {"$object": "Maker/1"}]]
        sql Item    SELF != %@ ;; [{"$object": "Item/1"}]

        # To-many relationships: ANY, ALL, NONE, @count
        sql Item    ANY tags.name == 'red'
        sql Item    ANY tags.name ==[c] 'RED'
        sql Item    ANY tags.name BEGINSWITH 'b'
        sql Item    ALL tags.name == 'red'
        sql Item    ALL tags.name != 'red'
        sql Item    NONE tags.name == 'red'
        sql Item    NOT (ANY tags.name == 'red')
        sql Item    ANY tags.name == nil
        sql Item    ANY tags.name == 'unused'
        sql Item    ANY tags == %@ ;; [{"$object": "Tag/2"}]
        sql Item    ANY tags IN %@ ;; [[{"$object": "Tag/2"}, {"$object": "Tag/3"}]]
        sql Item    tags.@count == 0
        sql Item    tags.@count > 2
        sql Item    tags.@count >= 1 AND price > 10
        sql Item    ANY reviews.stars >= 4
        sql Item    ALL reviews.stars >= 3
        sql Item    ANY reviews.stars == nil
        sql Item    NONE reviews.stars < 2
        sql Item    reviews.@count > 1
        sql Item    ANY reviews.text CONTAINS[c] 'good'
        sql Item    ANY reviews.item.name == 'alpha'
        sql Item    ANY maker.items.name == 'alpha'
        sql Item    ALL maker.items.price > 1
        sql Item    ANY maker.favorites.name == 'beta'
        sql Item    maker.parent.items.@count > 2

        # Sub-entities: their own columns (Book's label is ZLABEL, Gadget's ZLABEL1)
        sql Book    pages > 100
        sql Book    label == 'first'
        sql Book    label BEGINSWITH[c] 'F'
        sql Book    pages == nil OR label == nil
        sql Book    price > 10
        sql Book    maker.name == 'Acme'
        sql Gadget  label == 'first'
        sql Gadget  voltage > 100
        sql Gadget  ANY tags.name == 'red'

        # Other entities
        sql Maker   name == 'Acme'
        sql Maker   name ==[cd] 'bohm'
        sql Maker   parent.name == 'Acme'
        sql Maker   parent == nil
        sql Maker   ANY children.name BEGINSWITH 'B'
        sql Maker   children.@count == 0
        sql Maker   ANY items.price > 10
        sql Maker   ALL items.price > 10
        sql Maker   NONE items.name == nil
        sql Maker   items.@count >= 5
        sql Maker   ANY favorites.name == 'alpha'
        sql Maker   favorites.@count > 0
        sql Maker   ANY items.maker.name == 'Acme'
        sql Maker   founded < %@ ;; [{"$date": "2001-01-02T00:00:00Z"}]
        sql Maker   country IN {'FR', 'DE'}
        sql Maker   country ==[c] 'fr'
        mem Maker   ANY items.tags.name == 'red'
        sql Maker   SELF == %@ ;; [{"$object": "Maker/1"}]
        sql Tag     ANY items.name == 'alpha'
        sql Tag     ANY items.maker.name == 'Acme'
        sql Tag     items.@count > 5
        sql Tag     ALL items.active == YES
        sql Tag     name LIKE '*e*'
        sql Review  item.name == 'alpha'
        sql Review  item == nil
        sql Review  item == %@ ;; [{"$object": "Book/5"}]
        sql Review  item.maker.name == 'Acme'
        sql Review  stars > 3
        sql Review  stars == nil
        sql Review  NOT (stars > 3)
        sql Review  item.tags.@count > 1
        sql Review  ANY item.tags.name == 'red'
        sql Review  ALL item.tags.name == 'red'
        sql Review  text ENDSWITH[c] 'GOOD'
        """#

    struct Case: CustomStringConvertible {
        let line: Int
        let pushed: Bool
        let entity: String
        let predicate: String
        let arguments: String?

        var description: String { "line \(line): \(entity) \(predicate)" + (arguments.map { " ;; \($0)" } ?? "") }
    }

    static let cases: [Case] = text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap {
        n, raw in
        let line = raw.trimmingCharacters(in: .whitespaces)
        guard !line.isEmpty, !line.hasPrefix("#") else { return nil }
        let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        precondition(
            fields.count == 3 && (fields[0] == "sql" || fields[0] == "mem"), "bad corpus line \(n + 1): \(line)")
        let rest = fields[2].trimmingCharacters(in: .whitespaces)
        let parts = rest.components(separatedBy: " ;; ")
        return Case(
            line: n + 1, pushed: fields[0] == "sql", entity: String(fields[1]),
            predicate: parts[0], arguments: parts.count > 1 ? parts[1] : nil)
    }
}
