import ExpressionLanguage
import ObjectGraph

/// Mapping models and the migration engine.
///
/// This module is being built (see the project's issues); it has no public API yet.
enum MigrationModule {}
