import ExpressionLanguage
import Foundation
import ObjectGraph

// A renaming step before a step (docs/engine.md, "Steps run as one"): the step after it
// reads the renaming step's source itself, its expressions renamed back, once the source
// is known to hold nothing the renaming step would convert, refuse or fail to validate.
extension Relabeling {
    /// `mapping`, the step after this one (B → X, `destination` X), reading this step's
    /// source (A) instead: its source entities, and what its expressions read of
    /// `$source` and its fetches' predicates read, renamed back; its implicit property
    /// mappings written out, and every destination property it does not fill listed
    /// without an expression (A's same-named properties are not B's); what it reads of an
    /// attribute the step computes, `$source.<attribute>`, read as the expression that
    /// computes it (``computed``). Throws why it cannot be: a custom policy, an expression
    /// that reads the source by a name it cannot tell (``SourceRenamer``; a computed
    /// attribute read any other way among them). (A decimal or a UUID is read as it is
    /// where the pass's scan finds every value of it written back as it is,
    /// ``carriesParsedValues``.)
    func composeBefore(_ mapping: MappingModel, destination: ObjectModel, policies: PolicyRegistry)
        throws(Refusal) -> (mapping: MappingModel, unsetToOnes: [String: Int])
    {
        let (old, middle) = (step.source, step.destination)
        guard mapping.sourceModel == middle.version else {
            throw Refusal("the step after reads \(mapping.sourceModel), not \(middle.version)")
        }
        if let entity = filters.keys.sorted().first {
            throw Refusal("it copies only the rows of \(entity) its filter selects, which before a step it cannot")
        }
        let renamer = try renamerBefore()
        let entityNames = namesBefore.entities
        let compiler = MappingCompiler(mapping, source: middle, destination: destination, policies: policies)
        var composed = mapping
        composed.sourceModel = old.version
        // The step after's mappings of entities this step adds, which make nothing.
        var emptied: [String] = []
        // Per entity mapping of the step after: the to-ones it sets to nil, object by
        // object, from a relationship this step adds (``withoutLookupsOfWhatItAdds``).
        var unsetToOnes: [String: Int] = [:]
        let linked = linkedRelationships(of: mapping, destination: destination, compiler: compiler)
        for (index, original) in mapping.entityMappings.enumerated() {
            let after = "entity mapping \(original.name) of the step after"
            if let policy = original.policy { throw Refusal("\(after) has a custom policy (\(policy))") }
            switch original.type {
            case .custom: throw Refusal("\(after) is a custom mapping")
            case .add:
                guard original.sourceEntity == nil, original.sourceExpression == nil else {
                    throw Refusal("\(after) adds objects but reads a source")
                }
                continue
            case .remove:
                guard let name = original.sourceEntity.flatMap({ entityNames[$0] }) else {
                    throw Refusal("\(after) removes an entity the step does not carry")
                }
                composed.entityMappings[index].sourceEntity = name
                continue
            case .copy, .transform: break
            }
            if let name = original.sourceEntity, entityNames[name] == nil, let added = makesNothing(original) {
                composed.entityMappings[index] = added
                emptied.append(original.name)
                continue
            }
            guard let name = original.sourceEntity, let renamed = entityNames[name],
                let to = original.destinationEntity.flatMap(destination.entity(named:))
            else { throw Refusal("\(after) reads an entity the step does not carry") }
            // (The rows of several entities of a table, read in key order, are not in the
            // same order before the renaming and after it.)
            if copiesAHierarchy,
                original.sourceExpression?.contains(MappingCompiler.fetchWithSubentitiesSelector) == true
            {
                throw Refusal("\(after) fetches sub-entities' rows, whose order the step changes")
            }
            var (written, unset) = withoutLookupsOfWhatItAdds(
                Self.listingEveryProperty(
                    of: to, in: destination, compiler.withImplicitMappings(original, middle.entity(named: name), to)),
                of: name, to: to, in: destination, among: mapping, at: index, linked: linked)
            if unset > 0 { unsetToOnes[original.name] = unset }
            written.sourceEntity = renamed
            if let expression = written.sourceExpression {
                guard let source = renamer.sourceExpression(expression, entity: name) else {
                    throw Refusal(
                        "\(after) fetches its source as \(expression), which cannot be read through the step (a predicate reading what the step computes or adds, or more than the standard fetch)"
                    )
                }
                written.sourceExpression = source
            }
            var unread: PropertyMapping?
            guard
                let readingBack = written.withEachPropertyMapping({ property in
                    var property = property
                    guard let expression = property.valueExpression else { return property }
                    let into = destination.allRelationships(of: to).first { $0.name == property.name }
                    guard let text = renamer.expression(expression, source: name, into: into) else {
                        unread = property
                        return nil
                    }
                    property.valueExpression = text
                    return property
                })
            else {
                let why = unread.map { renamer.whyNot($0.valueExpression ?? "", source: name) }
                throw Refusal("\(after) fills \(unread?.name ?? "a property"): \(why ?? "")")
            }
            composed.entityMappings[index] = readingBack
        }
        // (Nothing may look up what those make: the lookup would name a mapping that
        // reads no source.)
        for name in emptied {
            let quoted = ["\"\(name)\"", "'\(name)'"]
            for other in composed.entityMappings {
                let expressions =
                    [other.sourceExpression]
                    + (other.attributeMappings + other.relationshipMappings).map(\.valueExpression)
                if expressions.contains(where: { text in quoted.contains { text?.contains($0) == true } }) {
                    throw Refusal(
                        "entity mapping \(other.name) of the step after looks up what \(name) makes, from an entity the step adds"
                    )
                }
            }
        }
        return (composed, unsetToOnes)
    }

