import Foundation
import Remodel

/// The damaged rows of the store a run reads (``StoreMigrator/damageCheck(ofStoreAt:at:)``),
/// looked for on a thread of their own while the run goes on: the scan reads every row of
/// every table, as long as a quick step takes (0.5 s for a million products), and what it
/// finds changes nothing the run does: it only warns, once the run is over. The store is
/// opened before the run starts, so that nothing the run does to its files changes what
/// the scan reads.
final class DamageScan: @unchecked Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private var outcome: Result<[ContextError], MigrationError> = .success([])
    private var reported = false

    private let check: StoreMigrator.DamageCheck

    /// Starts reading `check` on a new thread.
    init(_ check: StoreMigrator.DamageCheck) {
        self.check = check
        Thread { [self] in
            do throws(MigrationError) {
                outcome = .success(try check.damage(limit: 10))
            } catch {
                outcome = .failure(error)
            }
            finished.signal()
        }.start()
    }

    /// Stops the scan, for a run that was interrupted, and waits for it to end (its snapshot
    /// removed); nothing is written.
    func stop() {
        guard !reported else { return }
        reported = true
        check.interrupt()
        finished.wait()
    }

    /// Waits for the scan, then writes what it found to standard error, the first time.
    func warn(_ tool: String) {
        guard !reported else { return }
        reported = true
        finished.wait()
        var lines: [String] = []
        switch outcome {
        case .success(let damage):
            lines = damage.map { "warning: damaged row: \($0)" }
            if damage.count == 10 {
                lines.append("warning: (the first 10 damaged rows; inspect lists them, --strict refuses the store)")
            }
        case .failure(let error):
            lines = ["warning: the store could not be checked for damaged rows: \(error)"]
        }
        for line in lines { FileHandle.standardError.write(Data("\(tool): \(line)\n".utf8)) }
    }
}
