#ifndef REMODEL_BENCH_CPCRE2_SHIM_H
#define REMODEL_BENCH_CPCRE2_SHIM_H
// PCRE2 needs the code unit width chosen before its header is read; UTF-8, as the library.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif
