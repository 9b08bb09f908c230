import ExpressionLanguage
import ObjectGraph
import OrderedCollections

/// One entity mapping during a run: its policy, its compiled expressions and the one
/// evaluation context they share, and what it has done so far.
final class EntityMappingRunner {
    let prepared: PreparedEntityMapping
    let policy: any EntityMigrationPolicy
    unowned let manager: MigrationManager
    var report: MigrationReport.EntityMappingReport
    /// The property mapping being evaluated, for `destinationInstancesForSourceRelationshipNamed:`.
    private(set) var currentProperty: PropertyMapping?

    let evaluation: EvaluationContext
    let sourceSlot: Int
    private let destinationSlot: Int
    let propertySlot: Int
    let attributeObjects: [Value]
    /// Per attribute mapping: the source attribute it copies, when its expression is just
    /// `$source.name` (or `FUNCTION($source, "valueForKey:", "name")`), read without
    /// evaluating anything.
    private let copiedAttributes: [AttributeKey?]
    /// Per attribute mapping: the destination attribute.
    private let destinationAttributes: [AttributeKey?]
    private let relationshipObjects: [Value]
    /// How an interpreted stage 1 makes the instances, and why not faster.
    private(set) var strategy: InstanceStrategy
    private(set) var strategyReason: String?
    /// Whether stage 1 sets the relationship mappings of each instance as it makes it, and
    /// stage 2 has nothing left to do (``MigrationManager/planLinksWithInstances()``).
    private(set) var linksWithInstances = false
    /// The source instance being worked on, for errors.
    var currentSource: ObjectID?
    /// The mapping as SQL, when it can run so (``MigrationManager`` plans it before stage 1).
    var sqlPlan: SQLMappingPlan?
    /// For a mapping whose stage 1 is interpreted (with the default policy): its links, as
    /// SQL once its keys table is written from the associations.
    var linksAfterInterpreted: SQLMappingPlan?
    /// The plan whose links stage 2 runs as SQL, if any.
    var planOfLinks: SQLMappingPlan? { sqlPlan ?? linksAfterInterpreted }
    /// What a function that SQL called failed with (``registerFunctions``): the error the
    /// interpreter reports for that row, thrown instead of SQLite's.
    var evaluationFailure: MigrationError?
    /// How the stages ran, or will: SQL or interpreted, and why.
    var execution = MappingExecution(instancesAsSQL: false, instancesReason: "not planned", relationshipsAsSQL: false)
    /// Its keys table (``SQLLink/keysTable(_:)``) written from the interpreter's associations
    /// after an interpreted stage 1, for links of mappings that run as SQL; or why not.
    var keysFromAssociations: Result<Void, SQLTranslator.Refusal>?
    /// When stage 1 ran as SQL over a source table whose keys `low...high` are all rows of
    /// its entity, each made the destination key `source + offset` (its keys table is a
    /// view): a key to one of them is then arithmetic, not a lookup.
    var keyOffset: (low: Int64, high: Int64, offset: Int64)?
    /// The keys of the rows stage 1 wrote, when it ran as SQL (one run, in its table).
    var writtenKeys: Range<Int64>?
    /// Whether stage 1, run as SQL, checked every rule of its rows' attributes as it wrote
    /// them, and none was broken (``SQLMappingPlan/validation``).
    var attributesValidated = false
    /// Whether stage 1 ran as SQL with counted keys and its keys table is not written yet:
    /// it is written from the associations when a statement needs it
    /// (``writeKeysTableIfNeeded()``); the links of the mapping whose rows hold the keys
    /// mostly need none.
    var keysTableUnwritten = false
    /// Whether its keys table exists: stage 1 ran as SQL, or wrote it afterwards.
    var hasKeysTable: Bool {
        if execution.instancesAsSQL { return true }
        if case .success? = keysFromAssociations { return true }
        return false
    }

    var mapping: EntityMapping { prepared.mapping }
    var index: Int { prepared.index }

