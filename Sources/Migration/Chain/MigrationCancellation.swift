import Synchronization

/// Stops a running ``StoreMigrator/migrate(storeAt:from:to:progress:)`` from any thread:
/// a signal handler, a cancel button, a deadline.
///
///     let migrator = StoreMigrator(models: models, mappings: mappings)
///     let cancellation = migrator.cancellation
///     DispatchQueue.global().asyncAfter(deadline: .now() + 600) { cancellation.cancel("it took too long") }
///     try migrator.migrate(storeAt: path)  // throws a .cancelled MigrationError
///
/// The step that is running stops at its next hook (``MigrationManager/cancel(_:)``), its
/// new file is removed, no later step starts, and the store is at the last version a step
/// completed; the error says which. Copies of a migrator share its cancellation, and a
/// cancellation stays cancelled: give a migrator a new one to run it again.
public final class MigrationCancellation: Sendable {
    /// The manager of the step that is running. Its `cancel` may be called from any thread.
    private struct Running: @unchecked Sendable {
        let manager: MigrationManager
    }

    private let state = Mutex<(reason: String?, running: Running?)>((nil, nil))

    public init() {}

    /// Asks the migration to stop; `reason` is the message of the error it throws.
    public func cancel(_ reason: String = "the migration was cancelled") {
        let running = state.withLock { state -> Running? in
            if state.reason == nil { state.reason = reason }
            return state.running
        }
        running?.manager.cancel(reason)
    }

    /// Whether ``cancel(_:)`` was called.
    public var isCancelled: Bool { state.withLock { $0.reason != nil } }

    /// Why ``cancel(_:)`` was called.
    public var reason: String? { state.withLock { $0.reason } }

    /// Makes `manager` the one ``cancel(_:)`` stops (nil: none), cancelling it at once if
    /// the migration is already cancelled.
    func run(_ manager: MigrationManager?) {
        let reason = state.withLock { state -> String? in
            state.running = manager.map(Running.init)
            return state.reason
        }
        if let reason { manager?.cancel(reason) }
    }
}
