#ifndef REMODEL_CSQLITE_SHIM_H
#define REMODEL_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
