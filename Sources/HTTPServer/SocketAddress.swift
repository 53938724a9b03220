import CMicroHTTPD
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 socket address parsed from its literal.
struct SocketAddress {
    let port: UInt16
    let isIPv6: Bool
    private let storage: sockaddr_storage
    let display: String

    init(host: String, port: UInt16) throws {
        var storage = sockaddr_storage()
        self.port = port
        if host.contains(":") {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address.sin6_addr) == 1 else {
                throw ServerError(message: "\(host) is not an IPv6 address")
            }
            withUnsafeBytes(of: address) { bytes in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
            }
            isIPv6 = true
            display = "[\(host)]:\(port)"
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
                throw ServerError(message: "\(host) is not an IP address (use 127.0.0.1, 0.0.0.0, ::1 or ::)")
            }
            withUnsafeBytes(of: address) { bytes in
                withUnsafeMutableBytes(of: &storage) { $0.copyMemory(from: bytes) }
            }
            isIPv6 = false
            display = "\(host):\(port)"
        }
        self.storage = storage
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        withUnsafeBytes(of: storage) { body($0.baseAddress!.assumingMemoryBound(to: sockaddr.self)) }
    }

    /// Whether the address is a loopback address.
    static func isLoopback(_ host: String) -> Bool {
        host == "::1" || host.hasPrefix("127.") || host == "localhost"
    }

    /// The address's text (`127.0.0.1`, `::1`); empty for another family.
    /// It is written for every request (its client), so an IPv4 address
    /// is written here, digit by digit, and no array is made for either.
    static func describe(_ address: UnsafePointer<sockaddr>) -> String {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let value = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                UInt32(bigEndian: $0.pointee.sin_addr.s_addr)
            }
            var text = ""
            text.reserveCapacity(15)
            for shift: UInt32 in [24, 16, 8, 0] {
                if shift != 24 { text += "." }
                text += String((value >> shift) & 0xFF)
            }
            return text
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
                var raw = ipv6.pointee.sin6_addr
                return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { text in
                    guard let start = text.baseAddress, inet_ntop(AF_INET6, &raw, start, socklen_t(text.count)) != nil
                    else { return "" }
                    return String(cString: start)
                }
            }
        default:
            return ""
        }
    }
}
