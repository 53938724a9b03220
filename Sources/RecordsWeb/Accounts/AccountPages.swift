import Foundation
import RecordsApp

/// The Users app's screens: log in, register, log out, the profile with
/// its edit form, changing the password, and the list of the user's
/// sessions.
///
/// | route | who | what |
/// | --- | --- | --- |
/// | `GET /login`, `POST /login` | anyone | log in; `next` leads back to the page asked for; throttled |
/// | `GET /register`, `POST /register` | anyone, by the registration policy | a new account, signed in; throttled |
/// | `POST /logout` | signed in | ends the session on the server |
/// | `GET /account` | signed in | the profile and the sessions |
/// | `GET /account/edit`, `POST /account/edit` | signed in | edit the profile (email, mobile: with the password, throttled) |
/// | `GET /account/password`, `POST /account/password` | signed in | change the password; throttled |
/// | `GET /account/picture` | signed in | one's profile picture, shown on `/account` (`ETag`, `If-None-Match` answered without reading it) |
/// | `POST /account/picture` | signed in | upload it (multipart, field `picture`) |
/// | `GET /account/picture/remove`, `POST /account/picture/remove` | signed in | asks, then removes it |
/// | `GET /account/sessions/:id/revoke`, `POST /account/sessions/:id/revoke` | signed in | asks, then ends one of one's sessions |
/// | `/account/tokens...` | signed in | tokens for programs (``AccountTokenPages``) |
///
/// "Throttled": behind the log-in throttle (``LoginThrottling``), which
/// counts each password checked.
enum AccountPages {
    static func routes(_ context: WebContext) -> [Route] {
        let pages = AccountPageHandlers(context: context)
        // The routes that check a password, each behind the log-in
        // throttle, which counts the attempts (``LoginThrottling``).
        let loggingIn = pages.throttled(screen: pages.logInAttempt) { request, message in
            pages.loginPage(request, email: request.form.text("email"), error: message, status: 429)
        }
        let registering = pages.throttled(screen: pages.registrationAttempt) { request, message in
            pages.registrationPage(request, values: request.form.fields, errors: [:], summary: message, status: 429)
        }
        let savingProfile = pages.throttled(screen: pages.profileAttempt) { request, message in
            pages.profilePage(request, values: request.form.fields, errors: [:], summary: message, status: 429)
        }
        let changingPassword = pages.throttled(screen: pages.passwordAttempt) { request, message in
            pages.passwordPage(request, errors: [:], summary: message, status: 429)
        }
        var routes: [Route] = [Route.get("/login", access: .anyone) { request in pages.loginForm(request) }]
        routes += loggingIn.routes([
            Route.post(
                "/login", access: .anyone,
                invalidForm: { request, problem in
                    pages.loginPage(
                        request, email: request.form.text("email"), error: problem.description,
                        status: problem.status)
                },
                handler: { request in try await pages.logIn(request) })
        ])
        routes += [Route.get("/register", access: .anyone) { request in try await pages.registrationForm(request) }]
        routes += registering.routes([
            Route.post(
                "/register", access: .anyone,
                invalidForm: { request, problem in
                    pages.registrationPage(
                        request, values: request.form.fields, errors: [:], summary: problem.description,
                        status: problem.status)
                },
                handler: { request in try await pages.register(request) })
        ])
        routes += [
            Route.post("/logout") { request in try await pages.logOut(request) },
            Route.get("/account") { request in try await pages.account(request) },
            Route.get("/account/edit") { request in try await pages.profileForm(request) },
        ]
        routes += savingProfile.routes([
            Route.post(
                "/account/edit",
                invalidForm: { request, problem in
                    pages.profilePage(
                        request, values: request.form.fields, errors: [:], summary: problem.description,
                        status: problem.status)
                },
                handler: { request in try await pages.saveProfile(request) })
        ])
        routes += [Route.get("/account/password") { request in pages.passwordPage(request, errors: [:]) }]
        routes += changingPassword.routes([
            Route.post(
                "/account/password",
                invalidForm: { request, problem in
                    pages.passwordPage(request, errors: [:], summary: problem.description, status: problem.status)
                },
                handler: { request in try await pages.changePassword(request) })
        ])
        routes += [
            Route.get("/account/sessions/:id/revoke") { request in try await pages.confirmSessionEnd(request) },
            Route.post("/account/sessions/:id/revoke") { request in try await pages.revokeSession(request) },
        ]
        routes += pages.pictureRoutes()
        routes += AccountTokenPages.routes(pages)
        return routes
    }
}

