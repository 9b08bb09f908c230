import ExpressionLanguage

/// The object graph over SQLite: models (JSON, Xcode's `.xcdatamodel`, compiled `.mom`),
/// Core Data's store layout and metadata, contexts, fetches, row readers and inserters
/// (docs/architecture.md, docs/object-context.md, docs/store-format.md).
enum ObjectGraphModule {}