    /// What reads the names after the step (B) as the names before it (A), for the step
    /// after it: its renamings back, the defaults of what it adds, the expressions of what
    /// it computes. Throws where a value the step carries could change as it is written:
    /// the step after would read another value. (A decimal or a UUID is kept where the
    /// pass finds each of its values written back as it is, ``carriesParsedValues``.)
    func renamerBefore() throws(Refusal) -> SourceRenamer {
        let (old, middle) = (step.source, step.destination)
        for name in entities.keys.sorted() {
            if let attribute = old.allAttributes(of: old.entity(named: name)!).first(where: {
                properties[name]?[$0.name] != nil && !Self.readsAsWritten($0) && !Self.isParsedWhenRead($0)
            }) {
                throw Refusal(
                    "it carries \(name).\(attribute.name), a \(attribute.type.xcodeName) whose value writing may change"
                )
            }
        }
        let (entityNames, propertyNames) = namesBefore
        // What the step computes, each of its rows holds as its expression's value (as
        // writing converts it); a fetch's predicate reads it as the older attribute where
        // that is the value itself, or the same number.
        var values: [String: [String: FormatExpression]] = [:]
        var asTheyAre: [String: [String: SourceRenamer.Read]] = [:]
        for (from, attributes) in computed {
            let described = old.allAttributes(of: old.entity(named: from)!)
            for (attribute, text) in attributes {
                guard let expression = try? FormatExpression(parsing: text) else {
                    throw Refusal("\(from).\(attribute)'s expression does not parse")
                }
                let method = conversions[from]?[attribute]
                values[entities[from]!, default: [:]][attribute] = Self.converted(expression, by: method)
                if let name = EntityMappingRunner.copiedAttribute(expression),
                    let type = described.first(where: { $0.name == name })?.type,
                    let read = SourceRenamer.Read(name, type, convertedBy: method)
                {
                    asTheyAre[entities[from]!, default: [:]][attribute] = read
                }
            }
        }
        // What the step adds, each of its rows holds as its default.
        var defaults: [String: [String: Value]] = [:]
        for (name, names) in propertyNames {
            for attribute in middle.allAttributes(of: middle.entity(named: name)!)
            where names[attribute.name] == nil && values[name]?[attribute.name] == nil && !attribute.isTransient
                && Self.readsAsItsDefault(attribute)
            {
                defaults[name, default: [:]][attribute.name] = attribute.defaultValue ?? .null
            }
        }
        // What it makes unordered, each a set of the same members.
        var unordered: [String: Set<String>] = [:]
        for member in unorders {
            guard let entity = entities[member.entity], let name = properties[member.entity]?[member.property] else {
                continue
            }
            unordered[entity, default: []].insert(name)
        }
        return SourceRenamer(
            model: middle, entities: entityNames, properties: propertyNames, defaults: defaults, computed: values,
            readInPredicates: asTheyAre, unordered: unordered)
    }