/// The form fields of the Users app's forms, by the name the HTML uses,
/// with their labels and the ``UserField`` whose errors they show.
enum UserFormField: String, CaseIterable {
    case firstName, lastName, email, password, passwordConfirmation, currentPassword
    case mobile, state, city, pincode, address, gender, dateOfBirth, imageName

    var userField: UserField {
        switch self {
        case .firstName: .firstName
        case .lastName: .lastName
        case .email: .email
        case .password: .password
        case .passwordConfirmation: .passwordConfirmation
        case .currentPassword: .currentPassword
        case .mobile: .mobile
        case .state: .state
        case .city: .city
        case .pincode: .pincode
        case .address: .address
        case .gender: .gender
        case .dateOfBirth: .dateOfBirth
        case .imageName: .imageName
        }
    }

    /// The label the form shows, which the field's messages start with.
    var label: String { userField.label }

    /// Whether the field must be filled: what an account needs. The rest
    /// of the profile is optional.
    var isRequired: Bool {
        switch self {
        case .firstName, .lastName, .email, .password, .passwordConfirmation: true
        default: false
        }
    }

    /// The profile's fields, in form order (the picture is uploaded by a
    /// form of its own).
    static let profile: [UserFormField] = [
        .firstName, .lastName, .email, .mobile, .state, .city, .pincode, .address, .gender, .dateOfBirth,
    ]

    /// The registration form's fields: what an account needs.
    static let registration: [UserFormField] = [.firstName, .lastName, .email, .password, .passwordConfirmation]

    /// Each field's message, by form field name.
    static func errors(_ error: ValidationError) -> [String: String] {
        var errors: [String: String] = [:]
        for problem in error.problems {
            // A problem of no field of the form (none given) goes at the top.
            let key = allCases.first { $0.userField.rawValue == problem.field }?.rawValue ?? "form"
            if errors[key] == nil { errors[key] = problem.message }
        }
        return errors
    }
}

struct AccountPageHandlers: Sendable {
    let context: WebContext
    var accounts: Accounts { context.accounts }
    var users: UsersStore { context.users }

    // MARK: - Log in

    func loginForm(_ request: Request) -> Response {
        if request.session != nil { return .redirect(to: next(request.query["next"])) }
        var response = loginPage(request, email: "", error: nil, status: 200)
        // A session cookie that opened nothing (expired, revoked) is dropped.
        if request.cookies[WebApp.sessionCookie] != nil {
            response = response.setting(.deleting(WebApp.sessionCookie, secure: secure(request)))
        }
        return response
    }

    func loginPage(_ request: Request, email: String, error: String?, status: Int) -> Response {
        let nextPath = request.form["next"] ?? request.query["next"]
        return Layout.page(
            request, title: "Log in", status: status,
            content: """
                <h1>Log in</h1>
                \(Field.errorSummary(error))
                <form method="post" action="/login" class="card" id="login-form">
                \(Layout.csrfField(request))
                \(nextPath.map { "<input type=\"hidden\" name=\"next\" value=\"\(next($0))\">" as HTML })
                \(Field.input("email", label: "Email", value: email, type: "email", required: true, autocomplete: "username"))
                \(Field.input("password", label: "Password", type: "password", required: true, autocomplete: "current-password"))
                <div class="actions"><button type="submit" id="login-submit">Log in</button>
                <a href="/register">Register</a></div>
                </form>
                """)
    }

    /// A log-in, for the throttle: an attempt for the email typed, unless
    /// a field is empty.
    func logInAttempt(_ request: Request) -> LoginThrottling.Attempt {
        let email = request.form.text("email")
        if email.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty || request.form.text("password").isEmpty {
            return .refused(
                loginPage(request, email: email, error: "Enter your email and your password.", status: 422))
        }
        return .account(email)
    }

