import Foundation
import HTTPServer
import RecordsApp

/// The Users app in the API: a program registers an account at
/// `POST /api/v1/users` (no token; by the registration policy, see
/// ``registration(_:)``), and the token's user reads and changes their
/// own profile at `/api/v1/me`. The password hash is never in an answer;
/// the fields that identify the account (email, mobile) change only with
/// `currentPassword`, as on the profile page, so a token alone cannot move
/// the account to someone else's address.
enum UsersAPI {
    /// The members of a profile, and `currentPassword`, which is only sent.
    static let fields: [APIField] = [
        field("firstName", .firstName, .text(maxLength: UserRules.maxNameLength), "The first name."),
        field("lastName", .lastName, .text(maxLength: UserRules.maxNameLength), "The last name."),
        field("email", .email, .text(maxLength: 254), "The email address, the log-in name."),
        field("mobile", .mobile, .text(maxLength: 16), "The mobile number: 7-15 digits, optionally after a +."),
        field("state", .state, .text(maxLength: UserRules.maxPlaceLength), "The state."),
        field("city", .city, .text(maxLength: UserRules.maxPlaceLength), "The city."),
        field("pincode", .pincode, .text(maxLength: 10), "The postal code: 3-10 digits."),
        field("address", .address, .text(maxLength: UserRules.maxAddressLength), "The address."),
        field("gender", .gender, .choice(Gender.names), "The gender."),
        field("dateOfBirth", .dateOfBirth, .date, "The date of birth, ISO YYYY-MM-DD; empty to clear it."),
        field("imageName", .imageName, .text(maxLength: 255), "The profile picture's file name."),
        APIField(
            name: "currentPassword", field: UserField.currentPassword, kind: .text(maxLength: 1024), required: false,
            summary: "The user's password: needed to change the email or the mobile number; never sent back."),
    ]

    /// The members a registration must give, as on the registration page:
    /// what an account needs.
    static let registrationRequired: Set<String> = ["firstName", "lastName", "email"]

    /// The members of a registration: every profile member (the names and
    /// the email required, the rest optional), and the password typed
    /// twice, as on the registration page.
    static let registrationFields: [APIField] =
        fields.filter { $0.name != "currentPassword" }.map { field in
            var field = field
            field.required = registrationRequired.contains(field.name)
            return field
        } + [
            APIField(
                name: "password", field: UserField.password, kind: .text(maxLength: UserRules.maxPasswordLength),
                required: true,
                summary:
                    "The password: \(UserRules.minPasswordLength) to \(UserRules.maxPasswordLength) characters; never sent back."
            ),
            APIField(
                name: "passwordConfirmation", field: UserField.passwordConfirmation,
                kind: .text(maxLength: UserRules.maxPasswordLength), required: true,
                summary: "The password again, to catch a typing mistake."),
        ]

    /// The registration members that are secrets: left out of what an
    /// `Idempotency-Key` keeps, so that no fast hash of a password is
    /// stored.
    private static let secretMembers: Set<String> = ["password", "passwordConfirmation"]

    /// Who owns the `Idempotency-Key`s of registrations: nobody is signed
    /// in, and no user has this ID (IDs start at 1).
    static let registrationKeyOwner: Int64 = 0

    private static func field(_ name: String, _ label: UserField, _ kind: APIField.Kind, _ summary: String) -> APIField
    {
        APIField(name: name, field: label, kind: kind, required: false, summary: summary)
    }