    /// Whether the step carries an attribute whose values reading parses
    /// (``isParsedWhenRead(_:)``): a decimal, written back as the same double only where
    /// the value is one a Decimal holds (``AttributeCoercion``'s `keepsDecimal`); a UUID,
    /// written back as the same 16 bytes only where it is 16 bytes (text is read as upper
    /// case, and may be no UUID at all). A pass that reads the step's source in its place
    /// checks that of every value (``copiesExactly(_:)``), even in a store the run wrote.
    var carriesParsedValues: Bool {
        entities.keys.contains { name in
            step.source.allAttributes(of: step.source.entity(named: name)!).contains {
                Self.isParsedWhenRead($0) && properties[name]?[$0.name] != nil
            }
        }
    }

    /// Whether reading `attribute`'s column parses its value: a decimal (from a double's
    /// text), a UUID (from 16 bytes, or text).
    static func isParsedWhenRead(_ attribute: AttributeDescription) -> Bool {
        attribute.type == .decimal || attribute.type == .uuid
    }

    /// Whether `attribute`'s default is read back as it is written, a constant of the
    /// expression language: none, or an integer, a boolean, a double or text held as its
    /// type holds it (a float is rounded, a date is no constant, data is not written as a
    /// constant reads it).
    static func readsAsItsDefault(_ attribute: AttributeDescription) -> Bool {
        switch (attribute.type, attribute.defaultValue) {
        case (_, nil), (_, .null?): true
        case (.int16, .integer?), (.int32, .integer?), (.int64, .integer?), (.boolean, .bool?), (.double, .double?),
            (.string, .string?):
            true
        default: false
        }
    }

    /// Whether a value of `attribute`, read from a store that holds it in its own storage
    /// class and range, is written back unchanged: so of a float that a 32-bit float holds
    /// (which a store the run wrote holds, and ``copiesExactly(_:)`` checks a store from
    /// elsewhere holds), not of a decimal or a UUID (parsed). (A URI is read and written as
    /// its text, as a string is, and a transformable value as its bytes, as data is.)
    static func readsAsWritten(_ attribute: AttributeDescription) -> Bool {
        switch attribute.type {
        case .int16, .int32, .int64, .boolean, .double, .float, .date, .string, .uri, .binary, .transformable: true
        default: attribute.isTransient
        }
    }

