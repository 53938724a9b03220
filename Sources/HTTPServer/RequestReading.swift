import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The request as libmicrohttpd parsed it.
extension Callbacks {
    // MARK: - The request

    static func makeRequest(connection: OpaquePointer, method: String, path: String, isSecure: Bool)
        -> Request
    {
        var request = Request(
            method: method.uppercased(), path: path, query: values(connection, .GET_ARGUMENT_KIND),
            headers: values(connection, .HEADER_KIND, lowercased: true), cookies: values(connection, .COOKIE_KIND),
            clientAddress: clientAddress(connection), isSecure: isSecure)
        if request.path.isEmpty { request.path = "/" }
        return request
    }

    final class Collected {
        var values: [String: String] = [:]
        let lowercased: Bool
        init(lowercased: Bool) { self.lowercased = lowercased }
    }

    static func values(_ connection: OpaquePointer, _ kind: MHD_ValueKind, lowercased: Bool = false)
        -> [String: String]
    {
        let collected = Collected(lowercased: lowercased)
        withExtendedLifetime(collected) {
            _ = MHD_get_connection_values(
                connection, kind, collectValue, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.values
    }

    static let collectValue: MHD_KeyValueIterator = { context, _, key, value in
        guard let context, let key else { return .YES }
        let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
        var name = String(cString: key)
        if collected.lowercased { name = name.lowercased() }
        // The first of a repeated name wins, as browsers send the most
        // specific cookie first.
        if collected.values[name] == nil { collected.values[name] = value.map { String(cString: $0) } ?? "" }
        return .YES
    }

    static func clientAddress(_ connection: OpaquePointer) -> String {
        guard let address = records_mhd_client_address(connection) else { return "" }
        return SocketAddress.describe(address)
    }
}
