import Foundation
import HTTPServer
import RecordsApp
import Replication

/// How the server stands, for its signed-in users (`/status`) and for
/// programs (`GET /api/v1/status`): whether its database file is still the
/// one it opened (writes are refused once it is not), whether the database
/// is replicated, where to, whether writes wait for the replica, and how
/// far behind the replica may be.
enum ServerStatus {
    /// The replication status now, or nil when the server does not
    /// replicate. Asking Litestream's control socket may take up to its
    /// timeout; it runs on the request's own thread.
    static func replication(_ context: WebContext) -> ReplicationStatus? {
        context.configuration.replicationStatus?()
    }

    /// The database file's loss, looked at now; nil while it is in place
    /// (or the database is in memory).
    static func databaseLoss(_ context: WebContext) -> DatabaseFileLoss? {
        context.databaseFile?.check()
    }

    /// Whether writes wait for the replica (`--durable`).
    static func durable(_ context: WebContext) -> Bool { context.configuration.durability != nil }

    /// The loss in a sentence for the page and the API (the path and
    /// inodes are in the server's log).
    static func sentence(_ loss: DatabaseFileLoss) -> String {
        "The database file \(loss.what) while the server ran: every write is refused (503) until the server is "
            + "restarted with the database back in place; reads come from the file as it was opened."
    }

    // MARK: - The page

    static func routes(_ context: WebContext) -> [Route] {
        [
            Route.get("/status") { request in
                let now = context.configuration.now()
                let content =
                    context.configuration.readReplica.map(replicaPage)
                    ?? page(
                        replication(context), durable: durable(context), databaseLoss: databaseLoss(context), now: now)
                return Layout.page(request, title: "Server status", content: content)
            }
        ]
    }

    /// The status of a read replica (`records serve --read-replica`).
    static func replicaPage(_ settings: ReadReplicaSettings) -> HTML {
        let primary: HTML = settings.primary.map { "<dt>Primary</dt><dd id=\"replica-primary\">\($0)</dd>" } ?? ""
        return """
            <h1>Server status</h1>
            <p id="replication-summary">This server serves a read-only copy of the database, which follows \
            the primary's commits about a second or two behind. Signing in, registering and every change \
            are made on the primary.</p>
            <dl class="details">
            <dt>Replica</dt><dd id="replica-source">\(settings.replica)</dd>
            \(primary)
            </dl>
            """
    }

    static func page(_ status: ReplicationStatus?, durable: Bool, databaseLoss: DatabaseFileLoss?, now: Date) -> HTML {
        let database: HTML =
            if let databaseLoss {
                "<p id=\"database-summary\" class=\"notice\">\(sentence(databaseLoss))</p>"
            } else {
                "<p id=\"database-summary\">The database file is the one the server opened: writes are accepted.</p>"
            }
        guard let status else {
            return """
                <h1>Server status</h1>
                \(database)
                <p id="replication-summary">This server does not replicate its database: a copy exists only \
                when someone makes one (<code>records backup</code>). Start it with \
                <code>records serve --replicate</code> to copy every change as it is made.</p>
                """
        }
        let lastSync: HTML =
            status.lastSyncAt.map { date in
                let absolute = date.formatted(Date.ISO8601FormatStyle())
                return "\(relativeTime(date, now: now)) <small>\(absolute)</small>"
            } ?? "not yet"
        let lag = status.lag(at: now).map { String(format: "%.1f s", $0) } ?? "unknown"
        let problem: HTML =
            status.lastProblem.map { "<dt>Last problem</dt><dd id=\"replication-problem\">\($0)</dd>" } ?? ""
        let summary: HTML =
            durable
            ? "Every change is acknowledged only once the replica holds it (durable mode): a change that cannot "
                + "be copied is refused with an error saying it is saved on this server only."
            : "Every change to the database is copied to the replica within about a second."
        return """
            <h1>Server status</h1>
            \(database)
            <p id="replication-summary">\(summary)</p>
            <dl class="details">
            <dt>Replica</dt><dd id="replication-replica">\(status.replica)</dd>
            <dt>State</dt><dd id="replication-state">\(status.state.rawValue)</dd>
            <dt>Last copied</dt><dd id="replication-last-sync">\(lastSync)</dd>
            <dt>Behind by at most</dt><dd id="replication-lag">\(lag)</dd>
            <dt>Restarts</dt><dd id="replication-restarts">\(status.restarts)</dd>
            \(problem)
            </dl>
            """
    }