    init(_ prepared: PreparedEntityMapping, policy: any EntityMigrationPolicy, manager: MigrationManager) {
        self.prepared = prepared
        self.policy = policy
        self.manager = manager
        report = MigrationReport.EntityMappingReport(name: prepared.mapping.name)
        let layout = prepared.layout
        evaluation = EvaluationContext(layout: layout, functions: manager.policies.functions)
        // The layout starts with the six mapping variables (MappingCompiler.variables).
        sourceSlot = layout.existingSlot(for: "source")!
        destinationSlot = layout.existingSlot(for: "destination")!
        propertySlot = layout.existingSlot(for: "propertyMapping")!
        evaluation[variable: "manager"] = .object(ObjectReference(manager))
        evaluation[variable: "entityMapping"] = .object(ObjectReference(EntityMappingObject(prepared.mapping)))
        evaluation[variable: "entityPolicy"] = .object(ObjectReference(policy))
        attributeObjects = prepared.attributes.map { .object(ObjectReference(PropertyMappingObject($0.mapping))) }
        let source = manager.sourceContext, destination = manager.destinationContext
        copiedAttributes = prepared.attributes.map { property in
            guard let entity = prepared.sourceEntity?.name,
                let name = Self.copiedAttribute(property.expression.expression)
            else { return nil }
            return try? source.attributeKey(name, of: entity)
        }
        destinationAttributes = prepared.attributes.map { property in
            prepared.destinationEntity.flatMap { try? destination.attributeKey(property.mapping.name, of: $0.name) }
        }
        relationshipObjects = prepared.relationships.map { .object(ObjectReference(PropertyMappingObject($0.mapping))) }
        (strategy, strategyReason) = InstanceStrategy.choose(
            prepared, policy: policy, copiedAttributes: copiedAttributes,
            destinationAttributes: destinationAttributes, source: source,
            destination: destination)
    }

    /// Makes stage 1 set each instance's relationships (as objects, which a row does not
    /// have), and stage 2 skip them.
    func setLinksWithInstances() {
        linksWithInstances = true
        strategy = .objects
        strategyReason = "its relationships are set with each instance"
    }

    /// How an interpreted stage 1 runs: `row copy`, `rows` or `objects`, and why not faster.
    var interpretedAs: String { strategy.name + (strategyReason.map { " (\($0))" } ?? "") }

    /// The attribute an expression copies when it is nothing but `$source.name` or
    /// `FUNCTION($source, "valueForKey:", "name")`.
    static func copiedAttribute(_ expression: FormatExpression) -> String? {
        switch expression.kind {
        case .keyPath(let operand?, let path) where path.count == 1 && !path[0].hasPrefix("@") && path[0] != "self":
            guard case .variable("source") = operand.kind else { return nil }
            return path[0]
        case .functionCall(let target, let selector, let arguments) where arguments.count == 1:
            guard case .variable("source") = target.kind, selector.constantString == "valueForKey:",
                let name = arguments[0].constantString, name != "self"
            else { return nil }
            return name
        default:
            return nil
        }
    }

    // MARK: - Stages

    /// Runs part of a stage, timing it and placing its errors in this mapping.
    func stage(_ body: () throws(MigrationError) -> Void) throws(MigrationError) {
        let started = ContinuousClock.now
        defer { report.seconds += (ContinuousClock.now - started).seconds }
        do {
            try body()
        } catch {
            throw error.filling(
                entityMapping: mapping.name, sourceEntity: currentSource?.entityName,
                sourceKey: currentSource?.primaryKey)
        }
    }

    /// Calls a policy hook, turning what it throws into a ``MigrationError``, then checks
    /// whether the run was cancelled.
    func hook(_ name: String, _ body: () throws -> Void) throws(MigrationError) {
        do {
            try body()
        } catch let error as MigrationError {
            throw error
        } catch let error as ExpressionError {
            throw MigrationError(.expression, error.description, underlying: error)
        } catch let error as ContextError {
            throw MigrationError(.value, error.description, underlying: error)
        } catch {
            throw MigrationError(
                .policy, "\(mapping.policy ?? policy.kindName).\(name) failed: \(error)", underlying: error)
        }
        try manager.checkCancelled()
    }

