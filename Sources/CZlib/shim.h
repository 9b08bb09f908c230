#ifndef REMODEL_CZLIB_SHIM_H
#define REMODEL_CZLIB_SHIM_H
#include <zlib.h>
#endif
