import CSQLite
import ExpressionLanguage
import Foundation
import ObjectGraph

/// A step that does nothing to the rows the step before it wrote but rename them
/// (docs/engine.md, "Steps run as one"): the step before can then write the newer
/// version itself, in one pass, and give the rows the two steps give one after the other.
///
/// A step B → C is such a relabeling when its mapping, inferred or a mapping file's read
/// in inference's terms (``inInferredTerms(_:from:to:)``: Xcode's copies are), is one where:
/// - each of its entity mappings is a copy or transform of a B entity to a C entity (an
///   `add` mapping, which makes nothing, and a `remove` mapping of an entity no row of
///   which is written are allowed too), with the standard fetch and no policy, of a
///   concrete entity; entities in hierarchies keep their table where both versions have
///   ancestors of one shape, but not their keys, which the step numbers anew in order
///   within each entity (``copiesAHierarchy``, ``copiesIntoAHierarchy``);
/// - it carries every stored property of the B entity (inherited ones too) to a C property described the same
///   way but for its name (type, optionality, bounds, default, validation predicates; a
///   relationship's cardinality, counts and inverse, between the renamed entities): the
///   values are then written unchanged, and every rule of the middle version is one of
///   the newer version, which the run checks. It may drop a property instead (a
///   relationship with its inverse): it then reads nothing of it (``dropped``). It runs
///   with the step after it, which reads nothing of it either; after a step that writes
///   it, only where writing it can neither fail nor break a rule
///   (``writesWithoutFail(_:_:from:in:)``), and never a relationship;
/// - no relationship has no inverse or holds data stored outside the store (one to an
///   entity with sub-entities is counted member entity by member entity,
///   ``countInAHierarchy(_:of:at:rows:in:layout:locate:)``); an ordered one is a to-many of a one-to-many between two
///   entities whose order the step keeps (``keepsItsOrder(_:of:_:)``: its members'
///   to-one set only through it, as inference maps it, or set after it), and no other
///   relationship is left without an expression;
///   one between an entity's own objects is no to-many that is its own inverse and
///   ordered or in a hierarchy (``linksOneByOne(_:in:_:)``; the counts of these are the
///   interpreter's, object by object, ``report(in:layout:locate:)``).
///
/// Made to compute (``init(_:computingWith:)``), it may also give a C attribute a value it
/// computes, where writing that value and reading it back gives the value (``computed``,
/// docs/engine.md "Steps that compute"): the step after reads it as its expression, or,
/// after the step whose mapping runs, it is computed from what that step writes.
///
/// Properties of the C entity the step does not fill keep their defaults, as they would;
/// each must pass its rules so (``defaultPassesItsRules(_:)``), since a pass that reads
/// the older version never checks the middle one.
struct Relabeling {
    let step: StoreMigrator.Step
    /// B entity → C entity, for the entities the step copies.
    private(set) var entities: [String: String] = [:]
    /// Per B entity: B property → C property.
    private(set) var properties: [String: [String: String]] = [:]
    /// Per B entity: the stored properties the step does not carry, and reads nothing of.
    private(set) var dropped: [String: Set<String>] = [:]
    /// Per B entity: its relationships in the order the step links them, object by object.
    private(set) var linkOrder: [String: [String]] = [:]
    /// Per B entity: the to-ones the step sets only through their inverses, ordered
    /// to-manys it fills (as inference maps them, with no expression: the ordered side
    /// alone says who belongs and in which order).
    private(set) var throughInverse: [String: Set<String>] = [:]
    /// Per B entity: where its copy or transform comes among the step's entity mappings,
    /// the order the step links their relationships in.
    private(set) var places: [String: Int] = [:]
    /// Whether an entity the step copies has a parent or sub-entities: the step numbers
    /// the rows of a table entity by entity, in the order of its mappings, so it keeps
    /// their keys only in order within each entity (``compose(_:source:policies:)``).
    private(set) var copiesAHierarchy = false
    /// Whether an entity it copies to is in a hierarchy (``copiesAHierarchy``): the step
    /// numbers the rows of each table entity by entity, in the order of its mappings.
    /// Where none is, each entity's rows are numbered 1, 2, 3… in its own table, in the
    /// order of their keys, which is the order the step before wrote them in: after a step,
    /// the pass writes them so (``compose(_:source:policies:)``); where one is, only where
    /// the step before writes the table's entities in that order (``numbersAsWritten(by:)``).
    private(set) var copiesIntoAHierarchy = false
    /// Per B entity: the C attributes the step computes (``computes(_:_:with:)``),
    /// each with its expression, `$source` a B object. Only a step made with the
    /// functions its expressions call computes any (docs/engine.md, "Steps that compute").
    private(set) var computed: [String: [String: String]] = [:]
    /// Per B entity: the computed C attributes whose values writing converts, each with
    /// the NSNumber method that converts it as the attribute reads it back
    /// (``Computation/readBack``).
    private(set) var conversions: [String: [String: String]] = [:]
    /// The ordered to-manys (B entity, relationship) whose members the step links before
    /// their owners, so that each owner's members come out in key order
    /// (``putsInKeyOrder(_:of:_:)``): the step after reads them in the order it reads
    /// where that order is the key order, which the pass checks (``holdsInKeyOrder``).
    private(set) var inKeyOrder: Set<Member> = []
    /// The ordered to-manys (B entity, relationship) whose order the step keeps
    /// (``keepsItsOrder(_:of:_:)``): it links each owner's members in the order the store
    /// gives (by position, then key), so they come out at 1, 2, 3… whatever positions
    /// they had. After a step, the pass gives them those positions (``givePositions``).
    private(set) var keptInOrder: Set<Member> = []
    /// The ordered to-manys (B entity, relationship) between an entity's own objects whose
    /// to-one the step links too (a folder's ordered `children` and its `parent`, as an
    /// Xcode mapping model maps them), object by object in key order: an owner's members
    /// whose own link ran first (keys below the owner's, or up to it where the to-one is
    /// linked before the to-many: the value) join its end in key order; the owner's link
    /// then adds the others in the order the store gives. Before a step, the pass reads
    /// them through where the store holds them so (``holdsInKeyOrder``); after one, it
    /// numbers them so (``givePositions``).
    private(set) var membersLinkedFirst: [Member: Bool] = [:]
    /// Whether the step gives an ordered to-many an order of its own (``inKeyOrder``,
    /// ``membersLinkedFirst``): read through, the store must hold it so already
    /// (``holdsInKeyOrder``).
    var ordersItsOwnWay: Bool { !inKeyOrder.isEmpty || !membersLinkedFirst.isEmpty }
    /// Whether, written through, the pass gives an ordered to-many the positions the step
    /// would (``givePositions``): an order of its own, or 1, 2, 3… (``keptInOrder``).
    var givesPositions: Bool { ordersItsOwnWay || !keptInOrder.isEmpty }
    /// The C relationships the step links through a chain of B relationships
    /// (``ComputedLink``): read through before a step that reads nothing of them, which
    /// the pass checks, counted as the step counts them; never written through.
    private(set) var computedLinks: Set<ComputedLink> = []
    /// The ordered one-to-manys (B entity, relationship) the step makes unordered: the
    /// same members, in no order. After a step, the pass writes them unordered as the
    /// step would; before one, the step after would read them in the older version's
    /// order, so the step is not read through (``composeBefore(_:destination:policies:)``).
    private(set) var unorders: Set<Member> = []
    /// Per B entity: the predicate of the fetch that selects the rows the step copies,
    /// where it copies only some (``filter(of:_:in:)``). After the step whose mapping runs,
    /// and right after it, the pass fetches the rows that both steps' filters select
    /// (``composedFilter(of:after:from:in:layout:functions:)``); never before a step.
    private(set) var filters: [String: String] = [:]

    /// A property of an entity of the version the step reads (B).
    struct Member: Hashable {
        let entity: String, property: String
        init(_ entity: String, _ property: String) { (self.entity, self.property) = (entity, property) }
    }

