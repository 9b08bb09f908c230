import Foundation
import Remodel
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns Ctrl-C (SIGINT) and SIGTERM into a cancellation of the running migration while
/// it lives: the step stops at its next hook, its new file is removed, and the tool says
/// where the store is and exits with status 1. A second signal ends the tool at once,
/// removing the new file; the store is intact either way (docs/engine.md, "Steps and
/// safety").
///
/// It also ignores SIGXFSZ, so that a file size limit (`ulimit -f`) makes a write fail
/// with an error the tool reports rather than killing it.
///
/// The signal handler only writes the signal's number to a pipe (what a handler may
/// safely do); a thread reads it and does the rest. (Dispatch signal sources lose one of
/// two different signals that arrive together on Linux.)
final class Interruption {
    private static let signals = [SIGINT, SIGTERM]
    /// The pipe's write end, for the handler; -1 when no interruption is installed.
    private static let pipeInput = Atomic<Int32>(-1)
    private var descriptors: [Int32] = [-1, -1]

    init(cancelling cancellation: MigrationCancellation, store: String) {
        signal(SIGXFSZ, SIG_IGN)
        guard pipe(&descriptors) == 0 else { return }
        let input = descriptors[0]
        Self.pipeInput.store(descriptors[1], ordering: .sequentiallyConsistent)
        let tool = MigrateEnvironment.current.commandName
        let reader = Thread {
            var received = 0
            var number: UInt8 = 0
            while read(input, &number, 1) == 1 {
                received += 1
                let name = Int32(number) == SIGINT ? "SIGINT" : "SIGTERM"
                if received == 1 {
                    FileHandle.standardError.write(
                        Data("\(tool): \(name): stopping at the next safe point (a second signal stops at once)\n".utf8)
                    )
                    cancellation.cancel("interrupted by \(name)")
                } else {
                    for suffix in ["", "-journal", "-wal", "-shm"] { unlink(store + ".remodel-new" + suffix) }
                    unlink(store + ".remodel-lock")
                    FileHandle.standardError.write(
                        Data(
                            "\(tool): \(name) while stopping: stopped at once; the new file was removed, and the store is at the last completed version\n"
                                .utf8))
                    _exit(ExitStatus.failed.rawValue)
                }
            }
            close(input)
        }
        reader.start()
        var action = sigaction()
        #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = { number in Interruption.received(number) }
        #else
            action.__sigaction_u.__sa_handler = { number in Interruption.received(number) }
        #endif
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        for number in Self.signals { sigaction(number, &action, nil) }
        // A parent may have started the tool with the signals blocked (a blocked mask is
        // inherited; Foundation's Process does so from a thread that blocks them).
        var mask = sigset_t()
        sigemptyset(&mask)
        for number in Self.signals { sigaddset(&mask, number) }
        pthread_sigmask(SIG_UNBLOCK, &mask, nil)
    }

    /// The signal handler: async-signal-safe calls only.
    private static func received(_ number: Int32) {
        var byte = UInt8(truncatingIfNeeded: number)
        let output = pipeInput.load(ordering: .relaxed)
        if output >= 0 { _ = write(output, &byte, 1) }
    }

    /// Restores the signals' default actions and ends the reading thread.
    func end() {
        guard descriptors[1] >= 0 else { return }
        for number in Self.signals { signal(number, SIG_DFL) }
        Self.pipeInput.store(-1, ordering: .sequentiallyConsistent)
        close(descriptors[1])
        descriptors[1] = -1
    }

    deinit { end() }
}