    /// Whether the step, run on `store` (at its source version, written elsewhere), would
    /// write the rows it reads unchanged but for their names and keys, and pass its
    /// validation. One scan of each entity's rows finds what would not be so: a value
    /// stored in a class its type never is (``StoreValidator/damage(limit:)``), a broken
    /// rule of the source version, which are the step's own rules
    /// (``StoreValidator/attributeRules(_:value:nullness:)``; ill-formed text where a
    /// length is bounded), an integer outside its type, a boolean other than 0 or 1, a key
    /// that is not an integer naming a row, a required to-one without one. Then one-to-one
    /// partners that do not name each other, join table rows naming no row, and the counts
    /// of to-manys that have bounds (``StoreValidator/failures(limit:attributesChecked:)``).
    func copiesExactly(_ store: Store) throws -> Bool {
        let database = store.database
        func finds(_ sql: String) throws -> Bool { try database.prepare(sql).step() }
        let validator = StoreValidator(store: store)
        var knownKeys: [String: ClosedRange<Int64>?] = [:]
        // (A join table an entity's sub-entities share, checked once.)
        var joinsChecked: Set<String> = []
        var countsBounded = false
        for name in properties.keys.sorted() {
            guard let entity = store.model.entity(named: name), let layout = store.layout.entities[name] else {
                return false
            }
            var broken: [String] = []
            // Each column's class and range, told by one call for the row (``RowCheck``),
            // which takes a fraction of the time the comparisons that say the same in SQL
            // take (such as `x >= '' OR x <> CAST(x AS INTEGER)` for an integer).
            var checked: [(column: String, expectation: ColumnExpectation)] = []
            // (What the step drops, it does not read.)
            let carried = properties[name] ?? [:]
            let attributes = store.model.allAttributes(of: entity),
                relationships = store.model.allRelationships(of: entity)
            for attribute in attributes where !attribute.isTransient && carried[attribute.name] != nil {
                guard let column = layout.attributeColumns[attribute.name] else { continue }
                let storage: ColumnExpectation.Storage
                switch attribute.type {
                case .int16: storage = .integral(Int64(Int16.min)...Int64(Int16.max))
                case .int32: storage = .integral(Int64(Int32.min)...Int64(Int32.max))
                case .int64: storage = .integral(Int64.min...Int64.max)
                case .boolean: storage = .integral(0...1)
                case .double, .date: storage = .number
                // (A value a 32-bit float does not hold is rounded as the step writes it.)
                case .float: storage = .floatNumber
                // (Ill-formed text is copied as it is, but fails a bound on its length.)
                case .string, .uri: storage = attribute.minValue != nil || attribute.maxValue != nil ? .text : .anyText
                case .binary, .transformable: storage = .blob
                // (Read as a decimal and written back: the same double, where it is one.)
                case .decimal: storage = .decimal
                // (Read as a UUID's text and written back: the same 16 bytes.)
                case .uuid: storage = .uuid
                default: return false
                }
                checked.append((column, ColumnExpectation(storage, allowsNull: true)))
                broken += StoreValidator.attributeRules(attribute, value: column).map(\.condition)
            }
            if !checked.isEmpty {
                // (The columns stored last first: SQLite reads the row's header once.)
                let places = try database.columnPlaces(of: layout.table)
                checked.sort {
                    places[$0.column.uppercased(), default: -1] > places[$1.column.uppercased(), default: -1]
                }
                let check = RowCheck(checked.map(\.expectation))
                try database.register(check, as: "remodel_copied")
                broken.insert("NOT remodel_copied(\(checked.map(\.column).joined(separator: ", ")))", at: 0)
            }
            for relationship in relationships
            where !relationship.isTransient && carried[relationship.name] != nil {
                guard !relationship.isToMany else {
                    countsBounded = countsBounded || relationship.minCount > 0 || relationship.maxCount > 0
                    continue
                }
                guard let key = layout.toOneColumns[relationship.name]?.key,
                    let target = store.layout.entities[relationship.destination]
                else { return false }
                if !relationship.isOptional { broken.append("\(key) IS NULL") }
                // (A row of the destination or of one of its sub-entities.)
                let numbers = target.numberList
                let rows = try validator.everyKeyIsARow(of: target.table, numbers, known: &knownKeys)
                let missing = StoreValidator.namesNoRow(
                    key,
                    lookup:
                        "NOT EXISTS (SELECT 1 FROM \(target.table) d WHERE d.Z_PK = \(layout.table).\(key) AND d.Z_ENT IN (\(numbers)))",
                    keysThatAreRows: rows)
                broken.append("(\(key) IS NOT NULL AND (typeof(\(key)) <> 'integer' OR \(missing)))")
            }
            if !broken.isEmpty,
                try finds(
                    "SELECT 1 FROM \(layout.table) WHERE Z_ENT = \(layout.number) AND (\(broken.joined(separator: " OR "))) LIMIT 1"
                )
            {
                return false
            }
            // A one-to-one's two keys agree (the step links each pair from one side, which
            // unsets a partner the other side names).
            for relationship in relationships
            where !relationship.isToMany && !relationship.isTransient && carried[relationship.name] != nil {
                guard let inverse = store.model.inverse(of: relationship), !inverse.isToMany else { continue }
                guard let key = layout.toOneColumns[relationship.name]?.key,
                    let target = store.layout.entities[relationship.destination],
                    let back = target.toOneColumns[inverse.name]?.key
                else { return false }
                if try finds(
                    "SELECT 1 FROM \(layout.table) AS a JOIN \(target.table) AS b ON b.Z_PK = a.\(key) "
                        + "WHERE a.Z_ENT = \(layout.number) AND b.\(back) IS NOT a.Z_PK LIMIT 1")
                {
                    return false
                }
            }
            for relationship in relationships
            where relationship.isToMany && !relationship.isTransient && carried[relationship.name] != nil {
                guard let side = layout.joinTables[relationship.name] else { continue }
                guard let target = store.layout.entities[relationship.destination] else { return false }
                // (Either side may be a row of a sub-entity, which inherits the relationship
                // or is among its targets.)
                func missing(_ column: String, _ rows: StoreLayout.EntityLayout) -> String {
                    let numbers = rows.numberList
                    return
                        "\(column) IS NULL OR \(column) NOT IN (SELECT Z_PK FROM \(rows.table) WHERE Z_ENT IN (\(numbers)))"
                }
                // (Its owners are the rows of every entity that has it: the one that
                // declares it, and that one's sub-entities.)
                let declaring =
                    store.model.ancestors(of: entity).last {
                        store.model.allRelationships(of: $0).contains { $0.name == relationship.name }
                    }?.name ?? name
                guard let owners = store.layout.entities[declaring] else { return false }
                let check =
                    "SELECT 1 FROM \(side.table) WHERE \(missing(side.sourceColumn, owners)) OR \(missing(side.destinationColumn, target)) LIMIT 1"
                if joinsChecked.insert(check).inserted, try finds(check) { return false }
            }
        }
        return try !countsBounded || validator.failures(limit: 1).isEmpty
    }
}

