import Foundation
import TestSupport

extension SharedFixtures {
    /// The objc.io store (4 books, 3 users) and its Xcode model.
    static var bookStore: String { bookMigration.appendingPathComponent("Model1.sqlite").path }
    static var bookModels: String { bookMigration.appendingPathComponent("Model.xcdatamodeld").path }
}