    /// Stage 1: begin, one `createDestinationInstances` per source instance, end.
    func createInstances(progress: (Int, Int?, Double) -> Void) throws(MigrationError) {
        try hook("begin(_:manager:)") { try policy.begin(mapping, manager: manager) }
        if let plan = sqlPlan, !manager.sourceContext.hasChanges, try createInstancesAsSQL(plan, progress: progress) {
            try hook("endInstanceCreation(forMapping:manager:)") {
                try policy.endInstanceCreation(forMapping: mapping, manager: manager)
            }
            try manager.save()
            return
        }
        let started = ContinuousClock.now
        var rows = 0
        func rate() -> Double { Double(rows) / max(1e-9, (ContinuousClock.now - started).seconds) }
        switch prepared.source {
        case .none:
            break
        case .fetch where strategy.rowCopy != nil && !manager.sourceContext.hasChanges:
            let (copy, inserter) = strategy.rowCopy!
            try copyRows(copy, with: inserter, progress: progress)
        case .fetch(let request):
            let total: Int
            let cursor: FetchCursor
            do {
                total = try manager.sourceContext.count(request)
                cursor = try manager.sourceContext.makeCursor(request)
            } catch {
                throw MigrationError(
                    .sourceStore, "cannot read the source instances: \(error)", expression: mapping.sourceExpression,
                    underlying: error)
            }
            while true {
                let next: ManagedObject?
                do {
                    next = try cursor.next()
                } catch {
                    // The error names the row it failed on; the last one read is done.
                    currentSource = nil
                    throw MigrationError(
                        .sourceStore, "cannot read the source instances: \(error)",
                        expression: mapping.sourceExpression, underlying: error)
                }
                guard let source = next else { break }
                try createDestinationInstances(for: source)
                rows += 1
                if rows & 1023 == 0 { progress(rows, total, rate()) }
            }
        case .expression(let compiled):
            let value: Value
            do {
                value = try compiled.evaluate(in: evaluation)
            } catch {
                throw MigrationError(
                    .expression, error.description, expression: mapping.sourceExpression, underlying: error)
            }
            let elements = value.isNull ? [] : (value.collectionElements ?? [value])
            for element in elements {
                guard case .object(let reference) = element, let source = reference.object as? ManagedObject,
                    source.managedObjectContext === manager.sourceContext
                else {
                    throw MigrationError(
                        .expression, "the source expression must give source objects, not \(element.kind.rawValue)",
                        expression: mapping.sourceExpression)
                }
                try createDestinationInstances(for: source)
                rows += 1
                if rows & 1023 == 0 { progress(rows, elements.count, rate()) }
            }
        }
        currentSource = nil
        try hook("endInstanceCreation(forMapping:manager:)") {
            try policy.endInstanceCreation(forMapping: mapping, manager: manager)
        }
        try manager.save()
    }

    private func createDestinationInstances(for source: ManagedObject) throws(MigrationError) {
        currentSource = source.objectID
        report.sourceInstances += 1
        if let inserter = strategy.inserter {
            try createRow(for: source, with: inserter)
            try manager.checkCancelled()
        } else {
            try hook("createDestinationInstances(forSource:in:manager:)") {
                try policy.createDestinationInstances(forSource: source, in: mapping, manager: manager)
            }
        }
        try manager.saveIfNeeded()
    }

    /// The default policy's stage 1 without a destination object: the attribute values
    /// are written straight into a new row. Only where nothing can tell the difference:
    /// the mapping's policy is the default one and no attribute mapping reads
    /// `$destination`.
    private func createRow(for source: ManagedObject, with inserter: RowInserter) throws(MigrationError) {
        try bound(source, nil) { () throws(MigrationError) in
            for (i, property) in prepared.attributes.enumerated() {
                let value = try attributeValue(i, property, of: source)
                do {
                    try inserter.set(value, for: destinationAttributes[i]!)
                } catch {
                    throw failure(.value, (error as? ContextError)?.message ?? "\(error)", property, underlying: error)
                }
            }
        }
        let id: ObjectID
        do {
            id = try inserter.insert()
        } catch {
            throw MigrationError(
                .destinationStore, "cannot write a \(inserter.entityName): \(error)", underlying: error)
        }
        manager.associate(source, id, runner: self)
    }