/// Renames what expressions read of the source, from the names after a renaming step to
/// those before it: key paths from `$source` (through relationships, collection operators,
/// `SUBQUERY` variables), `valueForKey:` of `$source`, the relationship a
/// `destinationInstancesForSourceRelationshipNamed:` lookup names, and a source fetch's
/// entity and predicate. Nil for an expression that reads the source any other way (the
/// source object handed to a function, a key path on a value of unknown entity, a
/// `FETCH` in a property mapping, `$entityPolicy`, `$destination`): what it reads by name
/// cannot be told.
struct SourceRenamer {
    /// The version after the renaming step (B).
    let model: ObjectModel
    /// B entity → A entity.
    let entities: [String: String]
    /// Per B entity: B property → A property.
    let properties: [String: [String: String]]
    /// Per B entity: the attributes the renaming step adds, and the default every row of it
    /// holds, read as a constant.
    var defaults: [String: [String: Value]] = [:]
    /// Per B entity: the attributes the renaming step computes, each with its expression
    /// over an A object, which `$source.<attribute>` reads instead.
    var computed: [String: [String: FormatExpression]] = [:]
    /// Per B entity: the computed attributes a predicate evaluated on a row reads as an A
    /// attribute (``Read``).
    var readInPredicates: [String: [String: Read]] = [:]
    /// Per B entity: the to-manys the renaming step makes unordered, read through in the
    /// older version's order. Only a lookup of one into an unordered to-many reads it
    /// (``expression(_:source:into:)``: it finds the same objects, in no order that
    /// stays), and its count.
    var unordered: [String: Set<String>] = [:]

    /// A computed attribute whose value is an A attribute's: the same value (an integer
    /// widened to a wider integer), or the same number as another kind (an Integer 16 or
    /// 32 made a double, an Integer 16 a float: every such integer is exactly a double and
    /// a float, and the language compares numbers by value across kinds).
    struct Read {
        let attribute: String
        /// Whether only a number's comparisons with numbers read it so.
        let asANumber: Bool

        init?(_ attribute: String, _ type: AttributeType, convertedBy method: String?) {
            switch (method, type) {
            case (nil, _): asANumber = false
            case ("doubleValue", .int16), ("doubleValue", .int32), ("floatValue", .int16): asANumber = true
            default: return nil
            }
            self.attribute = attribute
        }
    }

    /// What stands for an entity's object in an expression.
    struct Scope {
        /// The entity of `$source`.
        var source: String?
        /// The entity of the object a predicate is evaluated on (a fetch's rows).
        var evaluated: String?
        /// `SUBQUERY` variables and their entities.
        var variables: [String: String] = [:]
    }

    /// Why ``expression(_:source:)`` cannot rename `text` (for `plan`): a key of
    /// `$source` the renaming step does not carry, a computed attribute read through, the
    /// source handed over whole; or, failing those, the expression as it is.
    func whyNot(_ text: String, source: String) -> String {
        guard let parsed = try? FormatParser(text).parseExpression() else { return "\(text) does not parse" }
        for key in Relabeling.keysRead(by: parsed).sorted() {
            if properties[source]?[key] == nil && defaults[source]?[key] == nil && computed[source]?[key] == nil {
                return "it reads \(source).\(key), which the step before does not carry from its source"
            }
            if unordered[source]?.contains(key) == true {
                return
                    "it reads \(source).\(key), which the step before makes unordered, in an order: read through, it would be the older version's (only a lookup into an unordered to-many, or a count, reads it)"
            }
        }
        var whole = false, throughComputed: String?
        parsed.forEachSubexpression { e in
            switch e.kind {
            case .keyPath(let operand?, let path) where path.count > 1:
                if case .variable("source") = operand.kind, computed[source]?[path[0]] != nil {
                    throughComputed = throughComputed ?? path[0]
                }
            case .functionCall(_, _, let arguments):
                whole = whole || arguments.contains { if case .variable("source") = $0.kind { true } else { false } }
            default: break
            }
        }
        if let key = throughComputed {
            return "it reads through \(source).\(key), which the step before computes"
        }
        if whole { return "it hands $source whole to a function, which would read the older version's names" }
        return "\(text) cannot be read through the step before"
    }

