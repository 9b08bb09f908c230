import ExpressionLanguage
import Foundation
import ObjectGraph

// The engine's side of SQL pushdown (docs/pushdown.md): which mappings run as SQL, the
// source attached to the destination's connection, and the key tables SQL links join.
extension MigrationManager {
    /// Decides which entity mappings run as SQL (docs/pushdown.md) and, if any does,
    /// attaches the source to the destination's connection as `src`.
    func planSQL(source: Store, destination: Store) throws(MigrationError) {
        let (plans, linksAfterInterpreted) =
            options.pushdown
            ? SQLMappingPlan.plans(
                prepared.entityMappings, usesDefaultPolicy: { self.runners[$0.index].policy.isDefault },
                functions: policies.functions, source: source.layout, sourceIsWellTyped: sourceIsWellTyped,
                destination: destination.layout)
            : ([:], [:])
        for runner in runners {
            if case .success(let plan)? = plans[runner.index] { runner.sqlPlan = plan }
            if let plan = linksAfterInterpreted[runner.index], case .success = plan.links {
                runner.linksAfterInterpreted = plan
            }
            runner.execution = Self.execution(
                of: plans[runner.index], linksAfterInterpreted: runner.linksAfterInterpreted)
            runner.execution.interpretedAs = runner.interpretedAs
        }
        stage1Order = Array(runners.indices)
        reorderedOnTrial = false
        guard runners.contains(where: { $0.planOfLinks != nil }) else { return }
        // Keys written in stage 1 rather than linked in stage 2: when every mapping uses
        // the default policy (no hook could see a key before its link would set it) and
        // links by SQL alone, for the keys taken from a mapping that runs before the one
        // holding them. A mapping runs before the first mapping holding keys to its
        // objects when the mappings it passes do not write its table, and either its
        // stage 1 or theirs cannot fail (SQL, nothing evaluated, no guard): no error could
        // then come first that the file's order would not give. Or, on trial, when they
        // all run as SQL and what the interpreter evaluates of them reads only their
        // source (``evaluatesOnlyItsSource(_:_:)``): should the run fail, it runs again in
        // the file's order.
        prelinks = [:]
        let linksBySQL = runners.allSatisfy { runner in
            guard runner.policy.isDefault else { return false }
            if runner.prepared.relationships.isEmpty { return true }
            if case .success? = runner.sqlPlan?.links { return true }
            return false
        }
        if linksBySQL {
            // Every key a link writes, and those stage 1 could write.
            let written = runners.flatMap { runner -> [SQLLink.Key] in
                guard case .success(let links)? = runner.sqlPlan?.links else { return [] }
                return links.flatMap { [$0.key] + ($0.alsoWrites.map { [$0] } ?? []) }
            }
            let linkKeys = written.filter { !$0.isJoin && !$0.isOrdered && !$0.isOneToOne && !$0.isChained }
            // A column that another link writes as well (a to-one whose targets several
            // mappings make; a to-many read through a chain, which its members' key column
            // holds) is linked in stage 2, each link in its turn, as the interpreter
            // writes it.
            let keys = linkKeys.filter { key in
                !written.contains { $0.holder == key.holder && $0.column == key.column && $0 != key }
            }
            for holder in runners.indices {
                for key in keys where key.holder == holder {
                    guard let from = stage1Order.firstIndex(of: key.keysOf),
                        let to = stage1Order.firstIndex(of: holder), from > to,
                        let plan = runners[key.keysOf].sqlPlan,
                        !stage1Order[to..<from].contains(where: {
                            destinationTable(of: runners[$0], in: destination.layout) == plan.destinationTable
                        })
                    else { continue }
                    let passed = stage1Order[to..<from].map { runners[$0] }
                    let cannotFail =
                        Self.cannotFail(plan) || passed.allSatisfy { $0.sqlPlan.map(Self.cannotFail) == true }
                    let onTrial =
                        !keepsFileOrder && evaluatesOnlyItsSource(runners[key.keysOf], plan)
                        && passed.allSatisfy { runner in
                            runner.sqlPlan.map { evaluatesOnlyItsSource(runner, $0) } == true
                        }
                    guard cannotFail || onTrial else { continue }
                    if !cannotFail { reorderedOnTrial = true }
                    stage1Order.insert(stage1Order.remove(at: from), at: to)
                }
            }
            for key in keys
            where stage1Order.firstIndex(of: key.keysOf)! < stage1Order.firstIndex(of: key.holder)!
                && !prelinks[key.holder, default: []].contains(key)
            {
                prelinks[key.holder, default: []].append(key)
            }
        }
        do {
            try destination.database.attachReadOnly(source.database.path, as: "src")
            try destination.database.registerValueFunctions()
        } catch {
            throw MigrationError(.sourceStore, "cannot attach the source store for SQL: \(error)", underlying: error)
        }
    }