    /// Why a step is no relabeling, or cannot run in one pass with the step beside it:
    /// what `mapping-migrate plan` says of a step that runs apart from the one before it.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The step as a relabeling; with `functions` (those its expressions call), one that
    /// may also compute attributes (``computed``). Throws why it is none.
    init(_ step: StoreMigrator.Step, computingWith functions: FunctionRegistry? = nil) throws(Refusal) {
        self.step = step
        let (middle, new) = (step.source, step.destination)
        let mappings =
            step.isInferred ? step.mapping : Self.inInferredTerms(step.mapping, from: middle, to: new)
        var removed: Set<String> = []
        // The links through chains, with the entity mapping each looks up in and its own.
        var linksToCheck: [(link: ComputedLink, mapping: String, name: String)] = []
        // (The older version's layout, for the computed attributes' translations.)
        var layout: StoreLayout?
        for mapping in mappings.entityMappings {
            let named = "entity mapping \(mapping.name)"
            if let policy = mapping.policy { throw Refusal("\(named) has a custom policy (\(policy))") }
            switch mapping.type {
            case .add: continue
            case .remove:
                if let entity = mapping.sourceEntity { removed.insert(entity) }
                continue
            case .copy, .transform: break
            case .custom: throw Refusal("\(named) is a custom mapping")
            }
            guard let from = mapping.sourceEntity.flatMap(middle.entity(named:)),
                let to = mapping.destinationEntity.flatMap(new.entity(named:))
            else { throw Refusal("\(named) names no entity of both versions") }
            guard !from.isAbstract, !to.isAbstract else { throw Refusal("\(named) maps an abstract entity") }
            if mapping.sourceExpression != MappingInference.standardFetch(of: from.name) {
                // (Made to compute, it may filter: Relabeling+Filters.)
                guard functions != nil, let predicate = Self.filter(of: mapping.sourceExpression, from, in: middle)
                else {
                    throw Refusal(
                        "\(named) does not fetch every \(from.name) (its source expression filters or reads more)")
                }
                filters[from.name] = predicate
            }
            guard entities.updateValue(to.name, forKey: from.name) == nil else {
                throw Refusal("\(from.name) has more than one entity mapping: the step makes several objects of one")
            }
            guard new.allAttributes(of: to).allSatisfy({ !$0.allowsExternalBinaryDataStorage }) else {
                throw Refusal("\(to.name) stores binary data outside the store")
            }
            if !Self.standsAlone(from, in: middle) || !Self.standsAlone(to, in: new) { copiesAHierarchy = true }
            if !Self.standsAlone(to, in: new) { copiesIntoAHierarchy = true }
            let (fromAttributes, toAttributes) = (middle.allAttributes(of: from), new.allAttributes(of: to))
            let (fromRelationships, toRelationships) = (middle.allRelationships(of: from), new.allRelationships(of: to))
            var names: [String: String] = [:]
            var computes: [String: String] = [:]
            for property in mapping.attributeMappings {
                guard let expression = property.valueExpression else { continue }
                guard let attribute = toAttributes.first(where: { $0.name == property.name }) else {
                    throw Refusal("\(named) maps \(property.name), which \(to.name) has no attribute of")
                }
                if let old = fromAttributes.first(where: { expression == MappingInference.attributeRead($0.name) }),
                    Self.same(old, attribute), names[old.name] == nil
                {
                    names[old.name] = attribute.name
                    continue
                }
                guard let functions else { throw Refusal("\(named) computes \(attribute.name)") }
                if layout == nil { layout = StoreLayout(model: middle) }
                var translator = Self.translator(of: from, in: layout!, functions: functions)
                guard let computation = Self.computes(expression, attribute, with: &translator) else {
                    throw Refusal(
                        "\(named) computes \(attribute.name) as \(expression), which SQL cannot say exactly, or whose value the version in between keeps otherwise"
                    )
                }
                computes[attribute.name] = expression
                if let method = computation.readBack { conversions[from.name, default: [:]][attribute.name] = method }
            }
            if !computes.isEmpty { computed[from.name] = computes }
            var links: Set<String> = []
            for property in mapping.relationshipMappings where property.valueExpression != nil {
                guard
                    let old = fromRelationships.first(where: {
                        property.valueExpression == MappingInference.relationshipRead($0.name)
                    }),
                    toRelationships.contains(where: { $0.name == property.name }),
                    names.updateValue(property.name, forKey: old.name) == nil
                else {
                    // (Made to compute, it may link one through a chain: Relabeling+Links.)
                    if functions != nil, let (link, target) = Self.computedLink(property, from: from, to: to, in: new),
                        links.insert(link.relationship).inserted
                    {
                        computedLinks.insert(link)
                        linksToCheck.append((link, target, mapping.name))
                        continue
                    }
                    throw Refusal(
                        "\(named) links \(property.name) by \(property.valueExpression ?? ""), not to what one relationship's targets become"
                    )
                }
                linkOrder[from.name, default: []].append(old.name)
            }
            // A to-one or an unordered to-many with no expression whose inverse is an
            // ordered to-many is carried through that inverse, if the step fills it
            // (checked with the relationships, below); any other relationship with no
            // expression is not carried.
            for property in mapping.relationshipMappings where property.valueExpression == nil {
                guard let relationship = toRelationships.first(where: { $0.name == property.name }),
                    let old = fromRelationships.first(where: {
                        $0.name == (relationship.renamingIdentifier ?? relationship.name)
                    }),
                    !old.isOrdered, let inverse = old.inverse,
                    middle.entity(named: old.destination).flatMap({ targets in
                        middle.allRelationships(of: targets).first { $0.name == inverse }
                    })?.isOrdered == true
                else { continue }
                guard names.updateValue(property.name, forKey: old.name) == nil else {
                    throw Refusal("\(named) fills \(old.name)'s value in two properties")
                }
                throughInverse[from.name, default: []].insert(old.name)
            }
            let stored =
                fromAttributes.filter { !$0.isTransient }.map(\.name)
                + fromRelationships.filter { !$0.isTransient }.map(\.name)
            let unmapped = stored.filter { names[$0] == nil }
            if !unmapped.isEmpty { dropped[from.name] = Set(unmapped) }
            // What the C entity adds keeps its default, which must pass C's rules: a pass
            // that reads the newer version without writing it checks none of them.
            let filled = Set(names.values).union(computes.keys).union(links)
            if let added = toAttributes.first(where: { a in
                !a.isTransient && !filled.contains(a.name) && !Self.defaultPassesItsRules(a)
            }) {
                throw Refusal("\(to.name).\(added.name), which it does not fill, might break a rule with its default")
            }
            if let added = toRelationships.first(where: { r in
                !r.isTransient && !filled.contains(r.name) && !Self.passesItsRulesEmpty(r)
            }) {
                throw Refusal("\(to.name).\(added.name), which it does not fill, is required")
            }
            // (Uniqueness constraints, carried but not enforced, change no row: a version
            // may add, drop or change them. docs/model-format.md)
            guard filled.count == names.count + computes.count + links.count else {
                throw Refusal("\(named) fills one attribute of \(to.name) twice")
            }
            properties[from.name] = names
        }
        guard removed.isDisjoint(with: entities.keys) else {
            throw Refusal("it both removes and copies \(removed.intersection(entities.keys).sorted()[0])")
        }
        // (Rows that change table are numbered anew, entity by entity, in the order of
        // their keys: the step after reads them in that order either way.)
        if !Self.sameHierarchies(entities, middle, new) { copiesAHierarchy = true }
        places = Dictionary(
            mappings.entityMappings.enumerated().compactMap { index, mapping in
                mapping.type == .copy || mapping.type == .transform ? mapping.sourceEntity.map { ($0, index) } : nil
            }, uniquingKeysWith: { first, _ in first })
        try checkComputedLinks(linksToCheck)
        // Each relationship between the renamed entities, shaped as it was.
        for (name, names) in properties.sorted(by: { $0.key < $1.key }) {
            let from = middle.entity(named: name)!, to = new.entity(named: entities[name]!)!
            let toRelationships = new.allRelationships(of: to)
            for old in middle.allRelationships(of: from) where !old.isTransient {
                let described = "\(name).\(old.name)"
                guard names[old.name] != nil else {
                    // Dropped with its inverse (or its inverse's entity), or not at all.
                    if let inverse = old.inverse, properties[old.destination]?[inverse] != nil {
                        throw Refusal("it drops \(described) but keeps its inverse")
                    }
                    continue
                }
                guard let relationship = toRelationships.first(where: { $0.name == names[old.name] }) else {
                    throw Refusal("it carries \(described) to no relationship")
                }
                // (Its targets in the order of their keys the step keeps, or puts them in;
                // or in no order, made unordered.)
                let unordered = old.isOrdered && !relationship.isOrdered
                let linkedFirst = unordered ? nil : membersLinkedFirst(old, of: from, middle)
                let reordered =
                    old.isOrdered && !unordered && linkedFirst == nil && !keepsItsOrder(old, of: from, middle)
                guard let inverse = old.inverse else { throw Refusal("\(described) has no inverse") }
                guard old.destination != name || Self.linksOneByOne(old, in: from, middle) else {
                    throw Refusal("\(described) is its own inverse, a to-many ordered or in a hierarchy")
                }
                guard let targets = middle.entity(named: old.destination) else {
                    throw Refusal("\(described) targets no entity of \(middle.version)")
                }
                var kept = relationship
                if unordered { kept.isOrdered = true }
                guard relationship.destination == entities[old.destination],
                    relationship.inverse == properties[old.destination]?[inverse], Self.same(old, kept)
                else { throw Refusal("it changes \(described) otherwise than by its names") }
                if unordered {
                    guard old.destination != name,
                        middle.allRelationships(of: targets).first(where: { $0.name == inverse })?.isToMany == false
                    else {
                        throw Refusal("it makes \(described) unordered, which is no one-to-many between two entities")
                    }
                    unorders.insert(Member(name, old.name))
                }
                guard !reordered || putsInKeyOrder(old, of: from, middle) else {
                    throw Refusal("\(described) is ordered, and the step may change its order")
                }
                // (Set through its inverse: that inverse an ordered to-many the step fills.)
                guard
                    throughInverse[name]?.contains(old.name) != true
                        || (middle.allRelationships(of: targets).first { $0.name == inverse }.map {
                            $0.isToMany && $0.isOrdered && throughInverse[targets.name]?.contains(inverse) != true
                        } ?? false)
                else {
                    throw Refusal("it sets \(described) only through its inverse, which is no ordered to-many it fills")
                }
                if reordered { inKeyOrder.insert(Member(name, old.name)) }
                if let linkedFirst {
                    membersLinkedFirst[Member(name, old.name)] = linkedFirst
                } else if old.isOrdered && !unordered && !reordered {
                    keptInOrder.insert(Member(name, old.name))
                }
            }
        }
    }