    /// Logs in (counted by the throttle: ``logInAttempt(_:)``).
    func logIn(_ request: Request) async throws -> Response {
        let email = request.form.text("email")
        let password = request.form.text("password")
        let user: User
        do {
            let users = self.users
            user = try await accounts.passwordGate.run {
                try await users.authenticate(email: email, password: password)
            }
        } catch AuthenticationError.invalidCredentials {
            return loginPage(request, email: email, error: "Wrong email or password.", status: 422)
        }
        request.settleLoginAttempt(.succeeded)
        let greeting = user.firstName.isEmpty ? "Welcome back." : "Welcome back, \(user.firstName)."
        return try await signIn(user, request: request, to: next(request.form["next"]), flash: greeting)
    }

    /// Starts a new session (a new token at every log-in) and ends the
    /// one the browser had, if any.
    private func signIn(_ user: User, request: Request, to path: String, flash: String) async throws -> Response {
        if let old = request.cookies[WebApp.sessionCookie].flatMap({ SessionToken($0) }) {
            try await accounts.sessions.revoke(token: old)
        }
        let (token, _) = try await accounts.sessions.create(
            userID: user.id, userAgent: request.headers["user-agent"], clientAddress: request.clientAddress)
        return Layout.redirect(to: path, flash: flash, request: request)
            .setting(accounts.cookie(for: token, request: request, configuration: context.configuration))
    }

    // MARK: - Register

    func registrationForm(_ request: Request) async throws -> Response {
        guard try await users.acceptsRegistration(under: accounts.registration) else { return closedPage(request) }
        return registrationPage(request, values: ["gender": Gender.unspecified.name], errors: [:])
    }

    func registrationPage(
        _ request: Request, values: [String: String], errors: [String: String], summary: String? = nil,
        status: Int = 200
    ) -> Response {
        // An optional field posted with a value (an older form, a script)
        // is shown too, so that its error and its text are not lost.
        let posted = UserFormField.profile.filter { field in
            !UserFormField.registration.contains(field)
                && (errors[field.rawValue] != nil
                    || (field != .gender
                        && !(values[field.rawValue] ?? "").trimmingCharacters(in: .whitespaces).isEmpty))
        }
        let fields = UserFormField.registration + posted
        return Layout.page(
            request, title: "Register", status: status,
            content: """
                <h1>Register</h1>
                \(Field.errorSummary(summary ?? errors["form"] ?? (errors.isEmpty ? nil : "Check the fields marked below.")))
                <form method="post" action="/register" class="card" id="register-form">
                \(Layout.csrfField(request))
                \(fields.map { field($0, values: values, errors: errors) })
                <p class="hint">Your address, date of birth, picture and the rest of your profile are optional: \
                add them later on your account page.</p>
                <div class="actions"><button type="submit" id="register-submit">Register</button>
                <a href="/login">Log in instead</a></div>
                </form>
                """)
    }

    /// A registration, for the throttle: an attempt for the email typed,
    /// unless registration is closed or the form has mistakes (refused
    /// before anything is counted or hashed: a typing mistake is no probe).
    func registrationAttempt(_ request: Request) async throws -> LoginThrottling.Attempt {
        guard try await users.acceptsRegistration(under: accounts.registration) else {
            return .refused(closedPage(request))
        }
        let registration = Self.registrationForm(request.form)
        do {
            _ = try registration.validated(today: users.currentDate)
        } catch let error as ValidationError {
            return .refused(
                registrationPage(
                    request, values: request.form.fields, errors: UserFormField.errors(error), status: 422))
        }
        return .account(registration.email)
    }

    private static func registrationForm(_ form: Form) -> RegistrationForm {
        RegistrationForm(
            firstName: form.text("firstName"), lastName: form.text("lastName"), email: form.text("email"),
            password: form.text("password"), passwordConfirmation: form.text("passwordConfirmation"),
            mobile: form.text("mobile"), state: form.text("state"), city: form.text("city"),
            pincode: form.text("pincode"), address: form.text("address"), gender: form.text("gender"),
            dateOfBirth: form.text("dateOfBirth"), imageName: form.text("imageName"))
    }

