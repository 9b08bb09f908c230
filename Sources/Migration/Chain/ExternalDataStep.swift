import Foundation
import ObjectGraph

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A step's external binary data files (docs/store-format.md, "External binary data"):
/// the new store writes its files into the store's own support folder, under new names,
/// beside the old version's; the old version's files that the new store does not refer
/// to are removed only once the new store is in place. Whenever a crash comes, the store
/// at the path, old or new, finds every file it refers to; a crash leaves at worst files
/// that nothing refers to.
final class ExternalDataStep {
    let storePath: String
    let step: StoreMigrator.Step
    let backup: String?
    /// Where the new store writes and reads.
    let files: ExternalDataFiles
    /// The files the old version refers to (``prepare()``).
    private var old: Set<String> = []

    init(storeAt path: String, step: StoreMigrator.Step, backup: String?) {
        storePath = path
        self.step = step
        self.backup = backup
        files = ExternalDataFiles(storeAt: path)
    }

    /// Reads what the store refers to and, when the old version is kept as a backup,
    /// links its files into the backup's support folder, so that the backup opens with
    /// its data (hard links: no copy, no space). Run once the store's side files are
    /// folded in, before anything is written.
    func prepare() throws(MigrationError) {
        do {
            old = try ExternalBinaryData.references(inStoreAt: storePath, model: step.source)
        } catch {
            throw MigrationError(
                .sourceStore, "cannot read the store's external data references: \(error)", underlying: error)
        }
        guard let backup, !old.isEmpty else { return }
        let target = ExternalBinaryData.folder(ofStoreAt: backup)
        do {
            try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
            for name in old.sorted() {
                let from = files.folder.appendingPathComponent(name).path
                let to = target.appendingPathComponent(name).path
                // A missing file is the store's damage, which the step reports on reading it.
                if FileManager.default.fileExists(atPath: to) || !FileManager.default.fileExists(atPath: from) {
                    continue
                }
                if link(from, to) != 0 { try FileManager.default.copyItem(atPath: from, toPath: to) }
            }
        } catch {
            throw MigrationError(
                .destinationStore,
                "cannot keep the external data of the backup in \(target.path): \(error.localizedDescription). Nothing was changed"
            )
        }
    }

    /// A failed step: its new files go.
    func discard() { files.removeWritten() }

    /// The new store is in place: the old version's files it does not refer to go (they
    /// stay in the backup's folder when there is one). When the new store's references
    /// cannot be read, nothing is removed.
    func removeUnused() {
        files.forgetWritten()
        guard !old.isEmpty,
            let new = try? ExternalBinaryData.references(inStoreAt: storePath, model: step.destination)
        else { return }
        let unused = old.subtracting(new)
        guard !unused.isEmpty else { return }
        for name in unused { unlink(files.folder.appendingPathComponent(name).path) }
        files.syncFolder()
    }
}
