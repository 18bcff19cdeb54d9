/* VeloC's own programs (its test/ directory) include "include/veloc.h", the
 * header's path inside VeloC's source tree; this forward makes them compile
 * unchanged with the usual -I flag (docs/compat.md). */
#include "../veloc.h"