    /// Stage 1 of the default policy when it can read rows instead of objects (see
    /// ``RowCopyPlan``): each source row's attributes are copied or evaluated with `$source`
    /// bound to the row, straight into a new row, and associated by key. What it does not
    /// do (no hook, no destination object) nothing can observe.
    private func copyRows(_ plan: RowCopyPlan, with inserter: RowInserter, progress: (Int, Int?, Double) -> Void)
        throws(MigrationError)
    {
        let manager = self.manager  // one strong reference, not one per use of an unowned one
        let source = manager.sourceContext
        let reader: RowReader
        let copier: RowCopier
        let total: Int
        do {
            reader = try source.makeRowReader(for: plan.entity, attributes: plan.sourceAttributes)
            copier = try RowCopier(
                from: reader, to: inserter,
                attributes: plan.copies.map { (try source.attributeKey($0.from, of: plan.entity), $0.to) })
            total = try reader.count()
        } catch {
            throw MigrationError(
                .sourceStore, "cannot read the source instances: \(error)", expression: mapping.sourceExpression,
                underlying: error)
        }
        guard let entities = manager.associationEntities(source: plan.entity, destination: inserter.entityName) else {
            return
        }
        let started = ContinuousClock.now
        var rows = 0
        // Associations are recorded in runs of consecutive keys on both sides, handed to the
        // table when a run ends, before progress is reported and at the end.
        var run = (source: Int64(0), destination: Int64(0), count: 0)
        func flush() {
            guard run.count > 0 else { return }
            manager.associate(
                source: (entities.source, run.source), destination: (entities.destination, run.destination),
                count: run.count, runner: self)
            run.count = 0
        }
        // The chunk is counted down here rather than asked of the context for every row:
        // only this loop writes to the destination until the next save or progress report.
        var untilSave = manager.rowsBeforeSave()
        // `$source` is the reader for the whole loop: it answers for the row it is on.
        evaluation[slot: sourceSlot] = .object(ObjectReference(reader))
        evaluation[slot: destinationSlot] = nil
        defer {
            evaluation[slot: sourceSlot] = nil
            report.sourceInstances += rows
            flush()
        }
        while true {
            do {
                guard try reader.next() else { break }
            } catch {
                throw MigrationError(
                    .sourceStore, "cannot read the source instances: \(error)", expression: mapping.sourceExpression,
                    underlying: error)
            }
            do {
                try copyRow(plan, copier)
                let key = try insertRow(inserter)
                let sourceKey = reader.primaryKey
                if run.count > 0, sourceKey.follows(run.source, by: run.count),
                    key.follows(run.destination, by: run.count)
                {
                    run.count += 1
                } else {
                    flush()
                    run = (sourceKey, key, 1)
                }
                try manager.checkCancelled()
                untilSave -= 1
                if untilSave <= 0 {
                    try manager.saveIfNeeded()
                    untilSave = manager.rowsBeforeSave()
                }
            } catch {
                // Made only now: the error names the source row.
                currentSource = reader.objectID
                rows += 1
                throw error
            }
            rows += 1
            if rows & 1023 == 0 {
                flush()
                progress(rows, total, Double(rows) / max(1e-9, (ContinuousClock.now - started).seconds))
                untilSave = manager.rowsBeforeSave()
            }
        }
    }

    private func copyRow(_ plan: RowCopyPlan, _ copier: RowCopier) throws(MigrationError) {
        // The copies that cannot fail first, in one pass; the rest in the mappings' order,
        // so that the first failing mapping is the one reported.
        let allCopied = copier.copyStoredValues()
        for step in allCopied ? plan.evaluations : plan.steps {
            switch step {
            case .copy(let index, let i):
                if copier.isDone(index) { continue }
                do {
                    try copier.copy(index)
                } catch {
                    throw failure(.value, error.message, prepared.attributes[i], underlying: error)
                }
            case .evaluate(let i, let readsPropertyMapping):
                let property = prepared.attributes[i]
                if readsPropertyMapping { evaluation[slot: propertySlot] = attributeObjects[i] }
                let value = try evaluate(property)
                do {
                    try copier.inserter.set(value, for: plan.destinations[i])
                } catch {
                    throw failure(.value, error.message, property, underlying: error)
                }
            }
        }
    }