    /// `mapping`, a mapping file's (B → C), with each copy or transform written as
    /// inference writes it wherever it says the same thing: its implicit property mappings
    /// written out; ``fetchesEveryInstance(_:of:)`` of its source entity as the standard
    /// fetch; an attribute read as `$source.a` (or by `valueForKey:`) as inference reads
    /// it; a relationship's targets looked up by the source relationship, or through the
    /// copy or transform that makes them from the relationship's targets (as Xcode writes
    /// it), as inference looks them up. Anything else is left as written, which no
    /// relabeling is.
    static func inInferredTerms(_ mapping: MappingModel, from middle: ObjectModel, to new: ObjectModel)
        -> MappingModel
    {
        let compiler = MappingCompiler(mapping, source: middle, destination: new, policies: PolicyRegistry())
        let copies = mapping.entityMappings.filter { $0.type == .copy || $0.type == .transform }
        func parsed(_ text: String?) -> FormatExpression? { text.flatMap { try? FormatExpression(parsing: $0) } }
        var result = mapping
        for (index, original) in mapping.entityMappings.enumerated()
        where original.type == .copy || original.type == .transform {
            guard let from = original.sourceEntity.flatMap(middle.entity(named:)) else { continue }
            var written = compiler.withImplicitMappings(
                original, from, original.destinationEntity.flatMap(new.entity(named:)))
            if Self.fetchesEveryInstance(written.sourceExpression, of: from.name) {
                written.sourceExpression = MappingInference.standardFetch(of: from.name)
            }
            for i in written.attributeMappings.indices {
                guard let read = parsed(written.attributeMappings[i].valueExpression),
                    let name = EntityMappingRunner.copiedAttribute(read)
                else { continue }
                written.attributeMappings[i].valueExpression = MappingInference.attributeRead(name)
            }
            for i in written.relationshipMappings.indices {
                guard let lookup = parsed(written.relationshipMappings[i].valueExpression).flatMap(SQLLink.lookup),
                    let name = lookup.relationship,
                    let targets = middle.allRelationships(of: from).first(where: { $0.name == name })?.destination
                else { continue }
                let same =
                    lookup.lookup == MappingInference.relationshipLookup
                    ? lookup.argument == name
                    : copies.filter { $0.name == lookup.argument }.map(\.sourceEntity) == [targets]
                if same { written.relationshipMappings[i].valueExpression = MappingInference.relationshipRead(name) }
            }
            result.entityMappings[index] = written
        }
        return result
    }

    /// Whether `expression` is a source expression that reads every instance of `entity`,
    /// and only those (its sub-entities', were there any, left out): none, or
    /// `FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:",
    /// "<entity>", "TRUEPREDICATE"), $manager.sourceContext, NO)`, the context also as
    /// `FUNCTION($manager, "sourceContext")`.
    static func fetchesEveryInstance(_ expression: String?, of entity: String) -> Bool {
        guard let expression else { return true }
        guard let parsed = try? FormatExpression(parsing: expression),
            let fetch = MappingCompiler.standardFetch(parsed), fetch.entity == entity, !fetch.includesSubentities,
            case .constant(true)? = (try? FormatPredicate(parsing: fetch.predicate))?.kind
        else { return false }
        return isTheSourceContext(fetch.context)
    }

    /// Whether `context` is the migration's source context: `$manager.sourceContext`, or
    /// `FUNCTION($manager, "sourceContext")`.
    static func isTheSourceContext(_ context: FormatExpression) -> Bool {
        switch context.kind {
        case .keyPath(let manager?, ["sourceContext"]):
            if case .variable("manager") = manager.kind { return true }
        case .functionCall(let manager, let selector, let arguments) where arguments.isEmpty:
            if case .variable("manager") = manager.kind, selector.constantString == "sourceContext" { return true }
        default: break
        }
        return false
    }

    /// Where the step links a to-many `relationship` of `entity` and its inverse to-one
    /// between objects of `entity`, in its mapping, object by object in key order: the SQL
    /// condition (of a member's key and its owner's) that the owner gains that member when
    /// its to-many is linked. From the owner itself on where the to-many is linked first,
    /// after it where second (the pairs before it were made from the other side); always
    /// where the to-one is set only through the to-many (``throughInverse``). Nil where
    /// the step links the to-many nowhere.
    func gains(linking relationship: String, and inverse: String, of entity: String) -> ((String, String) -> String)? {
        let order = linkOrder[entity] ?? []
        guard let own = order.firstIndex(of: relationship) else { return nil }
        // (Its own inverse, a to-many: each owner's link adds the rows that name it first,
        // as the context reads it, and no other's adds any.)
        if relationship == inverse { return { member, _ in "\(member) IS NOT NULL" } }
        if let other = order.firstIndex(of: inverse) {
            let comparison = own < other ? ">=" : ">"
            return { member, owner in "\(member) \(comparison) \(owner)" }
        }
        guard throughInverse[entity]?.contains(inverse) == true else { return nil }
        return { member, _ in "\(member) IS NOT NULL" }
    }

    /// Whether `relationship`, between objects of `entity`, is one whose links the step
    /// makes and counts as ``report(in:layout:locate:)`` tells them: to-many one way or
    /// both; a one-to-one (a node's `next` and `previous`, or a person's `spouse`, its own
    /// inverse), each side counted for every instance; or an unordered to-many that is its
    /// own inverse (a person's `friends`) of an entity alone in its table, whose members
    /// a context reads from the join table rows that name the owner first, and links so:
    /// each owner with a member counted (``gains(linking:and:of:)``). A one-to-one's
    /// partners are set and unset object by object, which takes a partner from an earlier
    /// object where two keys disagree: a store from elsewhere is read through only where
    /// they agree (``copiesExactly(_:)``), and a store the run wrote holds no others.
    private static func linksOneByOne(
        _ relationship: RelationshipDescription, in entity: EntityDescription, _ model: ObjectModel
    ) -> Bool {
        guard let name = relationship.inverse, model.allRelationships(of: entity).contains(where: { $0.name == name })
        else { return false }
        guard name == relationship.name, relationship.isToMany else { return true }
        return !relationship.isOrdered && entity.parent == nil
            && model.descendants(of: entity, includingSelf: false).isEmpty
    }

