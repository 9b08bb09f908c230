// book-migration: mapping-migrate with the book-authors example's policies registered and
// its folder as the default for --models and --mappings, so that from the repository root
//
//     swift run book-migration run /tmp/Model1.sqlite --to Model3
//
// migrates a copy of the article's store. The article's own Xcode mapping models run too: its
// policies are registered under the article's class names as well.
import BookMigrationPolicies
import Migration
import RemodelCLI

MigrateCommand.main(
    environment: MigrateEnvironment(
        commandName: "book-migration", policies: .bookMigration,
        defaultModels: "mappings/book-authors", defaultMappings: "mappings/book-authors"))
