import Foundation
import Testing
import TestSupport

/// What a new user sees pointing `mapping-migrate` at the store written by Apple's Core
/// Data and its Xcode project (../shared/fixtures/coredata/objcio-bookmigration): the
/// folder holds the article's Xcode mapping models, which Remodel reads (their policies
/// need Swift stand-ins), and the inferred steps would not carry over the data those
/// mappings move.
@Suite struct AppleStoreFirstRunTests {
    let cli = MappingMigrateBinaryTests()

    final class Scratch {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("apple-store-\(UUID())")
        var store: String { url.appendingPathComponent("Books.sqlite").path }
        var empty: String { url.appendingPathComponent("empty").path }
        init() throws {
            try FileManager.default.createDirectory(
                atPath: url.appendingPathComponent("empty").path, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: SharedFixtures.bookStore, toPath: store)
        }
        deinit { try? FileManager.default.removeItem(at: url) }
    }

    @Test func xcodeMappingModelsAreReadAndTheirPoliciesNamed() throws {
        try SharedFixtures.require()
        let scratch = try Scratch()
        let folder = SharedFixtures.bookMigration.path
        let plan = try cli.run("plan", scratch.store, "--models", SharedFixtures.bookModels)
        #expect(plan.status == 0, "\(plan.stderr)")
        #expect(
            plan.stdout == """
                \(scratch.store) is at Model1
                Model1 → Model2: \(folder)/Model1_to_Model2.xcmappingmodel (3 entity mappings)
                  UserToUser: SQL
                    relationships interpreted: 'books': BookToBook, which makes its targets, does not check
                    read as they are on well-typed rows: userId
                    checks: userId in range
                  Author: interpreted: the mapping has no source entity, so it makes nothing
                  BookToBook: does not check: no policy named 'MHWBookToBookPolicy' is registered; register a Swift stand-in for it: `policies.register("MHWBookToBookPolicy") { MyPolicy() }` (docs/engine.md, "Custom policies")
                Model2 → Model3: \(folder)/Model2_to_Model3_User.xcmappingmodel + \(folder)/Model2_to_Model3.xcmappingmodel (4 entity mappings)
                  note: File of \(folder)/Model2_to_Model3.xcmappingmodel replaces the entity mapping of that name before it
                  note: UserToUser of \(folder)/Model2_to_Model3.xcmappingmodel replaces the entity mapping of that name before it
                  note: BookToBook of \(folder)/Model2_to_Model3.xcmappingmodel replaces the entity mapping of that name before it
                  note: AuthorToAuthor of \(folder)/Model2_to_Model3.xcmappingmodel replaces the entity mapping of that name before it
                  note: reads the store the step before writes, whose values fit Model2: SQL reads them as they are
                  UserToUser: does not check: no policy named 'MHWUserToUserPolicy' is registered; register a Swift stand-in for it: `policies.register("MHWUserToUserPolicy") { MyPolicy() }` (docs/engine.md, "Custom policies")
                  BookToBook: does not check: no policy named 'MHWBookToBookPolicy' is registered; register a Swift stand-in for it: `policies.register("MHWBookToBookPolicy") { MyPolicy() }` (docs/engine.md, "Custom policies")
                  File: interpreted: the mapping has no source entity, so it makes nothing
                  AuthorToAuthor: SQL
                    relationships interpreted: 'books': BookToBook, which makes its targets, does not check
                Model2 → Model3 starts a new pass:
                  it cannot run after Model1 → Model2, in the pass before: entity mapping UserToUser has a custom policy (MHWUserToUserPolicy)
                  Model1 → Model2 cannot run before it, in its pass: entity mapping UserToUser links books by FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "BookToBook", $source.books), not to what one relationship's targets become

                """)
        // The article's policies are Objective-C: without Swift stand-ins the run stops
        // before touching the store, naming each class and how to register one.
        let before = try Data(contentsOf: URL(fileURLWithPath: scratch.store))
        let run = try cli.run("run", scratch.store, "--models", SharedFixtures.bookModels)
        #expect(run.status == 2)
        #expect(
            run.stderr.contains(
                "\(folder)/Model1_to_Model2.xcmappingmodel: entityMappings[2] \"BookToBook\" .policy: no policy named 'MHWBookToBookPolicy' is registered; register a Swift stand-in for it: `policies.register(\"MHWBookToBookPolicy\") { MyPolicy() }`"
            ), "\(run.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.store)) == before)
        // inspect needs no mapping files.
        let inspect = try cli.run("inspect", scratch.store, "--models", SharedFixtures.bookModels)
        #expect(
            inspect.stdout == "\(scratch.store): model version Model1 (by its version hashes)\n  Book: 4\n  User: 3\n",
            "\(inspect.stderr)")
    }

    @Test func inferredStepsSayWhatTheyDoNotCarryOver() throws {
        try SharedFixtures.require()
        let scratch = try Scratch()
        let plan = try cli.run(
            "plan", scratch.store, "--models", SharedFixtures.bookModels, "--mappings", scratch.empty)
        #expect(plan.status == 0, "\(plan.stderr)")
        // Book.user (to-one) became Book.users (to-many) with no renaming identifier, but its
        // inverse User.books is carried over, so the links are kept.
        #expect(
            plan.stdout == """
                \(scratch.store) is at Model1
                Model1 → Model2: inferred (3 entity mappings)
                  note: does not carry over Book.authorName: nothing in Model2 has its name or renaming identifier; if the data must be kept, give what replaces it the old name as renaming identifier, or write a mapping file for the step
                  IEM_Add_Author: interpreted: the mapping has no source entity, so it makes nothing
                  IEM_Transform_Book: SQL
                    read as they are on well-typed rows: title
                  IEM_Transform_User: SQL
                    read as they are on well-typed rows: userId
                    checks: userId in range
                Model2 → Model3: inferred (4 entity mappings)
                  note: does not carry over Book.fileURL, Book.users, User.books: nothing in Model3 has their name or renaming identifier; if the data must be kept, give what replaces them the old name as renaming identifier, or write a mapping file for the step
                  note: reads the store the step before writes, whose values fit Model2: SQL reads them as they are
                  IEM_Copy_Author: SQL
                  IEM_Transform_Book: SQL
                  IEM_Add_File: interpreted: the mapping has no source entity, so it makes nothing
                  IEM_Transform_User: SQL
                Model2 → Model3 starts a new pass:
                  it cannot run after Model1 → Model2, in the pass before: it drops the relationship Book.users, which entity mapping IEM_Transform_Book of the step before links
                  Model1 → Model2 cannot run before it, in its pass: it drops Book.user but keeps its inverse

                """)
        let before = try Data(contentsOf: URL(fileURLWithPath: scratch.store))
        let dry = try cli.run(
            "run", scratch.store, "--models", SharedFixtures.bookModels, "--mappings", scratch.empty, "--dry-run",
            "--quiet")
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(
            dry.stderr.hasPrefix(
                "mapping-migrate: note: inferred Model1 → Model2: does not carry over Book.authorName: "))
        #expect(dry.stdout.contains("    Book/1 fileURL=<152 bytes> title=\"The Trial\" authors=[] users=[User/3]\n"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: scratch.store)) == before)
    }

    /// A compiled model from an app's build products is a model source, and what its
    /// versions carry that Remodel does not honour is printed as warnings.
    @Test func compiledModelsAreCheckedWithTheirWarnings() throws {
        try SharedFixtures.require()
        let scratch = try Scratch()
        let momd = SharedFixtures.root.appendingPathComponent(
            "realworld/alemar11+CoreDataPlus/Tests/Resources/SampleModel/Fixtures/SampleModel.momd"
        ).path
        let check = try cli.run("check", "--models", momd, "--mappings", scratch.empty)
        #expect(check.status == 0, "\(check.stderr)")
        let lines = check.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.contains(
                "warning: SampleModel2: entities.Car.uniquenessConstraints: (numberPlate) carried, not enforced: Remodel neither refuses nor merges duplicates, so a migration that makes duplicates keeps them"
            ))
        #expect(
            lines.contains(
                "warning: SampleModel2: entities.Car.fetchIndexes.byMakerAndNumberPlate: skipped: stores Remodel writes have no index on (maker, numberPlate); an index speeds up Core Data's fetches and holds no data"
            ))
        let warnings = lines.filter { $0.hasPrefix("warning: ") }.count
        #expect(
            lines.last
                == "3 model versions (SampleModel, SampleModel2, SampleModel3), 0 mapping files: no problems (\(warnings) warnings above)"
        )
    }

    /// A model that is not quite the one the app shipped (one attribute required that was
    /// optional): the hashes say so entity by entity, the schema decides, and inspect says
    /// Core Data would not open the store with it.
    @Test func aStoreWhoseHashesMatchNoVersion() throws {
        try SharedFixtures.require()
        let scratch = try Scratch()
        var model = try String(contentsOfFile: "mappings/book-authors/Model1.model.json", encoding: .utf8)
        model = model.replacingOccurrences(
            of: #""title": "string""#, with: #""title": {"type": "string", "optional": false}"#)
        let file = scratch.url.appendingPathComponent("Model1.model.json").path
        try model.write(toFile: file, atomically: true, encoding: .utf8)
        let inspect = try cli.run("inspect", scratch.store, "--models", file, "--hashes")
        #expect(inspect.status == 0, "\(inspect.stderr)")
        let lines = inspect.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "\(scratch.store): model version Model1 (by its tables and columns: its version hashes are not Model1's, so Core Data would not open it with Model1 without a migration)"
        )
        #expect(
            lines.contains(
                "  note: the store's version hashes match no version (closest: Model1, where Book differ); identified by its tables and columns, which only Model1 has"
            ))
        #expect(lines.contains { $0.hasPrefix("    Book  4008f8b64ae3c074  ") && $0.hasSuffix("  differs") })
        #expect(lines.contains("    User  fa27e5eecb39eedc  fa27e5eecb39eedc  same"))
    }

    /// The model Core Data cached in a store it wrote: inspect compares it with the version
    /// the store is identified as; a store that matches no version given says what its
    /// cache holds.
    @Test func theModelCacheIsReported() throws {
        try SharedFixtures.require()
        let fixtures = SharedFixtures.root.appendingPathComponent("realworld/alemar11+CoreDataPlus/Tests/Resources")
        let momd = fixtures.appendingPathComponent("SampleModel/Fixtures/SampleModel.momd").path
        let store = fixtures.appendingPathComponent("SampleModel/Fixtures/SampleModel_V2.sqlite").path
        let inspect = try cli.run("inspect", store, "--models", momd)
        #expect(inspect.status == 0, "\(inspect.stderr)")
        #expect(
            inspect.stdout.contains(
                "  note: the store carries the model it was saved with (Z_MODELCACHE, 4 entities: Car, LuxuryCar, Person, SportCar); it hashes as SampleModel2\n"
            ))
        let other = fixtures.appendingPathComponent("SampleModel2/Fixtures/SampleModel2_V1.sqlite").path
        let unknown = try cli.run("inspect", other, "--models", momd)
        #expect(unknown.status != 0)
        #expect(
            unknown.stderr.contains(
                "the store carries the model it was saved with (Z_MODELCACHE, 6 entities: Author, Book, Feedback, GraphicNovel, Page, Writer)"
            ))

        // Its model, built in code and in no file, written out from the cache: the store
        // then opens with it (its schema decides: two of its hashes are not reproduced).
        let scratch = try Scratch()
        let written = scratch.url.appendingPathComponent("SampleModel2.model.json").path
        let write = try cli.run("inspect", other, "--models", momd, "--write-cached-model", written)
        #expect(write.status == 2, "the store is still no version of the models given")
        #expect(write.stdout.hasPrefix("wrote the model \(other) carries to \(written): SampleModel2, 6 entities\n"))
        let again = try cli.run("inspect", other, "--models", written)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.hasPrefix("\(other): model version SampleModel2 (by its tables and columns"))
        #expect(again.stdout.contains("  Page: 4970\n"))

        // A store without a cache says so.
        let none = try cli.run(
            "inspect", scratch.store, "--models", SharedFixtures.bookModels, "--write-cached-model", written)
        #expect(none.status == 2)
        #expect(none.stderr.contains("carries no model (its Z_MODELCACHE is missing or empty"))
    }

    @Test func policiesTheToolDoesNotHave() throws {
        try SharedFixtures.require()
        let check = try cli.run("check", "--models", SharedFixtures.bookModels, "--mappings", "mappings/book-authors")
        #expect(check.status == 2)
        #expect(
            check.stderr.hasSuffix(
                """
                BookToBookPolicy is a policy written in Swift, which mapping-migrate does not have: run these mapping files with a tool built with it registered (MigrateCommand.main(environment:), docs/mapping-migrate.md; mappings/book-authors/book-migration is one)

                """))
    }
}
