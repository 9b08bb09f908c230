#include "FaultVFS.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static sqlite3_vfs *base_vfs;
static sqlite3_vfs fault_vfs;
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static char *armed_prefix;
static int64_t operations;
static int64_t fail_at = -1;
static const char *failed_kind = "";

typedef struct FaultFile {
    sqlite3_file base;
    int watched;
    sqlite3_file *real;
} FaultFile;

/// Whether this operation on `file` is the one to fail (and counts it).
static int should_fail(FaultFile *file, const char *kind) {
    if (!file->watched) return 0;
    int fail = 0;
    pthread_mutex_lock(&state_lock);
    if (armed_prefix) {
        if (operations == fail_at) {
            fail = 1;
            failed_kind = kind;
        }
        operations++;
    }
    pthread_mutex_unlock(&state_lock);
    return fail;
}

static int fault_close(sqlite3_file *f) {
    FaultFile *p = (FaultFile *)f;
    return p->real->pMethods->xClose(p->real);
}

static int fault_read(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *p = (FaultFile *)f;
    if (should_fail(p, "read")) return SQLITE_IOERR_READ;
    return p->real->pMethods->xRead(p->real, buffer, amount, offset);
}

static int fault_write(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *p = (FaultFile *)f;
    if (should_fail(p, "write")) return SQLITE_FULL;
    return p->real->pMethods->xWrite(p->real, buffer, amount, offset);
}

static int fault_truncate(sqlite3_file *f, sqlite3_int64 size) {
    FaultFile *p = (FaultFile *)f;
    if (should_fail(p, "truncate")) return SQLITE_IOERR_TRUNCATE;
    return p->real->pMethods->xTruncate(p->real, size);
}

static int fault_sync(sqlite3_file *f, int flags) {
    FaultFile *p = (FaultFile *)f;
    if (should_fail(p, "sync")) return SQLITE_IOERR_FSYNC;
    return p->real->pMethods->xSync(p->real, flags);
}

static int fault_file_size(sqlite3_file *f, sqlite3_int64 *size) {
    FaultFile *p = (FaultFile *)f;
    return p->real->pMethods->xFileSize(p->real, size);
}

static int fault_lock(sqlite3_file *f, int level) {
    FaultFile *p = (FaultFile *)f;
    if (should_fail(p, "lock")) return SQLITE_BUSY;
    return p->real->pMethods->xLock(p->real, level);
}

static int fault_unlock(sqlite3_file *f, int level) {
    FaultFile *p = (FaultFile *)f;
    return p->real->pMethods->xUnlock(p->real, level);
}

static int fault_check_reserved_lock(sqlite3_file *f, int *out) {
    FaultFile *p = (FaultFile *)f;
    return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int fault_file_control(sqlite3_file *f, int op, void *arg) {
    FaultFile *p = (FaultFile *)f;
    return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int fault_sector_size(sqlite3_file *f) {
    FaultFile *p = (FaultFile *)f;
    return p->real->pMethods->xSectorSize(p->real);
}

static int fault_device_characteristics(sqlite3_file *f) {
    FaultFile *p = (FaultFile *)f;
    return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int fault_shm_map(sqlite3_file *f, int page, int size, int extend, void volatile **out) {
    FaultFile *p = (FaultFile *)f;
    return p->real->pMethods->xShmMap(p->real, page, size, extend, out);
}

static int fault_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
    FaultFile *p = (FaultFile *)f;
    return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static void fault_shm_barrier(sqlite3_file *f) {
    FaultFile *p = (FaultFile *)f;
    p->real->pMethods->xShmBarrier(p->real);
}

static int fault_shm_unmap(sqlite3_file *f, int delete_flag) {
    FaultFile *p = (FaultFile *)f;
    return p->real->pMethods->xShmUnmap(p->real, delete_flag);
}

// Version 2: no memory-mapped reads, which would bypass xRead.
static const sqlite3_io_methods fault_io_methods = {
    2, fault_close, fault_read, fault_write, fault_truncate, fault_sync, fault_file_size, fault_lock, fault_unlock,
    fault_check_reserved_lock, fault_file_control, fault_sector_size, fault_device_characteristics, fault_shm_map,
    fault_shm_lock, fault_shm_barrier, fault_shm_unmap, 0, 0};

static int fault_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags) {
    (void)vfs;
    FaultFile *p = (FaultFile *)f;
    p->real = (sqlite3_file *)&p[1];
    pthread_mutex_lock(&state_lock);
    p->watched = name != 0 && armed_prefix != 0 && strncmp(name, armed_prefix, strlen(armed_prefix)) == 0;
    pthread_mutex_unlock(&state_lock);
    int rc = base_vfs->xOpen(base_vfs, name, p->real, flags, out_flags);
    p->base.pMethods = rc == SQLITE_OK && p->real->pMethods ? &fault_io_methods : 0;
    return rc;
}

static int fault_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    return base_vfs->xDelete(base_vfs, name, sync_dir);
}

static int fault_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return base_vfs->xAccess(base_vfs, name, flags, out);
}

