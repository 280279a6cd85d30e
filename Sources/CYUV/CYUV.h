// Header-only shim for libyuv. Debian's libyuv-dev ships no pkg-config file, hence `link "yuv"`.
#ifndef CYUV_H
#define CYUV_H

#include <libyuv.h>

#endif