    /// Whether the step puts the members of the ordered to-many `relationship` of
    /// `entity` in key order: a one-to-many between two entities whose members' mapping
    /// comes before their owners' and sets their to-one (as an Xcode mapping model whose
    /// members' entity sorts first has it), each member joining its owner's end in key
    /// order, whatever order the store gave; the owners' to-many, set after, adds nothing.
    private func putsInKeyOrder(
        _ relationship: RelationshipDescription, of entity: EntityDescription, _ model: ObjectModel
    ) -> Bool {
        guard relationship.destination != entity.name, let name = relationship.inverse,
            let members = model.entity(named: relationship.destination),
            model.allRelationships(of: members).first(where: { $0.name == name })?.isToMany == false,
            linkOrder[members.name]?.contains(name) == true, let owners = places[entity.name],
            let others = places[members.name],
            // (Members of several mappings would join mapping after mapping.)
            model.descendants(of: members, includingSelf: false).allSatisfy({ places[$0.name] == nil })
        else { return false }
        return others < owners
    }

    /// Whether the ordered to-many `relationship` of `entity` comes out of the step in the
    /// order it goes in: a one-to-many between two entities whose members' to-one the step
    /// sets only through it (``throughInverse``), or whose owners' mapping comes
    /// (``places``) before its members'. The step sets the owners' to-many in the order the
    /// store gives, and each member's to-one set after it keeps its place; were the
    /// members linked first, each would join its owner's end in key order, whatever order
    /// the store gave. So too a many-to-many between two entities ordered on this side
    /// alone, whose owners' mapping comes before its members' (each entity a mapping of
    /// its own): the members' links, after, find every pair made.
    private func keepsItsOrder(
        _ relationship: RelationshipDescription, of entity: EntityDescription, _ model: ObjectModel
    ) -> Bool {
        guard let name = relationship.inverse, let members = model.entity(named: relationship.destination),
            let inverse = model.allRelationships(of: members).first(where: { $0.name == name })
        else { return false }
        if inverse.isToMany {
            guard !inverse.isOrdered, relationship.destination != entity.name,
                model.descendants(of: members, includingSelf: false).allSatisfy({ places[$0.name] == nil }),
                model.descendants(of: entity, includingSelf: false).allSatisfy({ places[$0.name] == nil })
            else { return false }
            if throughInverse[members.name]?.contains(name) == true { return true }
            guard let owners = places[entity.name], let others = places[members.name] else { return false }
            return owners < others
        }
        // (Between an entity's own objects, only where the members' to-one is set through
        // it: their owners are linked in key order, and each member's own link sets only
        // its own members.)
        guard relationship.destination != entity.name else {
            return throughInverse[entity.name]?.contains(name) == true
        }
        // (Members of several entities, a mapping each, are each linked so.)
        let kinds = model.descendants(of: members).map(\.name).filter { places[$0] != nil }
        guard let owners = places[entity.name], !kinds.isEmpty else {
            return throughInverse[members.name]?.contains(name) == true
        }
        return kinds.allSatisfy { throughInverse[$0]?.contains(name) == true || owners < places[$0]! }
    }

    /// For an ordered to-many `relationship` of `entity` between its own objects whose
    /// to-one the step links too, in the same mapping (``membersLinkedFirst``): whether the
    /// to-one is linked first, so that an owner's own link puts it among its members linked
    /// first. Nil for any other relationship, and where the entity shares its table with
    /// another the step copies (rows of several mappings, linked mapping after mapping).
    private func membersLinkedFirst(
        _ relationship: RelationshipDescription, of entity: EntityDescription, _ model: ObjectModel
    ) -> Bool? {
        guard relationship.isOrdered, relationship.destination == entity.name, let name = relationship.inverse,
            model.allRelationships(of: entity).first(where: { $0.name == name })?.isToMany == false,
            let order = linkOrder[entity.name], let own = order.firstIndex(of: relationship.name),
            let other = order.firstIndex(of: name),
            model.descendants(of: model.rootEntity(of: entity)).allSatisfy({
                $0.name == entity.name || places[$0.name] == nil
            })
        else { return nil }
        return other < own
    }

    /// Whether the step numbers the rows the step before writes (by `mapping`, to B) as
    /// that step numbers them, where it copies entities into a hierarchy
    /// (``copiesIntoAHierarchy``): it numbers the rows of each C table entity after
    /// entity, in the order of its mappings (``places``), and each entity's rows in the
    /// order of their keys. So where the step before writes each table's rows entity after
    /// entity in that order too, each entity's rows by mappings in a row, a pass that
    /// writes C at once gives every row the key the step would.
    private func numbersAsWritten(by mapping: MappingModel) -> Bool {
        let new = step.destination
        // Per C table: the B entity written last, and its place among the step's mappings.
        var last: [String: (entity: String, place: Int)] = [:]
        for written in mapping.entityMappings where written.sourceEntity != nil {
            guard let made = written.destinationEntity, let to = entities[made].flatMap(new.entity(named:)) else {
                continue
            }
            guard let place = places[made] else { return false }
            let table = new.ancestors(of: to).last?.name ?? to.name
            if let previous = last[table] {
                if previous.entity == made { continue }
                guard previous.place < place else { return false }
            }
            last[table] = (made, place)
        }
        return true
    }

    /// Whether each entity of `entities` (B → C) has ancestors of one shape in both
    /// versions: as many, each B ancestor always the same C one (and a copied one, the
    /// one it is copied to). Its rows then keep their table (the root's) and their
    /// inherited properties.
    private static func sameHierarchies(_ entities: [String: String], _ middle: ObjectModel, _ new: ObjectModel)
        -> Bool
    {
        var parents: [String: String] = [:]
        for (b, c) in entities {
            guard let from = middle.entity(named: b), let to = new.entity(named: c) else { return false }
            let (above, aboveTo) = (middle.ancestors(of: from), new.ancestors(of: to))
            guard above.count == aboveTo.count else { return false }
            for (x, y) in zip(above, aboveTo) {
                guard parents.updateValue(y.name, forKey: x.name) ?? y.name == y.name,
                    entities[x.name] ?? y.name == y.name
                else { return false }
            }
        }
        return true
    }

    /// Whether an attribute the step does not fill passes its rules with its default: no
    /// bounds or validation predicates, and a default where it is required.
    static func defaultPassesItsRules(_ attribute: AttributeDescription) -> Bool {
        hasNoBounds(attribute) && (attribute.isOptional || attribute.defaultValue != nil)
    }

    /// Whether a relationship the step does not fill passes its rules with no
    /// destination, as the validation has them (``StoreValidator``, and a save's): an
    /// optional to-one, and a to-many that is optional or has no minimum (Xcode's
    /// non-optional to-many with a minimum of 0 may be empty).
    static func passesItsRulesEmpty(_ relationship: RelationshipDescription) -> Bool {
        relationship.isOptional || (relationship.isToMany && relationship.minCount == 0)
    }

    /// No bounds and no validation predicates: no value of its type breaks a rule of it.
    private static func hasNoBounds(_ attribute: AttributeDescription) -> Bool {
        attribute.minValue == nil && attribute.maxValue == nil && attribute.validationPredicates.isEmpty
    }

    /// Not in a hierarchy: its rows alone in its table.
    static func standsAlone(_ entity: EntityDescription, in model: ObjectModel) -> Bool {
        entity.parent == nil && !entity.isAbstract && model.subentities(of: entity).isEmpty
    }

    /// Whether `new` is `old` under another name: the same values, the same rules.
    static func same(_ old: AttributeDescription, _ new: AttributeDescription) -> Bool {
        func unnamed(_ attribute: AttributeDescription) -> AttributeDescription {
            var attribute = attribute
            attribute.name = ""
            attribute.renamingIdentifier = nil
            attribute.versionHashModifier = nil
            attribute.userInfo = [:]
            attribute.preservesValueInHistoryOnDeletion = false
            return attribute
        }
        return !old.isTransient && !old.allowsExternalBinaryDataStorage && old.derivationExpression == nil
            && unnamed(old) == unnamed(new)
    }