    /// A property mapping's expression, `$source` an instance of `source` (a B entity),
    /// filling `relationship` where it fills one. A lookup of the members of a to-many
    /// the step makes unordered (``unordered``) is read where `relationship` is an
    /// unordered to-many: it finds the same objects, which it holds in no order.
    func expression(_ text: String, source: String, into relationship: RelationshipDescription? = nil) -> String? {
        guard let parsed = try? FormatParser(text).parseExpression() else { return nil }
        var renamer = self
        if let relationship, relationship.isToMany, !relationship.isOrdered,
            let read = SQLLink.lookup(parsed)?.relationship, unordered[source]?.contains(read) == true
        {
            renamer.unordered[source]?.remove(read)
        }
        return renamer.rename(parsed, Scope(source: source))?.description
    }

    /// An entity mapping's source expression: the standard fetch of `entity` (a B entity),
    /// its entity and predicate renamed.
    func sourceExpression(_ text: String, entity: String) -> String? {
        guard let parsed = try? FormatParser(text).parseExpression(),
            case .fetch(let request, let context, let countOnly) = parsed.kind,
            case .functionCall(let target, let selector, var arguments) = request.kind,
            case .variable("manager") = target.kind, case .constant(.string(let name)) = selector.kind,
            [MappingCompiler.fetchSelector, MappingCompiler.fetchWithSubentitiesSelector].contains(name),
            arguments.count >= 2, case .constant(.string(let fetched)) = arguments[0].kind, fetched == entity,
            let renamed = entities[fetched], case .constant(.string(let text)) = arguments[1].kind,
            let predicate = try? FormatParser(text).parsePredicate(),
            let predicateRenamed = rename(predicate, Scope(evaluated: entity)),
            let context = rename(context, Scope()), let countOnly = rename(countOnly, Scope())
        else { return nil }
        arguments[0] = .constant(.string(renamed))
        arguments[1] = .constant(.string(predicateRenamed.description))
        let renamedRequest = FormatExpression(.functionCall(target: target, selector: selector, arguments: arguments))
        return FormatExpression(.fetch(request: renamedRequest, context: context, countOnly: countOnly)).description
    }

    func rename(_ predicate: FormatPredicate, _ scope: Scope) -> FormatPredicate? {
        if case .comparison(let comparison) = predicate.kind, let read = numberRead(comparison, scope) {
            return FormatPredicate(.comparison(read))
        }
        return predicate.mappingChildren({ rename($0, scope) }, predicates: { rename($0, scope) })
    }

    /// The comparisons that order or match numbers by value.
    private static let numberOperators: Set<ComparisonOperator> = [
        .lessThan, .lessThanOrEqualTo, .greaterThan, .greaterThanOrEqualTo, .equalTo, .notEqualTo, .in, .between
    ]

    /// `comparison`, on a row (`scope.evaluated`), of a computed attribute that is an A
    /// attribute's number (``Read/asANumber``) with numeric constants: the same
    /// comparison of the A attribute, which gives the same answer on every row (nil
    /// compares as nil, and numbers by value). Nil for any other comparison.
    private func numberRead(_ comparison: Comparison, _ scope: Scope) -> Comparison? {
        func read(_ e: FormatExpression) -> Read? {
            guard case .keyPath(nil, let path) = e.kind, path.count == 1, let entity = scope.evaluated,
                let read = readInPredicates[entity]?[path[0]], read.asANumber
            else { return nil }
            return read
        }
        func numeric(_ e: FormatExpression) -> Bool {
            switch e.kind {
            case .constant(.integer), .constant(.double): true
            case .aggregate(let elements): elements.allSatisfy(numeric)
            default: false
            }
        }
        guard comparison.modifier == .direct, comparison.options.isEmpty, Self.numberOperators.contains(comparison.op)
        else { return nil }
        var result = comparison
        if let read = read(comparison.lhs), numeric(comparison.rhs) {
            result.lhs = FormatExpression(.keyPath(operand: nil, path: [read.attribute]))
        } else if let read = read(comparison.rhs), numeric(comparison.lhs), comparison.op != .in,
            comparison.op != .between
        {
            result.rhs = FormatExpression(.keyPath(operand: nil, path: [read.attribute]))
        } else {
            return nil
        }
        return result
    }

