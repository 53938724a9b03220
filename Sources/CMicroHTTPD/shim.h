#ifndef RECORDS_CMICROHTTPD_SHIM_H
#define RECORDS_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

// libmicrohttpd's start and info functions are variadic, which Swift does
// not import; these fixed-signature wrappers are what RecordsWeb calls.

/// Starts a daemon with its options given as an `MHD_OPTION_END`-terminated
/// array.
static inline struct MHD_Daemon *records_mhd_start(unsigned int flags, uint16_t port,
                                                   MHD_AccessHandlerCallback handler, void *handler_context,
                                                   const struct MHD_OptionItem *options) {
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_context,
                            MHD_OPTION_ARRAY, options, MHD_OPTION_END);
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

#endif