    /// Whether `new` is `old` under another name, its destination and inverse renamed too
    /// (checked by the caller); ordered or not alike, where the caller allows order
    /// (``keepsItsOrder``).
    static func same(_ old: RelationshipDescription, _ new: RelationshipDescription) -> Bool {
        func unnamed(_ relationship: RelationshipDescription) -> RelationshipDescription {
            var relationship = relationship
            relationship.name = ""
            relationship.destination = ""
            relationship.inverse = nil
            relationship.renamingIdentifier = nil
            relationship.versionHashModifier = nil
            relationship.userInfo = [:]
            relationship.deleteRule = .nullify
            return relationship
        }
        return !old.isTransient && unnamed(old) == unnamed(new)
    }

    /// `mapping`, the step before (`source` → B), writing C instead: each entity mapping's
    /// destination entity and properties renamed, its implicit property mappings written
    /// out, what the step computes computed from what the step before writes (each
    /// `$source.<attribute>` its expression there), and every C property it does not fill
    /// listed without an expression, so that it keeps its default (the default B gives,
    /// which is the same). With it, what the pass must check of its source (in `source`'s
    /// names): that each attribute the step before writes and this one reads to compute,
    /// or drops, is written as it is read back and without fail
    /// (``computes(_:_:with:)``). Throws why it cannot be composed: a custom policy, an
    /// entity the step does not carry, an expression that reads the destination side
    /// (`$destination`, `$entityPolicy`, a destination name) where names change, a computed
    /// value that reads more than attributes.
    func compose(_ mapping: MappingModel, source: ObjectModel, policies: PolicyRegistry) throws(Refusal)
        -> (mapping: MappingModel, checks: [ComputedValue], counts: [MiddleCount])
    {
        let (middle, new) = (step.source, step.destination)
        guard mapping.destinationModel == middle.version else {
            throw Refusal("the step before writes \(mapping.destinationModel), not \(middle.version)")
        }
        guard !copiesIntoAHierarchy || numbersAsWritten(by: mapping) else {
            throw Refusal(
                "it copies entities into a hierarchy in another order than \(mapping.sourceModel) → \(middle.version) writes them"
            )
        }
        if let link = computedLinks.sorted(by: { ($0.entity, $0.relationship) < ($1.entity, $1.relationship) }).first {
            throw Refusal(
                "it links \(entities[link.entity]!).\(link.relationship) through $source.\(link.path.joined(separator: ".")), which after a step it cannot"
            )
        }
        // (An ordered to-many the step puts in key order is written in the step before's
        // order, then put in key order: ``givePositions(in:layout:locate:)``.)
        var checks: [ComputedValue] = []
        // (What the step's filters leave behind: the step before's objects, counted.)
        var counts: [MiddleCount] = []
        var layout: StoreLayout?
        let compiler = MappingCompiler(mapping, source: source, destination: middle, policies: policies)
        var composed = mapping
        composed.destinationModel = new.version
        for (index, original) in mapping.entityMappings.enumerated() {
            let before = "entity mapping \(original.name) of the step before"
            if let policy = original.policy { throw Refusal("\(before) has a custom policy (\(policy))") }
            switch original.type {
            case .remove: continue
            case .custom: throw Refusal("\(before) is a custom mapping")
            case .add, .copy, .transform: break
            }
            guard let name = original.destinationEntity, let entity = entities[name],
                let to = new.entity(named: entity), let names = properties[name]
            else { throw Refusal("it does not carry what \(before) makes") }
            let sourceEntity = original.sourceEntity.flatMap(source.entity(named:))
            var written = compiler.withImplicitMappings(original, sourceEntity, middle.entity(named: name))
            let attributes = middle.entity(named: name).map(middle.allAttributes(of:)) ?? []
            let filter = written.sourceExpression.flatMap { try? FormatExpression(parsing: $0) }.flatMap(
                MappingCompiler.standardFetch
            ).flatMap { $0.entity == sourceEntity?.name ? $0.predicate : nil }
            /// Checks that the step before writes `attribute` (by `expression`) as this step
            /// reads it back, or (`writtenAgain`) as this step writes it again; false where
            /// it cannot (a mapping with no source entity).
            func check(_ attribute: AttributeDescription, _ expression: String, writtenAgain: Bool = false) -> Bool {
                guard let sourceEntity else { return false }
                if !checks.contains(where: {
                    $0.entity == sourceEntity.name && $0.attribute.name == attribute.name
                        && $0.isWrittenAgain == writtenAgain
                }) {
                    checks.append(
                        ComputedValue(
                            entity: sourceEntity.name, attribute: attribute, expression: expression, filter: filter,
                            isWrittenAgain: writtenAgain))
                }
                return true
            }
            // What the step filters, fetched with what the step before fetches.
            var fetch = written.sourceExpression
            if filters[name] != nil {
                if layout == nil { layout = StoreLayout(model: source) }
                let filtered = try composedFilter(
                    of: name, after: written, from: sourceEntity, in: source, layout: layout!,
                    functions: policies.functions)
                for (attribute, expression) in filtered.writes where !check(attribute, expression) {
                    throw Refusal("it filters \(name), which \(before) makes from no source")
                }
                counts.append(filtered.count)
                fetch = filtered.sourceExpression
            }
            // What the step computes, computed from what the step before writes.
            var computedMappings: [PropertyMapping] = []
            if let values = computed[name] {
                var parsed: [String: FormatExpression] = [:]
                for (attribute, text) in values {
                    guard let expression = try? FormatExpression(parsing: text) else {
                        throw Refusal("\(name).\(attribute)'s expression does not parse")
                    }
                    parsed[attribute] = expression
                }
                // (What this step reads of an attribute the step before converts as it
                // writes it, it reads converted.)
                let reads = parsed.values.reduce(into: Set<String>()) { $0.formUnion(Self.keysRead(by: $1)) }
                var expressions: [String: FormatExpression] = [:], defaults: [String: Value] = [:]
                for attribute in attributes where !attribute.isTransient {
                    if let text = written.propertyMapping(named: attribute.name)?.valueExpression {
                        guard let expression = try? FormatExpression(parsing: text) else {
                            throw Refusal("\(before)'s expression for \(attribute.name) does not parse")
                        }
                        guard reads.contains(attribute.name) else {
                            expressions[attribute.name] = expression
                            continue
                        }
                        if layout == nil { layout = StoreLayout(model: source) }
                        guard let sourceEntity,
                            let readBack = Self.readBack(
                                expression, attribute, over: sourceEntity, in: layout!, functions: policies.functions)
                        else {
                            throw Refusal(
                                "it computes from \(name).\(attribute.name), which \(before) writes as \(text): SQL cannot say that value as it is read back"
                            )
                        }
                        expressions[attribute.name] = readBack
                    } else if Self.readsAsItsDefault(attribute) {
                        defaults[attribute.name] = attribute.defaultValue ?? .null
                    }
                }
                // (Only the attributes of `$source`: no names of the older version to read.)
                let substitution = SourceRenamer(
                    model: middle, entities: [name: sourceEntity?.name ?? name], properties: [:],
                    defaults: [name: defaults], computed: [name: expressions])
                for (attribute, text) in values.sorted(by: { $0.key < $1.key }) {
                    guard let value = substitution.expression(text, source: name) else {
                        throw Refusal(
                            "it computes \(entity).\(attribute) as \(text), which reads more of \(name) than its attributes"
                        )
                    }
                    for read in Self.keysRead(by: parsed[attribute]!).sorted() {
                        guard let expression = written.propertyMapping(named: read)?.valueExpression,
                            expressions[read] != nil
                        else { continue }
                        guard let described = attributes.first(where: { $0.name == read }),
                            check(described, expression)
                        else { throw Refusal("it computes from \(name).\(read), which \(before) makes from no source") }
                    }
                    computedMappings.append(PropertyMapping(name: attribute, valueExpression: value))
                }
            }
            if let drops = dropped[name] {
                // What the step drops, the step before writes, converting and checking
                // it: left unwritten only where that can neither fail nor break a rule,
                // or where the pass's check finds it would not.
                for drop in drops.sorted() {
                    guard let attribute = attributes.first(where: { $0.name == drop }) else {
                        throw Refusal("it drops the relationship \(name).\(drop), which \(before) links")
                    }
                    let expression = written.propertyMapping(named: drop)?.valueExpression
                    if Self.writesWithoutFail(attribute, expression, from: sourceEntity, in: source) { continue }
                    guard let expression, check(attribute, expression) else {
                        throw Refusal("it drops \(name).\(drop), which \(before) could fail to write")
                    }
                }
                written.attributeMappings.removeAll { drops.contains($0.name) }
            }
            let expressions =
                [written.sourceExpression]
                + (written.attributeMappings + written.relationshipMappings).map(\.valueExpression)
            if entity != name || names.contains(where: { $0.key != $0.value }),
                expressions.contains(where: { $0.map(Self.readsTheDestinationSide) ?? false })
            {
                throw Refusal("\(before) reads the destination side by names the step changes")
            }
            // (A decimal the step before writes is read back as the decimal its double's
            // shortest text says: written again, the same double where a Decimal holds
            // that text. The double nearest a decimal or an integer is such a double; one
            // computed otherwise may be none, which the pass's scan checks row by row.)
            for decimal in attributes where decimal.type == .decimal && names[decimal.name] != nil {
                guard let text = written.propertyMapping(named: decimal.name)?.valueExpression,
                    !Self.readsADecimalOrAnInteger(text, of: sourceEntity, in: source)
                else { continue }
                if layout == nil { layout = StoreLayout(model: source) }
                guard check(decimal, text, writtenAgain: true),
                    Self.translates(checks.filter(\.isWrittenAgain), in: layout!, functions: policies.functions)
                else {
                    throw Refusal(
                        "it carries \(name).\(decimal.name), a Decimal \(before) writes as \(text), which writing again may change, and SQL cannot check"
                    )
                }
            }
            guard
                var renamed = written.withEachPropertyMapping({ property in
                    var property = property
                    guard let name = names[property.name] else { return nil }
                    property.name = name
                    return property
                })
            else { throw Refusal("\(before) fills a property of \(name) the step does not carry") }
            renamed.destinationEntity = entity
            renamed.sourceExpression = fetch
            renamed.attributeMappings += computedMappings
            composed.entityMappings[index] = Self.listingEveryProperty(of: to, in: new, renamed)
        }
        guard counts.isEmpty || Self.readsNothingMadeBy(Set(counts.map(\.mapping)), in: mapping) else {
            throw Refusal(
                "it filters what the step before makes, which that step looks up, or reads otherwise than from its source"
            )
        }
        // (A check SQL cannot say would keep every pass from running.)
        guard Self.translates(checks, in: layout ?? StoreLayout(model: source), functions: policies.functions) else {
            throw Refusal("what it reads of the step before cannot be checked in SQL")
        }
        return (composed, checks, counts)
    }