static int fault_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out) {
    (void)vfs;
    return base_vfs->xFullPathname(base_vfs, name, n, out);
}

static void *fault_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return base_vfs->xDlOpen(base_vfs, name);
}

static void fault_dl_error(sqlite3_vfs *vfs, int n, char *out) {
    (void)vfs;
    base_vfs->xDlError(base_vfs, n, out);
}

static void (*fault_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return base_vfs->xDlSym(base_vfs, handle, symbol);
}

static void fault_dl_close(sqlite3_vfs *vfs, void *handle) {
    (void)vfs;
    base_vfs->xDlClose(base_vfs, handle);
}

static int fault_randomness(sqlite3_vfs *vfs, int n, char *out) {
    (void)vfs;
    return base_vfs->xRandomness(base_vfs, n, out);
}

static int fault_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return base_vfs->xSleep(base_vfs, microseconds);
}

static int fault_current_time(sqlite3_vfs *vfs, double *out) {
    (void)vfs;
    return base_vfs->xCurrentTime(base_vfs, out);
}

static int fault_get_last_error(sqlite3_vfs *vfs, int n, char *out) {
    (void)vfs;
    return base_vfs->xGetLastError ? base_vfs->xGetLastError(base_vfs, n, out) : 0;
}

static int fault_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return base_vfs->xCurrentTimeInt64(base_vfs, out);
}

void remodel_fault_vfs_install(void) {
    pthread_mutex_lock(&state_lock);
    if (base_vfs == 0) {
        base_vfs = sqlite3_vfs_find(0);
        memset(&fault_vfs, 0, sizeof fault_vfs);
        fault_vfs.iVersion = 2;
        fault_vfs.szOsFile = (int)sizeof(FaultFile) + base_vfs->szOsFile;
        fault_vfs.mxPathname = base_vfs->mxPathname;
        fault_vfs.zName = "remodel-fault";
        fault_vfs.xOpen = fault_open;
        fault_vfs.xDelete = fault_delete;
        fault_vfs.xAccess = fault_access;
        fault_vfs.xFullPathname = fault_full_pathname;
        fault_vfs.xDlOpen = fault_dl_open;
        fault_vfs.xDlError = fault_dl_error;
        fault_vfs.xDlSym = fault_dl_sym;
        fault_vfs.xDlClose = fault_dl_close;
        fault_vfs.xRandomness = fault_randomness;
        fault_vfs.xSleep = fault_sleep;
        fault_vfs.xCurrentTime = fault_current_time;
        fault_vfs.xGetLastError = fault_get_last_error;
        fault_vfs.xCurrentTimeInt64 = fault_current_time_int64;
        sqlite3_vfs_register(&fault_vfs, 1);
    }
    pthread_mutex_unlock(&state_lock);
}

void remodel_fault_vfs_arm(const char *prefix, int64_t fail) {
    pthread_mutex_lock(&state_lock);
    free(armed_prefix);
    armed_prefix = strdup(prefix);
    operations = 0;
    fail_at = fail;
    failed_kind = "";
    pthread_mutex_unlock(&state_lock);
}

void remodel_fault_vfs_disarm(void) {
    pthread_mutex_lock(&state_lock);
    free(armed_prefix);
    armed_prefix = 0;
    fail_at = -1;
    pthread_mutex_unlock(&state_lock);
}

int64_t remodel_fault_vfs_count(void) {
    pthread_mutex_lock(&state_lock);
    int64_t n = operations;
    pthread_mutex_unlock(&state_lock);
    return n;
}

const char *remodel_fault_vfs_failed(void) {
    pthread_mutex_lock(&state_lock);
    const char *kind = failed_kind;
    pthread_mutex_unlock(&state_lock);
    return kind;
}