    // MARK: - The API

    static func operation(_ context: WebContext) -> APIOperation {
        APIOperation(
            method: "GET", path: "/status", operationID: "getStatus",
            summary: "How the server stands: whether its database is replicated, and how far behind the replica is.",
            access: .read, tag: "status",
            answers: [
                .init(status: 200, summary: "The status.", content: .json(schema: "Status")),
                .problem(401, "No valid token."),
            ]
        ) { request in
            _ = try request.requireClient()
            return APIRoutes.json(
                json(
                    replication(context), durable: durable(context), databaseLoss: databaseLoss(context),
                    now: context.configuration.now()))
        }
    }

    static func json(_ status: ReplicationStatus?, durable: Bool, databaseLoss: DatabaseFileLoss?, now: Date)
        -> JSONValue
    {
        let database = JSONValue.object(
            JSONObject([
                ("writable", .bool(databaseLoss == nil)),
                ("problem", databaseLoss.map { .string(sentence($0)) } ?? .null),
            ]))
        guard let status else { return .object(JSONObject([("database", database), ("replication", .null)])) }
        var members = JSONObject([
            ("replica", .string(status.replica)), ("state", .string(status.state.rawValue)),
            ("durable", .bool(durable)),
            ("lastSyncAt", status.lastSyncAt.map { .string($0.formatted(Date.ISO8601FormatStyle())) } ?? .null),
            ("lagSeconds", status.lag(at: now).map { .number(($0 * 1000).rounded() / 1000) } ?? .null),
            ("restarts", .integer(Int64(status.restarts))),
        ])
        members.append("lastProblem", status.lastProblem.map { .string($0) } ?? .null)
        return .object(JSONObject([("database", database), ("replication", .object(members))]))
    }

    /// The OpenAPI schema of the status.
    static var schema: JSONValue {
        func type(_ name: String, nullable: Bool = false) -> JSONValue {
            .object(
                JSONObject([
                    ("type", nullable ? .array([.string(name), .string("null")]) : .string(name))
                ]))
        }
        let replication = JSONValue.object(
            JSONObject([
                ("type", .array([.string("object"), .string("null")])),
                (
                    "properties",
                    .object(
                        JSONObject([
                            ("replica", type("string")),
                            (
                                "state",
                                .object(
                                    JSONObject([
                                        ("type", .string("string")),
                                        (
                                            "enum",
                                            .array(
                                                ["starting", "replicating", "restarting", "stopped"].map {
                                                    .string($0)
                                                })
                                        ),
                                    ]))
                            ),
                            ("durable", type("boolean")),
                            ("lastSyncAt", type("string", nullable: true)),
                            ("lagSeconds", type("number", nullable: true)),
                            ("restarts", type("integer")),
                            ("lastProblem", type("string", nullable: true)),
                        ]))
                ),
                (
                    "required",
                    .array(
                        ["replica", "state", "durable", "lastSyncAt", "lagSeconds", "restarts", "lastProblem"].map {
                            .string($0)
                        })
                ),
            ]))
        let database = JSONValue.object(
            JSONObject([
                ("type", .string("object")),
                (
                    "properties",
                    .object(JSONObject([("writable", type("boolean")), ("problem", type("string", nullable: true))]))
                ),
                ("required", .array([.string("writable"), .string("problem")])),
            ]))
        return .object(
            JSONObject([
                ("type", .string("object")),
                ("properties", .object(JSONObject([("database", database), ("replication", replication)]))),
                ("required", .array([.string("database"), .string("replication")])),
            ]))
    }
}
