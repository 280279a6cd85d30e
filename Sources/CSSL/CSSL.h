// Header-only shim for OpenSSL (libssl, libcrypto). No logic lives here: only what Swift cannot import
// (function-like macros over SSL_ctrl/BIO_ctrl, variadic calls behind macros, and macro constants).
#ifndef CSSL_H
#define CSSL_H

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/provider.h>
#include <openssl/rand.h>
#include <openssl/srtp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <sys/time.h>

// MARK: Macro constants

static const uint64_t cssl_SSL_OP_NO_QUERY_MTU = SSL_OP_NO_QUERY_MTU;
static const int cssl_DTLS1_2_VERSION = DTLS1_2_VERSION;
static const int cssl_TLS1_2_VERSION = TLS1_2_VERSION;
static const int cssl_SSL_VERIFY_PEER = SSL_VERIFY_PEER;
static const int cssl_SSL_VERIFY_FAIL_IF_NO_PEER_CERT = SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
static const int cssl_SSL_ERROR_WANT_READ = SSL_ERROR_WANT_READ;
static const int cssl_SSL_ERROR_WANT_WRITE = SSL_ERROR_WANT_WRITE;
static const int cssl_SSL_ERROR_ZERO_RETURN = SSL_ERROR_ZERO_RETURN;
static const int cssl_SSL_ERROR_SYSCALL = SSL_ERROR_SYSCALL;
static const int cssl_SSL_ERROR_SSL = SSL_ERROR_SSL;
static const int cssl_BIO_TYPE_SOURCE_SINK = BIO_TYPE_SOURCE_SINK;
static const int cssl_BIO_CTRL_FLUSH = BIO_CTRL_FLUSH;
static const int cssl_MBSTRING_ASC = MBSTRING_ASC;
static const unsigned int cssl_X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS = X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS;
static const unsigned int cssl_X509_CHECK_FLAG_NEVER_CHECK_SUBJECT = X509_CHECK_FLAG_NEVER_CHECK_SUBJECT;
static const unsigned long cssl_SRTP_AES128_CM_SHA1_80 = SRTP_AES128_CM_SHA1_80;
static const unsigned long cssl_SRTP_AEAD_AES_128_GCM = SRTP_AEAD_AES_128_GCM;

// MARK: Function-like macros

static inline long cssl_DTLSv1_get_timeout(SSL *ssl, struct timeval *timeout) {
    return DTLSv1_get_timeout(ssl, timeout);
}

static inline long cssl_DTLSv1_handle_timeout(SSL *ssl) { return DTLSv1_handle_timeout(ssl); }

static inline long cssl_SSL_set_mtu(SSL *ssl, long mtu) { return SSL_set_mtu(ssl, mtu); }

static inline long cssl_BIO_set_mem_eof_return(BIO *bio, long value) { return BIO_set_mem_eof_return(bio, value); }

static inline long cssl_SSL_CTX_set_min_proto_version(SSL_CTX *context, int version) {
    return SSL_CTX_set_min_proto_version(context, version);
}

static inline long cssl_SSL_CTX_set_max_proto_version(SSL_CTX *context, int version) {
    return SSL_CTX_set_max_proto_version(context, version);
}

static inline long cssl_SSL_CTX_set1_groups_list(SSL_CTX *context, const char *groups) {
    return SSL_CTX_set1_groups_list(context, groups);
}

// The server name sent in the ClientHello's server_name extension (SNI).
static inline long cssl_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

static inline EVP_PKEY *cssl_EVP_EC_gen(const char *curve) { return EVP_EC_gen(curve); }

#endif