    /// Whether what the interpreter evaluates of `runner`'s stage 1 run as `plan` (its
    /// expressions SQL asks it for, its fetch's predicate) reads only the source: no
    /// `$manager` (the lookups of what other mappings made, the contexts), no FETCH, no
    /// variable but `$source`, `$destination`, `$entityMapping` and `$propertyMapping`,
    /// and no function an embedder registered (one may keep state across calls, and give
    /// other values in another order). The rows a guard hands the interpreter are
    /// evaluated with the mapping's expressions that SQL says, which read only the source.
    func evaluatesOnlyItsSource(_ runner: EntityMappingRunner, _ plan: SQLMappingPlan) -> Bool {
        var only = true
        func visit(_ e: FormatExpression) {
            switch e.kind {
            case .variable(let name):
                if !["source", "destination", "entityMapping", "propertyMapping"].contains(name) { only = false }
            case .fetch: only = false
            case .functionCall(_, let selector, _):
                if !(selector.constantString.map(policies.functions.isStandard) ?? false) { only = false }
            default: break
            }
        }
        for evaluated in plan.evaluated {
            runner.prepared.attributes[evaluated.property].expression.expression.forEachSubexpression(visit)
        }
        if case .fetch(let request) = runner.prepared.source { request.predicate?.forEachSubexpression(visit) }
        return only
    }

    /// Whether a stage 1 run as `plan` cannot fail: nothing evaluated by the interpreter,
    /// no guard that would hand it the mapping.
    static func cannotFail(_ plan: SQLMappingPlan) -> Bool {
        plan.evaluated.isEmpty && plan.predicateAttributes == nil && plan.guards.isEmpty
    }

    /// Writes the keys table of `runner`, whose stage 1 ran interpreted, from its
    /// associations, for the links of mappings that run as SQL; when each association pairs
    /// one source instance of its source entity with one of its destination entity (a
    /// custom policy may make several, none or others; then the links are interpreted).
    func writeKeys(of runner: EntityMappingRunner, in database: Database) throws(MigrationError) {
        guard let s = runner.prepared.sourceEntity.flatMap({ sourceEntityIndex[$0.name] }),
            let d = runner.prepared.destinationEntity.flatMap({ destinationEntityIndex[$0.name] })
        else { return }
        let table = associations[runner.index]
        var refusal: SQLTranslator.Refusal?
        do {
            try save()
            var last = Int64.min
            try SQLLink.createKeysTable(runner.index, in: database) { write throws(SQLiteError) in
                try table.forEachStretch { source, destination, count throws(SQLiteError) in
                    guard refusal == nil else { return }
                    guard source.entity == s, destination.entity == d, source.key > last else {
                        let entities = (sourceModel.entities[Int(s)].name, destinationModel.entities[Int(d)].name)
                        refusal = SQLTranslator.Refusal("did not make one \(entities.1) per \(entities.0)")
                        return
                    }
                    last = source.key + Int64(count - 1)
                    try write(source.key, destination.key, count)
                }
            }
            if let refusal {
                try database.execute("DROP TABLE \(SQLLink.keysTable(runner.index))")
                runner.keysFromAssociations = .failure(refusal)
                return
            }
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError(
                .destinationStore, "cannot write the keys of \(runner.mapping.name) for SQL: \(error)",
                underlying: error)
        }
        runner.keysFromAssociations = .success(())
    }

    func destinationTable(of runner: EntityMappingRunner, in layout: StoreLayout) -> String? {
        runner.prepared.destinationEntity.flatMap { layout.entities[$0.name]?.table }
    }

    /// Detaches the source and drops the association tables, once everything is saved.
    func detachSource(from destination: Store) {
        guard runners.contains(where: { $0.planOfLinks != nil }) else { return }
        for runner in runners where runner.hasKeysTable {
            try? destination.database.execute("DROP VIEW IF EXISTS \(SQLLink.keysTable(runner.index))")
            try? destination.database.execute("DROP TABLE IF EXISTS \(SQLLink.keysTable(runner.index))")
        }
        try? destination.database.detach("src")
    }
}