    /// Registers an account. Each attempt counts against the log-in
    /// throttle (``registrationAttempt(_:)``), for the email typed and for
    /// the client's address, until it succeeds; and the password is hashed
    /// whether or not the email is taken. So the answer "email is already
    /// registered" cannot be used to test which emails have accounts any
    /// faster than logging in.
    func register(_ request: Request) async throws -> Response {
        let form = request.form
        let registration = Self.registrationForm(form)
        let (users, policy) = (self.users, accounts.registration)
        let user: User
        do {
            user = try await accounts.passwordGate.run { try await users.register(registration, policy: policy) }
        } catch let error as ValidationError {
            // The email is taken: counted, as a failed log-in is.
            return registrationPage(
                request, values: form.fields, errors: UserFormField.errors(error), status: 422)
        } catch is RegistrationClosedError {
            // Closed since the throttle looked: nothing was checked.
            request.settleLoginAttempt(.notAnAttempt)
            return closedPage(request)
        }
        request.settleLoginAttempt(.succeeded)
        let greeting =
            user.firstName.isEmpty ? "Your account is ready." : "Welcome, \(user.firstName). Your account is ready."
        return try await signIn(user, request: request, to: "/", flash: greeting)
    }

    private func closedPage(_ request: Request) -> Response {
        Layout.page(
            request, title: "Registration is closed", status: 403,
            content: """
                <h1>Registration is closed</h1>
                <p class="notice" id="registration-closed">This server does not take new accounts from the web. \
                Ask whoever runs it for an account (they can add one with <code>records users register</code>).</p>
                <p><a href="/login">Log in</a></p>
                """)
    }

    // MARK: - Log out

    func logOut(_ request: Request) async throws -> Response {
        if let token = request.cookies[WebApp.sessionCookie].flatMap({ SessionToken($0) }) {
            try await accounts.sessions.revoke(token: token)
        }
        return Layout.redirect(to: "/login", flash: "You have logged out.", request: request)
            .setting(.deleting(WebApp.sessionCookie, secure: secure(request)))
    }

    // MARK: - Profile

    private func signedInUser(_ request: Request) async throws -> (User, WebSession) {
        guard let session = request.session, let user = try await users.user(id: session.userID) else {
            throw HTTPError.notFound
        }
        return (user, session)
    }

    /// The account page; `tokenForm` is the state of its token form (a
    /// token just made, or a mistake), answered with `status`.
    func account(
        _ request: Request, tokenForm: TokenForm = TokenForm(), status: Int = 200, pictureError: String? = nil
    ) async throws -> Response {
        let (user, session) = try await signedInUser(request)
        let picture = try await pictureSection(request, userID: user.id, error: pictureError)
        let sessions = try await accounts.sessions.sessions(userID: user.id)
        let tokens = try await accounts.tokens.list(userID: user.id)
        // The optional fields not given say so, rather than show nothing.
        let details: [(String, String)] =
            [("Name", user.fullName), ("Email", user.email)]
            + [
                (.mobile, user.mobile), (.state, user.state), (.city, user.city), (.pincode, user.pincode),
                (.address, user.address), (.gender, user.gender == .unspecified ? "" : user.gender.name),
                (.dateOfBirth, user.dateOfBirth),
            ].map { (field: UserField, value: String) in (field.label, value.isEmpty ? "Not given" : value) }
        let now = context.configuration.now()
        let rows = sessions.map { item in Self.sessionRow(item, current: item.id == session.sessionID, now: now) }
        return Layout.page(
            request, title: "Your account", status: status,
            content: """
                <h1>Your account</h1>
                <dl class="details" id="profile" data-live-topics="users">
                \(details.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" as HTML })
                </dl>
                <div class="actions"><a class="button" href="/account/edit" id="edit-profile">Edit profile</a>
                <a class="button secondary" href="/account/password" id="change-password">Change password</a></div>
                \(picture)
                <h2>Your sessions</h2>
                <table id="sessions" class="stacked"><thead><tr><th>Browser</th><th>Address</th><th>Logged in</th>\
                <th>Last used</th><th><span class="visually-hidden">End</span></th></tr></thead>
                <tbody>\(rows)</tbody></table>
                \(tokensSection(request, tokens: tokens, form: tokenForm))
                """)
    }

