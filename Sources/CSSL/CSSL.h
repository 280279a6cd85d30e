// Header-only shim for OpenSSL (libssl, libcrypto). No logic lives here: only what Swift cannot import
// (function-like macros over SSL_ctrl/BIO_ctrl, and macro constants).
#ifndef CSSL_H
#define CSSL_H

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#endif
