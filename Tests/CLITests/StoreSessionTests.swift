import Foundation
import RemodelCLI
import Testing
import TestSupport

/// `mapping-eval` with a store: `:open`, `:source`, `:self`, `{"$object": …}` in JSON, the
/// `--store` options and `--jsonl`, against the store written by Apple's Core Data and
/// against stores written here.
@Suite struct StoreSessionTests {
    typealias Result = MappingEvalProcess.Result

    @discardableResult
    func run(_ session: EvalSession, _ inputs: String...) -> EvalOutput {
        var last = EvalOutput()
        for input in inputs { last = session.execute(input) }
        return last
    }

    /// A scratch folder, removed by the caller.
    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("store-session-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// A folder with two versions of a library model and a store of the first one:
    /// `Library.sqlite` holds Book/1 "Dune" (of the abstract Item), Book/2 "Emma",
    /// Magazine/3 "Wired" and Author/1 "Frank Herbert" who wrote Book/1.
    static func libraryFolder() throws -> URL {
        let folder = try scratch()
        let version1 = """
            {"version": "Library1", "entities": {
              "Item": {"abstract": true, "attributes": {"title": "string"}},
              "Book": {"parent": "Item", "attributes": {"pages": "int32"},
                       "relationships": {"authors": {"destination": "Author", "inverse": "books", "toMany": true}}},
              "Magazine": {"parent": "Item", "attributes": {"issue": "int32"}},
              "Author": {"attributes": {"name": "string"},
                         "relationships": {"books": {"destination": "Book", "inverse": "authors", "toMany": true}}}
            }}
            """
        let version2 = """
            {"version": "Library2", "entities": {
              "Book": {"attributes": {"title": "string", "pages": "int32"}}
            }}
            """
        try Data(version1.utf8).write(to: folder.appendingPathComponent("Library1.model.json"))
        try Data(version2.utf8).write(to: folder.appendingPathComponent("Library2.model.json"))
        try Data(#"["Library1", "Library2"]"#.utf8).write(to: folder.appendingPathComponent("versions.json"))
        let model = try ObjectModel.load(contentsOf: folder.appendingPathComponent("Library1.model.json"))
        let store = try Store.create(at: folder.appendingPathComponent("Library.sqlite").path, model: model)
        let context = ObjectContext(store: store)
        let dune = try context.insert("Book")
        try dune.setValue("Dune", forKey: "title")
        try dune.setValue(412, forKey: "pages")
        try context.insert("Book").setValue("Emma", forKey: "title")
        try context.insert("Magazine").setValue("Wired", forKey: "title")
        let herbert = try context.insert("Author")
        try herbert.setValue("Frank Herbert", forKey: "name")
        try herbert.setValue(.set([.object(ObjectReference(dune))]), forKey: "books")
        try context.save()
        return folder
    }

    // MARK: - The store written by Apple's Core Data

    /// With a store open, `$manager` reads it as a migration's source does: a mapping's
    /// standard source expression can be tried as it is written. What needs a running
    /// migration says so.
    @Test func theManagerReadsTheOpenStore() throws {
        try SharedFixtures.require()
        let session = EvalSession()
        let fetch =
            #"FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", "Book", "%@"), $manager.sourceContext, %@)"#
        func source(_ predicate: String, count: Bool) -> String {
            String(format: fetch, predicate, count ? "YES" : "NO")
        }
        #expect(
            run(session, source("TRUEPREDICATE", count: true)).diagnostics.hasPrefix(
                "error: 1:16: $manager has no value; bind it before evaluating; with a store open (:open STORE --models PATH), $manager reads it as a migration's source"
            ))
        run(session, ":open '\(SharedFixtures.bookStore)' --models \(SharedFixtures.bookModels)")
        #expect(run(session, source("TRUEPREDICATE", count: false) + ".@count").output == "4  (integer)\n")
        #expect(run(session, source("title BEGINSWITH 'The'", count: true)).output == "1  (integer)\n")
        #expect(
            run(session, source("title BEGINSWITH 'The'", count: false) + ".title").output
                == "[\"The Trial\"]  (array)\n")
        #expect(run(session, "$manager.sourceModel").output == "\"Model1\"  (string)\n")
        #expect(
            run(session, "$manager.destinationContext").diagnostics.hasPrefix(
                "error: 1:1: $manager.destinationContext exists only while a mapping runs"))
        #expect(
            run(
                session,
                #"FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "BookToBook", nil)"#
            )
            .diagnostics.contains(
                "destinationInstancesForEntityMappingNamed:sourceInstances: answers from a mapping: load one with :mapping FILE"
            ))
        // A variable of the user's own name wins.
        run(session, "$manager := 7")
        #expect(run(session, "$manager + 1").output == "8  (integer)\n")
    }

    @Test func opensAnAppleStoreAndBindsRows() throws {
        try SharedFixtures.require()
        let store = SharedFixtures.bookStore, models = SharedFixtures.bookModels
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let session = EvalSession()
        #expect(run(session, ":open").output == "no store is open; :open STORE --models PATH opens one\n")
        let opened = run(session, ":open '\(store)' --models \(models)")
        #expect(
            opened.output == """
                \(store) (read-only) is model version Model1 of \(models) (Model1, Model2, Model3)
                  Book  4 objects
                  User  3 objects

                """)
        #expect(opened.status == .success)
        #expect(run(session, ":open").output == opened.output)

        let source = run(session, ":source Book 9")
        #expect(
            source.output.hasPrefix(
                #"$source = {"$object":"Book/9"}  (object)"# + "\n  .authorName = \"Franz Kafka\"  (string)\n"))
        #expect(
            source.output.hasSuffix(
                "  .title = \"The Trial\"  (string)\n  .user = {\"$object\":\"User/3\"}  (object)\n"))
        #expect(run(session, ":source Book/10").output.contains(#".title = "Cosmos""#))
        for (input, output) in [
            ("$source.title", #""Cosmos"  (string)"#),
            ("$source.user.userId", "1  (integer)"),
            ("$source.user.books.@count", "4  (integer)"),
            ("$source.user.books.title", #"{"$set":["The Trial","Cosmos","Metamorphosis","Extinction"]}  (set)"#),
            (
                "$source.user.books.@distinctUnionOfObjects.authorName",
                #"["Franz Kafka","Witold Gombrowicz","Thomas Bernhard"]  (array)"#
            ),
            ("$source.user == $source.user", "true  (boolean)"),
            ("$source", #"{"$object":"Book/10"}  (object)"#)
        ] {
            let result = run(session, input)
            #expect(result.output == output + "\n", "\(input)")
            #expect(result.diagnostics == "", "\(input)")
        }
        #expect(
            run(session, ":self User/3").output == """
                SELF = {"$object":"User/3"}  (object)
                  .books = {"$set":[{"$object":"Book/9"},{"$object":"Book/10"},{"$object":"Book/11"},{"$object":"Book/12"}]}  (set)
                  .userId = 1  (integer)

                """)
        #expect(run(session, "ANY books.authorName == 'Thomas Bernhard'").output == "true  (boolean)\n")
        #expect(
            run(session, #":let u = {"$object": "User/1"}"#).output == #"$u = {"$object":"User/1"}  (object)"# + "\n")
        #expect(run(session, "$u.books.@count").output == "0  (integer)\n")
        #expect(
            run(session, ":vars").output == """
                SELF = {"$object":"User/3"}  (object)
                $source = {"$object":"Book/10"}  (object)
                $u = {"$object":"User/1"}  (object)
                store = \(store) (Model1, read-only)

                """)

        // Reading changed nothing, and left no journal beside the store.
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        for suffix in ["-journal", "-wal", "-shm"] {
            #expect(!FileManager.default.fileExists(atPath: store + suffix), "\(suffix)")
        }
    }

    @Test func errorsSayWhatToDo() throws {
        try SharedFixtures.require()
        let store = SharedFixtures.bookStore, models = SharedFixtures.bookModels
        let session = EvalSession()
        #expect(
            run(session, ":source Book/9").diagnostics
                == "error: no store is open to find Book/9 in; open one with :open STORE --models PATH\n")
        #expect(
            run(session, #":let b = {"$object": "Book/9"}"#).diagnostics
                == "error: no store is open to find Book/9 in; open one with :open STORE --models PATH (or --store)\n")
        run(session, ":open \(store) --models \(models)")
        for (input, message) in [
            (
                ":source Book/99",
                "error: Book/99: no such object in the store; Book has primary keys 9 to 12 (4 objects)"
            ),
            (":source User/9", "error: User/9: no such object in the store; User has primary keys 1 to 3 (3 objects)"),
            (":source Bok/9", "error: unknown entity 'Bok'; model Model1 has Book, User"),
            (
                ":source Book",
                "error: usage: :source ENTITY/PK, such as :source Book/9 (to bind JSON, use :let source = JSON)"
            ),
            (":self Book/x", "error: 1:1: invalid JSON: expected a value, found 'Book'\n  Book/x\n  ^"),
            (
                #":let b = {"$object": "Book/1"}"#,
                "error: Book/1: no such object in the store; Book has primary keys 9 to 12 (4 objects)"
            ),
            ("$source", "error: 1:1: $source has no value; bind it before evaluating\n  $source\n  ^~~~~~~"),
            (":source", "error: $source is not bound; :source ENTITY/PK binds it to an object of the open store")
        ] {
            let result = run(session, input)
            #expect(result.diagnostics == message + "\n", "\(input)")
            #expect(result.output == "", "\(input)")
            #expect(result.status != .success, "\(input)")
        }
        run(session, ":source Book/9")
        #expect(
            run(session, "$source.titel").diagnostics == """
                error: 1:1: Book/9 has no attribute or relationship 'titel'; Book has authorName, fileURL, title, user
                  $source.titel
                  ^~~~~~~~~~~~~

                """)

        // A store that matches none of the versions given: what each one lacks.
        let model2 = SharedFixtures.bookMigration.appendingPathComponent("Model.xcdatamodeld/Model2.xcdatamodel").path
        #expect(
            run(session, ":open \(store) --models \(model2)").diagnostics == """
                error: cannot open \(store): the store matches none of the model versions Model2 by its version hashes or by its tables and columns:
                  Model2: Book, User differ; Author only in the model; schema: no table ZAUTHOR; no join table Z_1BOOKS; no join table Z_2USERS
                (name the version with --from VERSION to open it as one of them anyway)

                """)
        #expect(
            run(session, ":open \(store) --models \(models) --from Model3").diagnostics == """
                error: cannot open \(store): the store does not have the layout of model Model3: no table ZAUTHOR; no table ZFILE; no join table Z_1BOOKS

                """)
        #expect(
            run(session, ":open \(store) --models \(models) --from Model9").diagnostics
                == "error: \(models) has no version 'Model9'; it has Model1, Model2, Model3\n")
        // A failed :open leaves the open store open.
        #expect(run(session, "$source.title").output == "\"The Trial\"  (string)\n")
        // Naming the version works too (and $source, an object of the store open before, goes).
        #expect(
            run(session, ":open \(store) --from=Model1").output.hasPrefix(
                """
                $source unbound: it held objects of the store open before
                \(store) (read-only) opened as model version Model1 of \(models) (Model1, Model2, Model3)
                """))
    }

    @Test func openUsageErrors() throws {
        let session = EvalSession()
        for (input, message) in [
            (":open", nil),
            (
                ":open a.sqlite",
                "error: :open needs --models PATH: a *.model.json file, a folder of them, or an .xcdatamodeld folder; usage: :open STORE --models PATH"
            ),
            (
                ":open a b --models m",
                "error: :open takes one store, not 2 (quote a path with spaces); usage: :open STORE --models PATH"
            ),
            (":open a --models", "error: --models needs a value; usage: :open STORE --models PATH [--from VERSION]"),
            (":open a --model m", "error: unknown option --model; usage: :open STORE --models PATH [--from VERSION]"),
            (":open 'a b --models m", "error: unclosed ' in 'a b --models m"),
            (":open /nonexistent.sqlite --models m", "error: cannot open /nonexistent.sqlite: no such file"),
            (":open / --models m", "error: cannot open /: it is a folder, not a store file")
        ] {
            let result = run(session, input)
            if let message {
                #expect(result.diagnostics == message + "\n", "\(input)")
                #expect(result.status == .badInput, "\(input)")
            } else {
                #expect(result.diagnostics == "", "\(input)")
            }
        }
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notAStore = folder.appendingPathComponent("notes.txt").path
        try Data("hello".utf8).write(to: URL(fileURLWithPath: notAStore))
        #expect(
            run(session, ":open \(notAStore) --models \(folder.path)").diagnostics
                == "error: cannot load the models of \(folder.path): no *.model.json files in this folder\n")
        let library = try Self.libraryFolder()
        defer { try? FileManager.default.removeItem(at: library) }
        #expect(
            run(session, ":open \(notAStore) --models \(library.path)").diagnostics
                == "error: cannot open \(notAStore): not a Core Data store: it is not a SQLite database file\n")
    }

    // MARK: - Stores written by Remodel

    @Test func opensAStoreOfAModelFolder() throws {
        let folder = try Self.libraryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Library.sqlite").path
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let session = EvalSession()
        #expect(
            run(session, ":open \(store) --models \(folder.path)").output == """
                \(store) (read-only) is model version Library1 of \(folder.path) (Library1, Library2)
                  Author    1 object
                  Book      2 objects
                  Item      0 objects (abstract)
                  Magazine  1 object

                """)
        // An entity's objects include its sub-entities'; a row of another entity is not one.
        #expect(run(session, ":source Item/3").output.hasPrefix(#"$source = {"$object":"Magazine/3"}"#))
        #expect(
            run(session, ":source Book/3").diagnostics
                == "error: Book/3: row 3 of ZITEM is Magazine/3, not an object of Book; Book has primary keys 1 to 2 (2 objects)\n"
        )
        #expect(
            run(session, ":source Author/1").output == """
                $source = {"$object":"Author/1"}  (object)
                  .books = {"$set":[{"$object":"Book/1"}]}  (set)
                  .name = "Frank Herbert"  (string)

                """)
        #expect(run(session, "$source.books.@sum.pages").output == "412  (integer)\n")
        #expect(run(session, "SUBQUERY($source.books, $b, $b.title BEGINSWITH 'D').@count").output == "1  (integer)\n")
        // Tab completion knows the entities and the objects' keys.
        #expect(session.completions(line: ":source B", wordStart: 8, word: "B") == ["Book/"])
        #expect(session.completions(line: "$source.na", wordStart: 1, word: "source.na") == ["source.name"])
        #expect(
            session.completions(line: "$source.books.pa", wordStart: 1, word: "source.books.pa") == [
                "source.books.pages"
            ])
        run(session, ":self Book/1")
        #expect(session.completions(line: "authors.n", wordStart: 0, word: "authors.n") == ["authors.name"])

        // Opening another store unbinds what held objects of the previous one.
        run(session, #":let keep = 1"#, #":let both = [1, {"$object": "Book/2"}]"#)
        let reopened = run(session, ":open \(store)")
        #expect(
            reopened.output.hasPrefix(
                "SELF, $both, $source unbound: they held objects of the store open before\n\(store) (read-only) is"))
        #expect(run(session, ":vars").output == "$keep = 1  (integer)\nstore = \(store) (Library1, read-only)\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    // MARK: - The executable

    @Test func oneShotOptions() throws {
        let folder = try Self.libraryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func run(_ arguments: String..., stdin: String = "") throws -> Result {
            try MappingEvalProcess.run(arguments, stdin: stdin, directory: folder)
        }
        #expect(
            try run(
                "--store", "Library.sqlite", "--models", ".", "--source", "Book/1", "-e", "$source.title", "-e",
                "$source.authors.name")
                == Result(status: 0, stdout: "\"Dune\"\n{\"$set\":[\"Frank Herbert\"]}\n", stderr: ""))
        #expect(
            try run(
                "--store", "Library.sqlite", "--models", "Library1.model.json", "--self", "Author 1", "--type", "-e",
                "books.@count")
                == Result(status: 0, stdout: "1  (integer)\n", stderr: ""))
        #expect(
            try run(
                "--store", "Library.sqlite", "--models", ".", "--var", #"m={"$object": "Magazine/3"}"#, "-e", "$m.title"
            )
                == Result(status: 0, stdout: "\"Wired\"\n", stderr: ""))
        #expect(
            try run("--store", "Library.sqlite", "--models", ".", "--source", "Book/9", "-e", "1")
                == Result(
                    status: 2, stdout: "",
                    stderr:
                        "error: --source Book/9: no such object in the store; Book has primary keys 1 to 2 (2 objects)\n"
                ))
        #expect(
            try run("--store", "Library.sqlite", "--models", ".", "--from", "Library2", "-e", "1")
                == Result(
                    status: 2, stdout: "",
                    stderr:
                        "error: cannot open Library.sqlite: the store does not have the layout of model Library2: no table ZBOOK\n"
                ))
        for (arguments, message) in [
            (
                ["--store", "Library.sqlite"],
                "--store needs --models PATH: a *.model.json file, a folder of them, or an .xcdatamodeld folder."
            ),
            (["--source", "Book/1"], "--source needs --store STORE."),
            (["--models", "."], "--models needs --store STORE."),
            (
                ["--store", "Library.sqlite", "--models", ".", "--source", "Book"],
                "--source Book: expected ENTITY/PK, such as --source Book/9."
            ),
            (
                ["--store", "Library.sqlite", "--models", ".", "--self", "Book/1", "--example"],
                "--example and --self both bind SELF; use one."
            )
        ] {
            let result = try MappingEvalProcess.run(arguments + ["-e", "1"], directory: folder)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.hasPrefix("Error: \(message)\n"), "\(arguments)")
        }
        // --jsonl: {"$object": …} in requests names objects of the store.
        let requests = """
            {"expression": "$source.title"}
            {"expression": "title", "object": {"$object": "Item/3"}}
            {"predicate": "ANY authors == %@", "object": {"$object": "Book/1"}, "arguments": [{"$object": "Author/1"}]}
            {"expression": "$a", "variables": {"a": {"$object": "Author/2"}}}
            """
        #expect(
            try run("--jsonl", "--store", "Library.sqlite", "--models", ".", "--source", "Book/2", stdin: requests)
                == Result(
                    status: 0,
                    stdout: """
                        {"value":"Emma","type":"string"}
                        {"value":"Wired","type":"string"}
                        {"value":true,"type":"boolean"}
                        {"error":{"kind":"request","message":"\\"variables\\".a: Author/2: no such object in the store; the only Author is Author/1","line":null,"column":null}}

                        """, stderr: ""))
        #expect(
            try run("--jsonl", stdin: #"{"expression": "$a", "variables": {"a": {"$object": "Author/1"}}}"#)
                == Result(
                    status: 0,
                    stdout: """
                        {"error":{"kind":"request","message":"\\"variables\\".a: no store is open to find Author/1 in; start mapping-eval --jsonl with --store STORE --models PATH","line":null,"column":null}}

                        """, stderr: ""))
    }
}