    func rename(_ expression: FormatExpression, _ scope: Scope) -> FormatExpression? {
        func all(_ list: [FormatExpression]) -> [FormatExpression]? {
            let renamed = list.compactMap { rename($0, scope) }
            return renamed.count == list.count ? renamed : nil
        }
        switch expression.kind {
        case .constant, .anyKey, .evaluatedObject, .aggregate, .arithmetic, .negate, .function, .index, .cast, .ternary:
            return expression.mappingChildren({ rename($0, scope) }, predicates: { rename($0, scope) })
        case .variable(let name):
            // `$manager` and SUBQUERY variables as values; the source object handed over
            // whole is read by whatever takes it.
            return name == "manager" || scope.variables[name] != nil ? expression : nil
        case .keyPath(let operand, let path):
            if case .variable("manager")? = operand?.kind { return expression }
            // A key path read from an object of a known entity (`$source`, a SUBQUERY's
            // variable or result, a fetch's row), or a count of anything.
            var renamedOperand = operand
            if let operand, !Self.isVariable(operand) {
                guard let renamed = rename(operand, scope) else { return nil }
                renamedOperand = renamed
            }
            guard let entity = self.entity(of: operand, scope) else {
                return path == ["@count"] && renamedOperand != nil
                    ? FormatExpression(.keyPath(operand: renamedOperand, path: path)) : nil
            }
            if path.count == 1, let value = defaults[entity]?[path[0]] { return FormatExpression(.constant(value)) }
            if path.count == 1, case .variable("source")? = operand?.kind, let value = computed[entity]?[path[0]] {
                return value
            }
            if path.count == 1, operand == nil, let read = readInPredicates[entity]?[path[0]], !read.asANumber {
                return FormatExpression(.keyPath(operand: nil, path: [read.attribute]))
            }
            if path.count == 1, operand == nil, let value = computed[entity]?[path[0]] {
                // (A computed attribute read on a fetch's row: its expression, on the row.)
                return Self.onTheEvaluatedObject(value)
            }
            guard let renamed = renamePath(path, from: entity) else { return nil }
            return FormatExpression(.keyPath(operand: renamedOperand, path: renamed.path))
        case .subquery(let collection, let variable, let predicate):
            guard let renamed = rename(collection, scope), let entity = entity(of: collection, scope) else {
                return nil
            }
            var inner = scope
            inner.variables[variable] = entity
            return rename(predicate, inner).map {
                FormatExpression(.subquery(collection: renamed, variable: variable, predicate: $0))
            }
        case .functionCall(let target, let selectorExpression, let arguments):
            guard case .constant(.string(let selector)) = selectorExpression.kind else { return nil }
            func call(_ arguments: [FormatExpression]) -> FormatExpression {
                FormatExpression(.functionCall(target: target, selector: selectorExpression, arguments: arguments))
            }
            switch target.kind {
            case .variable("source"):
                // The source's value for a key or key path, told by name.
                guard ["valueForKey:", "valueForKeyPath:"].contains(selector), arguments.count == 1,
                    case .constant(.string(let key)) = arguments[0].kind, let entity = scope.source
                else { return nil }
                if let value = defaults[entity]?[key] { return FormatExpression(.constant(value)) }
                if let value = computed[entity]?[key] { return value }
                guard let renamed = renamePath(key.split(separator: ".").map(String.init), from: entity) else {
                    return nil
                }
                return call([.constant(.string(renamed.path.joined(separator: ".")))])
            case .variable("manager"):
                if selector == MappingInference.relationshipLookup, arguments.count == 2,
                    case .constant(.string(let name)) = arguments[0].kind, let entity = scope.source,
                    let renamed = properties[entity]?[name], let instances = rename(arguments[1], scope)
                {
                    return call([.constant(.string(renamed)), instances])
                }
                if MappingCompiler.lookupSelectors.contains(selector), arguments.count == 2 {
                    // The source object itself is looked up as it is.
                    if case .variable("source") = arguments[1].kind { return expression }
                    return rename(arguments[1], scope).map { call([arguments[0], $0]) }
                }
                return ["sourceContext", "destinationContext"].contains(selector) && arguments.isEmpty
                    ? expression : nil
            default:
                // A method of a value: its names are not the model's, unless it reads keys.
                guard !selector.hasPrefix("valueForKey"), let target = rename(target, scope),
                    let arguments = all(arguments)
                else { return nil }
                return FormatExpression(
                    .functionCall(target: target, selector: selectorExpression, arguments: arguments))
            }
        case .fetch, .assignment:
            return nil
        }
    }