    /// Whether `expression` reads an attribute of `entity` (in `model`) that holds a
    /// decimal or an integer, as it is: what it writes to a Decimal attribute is then a
    /// Decimal, whose nearest double that attribute reads back as the same decimal.
    private static func readsADecimalOrAnInteger(
        _ expression: String, of entity: EntityDescription?, in model: ObjectModel
    ) -> Bool {
        guard let parsed = try? FormatExpression(parsing: expression),
            let read = storedAttribute(copiedBy: parsed, of: entity, in: model)
        else { return false }
        return [.decimal, .int16, .int32, .int64].contains(read.type)
    }

    /// The stored attribute of `entity` (in `model`) that `expression` reads as it is
    /// (``EntityMappingRunner/copiedAttribute(_:)``), if any.
    private static func storedAttribute(
        copiedBy expression: FormatExpression, of entity: EntityDescription?, in model: ObjectModel
    ) -> AttributeDescription? {
        guard let entity, let name = EntityMappingRunner.copiedAttribute(expression) else { return nil }
        return model.allAttributes(of: entity).first { $0.name == name && !$0.isTransient }
    }

    /// Whether writing `expression` (nil, or `nil`: nothing, the default) to `attribute` can neither
    /// fail nor break a rule, whatever the store it reads holds: an optional attribute
    /// without bounds, validation predicates or a derivation, given nothing, or, of a type
    /// every value of which writes as it is read (text, a 64-bit integer, a double, a date,
    /// data kept in the store), an attribute of `entity` of the same type read as it is.
    static func writesWithoutFail(
        _ attribute: AttributeDescription, _ expression: String?, from entity: EntityDescription?,
        in model: ObjectModel
    ) -> Bool {
        guard attribute.isOptional, hasNoBounds(attribute), attribute.derivationExpression == nil,
            !attribute.allowsExternalBinaryDataStorage
        else { return false }
        guard let parsed = expression.flatMap({ try? FormatExpression(parsing: $0) }) else { return expression == nil }
        if case .constant(.null) = parsed.kind { return true }
        let types: Set<AttributeType> = [.string, .int64, .double, .date, .binary]
        guard types.contains(attribute.type), let read = storedAttribute(copiedBy: parsed, of: entity, in: model)
        else { return false }
        return read.type == attribute.type && !read.allowsExternalBinaryDataStorage
    }

    /// `mapping` with every stored property of its destination `entity` it does not map
    /// listed without an expression: the property keeps its default, and the engine adds
    /// no same-named mapping of its own (the source's names are another version's).
    static func listingEveryProperty(
        of entity: EntityDescription, in model: ObjectModel, _ mapping: EntityMapping
    ) -> EntityMapping {
        var mapping = mapping
        for attribute in model.allAttributes(of: entity)
        where !attribute.isTransient && mapping.propertyMapping(named: attribute.name) == nil {
            mapping.attributeMappings.append(PropertyMapping(name: attribute.name, valueExpression: nil))
        }
        for relationship in model.allRelationships(of: entity)
        where !relationship.isTransient && mapping.propertyMapping(named: relationship.name) == nil {
            mapping.relationshipMappings.append(PropertyMapping(name: relationship.name, valueExpression: nil))
        }
        return mapping
    }

    /// The step's renamings the other way: C entity → B entity, and per C entity, C
    /// property → B property.
    var namesBefore: (entities: [String: String], properties: [String: [String: String]]) {
        var entityNames: [String: String] = [:]
        var propertyNames: [String: [String: String]] = [:]
        for (from, to) in entities {
            entityNames[to] = from
            propertyNames[to] = Dictionary(uniqueKeysWithValues: properties[from]!.map { ($1, $0) })
        }
        return (entityNames, propertyNames)
    }

    /// Whether `expression` may read the destination side by its names: a variable of it,
    /// or any mention of a destination but the lookups of destination instances.
    static func readsTheDestinationSide(_ expression: String) -> Bool {
        var text = expression
        for selector in MappingCompiler.lookupSelectors + [MappingInference.relationshipLookup] {
            text = text.replacingOccurrences(of: selector, with: "")
        }
        return ["destination", "$entityPolicy", "$entityMapping", "$propertyMapping"].contains {
            text.range(of: $0, options: .caseInsensitive) != nil
        }
    }

