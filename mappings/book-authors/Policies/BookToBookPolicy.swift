import Remodel

/// The article's `MHWBookToBookPolicy`, in Swift: one policy for both steps, choosing by
/// the entity mapping's `userInfo.modelVersion`.
///
/// - Model1 → Model2: each book keeps its title and file; its `authorName` becomes an
///   Author, one per distinct name, found again through a lookup table kept in the
///   migration manager's `userInfo` (so books by the same author share it).
/// - Model2 → Model3: each book's `fileURL` moves to a new File per user of the book,
///   linked to the book and to the migrated user, fetched from the destination context
///   by `userId` (the user mapping runs first).
public final class BookToBookPolicy: EntityMigrationPolicy {
    public init() {}

    public func createDestinationInstances(
        forSource source: ManagedObject, in mapping: EntityMapping,
        manager: MigrationManager
    ) throws {
        // The default behaviour first: the book, its attribute mappings, the association.
        let book = try defaultCreateDestinationInstances(forSource: source, in: mapping, manager: manager)[0]
        // The article reads it with `integerValue`: Xcode's user info holds the text "2".
        let version: Int64?
        switch mapping.userInfo["modelVersion"] {
        case .integer(let n)?: version = n
        case .string(let text)?: version = Int64(text)
        default: version = nil
        }
        switch version {
        case 2: try addAuthor(of: source, to: book, manager: manager)
        case 3: try moveFile(of: source, to: book, manager: manager)
        default: throw BookMigrationError("the BookToBook mapping needs userInfo.modelVersion 2 or 3")
        }
    }

    private func addAuthor(of source: ManagedObject, to book: ManagedObject, manager: MigrationManager) throws {
        guard case .string(let name) = try source.value(forKey: "authorName") else { return }
        var authors: [String: Value] = [:]
        if case .dictionary(let known)? = manager.userInfo["authors"] { authors = known }
        let author: Value
        if let existing = authors[name] {
            author = existing
        } else {
            let created = try manager.destinationContext.insert("Author")
            try created.setValue(.string(name), forKey: "name")
            author = .object(ObjectReference(created))
            authors[name] = author
            manager.userInfo["authors"] = .dictionary(authors)
        }
        try book.setValue(.array([author]), forKey: "authors")
    }

    private func moveFile(of source: ManagedObject, to book: ManagedObject, manager: MigrationManager) throws {
        let fileURL = try source.value(forKey: "fileURL")
        for user in try source.value(forKey: "users").collectionElements ?? [] {
            guard case .object(let reference) = user, let sourceUser = reference.object as? ManagedObject else {
                continue
            }
            let userId = try sourceUser.value(forKey: "userId")
            let request = try FetchRequest(entityName: "User", predicate: "userId == %@", arguments: [userId])
            guard let destinationUser = try manager.destinationContext.fetch(request).first else {
                throw BookMigrationError(
                    "no migrated user with userId \(userId.formatDescription); the UserToUser mapping must run before BookToBook"
                )
            }
            let file = try manager.destinationContext.insert("File")
            try file.setValue(fileURL, forKey: "fileURL")
            try file.setValue(.object(ObjectReference(destinationUser)), forKey: "user")
            try file.setValue(.object(ObjectReference(book)), forKey: "book")
        }
    }
}

/// A failure of the example's policies.
public struct BookMigrationError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension PolicyRegistry {
    /// The policies of the book-authors example: `BookToBookPolicy`, which its JSON mapping
    /// names, and the same policy under the article's Objective-C class names, which its
    /// Xcode mapping models name (`MHWUserToUserPolicy` stands in as the default policy,
    /// which is all the JSON mapping of the same step asks of its user mapping).
    public static var bookMigration: PolicyRegistry {
        var registry = PolicyRegistry()
        registry.register("BookToBookPolicy") { BookToBookPolicy() }
        registry.register("MHWBookToBookPolicy") { BookToBookPolicy() }
        registry.register("MHWUserToUserPolicy") { DefaultMigrationPolicy() }
        return registry
    }
}
