#!/usr/bin/env bash
# Makes sure the system libraries the package links against are installed,
# installing them from Debian's packages when they are not. Cheap and silent
# when everything is already there, so it can run before every build.
set -euo pipefail

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! pkg-config --exists sqlite3 2>/dev/null || [ ! -f /usr/include/sqlite3.h ]; then
    missing+=(libsqlite3-dev)
fi
# OpenSSL 3's libcrypto, for scrypt in PasswordHashing.
if ! pkg-config --exists 'libcrypto >= 3' 2>/dev/null || [ ! -f /usr/include/openssl/evp.h ]; then
    missing+=(libssl-dev)
fi
# GNU libmicrohttpd, the HTTP server behind `records serve` (RecordsWeb).
if ! pkg-config --exists libmicrohttpd 2>/dev/null || [ ! -f /usr/include/microhttpd.h ]; then
    missing+=(libmicrohttpd-dev)
fi
# The sqlite3 shell, with which scripts/crash-test.sh inspects databases.
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
# The records tests check the man page with groff and man, identify
# pictures with file, and drive password prompts on a terminal with script.
command -v groff >/dev/null 2>&1 || missing+=(groff-base)
command -v man >/dev/null 2>&1 || missing+=(man-db)
command -v file >/dev/null 2>&1 || missing+=(file)
command -v script >/dev/null 2>&1 || missing+=(bsdutils)
# The `records serve` tests fetch pages with curl and make a throwaway TLS
# certificate with openssl.
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)

if [ ${#missing[@]} -gt 0 ]; then
    echo "bootstrap: installing ${missing[*]}" >&2
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
