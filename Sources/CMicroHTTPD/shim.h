#ifndef RECORDS_CMICROHTTPD_SHIM_H
#define RECORDS_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <poll.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

// libmicrohttpd's start and info functions are variadic, which Swift does
// not import; these fixed-signature wrappers are what RecordsWeb calls.

/// Starts a daemon with its options given as an `MHD_OPTION_END`-terminated
/// array; `policy` decides on each accepted connection before anything else.
static inline struct MHD_Daemon *records_mhd_start(unsigned int flags, uint16_t port,
                                                   MHD_AcceptPolicyCallback policy, void *policy_context,
                                                   MHD_AccessHandlerCallback handler, void *handler_context,
                                                   const struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, policy, policy_context, handler, handler_context,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
}

/// accept(2) of a connection whose socket is close-on-exec and
/// non-blocking from the start (accept4 on Linux, which glibc declares only
/// under _GNU_SOURCE); -1 with errno set on failure.
static inline int records_accept(int listening, struct sockaddr *address, socklen_t *length) {
#if defined(__linux__) && defined(SYS_accept4)
    return (int)syscall(SYS_accept4, listening, address, length, SOCK_CLOEXEC | SOCK_NONBLOCK);
#else
    int fd = accept(listening, address, length);
    if (fd >= 0) {
        fcntl(fd, F_SETFD, FD_CLOEXEC);
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    return fd;
#endif
}

/// Calls `iterator` for each header, cookie and query argument of the
/// request, in one pass (the kinds form a mask in C, which Swift's closed
/// enum cannot hold); the number of pairs.
static inline int records_mhd_request_values(struct MHD_Connection *connection, MHD_KeyValueIterator iterator,
                                             void *context) {
    return MHD_get_connection_values(connection, (enum MHD_ValueKind)(MHD_HEADER_KIND | MHD_COOKIE_KIND |
                                                                      MHD_GET_ARGUMENT_KIND),
                                     iterator, context);
}

/// The port the daemon listens on (useful when it was started on port 0).
static inline uint16_t records_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/// The client's address of a connection, or NULL.
static inline const struct sockaddr *records_mhd_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info ? info->client_addr : NULL;
}

/// The socket of a connection, or -1.
static inline int records_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? info->connect_fd : -1;
}

/// Sends `count` bytes on the connection's socket (through its TLS session
/// when it has one), waiting up to `timeout_ms` each time the socket cannot
/// take more; 0 once all are sent, -1 otherwise.
///
/// For an answer libmicrohttpd cannot queue: it takes a response only on
/// the first call of the access handler or once the whole body is in, never
/// while a body arrives. Call it from the access handler (the connection's
/// own thread, between libmicrohttpd's reads and writes), then return
/// `MHD_NO` so that libmicrohttpd closes the connection.
static inline int records_mhd_send_raw(struct MHD_Connection *connection, const void *bytes, size_t count,
                                       int timeout_ms) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL) return -1;
    const int fd = info->connect_fd;
    const union MHD_ConnectionInfo *tls = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    gnutls_session_t session = tls ? (gnutls_session_t)tls->tls_session : NULL;
    const char *next = (const char *)bytes;
    size_t left = count;
    while (left > 0) {
        ssize_t sent;
        int again;
        if (session != NULL) {
            sent = gnutls_record_send(session, next, left);
            again = sent == GNUTLS_E_AGAIN || sent == GNUTLS_E_INTERRUPTED;
        } else {
            sent = send(fd, next, left, MSG_NOSIGNAL);
            again = sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
        }
        if (sent > 0) {
            next += sent;
            left -= (size_t)sent;
            continue;
        }
        if (!again) return -1;
        struct pollfd writable = {.fd = fd, .events = POLLOUT, .revents = 0};
        if (poll(&writable, 1, timeout_ms) <= 0) return -1;
    }
    return 0;
}

/// Checks a certificate chain and private key, both PEM, before the daemon
/// is given them: 0 when they serve, 1 when `certificate` holds no
/// certificate, 2 when `key` holds no unencrypted private key, 3 when the
/// key is not the certificate's, or GnuTLS's (negative) error code.
static inline int records_tls_check(const char *certificate, const char *key) {
    gnutls_datum_t chain = {(unsigned char *)certificate, (unsigned int)strlen(certificate)};
    gnutls_datum_t secret = {(unsigned char *)key, (unsigned int)strlen(key)};
    gnutls_x509_crt_t *list = NULL;
    unsigned int count = 0;
    if (gnutls_x509_crt_list_import2(&list, &count, &chain, GNUTLS_X509_FMT_PEM, 0) < 0) return 1;
    for (unsigned int index = 0; index < count; index++) gnutls_x509_crt_deinit(list[index]);
    gnutls_free(list);
    if (count == 0) return 1;
    gnutls_x509_privkey_t parsed;
    int result = gnutls_x509_privkey_init(&parsed);
    if (result < 0) return result;
    result = gnutls_x509_privkey_import2(parsed, &secret, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_x509_privkey_deinit(parsed);
    if (result < 0) return 2;
    gnutls_certificate_credentials_t credentials;
    result = gnutls_certificate_allocate_credentials(&credentials);
    if (result < 0) return result;
    result = gnutls_certificate_set_x509_key_mem(credentials, &chain, &secret, GNUTLS_X509_FMT_PEM);
    gnutls_certificate_free_credentials(credentials);
    if (result == GNUTLS_E_CERTIFICATE_KEY_MISMATCH) return 3;
    return result < 0 ? result : 0;
}

#endif