    static func operations(_ context: WebContext) -> [APIOperation] {
        let users = context.users
        return [
            registration(context),
            APIOperation(
                method: "GET", path: "/me", operationID: "getProfile", summary: "The token's user's profile.",
                access: .read, tag: "me",
                answers: [
                    .init(
                        status: 200, summary: "The profile; its ETag is its version.", content: .json(schema: "Profile")
                    ),
                    .problem(401, "No valid token."),
                ]
            ) { request in
                let client = try request.requireClient()
                guard let user = try await users.user(id: client.user.id) else { throw Problem.unauthorized }
                let record = profile(user)
                return APIRoutes.json(.object(record.json), headers: [("ETag", record.entityTag)])
            },
            APIOperation(
                method: "PATCH", path: "/me", operationID: "updateProfile",
                summary: "Change some profile fields: those sent. The email and mobile number need currentPassword.",
                access: .write, tag: "me",
                parameters: [
                    .header("If-Match", "The version the change is based on: 412 when the profile changed since.")
                ],
                requestBody: .json(schema: "ProfileChanges"),
                answers: [
                    .init(status: 200, summary: "The profile as it is now.", content: .json(schema: "Profile")),
                    .problem(401, "No valid token."),
                    .problem(
                        403,
                        "The token may only read, or currentPassword is wrong or missing for the email or mobile number."
                    ),
                    .problem(412, "The profile changed since that version."),
                    .problem(422, "A member is unknown, of the wrong type or not valid."),
                    .problem(429, "Too many wrong passwords: wait before trying again."),
                ],
                body: .bytes(limit: APIRoutes.bodyLimit)
            ) { request in
                let client = try request.requireWriter()
                let version = try APIRoutes.ifMatch(request)
                let input = try APIInput(
                    try JSONValue.parse(request.body), fields: fields, kind: "profile", creating: false)
                let changes = ProfileChanges(
                    firstName: input.text("firstName"), lastName: input.text("lastName"), email: input.text("email"),
                    mobile: input.text("mobile"), state: input.text("state"), city: input.text("city"),
                    pincode: input.text("pincode"), address: input.text("address"), gender: input.text("gender"),
                    dateOfBirth: input.text("dateOfBirth"), imageName: input.text("imageName"))
                let password = input.text("currentPassword")
                let throttle = context.accounts.throttle
                if password != nil,
                    case .locked(let wait) = throttle.check(email: client.user.email, client: request.clientAddress)
                {
                    throw Problem(
                        status: 429, code: "too-many-attempts",
                        detail: "Too many wrong passwords for this account. Try again in \(wait.components.seconds) s.",
                        headers: [("Retry-After", String(max(1, wait.components.seconds)))])
                }
                do {
                    let user = try await APIRoutes.validated(fields) {
                        try await context.accounts.passwordGate.run {
                            try await users.updateProfile(
                                id: client.user.id, with: changes, password: password, ifVersion: version)
                        }
                    }
                    if password != nil {
                        throttle.recordSuccess(email: client.user.email, client: request.clientAddress)
                    }
                    let record = profile(user)
                    return APIRoutes.json(.object(record.json), headers: [("ETag", record.entityTag)])
                } catch let error as AuthenticationError {
                    if password != nil {
                        throttle.recordFailure(email: client.user.email, client: request.clientAddress)
                    }
                    throw Problem(
                        status: 403, code: "password-required",
                        detail: error == .passwordRequired
                            ? "Changing the email or the mobile number needs currentPassword, the account's password."
                            : "currentPassword is not the account's password.",
                        errors: [("currentPassword", Problem.sentence(error.description))])
                } catch let error as VersionConflictError {
                    var problem = Problem(
                        status: 412, code: "version-mismatch",
                        detail:
                            "The profile changed since version \(error.expected): read it again and resend your change."
                    )
                    if let user = try await users.user(id: client.user.id) {
                        let current = profile(user)
                        problem.extra = [("current", .object(current.json))]
                        problem.headers = [("ETag", current.entityTag)]
                    }
                    throw problem
                }
            },
        ]
    }

