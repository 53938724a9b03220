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
        let collected = Collected()
        withExtendedLifetime(collected) {
            _ = records_mhd_request_values(connection, collectValue, Unmanaged.passUnretained(collected).toOpaque())
        }
        var request = Request(
            method: method.uppercased(), path: path, query: collected.query, headers: collected.headers,
            cookies: collected.cookies, clientAddress: clientAddress(connection), isSecure: isSecure)
        if request.path.isEmpty { request.path = "/" }
        return request
    }

    /// A request's headers (their names lowercased), cookies and query
    /// arguments, gathered in one pass over libmicrohttpd's list.
    final class Collected {
        var headers: [String: String] = [:]
        var cookies: [String: String] = [:]
        var query: [String: String] = [:]
    }

    static let collectValue: MHD_KeyValueIterator = { context, kind, key, value in
        guard let context, let key else { return .YES }
        let collected = Unmanaged<Collected>.fromOpaque(context).takeUnretainedValue()
        let text = value.map { String(cString: $0) } ?? ""
        // The first of a repeated name wins, as browsers send the most
        // specific cookie first.
        switch kind {
        case .HEADER_KIND:
            let name = lowercasedName(key)
            if collected.headers[name] == nil { collected.headers[name] = text }
        case .COOKIE_KIND:
            let name = String(cString: key)
            if collected.cookies[name] == nil { collected.cookies[name] = text }
        case .GET_ARGUMENT_KIND:
            let name = String(cString: key)
            if collected.query[name] == nil { collected.query[name] = text }
        default:
            break
        }
        return .YES
    }

    /// A header's name with its ASCII letters lowercased (as
    /// `String.lowercased()` does to a name, which is ASCII), made in one
    /// pass over its bytes.
    static func lowercasedName(_ key: UnsafePointer<CChar>) -> String {
        let count = strlen(key)
        return key.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
            let name = UnsafeBufferPointer(start: bytes, count: count)
            guard name.contains(where: { (0x41...0x5A).contains($0) || $0 >= 0x80 }) else {
                return String(decoding: name, as: UTF8.self)
            }
            // Not ASCII (libmicrohttpd refuses such names; kept right anyway).
            if name.contains(where: { $0 >= 0x80 }) { return String(decoding: name, as: UTF8.self).lowercased() }
            return String(unsafeUninitializedCapacity: count) { buffer in
                for (index, byte) in name.enumerated() {
                    buffer[index] = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
                }
                return count
            }
        }
    }

    static func clientAddress(_ connection: OpaquePointer) -> String {
        guard let address = records_mhd_client_address(connection) else { return "" }
        return SocketAddress.describe(address)
    }
}
