// Header-only shim for libjpeg-turbo's TurboJPEG API (libturbojpeg0-dev). No logic lives here: Swift imports
// turbojpeg.h as it is (its flags are plain integer macros, its enums import as types).
#ifndef CTURBOJPEG_H
#define CTURBOJPEG_H

#include <turbojpeg.h>

#endif
