// A SQLite VFS for fault-injection tests: it wraps the default VFS, counts the I/O
// operations on files whose path starts with a prefix, and fails the Nth of them the
// way a full disk, a failing device or another process would.
#ifndef REMODEL_FAULT_VFS_H
#define REMODEL_FAULT_VFS_H

#include <stdint.h>

/// Registers the VFS as SQLite's default, once; connections opened later use it.
void remodel_fault_vfs_install(void);

/// Counts the operations on files whose path starts with `prefix` from now on, and fails
/// the one numbered `fail_at` (0-based; negative: none) with the error of its kind:
/// SQLITE_IOERR_READ, SQLITE_FULL for writes, SQLITE_IOERR_FSYNC, SQLITE_BUSY for locks,
/// SQLITE_IOERR_TRUNCATE. Operations after the failure go through.
void remodel_fault_vfs_arm(const char *prefix, int64_t fail_at);

/// Stops counting and failing.
void remodel_fault_vfs_disarm(void);

/// The operations counted since the last arm.
int64_t remodel_fault_vfs_count(void);

/// The kind of operation that was failed ("read", "write", "sync", "lock", "truncate"),
/// or an empty string when none was.
const char *remodel_fault_vfs_failed(void);

#endif