    /// The profile form's fields as `user` has them, by field name.
    static func profileValues(_ user: User) -> [String: String] {
        [
            "firstName": user.firstName, "lastName": user.lastName, "email": user.email, "mobile": user.mobile,
            "state": user.state, "city": user.city, "pincode": user.pincode, "address": user.address,
            "gender": user.gender.name, "dateOfBirth": user.dateOfBirth, "imageName": user.imageName,
        ]
    }

    func profileForm(_ request: Request) async throws -> Response {
        let (user, _) = try await signedInUser(request)
        let values = Self.profileValues(user)
        let hidden = EditConflict.hiddenFields(
            version: user.version, originals: UserFormField.profile.map { ($0.rawValue, values[$0.rawValue] ?? "") })
        return profilePage(request, values: values, errors: [:], hidden: hidden)
    }

    /// The profile form; `hidden` defaults to the version and opening
    /// values the submitted form came with (see ``EditConflict``).
    func profilePage(
        _ request: Request, values: [String: String], errors: [String: String], summary: String? = nil,
        status: Int = 200, hidden: HTML? = nil
    ) -> Response {
        Layout.page(
            request, title: "Edit profile", status: status,
            content: """
                <h1>Edit profile</h1>
                \(Field.errorSummary(summary ?? errors["form"] ?? (errors.isEmpty ? nil : "Check the fields marked below.")))
                <form method="post" action="/account/edit" class="card" id="profile-form"\(EditConflict.liveAttributes(topic: "users", source: "/account/edit"))>
                \(Layout.csrfField(request))\(hidden ?? EditConflict.carried(request.form))
                \(UserFormField.profile.map { field($0, values: values, errors: errors) })
                \(Field.input("currentPassword", label: "Current password", error: errors["currentPassword"], type: "password", autocomplete: "current-password", hint: "Needed only to change your email or mobile number."))
                <div class="actions"><button type="submit" id="profile-submit">Save</button>
                <a href="/account">Cancel</a></div>
                </form>
                """)
    }

    /// A profile saved, for the throttle: with the current password, an
    /// attempt for the session's account (guessing the password through a
    /// stolen session is throttled like logging in); without it, none. A
    /// form with mistakes is refused before any password is looked at: a
    /// typing mistake is no guess.
    func profileAttempt(_ request: Request) throws -> LoginThrottling.Attempt {
        guard let session = request.session else { throw HTTPError.notFound }
        do {
            _ = try Self.profileChanges(request.form).validated(today: users.currentDate)
        } catch let error as ValidationError {
            return .refused(
                profilePage(request, values: request.form.fields, errors: UserFormField.errors(error), status: 422))
        }
        return request.form.text("currentPassword").isEmpty ? .notAnAttempt : .account(session.email)
    }

    /// The changes the profile form asks for: every field the form sent is
    /// written; one it left out stays as it is.
    private static func profileChanges(_ form: Form) -> ProfileChanges {
        ProfileChanges(
            firstName: form["firstName"], lastName: form["lastName"], email: form["email"], mobile: form["mobile"],
            state: form["state"], city: form["city"], pincode: form["pincode"], address: form["address"],
            gender: form["gender"], dateOfBirth: form["dateOfBirth"], imageName: form["imageName"])
    }

