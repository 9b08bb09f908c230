// mapping-migrate: run, check, plan and inspect migrations. The logic lives in
// RemodelCLI (MigrateCommand) so that tools with their own policies (book-migration) share it.
import RemodelCLI

MigrateCommand.main(environment: MigrateEnvironment())
