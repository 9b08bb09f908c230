import ExpressionLanguage

/// The object graph over SQLite: models, Core Data's store layout, contexts and fetches.
///
/// This module is being built (see the project's issues); it has no public API yet.
enum ObjectGraphModule {}