    /// Saves the profile. The email and the mobile number (the fields that
    /// identify the account) change only with the current password, so
    /// that a stolen session cookie cannot take the account over; a
    /// password typed is checked (``profileAttempt(_:)``), and a wrong one
    /// counts as a failed log-in (as does an email that is taken: see
    /// below).
    func saveProfile(_ request: Request) async throws -> Response {
        guard let session = request.session else { throw HTTPError.notFound }
        let form = EditConflict.resolved(request.form)
        guard let version = try EditConflict.submittedVersion(form) else {
            // No version: nothing saved over changes it may not have seen,
            // and no password was checked.
            request.settleLoginAttempt(.notAnAttempt)
            return try await profileConflict(request, form: form)
        }
        let changes = Self.profileChanges(form)
        let password = form.text("currentPassword")
        let users = self.users
        if password.isEmpty {
            do {
                try await users.updateProfile(id: session.userID, with: changes, password: nil, ifVersion: version)
            } catch is VersionConflictError {
                return try await profileConflict(request, form: form)
            } catch let error as ValidationError {
                return profilePage(request, values: form.fields, errors: UserFormField.errors(error), status: 422)
            } catch AuthenticationError.passwordRequired {
                return profilePage(
                    request, values: form.fields,
                    errors: ["currentPassword": "Enter your current password to change your email or mobile number."],
                    status: 422)
            }
            return Layout.redirect(to: "/account", flash: "Profile saved.", request: request)
        }
        do {
            _ = try await accounts.passwordGate.run {
                try await users.updateProfile(
                    id: session.userID, with: changes, password: password, ifVersion: version)
            }
        } catch is VersionConflictError {
            // The password was right (it is checked before the version).
            request.settleLoginAttempt(.succeeded)
            return try await profileConflict(request, form: form)
        } catch let error as ValidationError {
            // An email taken (the password was right) stays counted, so that
            // the form cannot test which emails are registered any faster
            // than logging in can.
            return profilePage(request, values: form.fields, errors: UserFormField.errors(error), status: 422)
        } catch AuthenticationError.wrongPassword {
            return profilePage(
                request, values: form.fields, errors: ["currentPassword": "The current password is wrong."],
                status: 422)
        }
        request.settleLoginAttempt(.succeeded)
        return Layout.redirect(to: "/account", flash: "Profile saved.", request: request)
    }

    /// The profile form after the profile was saved elsewhere (another
    /// browser, `records users edit`) since it was opened: theirs beside
    /// yours (see ``EditConflict``), 409. The password is asked again.
    private func profileConflict(_ request: Request, form: Form) async throws -> Response {
        let (user, _) = try await signedInUser(request)
        let stored = Self.profileValues(user)
        let values = EditConflict.values(
            form, stored: UserFormField.profile.map { ($0.rawValue, $0.label, stored[$0.rawValue] ?? "") })
        let password = Field.input(
            "currentPassword", label: "Current password", type: "password", autocomplete: "current-password",
            hint: "Needed only to change your email or mobile number.")
        let conflictForm = EditConflict.form(
            request, kind: "profile", formID: "profile-form", action: "/account/edit", reload: "/account/edit",
            topic: "users", values: values, version: user.version,
            field: { value, text in
                guard let field = UserFormField(rawValue: value.name) else { return "" }
                return self.field(field, values: [value.name: text], errors: [:])
            }, extra: password)
        return Layout.page(
            request, title: "Edit profile", status: 409,
            content: """
                <h1>Edit profile</h1>
                \(conflictForm)
                """)
    }

    // MARK: - Password

    func passwordPage(_ request: Request, errors: [String: String], summary: String? = nil, status: Int = 200)
        -> Response
    {
        Layout.page(
            request, title: "Change password", status: status,
            content: """
                <h1>Change password</h1>
                \(Field.errorSummary(summary ?? errors["form"] ?? (errors.isEmpty ? nil : "Check the fields marked below.")))
                <form method="post" action="/account/password" class="card" id="password-form">
                \(Layout.csrfField(request))
                \(Field.input("currentPassword", label: "Current password", error: errors["currentPassword"], type: "password", required: true, autocomplete: "current-password"))
                \(Field.input("password", label: "New password", error: errors["password"], type: "password", required: true, autocomplete: "new-password", hint: "\(UserRules.minPasswordLength) to \(UserRules.maxPasswordLength) characters."))
                \(Field.input("passwordConfirmation", label: "New password again", error: errors["passwordConfirmation"], type: "password", required: true, autocomplete: "new-password"))
                <div class="actions"><button type="submit" id="password-submit">Change password</button>
                <a href="/account">Cancel</a></div>
                <p class="hint">Your other sessions are logged out, and your tokens for programs revoked, when the password changes.</p>
                </form>
                """)
    }

