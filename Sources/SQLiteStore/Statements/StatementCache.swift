/// The connection's cache of prepared statements, by SQL text, holding at
/// most `capacity` of them: when full, the least recently used one goes.
///
/// A dictionary from SQL to the nodes of a doubly linked list kept in order
/// of use, most recent first: a hit, a miss and an eviction are all O(1).
/// A hit on the statement already at the front (a loop running the same
/// SQL) changes no link at all.
final class StatementCache {
    final class Node {
        let sql: String
        let statement: Statement
        // The dictionary owns the nodes; the links do not retain, so moving
        // a node costs no reference counting.
        unowned(unsafe) var previous: Node?
        unowned(unsafe) var next: Node?

        init(sql: String, statement: Statement) {
            self.sql = sql
            self.statement = statement
        }
    }

    let capacity: Int
    private var nodes: [String: Node] = [:]
    /// The most recently used node.
    private unowned(unsafe) var head: Node?
    /// The least recently used node, the next to go.
    private unowned(unsafe) var tail: Node?

    init(capacity: Int) {
        self.capacity = capacity
    }

    var count: Int { nodes.count }

    /// The cached statement for `sql`, now the most recently used; nil when
    /// there is none.
    func statement(_ sql: String) -> Statement? {
        guard let node = nodes[sql] else { return nil }
        if node !== head {
            unlink(node)
            pushFront(node)
        }
        return node.statement
    }

    /// Whether `sql` has a cached statement (without counting as a use).
    func contains(_ sql: String) -> Bool { nodes[sql] != nil }

    /// Caches `statement` for `sql` as the most recently used, first
    /// evicting the least recently used one when the cache is full. Does
    /// nothing when `sql` is already cached or the capacity is 0.
    func insert(_ statement: Statement, for sql: String) {
        guard capacity > 0, nodes[sql] == nil else { return }
        if nodes.count >= capacity, let last = tail {
            unlink(last)
            nodes[last.sql] = nil
        }
        let node = Node(sql: sql, statement: statement)
        nodes[sql] = node
        pushFront(node)
    }

    /// The cached SQL, most recently used first (for tests).
    var sqlByRecentUse: [String] {
        var result: [String] = []
        var node = head
        while let current = node {
            result.append(current.sql)
            node = current.next
        }
        return result
    }

    func removeAll() {
        head = nil
        tail = nil
        nodes.removeAll()
    }

    private func unlink(_ node: Node) {
        if let previous = node.previous { previous.next = node.next } else { head = node.next }
        if let next = node.next { next.previous = node.previous } else { tail = node.previous }
        node.previous = nil
        node.next = nil
    }

    private func pushFront(_ node: Node) {
        node.next = head
        node.previous = nil
        head?.previous = node
        head = node
        if tail == nil { tail = node }
    }
}
