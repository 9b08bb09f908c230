import ExpressionLanguage
import ObjectGraph

/// How the default policy makes an entity mapping's rows when it can do without source
/// objects: from a ``RowReader`` over the source entity's rows, each attribute mapping
/// either copied column to column (`$source.name`, with a ``RowCopier``) or evaluated
/// with `$source` bound to the reader.
///
/// Only where nothing can tell a row from an object: the mapping already writes rows
/// (the default policy, nothing reads `$destination`), its source is a plain fetch of one
/// entity (no predicate, no sub-entities), and every expression uses `$source` only to
/// read stored attributes (`$source.price * 1.03`, `FUNCTION($source.name, 'uppercaseString')`)
/// and no variables but `$propertyMapping` and `$entityMapping` besides: `$manager`'s
/// functions take source objects, and `$source` itself (passed, compared, `self`) is one.
/// The engine also needs the source context to have no unsaved changes (a reader sees
/// the store as saved); it checks that when the mapping runs.
final class RowCopyPlan {
    enum Step {
        /// Copy `index` of the copier, for attribute mapping `i`.
        case copy(index: Int, Int)
        /// Evaluate attribute mapping `i`, then set its destination attribute; whether the
        /// expression reads `$propertyMapping` (bound only then).
        case evaluate(Int, readsPropertyMapping: Bool)
    }

    /// The fetched source entity.
    let entity: String
    /// The source attributes the expressions read, selected with each row.
    let sourceAttributes: [String]
    /// The copies, in the copier's order: source attribute name, destination attribute.
    let copies: [(from: String, to: AttributeKey)]
    /// By attribute mapping: its destination attribute.
    let destinations: [AttributeKey]
    /// One per attribute mapping, in order.
    let steps: [Step]
    /// The steps that evaluate, in order: all there is to do once the copies are done.
    let evaluations: [Step]

    /// The variables an expression may read besides `$source`: they hold no source object.
    static let harmlessVariables: Set<String> = ["propertyMapping", "entityMapping"]

    init?(
        _ prepared: PreparedEntityMapping, copiedAttributes: [String?], destinationAttributes: [AttributeKey],
        source: ObjectContext
    ) {
        guard case .fetch(let request) = prepared.source, request.fetchLimit == nil,
            request.predicate == nil || request.predicate?.kind == .constant(true),
            let entity = source.store.model.entity(named: request.entityName),
            !request.includesSubentities || source.store.model.subentities(of: entity).isEmpty
        else { return nil }
        let attributes = Set(source.store.model.allAttributes(of: entity).filter { !$0.isTransient }.map(\.name))
        var read: [String] = []
        var copies: [(from: String, to: AttributeKey)] = []
        var steps: [Step] = []
        for (i, property) in prepared.attributes.enumerated() {
            let expression = property.expression.expression
            if let name = copiedAttributes[i] {
                guard attributes.contains(name) else { return nil }
                if !read.contains(name) { read.append(name) }
                steps.append(.copy(index: copies.count, i))
                copies.append((name, destinationAttributes[i]))
                continue
            }
            guard let names = Self.sourceAttributesRead(by: expression, among: attributes) else { return nil }
            for name in names where !read.contains(name) { read.append(name) }
            steps.append(.evaluate(i, readsPropertyMapping: expression.variableNames.contains("propertyMapping")))
        }
        self.entity = entity.name
        sourceAttributes = read
        self.copies = copies
        destinations = destinationAttributes
        self.steps = steps
        evaluations = steps.filter { if case .evaluate = $0 { true } else { false } }
    }

    /// Whether `expression` reads no mapping variable but `$source` and the harmless ones
    /// (not `$manager`, `$destination`, `$entityPolicy`): evaluated on a source object
    /// alone, it gives what the interpreter gives.
    static func readsOnlySource(_ expression: FormatExpression) -> Bool {
        let locals = expression.localVariables
        // A local named like a mapping variable hides it: leave such expressions alone.
        guard !locals.contains("source") else { return false }
        return expression.variableNames.allSatisfy {
            locals.contains($0) || $0 == "source" || harmlessVariables.contains($0)
        }
    }

    /// The source attributes `expression` reads, when it reads `$source` only as
    /// `$source.attribute…` and no other mapping variable than the harmless ones; nil
    /// otherwise.
    static func sourceAttributesRead(by expression: FormatExpression, among attributes: Set<String>) -> [String]? {
        guard readsOnlySource(expression) else { return nil }
        var uses = 0, reads: [String] = []
        expression.forEachSubexpression { e in
            switch e.kind {
            case .variable("source"):
                uses += 1
            case .keyPath(let operand?, let path):
                if case .variable("source") = operand.kind, let first = path.first, attributes.contains(first) {
                    reads.append(first)
                }
            default:
                break
            }
        }
        return uses == reads.count ? reads : nil
    }
}