    /// A password change, for the throttle: an attempt for the session's
    /// account, always (guessing the current password through a stolen
    /// session is throttled like logging in).
    func passwordAttempt(_ request: Request) throws -> LoginThrottling.Attempt {
        guard let session = request.session else { throw HTTPError.notFound }
        return .account(session.email)
    }

    /// Changes the password (counted by the throttle:
    /// ``passwordAttempt(_:)``).
    func changePassword(_ request: Request) async throws -> Response {
        guard let session = request.session else { throw HTTPError.notFound }
        let form = request.form
        do {
            let users = self.users
            let (current, new, confirmation) = (
                form.text("currentPassword"), form.text("password"), form.text("passwordConfirmation")
            )
            try await accounts.passwordGate.run {
                try await users.changePassword(
                    id: session.userID, current: current, new: new, confirmation: confirmation,
                    keepingSession: session.sessionID)
            }
        } catch let error as ValidationError {
            // Refused before the current password was checked: no guess was made.
            request.settleLoginAttempt(.notAnAttempt)
            return passwordPage(request, errors: UserFormField.errors(error), status: 422)
        } catch AuthenticationError.wrongCurrentPassword {
            return passwordPage(
                request, errors: ["currentPassword": "The current password is wrong."], status: 422)
        }
        request.settleLoginAttempt(.succeeded)
        return Layout.redirect(
            to: "/account", flash: "Password changed. Your other sessions were logged out and your tokens revoked.",
            request: request)
    }

    // MARK: - Sessions

    /// The page that asks before a session ends: which browser, from
    /// where, last used when; for this browser's own, that it logs out.
    /// Another user's session, or none, is not found.
    func confirmSessionEnd(_ request: Request) async throws -> Response {
        guard let session = request.session else { throw HTTPError.notFound }
        let id = try request.id()
        guard let item = try await accounts.sessions.sessions(userID: session.userID).first(where: { $0.id == id })
        else { throw HTTPError.notFound }
        let browser = BrowserName(item.userAgent).description
        let now = context.configuration.now()
        let used = "\(relativeTime(item.lastSeenAt, now: now)) (\(Self.time(item.lastSeenAt)))"
        let isCurrent = id == session.sessionID
        let details: HTML =
            isCurrent
            ? "<p id=\"session-consequence\">This ends your session in this browser (<bdi>\(browser)</bdi>): you will need to log in again here.</p>"
            : """
            <p id="session-consequence"><bdi>\(browser)</bdi> at \(item.clientAddress ?? "an unknown address"), \
            last used \(used), is logged out at once: it will need to log in again.</p>
            """
        return Confirmation(
            title: isCurrent ? "Log out of this browser?" : "End the session of \(Layout.isolated(browser))?",
            heading: isCurrent ? "Log out of this browser?" : "End the session of <bdi>\(browser)</bdi>?",
            details: details, action: HTML.path(["account", "sessions", String(id), "revoke"]),
            formID: "end-session-form", button: (isCurrent ? "Log out" : "End session", "confirm-end-session")
        ).page(request)
    }

    func revokeSession(_ request: Request) async throws -> Response {
        guard let session = request.session else { throw HTTPError.notFound }
        let id = try request.id()
        guard try await accounts.sessions.revoke(sessionID: id, userID: session.userID) else {
            throw HTTPError.notFound
        }
        if id == session.sessionID {
            return Layout.redirect(to: "/login", flash: "You have logged out.", request: request)
                .setting(.deleting(WebApp.sessionCookie, secure: secure(request)))
        }
        return Layout.redirect(to: "/account", flash: "Session ended.", request: request)
    }

    // MARK: - Pieces

