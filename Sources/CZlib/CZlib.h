// Header-only shim for zlib. No logic lives here: only what Swift cannot import.
#ifndef CZLIB_H
#define CZLIB_H

#include <zlib.h>

#endif