    /// `path` read from an instance of `entity`, renamed: each property of an entity
    /// renamed and followed to its destination; a collection operator keeps the entity
    /// of the elements (`@count` ends it); past an attribute, keys of its value stay.
    /// Nil at a name the entity does not have.
    func renamePath(_ path: [String], from entity: String) -> (path: [String], entity: String?)? {
        var current: String? = entity
        var renamed: [String] = []
        for (index, component) in path.enumerated() {
            guard let name = current else {
                renamed.append(component)
                continue
            }
            if component.hasPrefix("@") {
                renamed.append(component)
                if component == "@count" { current = nil }
                continue
            }
            // (A to-many made unordered is read in no order only by its count.)
            guard let old = properties[name]?[component], let description = model.entity(named: name),
                unordered[name]?.contains(component) != true || path.dropFirst(index + 1).first == "@count"
            else { return nil }
            renamed.append(old)
            current = model.allRelationships(of: description).first { $0.name == component }?.destination
        }
        return (renamed, current)
    }

    /// The entity of the objects `expression` gives (nil: SELF, a fetch's row), when it
    /// is known: `$source`, a SUBQUERY's variable or result, a key path from one of those
    /// through relationships.
    private func entity(of expression: FormatExpression?, _ scope: Scope) -> String? {
        switch expression?.kind {
        case nil: return scope.evaluated
        case .variable("source")?: return scope.source
        case .variable(let name)?: return scope.variables[name]
        case .keyPath(let operand, let path)?:
            return entity(of: operand, scope).flatMap { renamePath(path, from: $0)?.entity }
        case .subquery(let collection, _, _)?: return entity(of: collection, scope)
        default: return nil
        }
    }

    /// `expression`, over `$source`, as the same expression over the object a predicate
    /// is evaluated on (a fetch's row): each key path from `$source` read from that object,
    /// `$source` itself `SELF`. Nil where it could then read something else: `SELF` or a
    /// key path read from it (in a mapping's expression, not the source), a variable other
    /// than `$source` (`$manager` is bound in a mapping, not in a fetch), `$source` in a
    /// `SUBQUERY`'s predicate (whose object is the element), a `FETCH`, an assignment.
    static func onTheEvaluatedObject(_ expression: FormatExpression) -> FormatExpression? {
        func predicate(_ p: FormatPredicate) -> FormatPredicate? {
            p.mappingChildren(onTheEvaluatedObject, predicates: predicate)
        }
        switch expression.kind {
        case .evaluatedObject, .keyPath(nil, _), .fetch, .assignment: return nil
        case .variable(let name): return name == "source" ? FormatExpression(.evaluatedObject) : nil
        case .keyPath(let operand?, let path):
            if case .variable("source") = operand.kind { return FormatExpression(.keyPath(operand: nil, path: path)) }
            return expression.mappingChildren(onTheEvaluatedObject, predicates: predicate)
        case .constant, .anyKey, .aggregate, .arithmetic, .negate, .function, .index, .functionCall, .cast, .ternary:
            return expression.mappingChildren(onTheEvaluatedObject, predicates: predicate)
        case .subquery(let collection, let variable, let inner):
            // (Its predicate as it is: reading its variable alone, not SELF.)
            var readsSelf = false
            inner.forEachSubexpression { e in
                switch e.kind {
                case .evaluatedObject, .keyPath(nil, _): readsSelf = true
                default: break
                }
            }
            guard let collection = onTheEvaluatedObject(collection), !readsSelf,
                inner.variableNames.allSatisfy({ $0 == variable })
            else { return nil }
            return FormatExpression(.subquery(collection: collection, variable: variable, predicate: inner))
        }
    }

    private static func isVariable(_ expression: FormatExpression) -> Bool {
        if case .variable = expression.kind { return true }
        return false
    }
}