    /// The step's report as the step would have made it from the rows in `database`,
    /// laid out as `layout`, where `locate` finds the step's source entities and their
    /// properties (the step's own source names, or the names after the step and those
    /// after it): each copy reads and makes every row of its entity; a to-one counts every
    /// instance; a to-many counts the owners with a member when the mapping of its inverse
    /// comes after its own, and nothing otherwise (the inverse's links, run first, gave
    /// every owner its members already), as the interpreter counts them. In a store the
    /// run wrote (`written`), the table of an entity that shares it with none holds only
    /// its rows: SQLite counts them from the table's pages, without reading a row. A
    /// to-one that a renaming before linked through a chain (``chainBefore(_:)``, `chain`)
    /// is read through that chain. Throws where a relationship it must count is nowhere
    /// in the store.
    func report(
        in database: Database, layout: StoreLayout, written: Bool = false,
        locate: (_ entity: String, _ property: String?) -> (entity: String, property: String?),
        chain: (_ entity: String, _ property: String) -> [(entity: String, property: String)]? = { _, _ in nil }
    ) throws(SQLiteError) -> MigrationReport {
        let mappings = step.mapping.entityMappings
        func count(_ sql: String) throws(SQLiteError) -> Int { try Self.count(sql, in: database) }
        var report = MigrationReport(entityMappings: [], seconds: 0)
        for (index, mapping) in mappings.enumerated() {
            var entry = MigrationReport.EntityMappingReport(name: mapping.name)
            defer { report.entityMappings.append(entry) }
            guard mapping.type == .copy || mapping.type == .transform, let from = mapping.sourceEntity,
                properties[from] != nil, let rows = layout.entities[locate(from, nil).entity]
            else { continue }
            let alone = written && rows.superNumber == 0 && rows.numbers == [rows.number]
            let instances = try count(
                "SELECT count(*) FROM \(rows.table)" + (alone ? "" : " WHERE Z_ENT = \(rows.number)"))
            entry.sourceInstances = instances
            entry.destinationInstances = instances
            // (A to-one linked through a chain counts every instance; a to-many, linked
            // after its inverse through the same pairs, none: ``checkComputedLinks(_:)``.)
            entry.relationshipsSet += instances * computedLinks.filter { $0.entity == from && !$0.isToMany }.count
            for old in step.source.allRelationships(of: step.source.entity(named: from)!)
            where !old.isTransient && properties[from]?[old.name] != nil {
                // (One set through its inverse is set by the other mapping.)
                guard old.isToMany else {
                    if throughInverse[from]?.contains(old.name) != true { entry.relationshipsSet += instances }
                    continue
                }
                if throughInverse[from]?.contains(old.name) == true { continue }
                if let counted = try countInAHierarchy(
                    old, of: from, at: index, rows: rows, in: database, layout: layout, locate: locate)
                {
                    entry.relationshipsSet += counted
                    continue
                }
                if old.destination == from, let inverse = old.inverse {
                    // Both sides linked by this mapping, object by object in key order: the
                    // owners that gain a member as ``gains(linking:and:of:)`` says.
                    guard let gains = gains(linking: old.name, and: inverse, of: from) else { continue }
                    if let column = locate(from, inverse).property.flatMap({ rows.toOneColumns[$0] }) {
                        entry.relationshipsSet += try count(
                            "SELECT count(DISTINCT m.\(column.key)) FROM \(rows.table) AS m "
                                + "WHERE m.Z_ENT = \(rows.number) AND \(gains("m.Z_PK", "m.\(column.key)"))")
                    } else if let side = locate(from, old.name).property.flatMap({ rows.joinTables[$0] }) {
                        entry.relationshipsSet += try count(
                            "SELECT count(DISTINCT \(side.sourceColumn)) FROM \(side.table) "
                                + "WHERE \(gains(side.destinationColumn, side.sourceColumn))")
                    }
                    continue
                }
                // (Its members gain it from their mapping where that comes first and sets
                // it, and then setting it changes nothing.)
                guard let other = places[old.destination], let inverse = old.inverse,
                    other > index || throughInverse[old.destination]?.contains(inverse) == true
                else { continue }
                let (members, key) = locate(old.destination, inverse)
                let sql: String
                if let layout = layout.entities[members], let column = key.flatMap({ layout.toOneColumns[$0] }) {
                    // (Each owner looked up in the index of its members' keys.)
                    sql =
                        "SELECT count(*) FROM \(rows.table) AS o WHERE o.Z_ENT = \(rows.number) AND EXISTS "
                        + "(SELECT 1 FROM \(layout.table) AS m WHERE m.\(column.key) = o.Z_PK AND m.Z_ENT = \(layout.number))"
                } else if let side = locate(from, old.name).property.flatMap({ rows.joinTables[$0] }) {
                    sql = "SELECT count(DISTINCT \(side.sourceColumn)) FROM \(side.table)"
                } else if let hops = chain(old.destination, inverse), hops.isEmpty {
                    continue
                } else if let hops = chain(old.destination, inverse), let through = Self.chained(hops, in: layout) {
                    // (Each owner that some member's chain leads to.)
                    sql =
                        "SELECT count(*) FROM \(rows.table) AS o WHERE o.Z_ENT = \(rows.number) AND EXISTS "
                        + "(SELECT 1 FROM \(through) = o.Z_PK)"
                } else {
                    throw SQLiteError(
                        code: SQLITE_ERROR, message: "\(from).\(old.name)'s inverse is nowhere in the store to count")
                }
                entry.relationshipsSet += try count(sql)
            }
        }
        return report
    }

    /// Whether the members of each ordered to-many the step puts in key order
    /// (``inKeyOrder``) are in key order already, in `database` (laid out as `layout`,
    /// `locate` finding the step's names there, as for ``report(in:layout:written:locate:)``):
    /// then the step after reads them in the order it would read them after the step.
    /// Each owner's members as a context reads them (by position, then key) are numbered
    /// beside the same members by key alone; one scan of the members' table.
    func holdsInKeyOrder(
        in database: Database, layout: StoreLayout,
        locate: (_ entity: String, _ property: String?) -> (entity: String, property: String?)
    ) throws(SQLiteError) -> Bool {
        let orders = orderedByTheStep(layout: layout, locate: locate)
        for case let (members, order)? in orders {
            let statement = try database.prepare(
                "SELECT 1 FROM (SELECT row_number() OVER (PARTITION BY \(members.key) ORDER BY \(members.asAContextReads)) AS a, "
                    + "row_number() OVER (PARTITION BY \(members.key) ORDER BY \(order)) AS b FROM \(members.table) "
                    + "WHERE \(members.key) IS NOT NULL\(members.rows)) WHERE a <> b LIMIT 1")
            if try statement.step() { return false }
        }
        return orders.allSatisfy { $0 != nil }
    }

    /// Gives the members of each ordered to-many the step puts in key order
    /// (``inKeyOrder``) the positions the step gives them, in `database`, a store written
    /// as the step would have read it and renamed (laid out as `layout`, `locate` finding
    /// the step's names there, as ``locateAfter(_:)`` does): each member joins its owner's
    /// end in key order, so each owner's members are at 1, 2, 3… by key, whatever order
    /// the step before wrote. This is what the step's own run writes: its keys are the
    /// ones it reads, or numbered anew in their order (``compose(_:source:policies:)``).
    /// The members of each one whose order it keeps (``keptInOrder``) are numbered 1, 2,
    /// 3… in the order they have (by position, then key), as the step links them: the
    /// step before may leave gaps and ties (a member moved to another owner keeps none of
    /// its place). A relationship a later step makes unordered has no positions left to give.
    func givePositions(
        in database: Database, layout: StoreLayout,
        locate: (_ entity: String, _ property: String?) -> (entity: String, property: String?)
    ) throws(SQLiteError) {
        for case let (members, order)? in orderedByTheStep(layout: layout, locate: locate) {
            try Self.number(members, by: order, in: database)
        }
        for case let members? in self.members(of: keptInOrder, layout: layout, locate: locate) {
            // (Where each owner's members are at 1, 2, 3… already, which they mostly are,
            // one scan by the index of their key says so: n distinct integers from 1 to n.
            // Half the time of the numbering, which then changes nothing.)
            let numbered = try !database.prepare(
                "SELECT 1 FROM \(members.table) WHERE \(members.key) IS NOT NULL\(members.rows) "
                    + "GROUP BY \(members.key) HAVING min(\(members.order)) IS NOT 1 "
                    + "OR max(\(members.order)) IS NOT count(*) OR count(DISTINCT \(members.order)) <> count(*) "
                    + "OR max(typeof(\(members.order)) <> 'integer') LIMIT 1"
            ).step()
            if !numbered { try Self.number(members, by: members.asAContextReads, in: database) }
        }
    }

    /// Where an ordered to-many's members are: in their own table, by their to-one
    /// (`member` their `Z_PK`, `rows` the condition on their entities), or in a join table
    /// (`member` its column of their keys, no condition).
    private struct OrderedMembers {
        let table: String, key: String, order: String, member: String
        /// ` AND Z_ENT IN (…)`, or nothing.
        let rows: String

        /// The order a context reads an owner's members in, as SQL: by position read as
        /// an integer, those without one last, ties in the order SQL gives them (by the
        /// position as it is, then key; ``ObjectContext/ordered(_:position:)``).
        var asAContextReads: String { "\(order) IS NULL, CAST(\(order) AS INTEGER), \(order), \(member)" }