    /// `POST /users`: registration from a program, as the registration
    /// page registers (``AccountPageHandlers/register(_:)``): the same
    /// policy (`records serve --registration`), the same checks and
    /// messages, the same log-in throttle per email and per address, and
    /// the same answer for an email that is taken (a 422 naming `email`,
    /// counted as a failed attempt, after the password was hashed as for
    /// a free one, so neither the time nor the count tells more than the
    /// page does).
    static func registration(_ context: WebContext) -> APIOperation {
        let users = context.users
        let accounts = context.accounts
        let idempotency = IdempotencyStore(database: context.database)
        let fields = registrationFields
        return APIOperation(
            method: "POST", path: "/users", operationID: "register",
            summary:
                "Register an account, when the server's registration policy lets anyone (no token needed). The answer is the new profile; make a token for it on the account page or with `records token create`.",
            access: .anyone, tag: "users",
            parameters: [
                .header(
                    "Idempotency-Key",
                    "Any text of 1 to 200 characters: the same key and members (the password aside) within 24 hours answers what the first request got, without a second account."
                )
            ],
            requestBody: .json(schema: "Registration"),
            answers: [
                .init(
                    status: 201,
                    summary: "Registered; Location is the profile's address (with a token of the account).",
                    content: .json(schema: "Profile")),
                .problem(400, "The body is not a JSON object, or the Idempotency-Key is malformed."),
                .problem(403, "Registration is closed on this server."),
                .problem(409, "A request with the same Idempotency-Key is still running."),
                .problem(413, "The body is larger than \(APIRoutes.bodyLimit / 1024) KiB."),
                .problem(
                    422,
                    "A member is missing, unknown, of the wrong type or not valid, or the email is registered already; or the Idempotency-Key was used with other members."
                ),
                .problem(429, "Too many attempts for this email or from this address: wait before trying again."),
            ],
            body: .bytes(limit: APIRoutes.bodyLimit)
        ) { request in
            let policy = accounts.registration
            guard try await users.acceptsRegistration(under: policy) else { throw registrationClosed }
            let input = try APIInput(
                try JSONValue.parse(request.body), fields: fields, kind: "registration", creating: true)
            let form = RegistrationForm(
                firstName: input.text("firstName") ?? "", lastName: input.text("lastName") ?? "",
                email: input.text("email") ?? "", password: input.text("password") ?? "",
                passwordConfirmation: input.text("passwordConfirmation") ?? "", mobile: input.text("mobile") ?? "",
                state: input.text("state") ?? "", city: input.text("city") ?? "", pincode: input.text("pincode") ?? "",
                address: input.text("address") ?? "", gender: input.text("gender") ?? "",
                dateOfBirth: input.text("dateOfBirth") ?? "", imageName: input.text("imageName") ?? "")
            // Mistakes are answered before anything is counted or hashed, as
            // on the page: a typing mistake is no probe.
            _ = try await APIRoutes.validated(fields) { try form.validated(today: users.currentDate) }
            let withoutSecrets = JSONObject(input.object.members.filter { !secretMembers.contains($0.name) })
            return try await Idempotency.run(
                request, owner: registrationKeyOwner, store: idempotency,
                digestedBody: { JSONWriter.encode(.object(withoutSecrets)) }
            ) {
                let throttle = accounts.throttle
                let client = request.clientAddress
                if case .locked(let wait) = throttle.beginAttempt(email: form.email, client: client) {
                    throw Problem(
                        status: 429, code: "too-many-attempts", detail: LoginThrottling.lockedMessage(wait),
                        headers: [("Retry-After", String(max(1, wait.components.seconds)))])
                }
                let user: User
                do {
                    user = try await APIRoutes.validated(fields) {
                        try await accounts.passwordGate.run { try await users.register(form, policy: policy) }
                    }
                } catch is RegistrationClosedError {
                    // Closed since the policy was read: nothing was checked.
                    throttle.cancelAttempt(email: form.email, client: client)
                    throw registrationClosed
                }
                // Any failure above (the email taken) stays counted, as on the page.
                throttle.attemptSucceeded(email: form.email, client: client)
                let record = profile(user)
                return APIRoutes.json(
                    .object(record.json), status: 201,
                    headers: [("Location", "\(APIOperation.prefix)/me"), ("ETag", record.entityTag)])
            }
        }
    }

    /// The answer while registration is closed: nothing was checked or
    /// written.
    static let registrationClosed = Problem(
        status: 403, code: "registration-closed",
        detail:
            "Registration is closed on this server. Ask whoever runs it for an account (they can add one with `records users register`)."
    )

    /// The profile as the API sends it: never the password or its hash.
    static func profile(_ user: User) -> APIRecord {
        APIRecord(
            id: user.id, version: user.version,
            members: [
                ("firstName", .string(user.firstName)), ("lastName", .string(user.lastName)),
                ("email", .string(user.email)), ("mobile", .string(user.mobile)), ("state", .string(user.state)),
                ("city", .string(user.city)), ("pincode", .string(user.pincode)), ("address", .string(user.address)),
                ("gender", .string(user.gender.name)), ("dateOfBirth", .string(user.dateOfBirth)),
                ("imageName", .string(user.imageName)),
            ])
    }
}
