// Header-only shim for libsrtp2. No logic lives here: only what Swift cannot import.
#ifndef CSRTP_H
#define CSRTP_H

#include <srtp2/srtp.h>

/// SRTP_MAX_TRAILER_LEN (a macro expression Swift does not import): the most bytes srtp_protect may append.
static const int csrtp_max_trailer_length = SRTP_MAX_TRAILER_LEN;

#endif