    private func field(_ field: UserFormField, values: [String: String], errors: [String: String]) -> HTML {
        let name = field.rawValue
        let value = values[name]
        let error = errors[name]
        switch field {
        case .gender:
            let selected = Gender(name: value ?? "")
            let options = Gender.allCases.map { gender -> HTML in
                let isSelected: HTML = gender == selected ? " selected" : ""
                return "<option value=\"\(gender.name)\"\(isSelected)>\(gender.name.capitalized)</option>"
            }
            let id = "field-" + name
            let invalid: HTML = error == nil ? "" : " aria-invalid=\"true\" aria-describedby=\"\(id)-error\""
            return """
                <div class="field\(error == nil ? "" : " invalid")">
                <label for="\(id)">\(field.label)</label>
                <select id="\(id)" name="\(name)"\(invalid)>\(options)</select>
                \(error.map { "<p class=\"error\" id=\"\(id)-error\">\($0)</p>" as HTML })
                </div>
                """
        case .password, .passwordConfirmation, .currentPassword:
            return Field.input(
                name, label: field.label, error: error, type: "password", required: true, autocomplete: "new-password",
                hint: field == .password
                    ? "\(UserRules.minPasswordLength) to \(UserRules.maxPasswordLength) characters." : nil)
        case .email:
            return Field.input(
                name, label: field.label, value: value, error: error, type: "email", required: true,
                autocomplete: "email")
        case .dateOfBirth:
            // The picker shows and sends the ISO form (YYYY-MM-DD); a hint
            // naming a format could contradict what the browser displays.
            return Field.input(
                name, label: field.label, value: value, error: error, type: "date", required: false,
                autocomplete: "bday")
        case .mobile:
            return Field.input(
                name, label: field.label, value: value, error: error, type: "tel", required: false,
                autocomplete: "tel")
        default:
            let autocomplete: String? =
                switch field {
                case .firstName: "given-name"
                case .lastName: "family-name"
                case .pincode: "postal-code"
                case .address: "street-address"
                case .city: "address-level2"
                case .state: "address-level1"
                default: nil
                }
            return Field.input(
                name, label: field.label, value: value, error: error, required: field.isRequired,
                autocomplete: autocomplete)
        }
    }

    /// A path on this site to go to after logging in: `next` when it is
    /// one, else the start page.
    private func next(_ path: String?) -> String {
        guard let path, !path.isEmpty else { return "/" }
        return Response.sameSitePath(path)
    }

    private func secure(_ request: Request) -> Bool { request.isSecure || context.configuration.secureCookies }

    /// A group behind the log-in throttle, where `screen` tells what a
    /// request is and `lockedPage` shows the route's form with the
    /// "too many attempts" message.
    func throttled(
        screen: @escaping @Sendable (Request) async throws -> LoginThrottling.Attempt,
        lockedPage: @escaping @Sendable (Request, String) -> Response
    ) -> RouteGroup {
        RouteGroup(
            middleware: [LoginThrottling(throttle: accounts.throttle, screen: screen, lockedPage: lockedPage)])
    }

    /// One row of the sessions table: the browser's short name (the raw
    /// `User-Agent` in its `title`, for those who want it), the address,
    /// and when it logged in and was last used, relative with the moment
    /// in UTC beside it, and the link to the page that asks before the
    /// session ends. Each cell carries its column's name for the stacked
    /// layout on narrow screens (`table.stacked` in the style).
    static func sessionRow(_ item: Session, current: Bool, now: Date) -> HTML {
        let name = BrowserName(item.userAgent).description
        let browser: HTML =
            item.userAgent.map { "<span class=\"browser\" title=\"\($0)\">\(name)</span>" }
            ?? "<span class=\"browser\">\(name)</span>"
        func moment(_ date: Date) -> HTML {
            let absolute = time(date)
            return """
                <time datetime="\(date.formatted(.iso8601))" title="\(absolute)">\(relativeTime(date, now: now))</time>\
                <span class="absolute">\(absolute)</span>
                """
        }
        return """
            <tr id="session-\(item.id)"><td data-label="Browser">\(browser)\(current ? " (this browser)" as HTML : "")</td>
            <td data-label="Address">\(item.clientAddress ?? "unknown")</td>\
            <td data-label="Logged in">\(moment(item.createdAt))</td><td data-label="Last used">\(moment(item.lastSeenAt))</td>
            <td><a class="button secondary" href="\(HTML.path(["account", "sessions", String(item.id), "revoke"]))" \
            id="end-session-\(item.id)">\(current ? "Log out" : "End")</a></td></tr>
            """
    }

    static func time(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withSpaceBetweenDateAndTime]
        return formatter.string(from: date) + " UTC"
    }
}
