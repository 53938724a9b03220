import Foundation
import HTTPServer
import RecordsApp

/// The Users app in the API: the token's user reads and changes their
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
        field("dateOfBirth", .dateOfBirth, .date, "The date of birth, YYYY-MM-DD."),
        field("imageName", .imageName, .text(maxLength: 255), "The profile picture's file name."),
        APIField(
            name: "currentPassword", label: UserField.currentPassword.rawValue, kind: .text(maxLength: 1024),
            required: false,
            summary: "The user's password: needed to change the email or the mobile number; never sent back."),
    ]

    private static func field(_ name: String, _ label: UserField, _ kind: APIField.Kind, _ summary: String) -> APIField
    {
        APIField(name: name, label: label.rawValue, kind: kind, required: false, summary: summary)
    }

    static func operations(_ context: WebContext) -> [APIOperation] {
        let users = context.users
        return [
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
