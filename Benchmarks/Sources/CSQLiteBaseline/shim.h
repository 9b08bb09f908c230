#ifndef REMODEL_BENCH_CSQLITE_SHIM_H
#define REMODEL_BENCH_CSQLITE_SHIM_H
// The SQLite C API for the raw baselines: the same library the root package links.
#include <sqlite3.h>
#endif
