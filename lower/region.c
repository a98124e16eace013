/*
** region.c: block access regions (declared in arith.h).
*/
#include "lower/arith.h"