        /// The order an owner's members come out in where those whose own link ran first
        /// (``membersLinkedFirst``) joined its end in key order (keys below the owner's,
        /// or `upToTheOwner`), and the owner's link added the others as a context reads.
        func linkedFirst(upToTheOwner: Bool) -> String {
            let first = "\(member) \(upToTheOwner ? "<=" : "<") \(key)"
            return "NOT (\(first)), CASE WHEN \(first) THEN \(member) END, \(asAContextReads)"
        }
    }

    /// Numbers each owner's `members` 1, 2, 3… in their position column, in the order of
    /// `order` (SQL over the members' columns), writing only the rows that change.
    private static func number(_ members: OrderedMembers, by order: String, in database: Database)
        throws(SQLiteError)
    {
        // (A member's row is its key's, or in a join table its pair's.)
        let pair = members.member == "Z_PK" ? "" : " AND \(members.table).\(members.key) = o.owner"
        try database.execute(
            "UPDATE \(members.table) SET \(members.order) = o.n FROM (SELECT \(members.key) AS owner, "
                + "\(members.member) AS k, row_number() OVER (PARTITION BY \(members.key) ORDER BY \(order)) AS n "
                + "FROM \(members.table) WHERE \(members.key) IS NOT NULL\(members.rows)) AS o "
                + "WHERE \(members.table).\(members.member) = o.k\(pair) AND \(members.table).\(members.order) IS NOT o.n"
        )
    }

    /// The integer `sql` (a count) gives in `database`: its first row's first column, 0
    /// where it gives no row.
    static func count(_ sql: String, in database: Database) throws(SQLiteError) -> Int {
        let statement = try database.prepare(sql)
        return try statement.step() ? Int(statement.int64(at: 0)) : 0
    }

    /// The members of each ordered to-many the step gives an order of its own, with that
    /// order as SQL: by key for those it puts in key order (``inKeyOrder``), those linked
    /// first first for the others (``membersLinkedFirst``); nil for one that has no
    /// columns in `layout` (``members(of:layout:locate:)``).
    private func orderedByTheStep(
        layout: StoreLayout, locate: (_ entity: String, _ property: String?) -> (entity: String, property: String?)
    ) -> [(members: OrderedMembers, order: String)?] {
        let linkedFirst = membersLinkedFirst.keys.sorted(by: { ($0.entity, $0.property) < ($1.entity, $1.property) })
        return members(of: inKeyOrder, layout: layout, locate: locate).map { members in members.map { ($0, $0.member) }
        }
            + zip(linkedFirst, members(of: Set(linkedFirst), layout: layout, locate: locate)).map { member, members in
                members.map { ($0, $0.linkedFirst(upToTheOwner: membersLinkedFirst[member]!)) }
            }
    }

    /// Where the members of each ordered to-many of `set` (``inKeyOrder``,
    /// ``membersLinkedFirst`` or ``keptInOrder``; in the order of their names) are, in a
    /// store laid out as `layout` (`locate` finding the step's names there): their table
    /// with their to-one's key and position columns, or the relationship's join table; nil
    /// for one that has no such columns there.
    private func members(
        of set: Set<Member>, layout: StoreLayout,
        locate: (_ entity: String, _ property: String?) -> (entity: String, property: String?)
    ) -> [OrderedMembers?] {
        set.sorted(by: { ($0.entity, $0.property) < ($1.entity, $1.property) }).map { member in
            guard
                let relationship = step.source.entity(named: member.entity).flatMap({ entity in
                    step.source.allRelationships(of: entity).first { $0.name == member.property }
                }), let inverse = relationship.inverse
            else { return nil }
            let (owners, name) = locate(member.entity, member.property)
            if let side = name.flatMap({ layout.entities[owners]?.joinTables[$0] }) {
                guard let order = side.orderColumn else { return nil }
                return OrderedMembers(
                    table: side.table, key: side.sourceColumn, order: order, member: side.destinationColumn, rows: "")
            }
            let (entity, property) = locate(relationship.destination, inverse)
            guard let rows = layout.entities[entity], let column = property.flatMap({ rows.toOneColumns[$0] }),
                let order = column.order
            else { return nil }
            return OrderedMembers(
                table: rows.table, key: column.key, order: order, member: "Z_PK",
                rows: " AND Z_ENT IN (\(rows.numberList))")
        }
    }

    /// Where the step's source names are before the relabelings `earlier` (the ones
    /// before it, in order): for ``report(in:layout:locate:)`` over the store they read.
    func locateBefore(_ earlier: ArraySlice<Relabeling>) -> (String, String?) -> (entity: String, property: String?) {
        let back = earlier.reversed().map(\.namesBefore)
        return { entity, property in
            var (entity, property) = (entity, property)
            for names in back {
                property = property.flatMap { names.properties[entity]?[$0] }
                entity = names.entities[entity] ?? entity
            }
            return (entity, property)
        }
    }

    /// Where a to-one the step carries (by its source names) was linked through a chain
    /// by one of the relabelings `earlier` (the ones before it, in order), which the
    /// store does not hold (``ComputedLink``): the chain's relationships, each with the
    /// entity that holds it, in the store's names. None for one a relabeling adds (it
    /// links no row), nil where it cannot tell.
    func chainBefore(_ earlier: ArraySlice<Relabeling>) -> (String, String) -> [(entity: String, property: String)]? {
        let list = Array(earlier)
        return { entity, property in
            var (entity, property) = (entity, property)
            for j in list.indices.reversed() {
                let names = list[j].namesBefore
                if let older = names.properties[entity]?[property] {
                    (entity, property) = (names.entities[entity] ?? entity, older)
                    continue
                }
                // (One the relabeling adds, or of an entity it adds: it links no row.)
                guard let source = names.entities[entity] else { return [] }
                let link = list[j].computedLinks.first { $0.entity == source && $0.relationship == property }
                guard let link else { return [] }
                let locate = list[j].locateBefore(list[..<j])
                guard let chain = list[j].hops(of: link) else { return nil }
                var hops: [(entity: String, property: String)] = []
                for hop in chain {
                    let located = locate(hop.holder, hop.relationship.name)
                    guard let stored = located.property else { return nil }
                    hops.append((located.entity, stored))
                }
                return hops
            }
            return nil
        }
    }

    /// `members AS m JOIN … WHERE …` ending in the key of the last hop's target, for a
    /// chain of to-ones (``chainBefore(_:)``) in a store laid out as `layout`: each row on
    /// the way of its entity; nil where a hop has no column there.
    static func chained(_ hops: [(entity: String, property: String)], in layout: StoreLayout) -> String? {
        var from: [String] = []
        var conditions: [String] = []
        var last = ""
        for (index, hop) in hops.enumerated() {
            guard let rows = layout.entities[hop.entity], let column = rows.toOneColumns[hop.property] else {
                return nil
            }
            let alias = index == 0 ? "m" : "h\(index)"
            from.append(index == 0 ? "\(rows.table) AS m" : "JOIN \(rows.table) AS \(alias) ON \(alias).Z_PK = \(last)")
            conditions.append("\(alias).Z_ENT = \(rows.number)")
            last = "\(alias).\(column.key)"
        }
        guard !hops.isEmpty else { return nil }
        return from.joined(separator: " ") + " WHERE " + conditions.joined(separator: " AND ") + " AND \(last)"
    }

    /// Where the step's source names are after it and the relabelings `later`: for
    /// ``report(in:layout:locate:)`` over a store written after them all.
    func locateAfter(_ later: ArraySlice<Relabeling>) -> (String, String?) -> (entity: String, property: String?) {
        { entity, property in
            var property = property.flatMap { properties[entity]?[$0] }
            var entity = entities[entity] ?? entity
            for relabeling in later {
                property = property.flatMap { relabeling.properties[entity]?[$0] }
                entity = relabeling.entities[entity] ?? entity
            }
            return (entity, property)
        }
    }
}

extension EntityMapping {
    /// The mapping with each of its property mappings, attributes' and relationships',
    /// made by `transform`; nil where `transform` gives nil for one.
    func withEachPropertyMapping(_ transform: (PropertyMapping) -> PropertyMapping?) -> EntityMapping? {
        var result = self
        for list in [\EntityMapping.attributeMappings, \EntityMapping.relationshipMappings] {
            var transformed: [PropertyMapping] = []
            for property in self[keyPath: list] {
                guard let property = transform(property) else { return nil }
                transformed.append(property)
            }
            result[keyPath: list] = transformed
        }
        return result
    }
}
