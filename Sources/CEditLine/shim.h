#ifndef REMODEL_CEDITLINE_SHIM_H
#define REMODEL_CEDITLINE_SHIM_H
#include <stdio.h>
#include <editline/readline.h>
#endif