    private func insertRow(_ inserter: RowInserter) throws(MigrationError) -> Int64 {
        do {
            return try inserter.insertRow()
        } catch {
            throw MigrationError(
                .destinationStore, "cannot write a \(inserter.entityName): \(error)", underlying: error)
        }
    }

    /// Stage 2: one `createRelationships` per associated destination instance, then end.
    func createAllRelationships(
        associations count: Int, destination: (Int) throws(MigrationError) -> (entity: String, key: Int64),
        progress: (Int, Int?, Double) -> Void
    ) throws(MigrationError) {
        // The default policy without relationship mappings does nothing per instance.
        // Nor does it when stage 1 set them.
        let trivial = policy.isDefault && (prepared.relationships.isEmpty || linksWithInstances)
        if !trivial, try !createRelationshipsAsSQL() {
            // Objects linked here may change what a link written by SQL wrote.
            if count > 0 {
                manager.sqlLinksWritten.removeAll()
                manager.interpretedLinks = true
            }
            let started = ContinuousClock.now
            for position in 0..<count {
                let (entity, key) = try destination(position)
                let object: ManagedObject
                do {
                    object = try manager.destinationContext.object(entityName: entity, primaryKey: key)
                } catch {
                    throw MigrationError(
                        .destinationStore, "cannot read back \(entity)/\(key): \(error)", underlying: error)
                }
                try hook("createRelationships(forDestination:in:manager:)") {
                    try policy.createRelationships(forDestination: object, in: mapping, manager: manager)
                }
                try manager.saveIfNeeded()
                if (position + 1) & 1023 == 0 {
                    progress(
                        position + 1, count, Double(position + 1) / max(1e-9, (ContinuousClock.now - started).seconds))
                }
            }
        }
        currentSource = nil
        try hook("endRelationshipCreation(forMapping:manager:)") {
            try policy.endRelationshipCreation(forMapping: mapping, manager: manager)
        }
        try manager.save()
    }

    // MARK: - The default policy

    /// Inserts the destination instance, evaluates the attribute mappings, associates.
    func createDestination(for source: ManagedObject) throws(MigrationError) -> [ManagedObject] {
        guard let entity = prepared.destinationEntity else { return [] }
        let destination: ManagedObject
        do {
            destination = try manager.destinationContext.insert(entity.name)
        } catch {
            throw MigrationError(.destinationStore, "cannot insert a \(entity.name): \(error)", underlying: error)
        }
        try bound(source, destination) { () throws(MigrationError) in
            for (i, property) in prepared.attributes.enumerated() {
                let value = try attributeValue(i, property, of: source)
                do {
                    if let key = destinationAttributes[i] {
                        try destination.setValue(value, for: key)
                    } else {
                        try destination.setValue(value, forKey: property.mapping.name)
                    }
                } catch {
                    // The error already names the entity mapping, the source and the property.
                    throw failure(.value, (error as? ContextError)?.message ?? "\(error)", property, underlying: error)
                }
            }
        }
        try manager.associate(sourceInstance: source, withDestinationInstance: destination, for: mapping)
        if linksWithInstances {
            manager.interpretedLinks = true
            try link(destination, from: source)
        }
        return [destination]
    }

    /// Finds the one associated source, evaluates the relationship mappings, sets them.
    func createRelationships(for destination: ManagedObject) throws(MigrationError) {
        guard !prepared.relationships.isEmpty else { return }
        let sources: [ManagedObject]
        do {
            sources = try manager.sourceInstances(
                forEntityMappingNamed: mapping.name, destinationInstances: [destination])
        } catch {
            throw MigrationError(
                .policy, "cannot find the source of \(destination.objectID): \(error)", underlying: error)
        }
        guard sources.count == 1 else {
            throw MigrationError(
                .policy,
                sources.isEmpty
                    ? "Can't find source for destination \(destination.objectID) in default mapping policy (a policy created it without associating it)"
                    : "\(destination.objectID) has \(sources.count) source instances; the default policy needs exactly one"
            )
        }
        currentSource = sources[0].objectID
        try link(destination, from: sources[0])
    }

    /// Evaluates the relationship mappings for `destination`, made from `source`, and
    /// sets them.
    private func link(_ destination: ManagedObject, from source: ManagedObject) throws(MigrationError) {
        try bound(source, destination) { () throws(MigrationError) in
            for (i, property) in prepared.relationships.enumerated() {
                currentProperty = property.mapping
                evaluation[slot: propertySlot] = relationshipObjects[i]
                let value = try evaluate(property)
                try setRelationship(value, property, on: destination)
            }
        }
    }

    /// Runs `body` with `$source` and `$destination` bound, unbinding them afterwards so
    /// that the context holds no object between instances.
    private func bound(
        _ source: ManagedObject, _ destination: ManagedObject?, _ body: () throws(MigrationError) -> Void
    ) throws(MigrationError) {
        evaluation[slot: sourceSlot] = .object(ObjectReference(source))
        evaluation[slot: destinationSlot] = destination.map { .object(ObjectReference($0)) }
        defer {
            currentProperty = nil
            evaluation[slot: sourceSlot] = nil
            evaluation[slot: destinationSlot] = nil
        }
        try body()
    }

    /// The value of the `i`th attribute mapping for `source` (bound as `$source`): read
    /// directly when the mapping is a plain copy, else evaluated.
    private func attributeValue(_ i: Int, _ property: PreparedProperty, of source: ManagedObject) throws(MigrationError)
        -> Value
    {
        currentProperty = property.mapping
        if let key = copiedAttributes[i] {
            do {
                return try source.value(for: key)
            } catch {
                throw failure(.expression, "\(error)", property, underlying: error)
            }
        }
        evaluation[slot: propertySlot] = attributeObjects[i]
        return try evaluate(property)
    }

    private func evaluate(_ property: PreparedProperty) throws(MigrationError) -> Value {
        do {
            return try property.expression.evaluate(in: evaluation)
        } catch {
            throw failure(.expression, error.description, property, underlying: error)
        }
    }

    func failure(
        _ kind: MigrationError.Kind, _ message: String, _ property: PreparedProperty, underlying: (any Error)? = nil
    ) -> MigrationError {
        MigrationError(
            kind, message, property: property.mapping.name, expression: property.mapping.valueExpression,
            underlying: underlying)
    }

    /// Core Data's coercions: a to-one takes nil, an object, or a collection of at most one;
    /// a to-many takes the union of what it holds with nil, an object or a collection.
    private func setRelationship(_ value: Value, _ property: PreparedProperty, on destination: ManagedObject)
        throws(MigrationError)
    {
        let relationship = property.relationship!
        let elements: [Value]
        switch value {
        case .null: elements = []
        case .object: elements = [value]
        case .array(let a): elements = a
        case .set(let s): elements = Array(s)
        default:
            throw failure(
                .value,
                "a relationship mapping must give objects, a collection of objects or nil; this one gave \(value.kind.rawValue)",
                property)
        }
        for element in elements {
            guard case .object(let reference) = element, let object = reference.object as? ManagedObject,
                object.managedObjectContext === manager.destinationContext
            else {
                var what = element.kind.rawValue
                if case .object(let r) = element, let o = r.object as? ManagedObject {
                    what = "the source object \(o.objectID)"
                }
                throw failure(
                    .value,
                    "'\(relationship.name)' needs destination objects, but the expression gave \(what); look them up with FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"<EntityMapping>\", …)",
                    property)
            }
        }
        do {
            if !relationship.isToMany {
                guard elements.count <= 1 else {
                    throw failure(
                        .value,
                        "More than one relationship destination for the to-one relationship '\(relationship.name)' (\(elements.count) objects)",
                        property)
                }
                try destination.setValue(elements.first ?? .null, forKey: relationship.name)
            } else {
                guard !elements.isEmpty else { return }
                let existing = try destination.value(forKey: relationship.name).collectionElements ?? []
                var merged = existing
                var seen = Set(existing)
                for element in elements where seen.insert(element).inserted { merged.append(element) }
                if merged.count == existing.count { return }
                try destination.setValue(
                    relationship.isOrdered ? .array(merged) : .set(OrderedSet(merged)), forKey: relationship.name)
            }
            report.relationshipsSet += 1
        } catch let error as MigrationError {
            throw error
        } catch {
            throw failure(.value, "\(error)", property, underlying: error)
        }
    }
}
