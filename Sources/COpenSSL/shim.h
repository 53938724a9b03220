#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

// Only what PasswordHashing uses: scrypt, random bytes, constant-time
// comparison, cleansing and the error queue. Hiding the deprecated API keeps
// Swift from importing (and code from reaching for) what OpenSSL 3 retired.
#define OPENSSL_NO_DEPRECATED 1

#include <openssl/opensslv.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#if OPENSSL_VERSION_NUMBER < 0x30000000L
#error "PasswordHashing needs OpenSSL 3 (Debian: libssl-dev)"
#endif
#ifdef OPENSSL_NO_SCRYPT
#error "PasswordHashing needs an OpenSSL built with scrypt"
#endif

#endif
