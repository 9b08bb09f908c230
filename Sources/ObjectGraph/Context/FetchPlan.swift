import ExpressionLanguage

/// A fetch request prepared against a context: the SQL that reads candidate rows, and the
/// compiled predicate that decides. SQL narrows by entity; the predicate, evaluated with
/// the expression language's semantics on each object, is what decides, so every fetch
/// answers exactly as evaluating the predicate on each object would.
struct FetchPlan {
    let entityName: String
    let table: String
    let numbers: Set<Int>
    let reader: TableReader
    let sql: String
    let predicate: CompiledPredicate?
    let evaluation: EvaluationContext?
    let sortKeys: [(CompiledExpression, Bool)]

    init(_ request: FetchRequest, context: ObjectContext) throws(ContextError) {
        let binding = try context.binding(request.entityName)
        entityName = request.entityName
        table = binding.layout.table
        let numbers = request.includesSubentities ? binding.layout.numbers : [binding.layout.number]
        self.numbers = Set(numbers)
        reader = context.readers[table]!
        sql = "SELECT \(reader.selectList) FROM \(table) WHERE Z_ENT IN (\(numbers.map(String.init).joined(separator: ", "))) ORDER BY Z_PK"
        let compiler = ExpressionCompiler(functions: context.functions)
        if let p = request.predicate {
            do {
                let compiled = try compiler.compile(p, source: request.predicateSource)
                predicate = compiled
                evaluation = compiled.makeContext()
            } catch {
                throw ContextError(.predicate, "the fetch predicate does not compile: \(error.description)")
            }
        } else {
            predicate = nil
            evaluation = nil
        }
        var keys: [(CompiledExpression, Bool)] = []
        for descriptor in request.sortDescriptors {
            do {
                keys.append((try compiler.compileExpression(descriptor.keyPath), descriptor.ascending))
            } catch {
                throw ContextError(.predicate, "the sort key '\(descriptor.keyPath)' does not compile: \(error.description)")
            }
        }
        sortKeys = keys
    }

    /// Whether the predicate accepts `object`.
    func accepts(_ object: ManagedObject) throws(ContextError) -> Bool {
        guard let predicate, let evaluation else { return true }
        evaluation.object = .object(ObjectReference(object))
        do {
            return try predicate.evaluate(in: evaluation)
        } catch {
            throw ContextError(.predicate, "the fetch predicate failed on \(object.objectID): \(error.description)",
                               object: object.objectID.description)
        }
    }
}

/// Objects of a fetch, read row by row as they are asked for (see
/// ``ObjectContext/makeCursor(_:)``).
///
///     let cursor = try context.makeCursor(FetchRequest(entityName: "Item"))
///     while let item = try cursor.next() { … }
public final class FetchCursor {
    private let plan: FetchPlan
    private let context: ObjectContext
    private let statement: Statement
    private var pendingTail: [ManagedObject]? = nil
    private var finished = false

    init(plan: FetchPlan, context: ObjectContext) throws(ContextError) {
        self.plan = plan
        self.context = context
        do {
            statement = try context.database.prepare(plan.sql)
        } catch {
            throw ContextError(error)
        }
    }

    /// The next object, or nil when there are no more.
    public func next() throws(ContextError) -> ManagedObject? {
        while !finished && pendingTail == nil {
            let hasRow: Bool
            do {
                hasRow = try statement.step()
            } catch {
                throw ContextError(error)
            }
            guard hasRow else {
                pendingTail = try context.pendingMatches(plan).reversed()
                break
            }
            if let object = try context.nextScanned(statement, plan, register: false) { return object }
        }
        guard let last = pendingTail?.popLast() else {
            finished = true
            return nil
        }
        return last
    }

    /// Up to `count` next objects; fewer only at the end.
    public func next(batch count: Int) throws(ContextError) -> [ManagedObject] {
        var batch: [ManagedObject] = []
        batch.reserveCapacity(count)
        while batch.count < count, let object = try next() { batch.append(object) }
        return batch
    }
}
