import Foundation
import RecordsApp
import RecordsWeb
import TestSupport
import Testing

@Suite("Accounts: web pages")
struct AccountsWebTests {
    // MARK: - Register, log in, log out

    @Test func registeringSignsInAndOpensThePages() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        let form = try await client.get("/register")
        #expect(form.status == 200)
        for name in ["firstName", "lastName", "email", "password", "passwordConfirmation"] {
            #expect(form.body.contains("<label for=\"field-\(name)\">"), "\(name)")
        }
        // The rest of the profile is optional, and asked for later.
        for name in ["mobile", "state", "city", "pincode", "address", "gender", "dateOfBirth", "imageName"] {
            #expect(!form.body.contains("name=\"\(name)\""), "\(name)")
        }
        let registered = try await client.post("/register", registrationFields())
        #expect(registered.status == 303)
        #expect(registered.location == "/")
        let cookie = try #require(registered.setCookies.first { $0.hasPrefix(WebApp.sessionCookie + "=") })
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/"))
        #expect(!cookie.contains("Secure"))
        #expect(SessionToken(try #require(client.sessionToken)) != nil)
        let home = try await client.get("/")
        #expect(home.status == 200)
        #expect(home.body.contains("Welcome, Ada. Your account is ready."))
        #expect(home.body.contains("Ada Lovelace"))
        let account = try await client.get("/account")
        #expect(account.status == 200)
        #expect(account.body.contains("<dd>ada@example.com</dd>"))
        #expect(try await client.get("/account/edit").status == 200)
        #expect(try await client.get("/account/password").status == 200)
    }

    @Test func loggingOutEndsTheSessionOnTheServer() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let token = try #require(client.sessionToken)
        _ = try await client.get("/account")
        let out = try await client.post("/logout", [])
        #expect(out.status == 303)
        #expect(out.location == "/login")
        #expect(client.sessionToken == nil)
        #expect(try await client.get("/login").body.contains("You have logged out."))
        // The old cookie, replayed, opens nothing.
        let replay = server.client()
        replay.setCookie(WebApp.sessionCookie, token)
        #expect(try await replay.get("/account").status == 303)
    }

    @Test func eachLogInGetsANewToken() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let first = try #require(client.sessionToken)
        // A log-in form left open in another tab, sent while signed in.
        _ = try await client.get("/account")
        let again = try await client.post("/login", [("email", "ada@example.com"), ("password", "correct horse")])
        #expect(again.status == 303)
        let second = try #require(client.sessionToken)
        #expect(first != second)
        // The session the browser had before is ended, not left behind.
        let old = server.client()
        old.setCookie(WebApp.sessionCookie, first)
        #expect(try await old.get("/account").status == 303)
        #expect(try await client.get("/account").status == 200)
    }

    @Test func logInLeadsBackToThePageAskedFor() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        try await server.client().register()
        let client = server.client()
        let refused = try await client.get("/account/edit")
        #expect(refused.status == 303)
        #expect(refused.location == "/login?next=%2Faccount%2Fedit")
        let page = try await client.get(try #require(refused.location))
        #expect(page.body.contains("name=\"next\" value=\"/account/edit\""))
        let logIn = try await client.post(
            "/login", [("email", "ADA@example.com"), ("password", "correct horse"), ("next", "/account/edit")])
        #expect(logIn.status == 303)
        #expect(logIn.location == "/account/edit")
        // Never to another site.
        for hostile in ["//evil.example/", "https://evil.example/", "/\\evil.example", "//\u{301}evil.example/"] {
            let answer = try await server.client().logIn(next: hostile)
            #expect(answer.location == "/", "\(hostile)")
        }
    }

    @Test func signedInVisitorsOfTheLogInPageGoOn() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let page = try await client.get("/login?next=%2Faccount")
        #expect(page.status == 303)
        #expect(page.location == "/account")
    }

    @Test func everyAccountPageNeedsASession() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        for path in ["/", "/account", "/account/edit", "/account/password"] {
            let answer = try await client.get(path)
            #expect(answer.status == 303, "\(path)")
            #expect(answer.location?.hasPrefix("/login") == true, "\(path)")
        }
        _ = try await client.get("/login")
        for path in ["/logout", "/account/edit", "/account/password", "/account/sessions/1/revoke"] {
            let answer = try await client.post(path, [("firstName", "x")])
            #expect(answer.status == 303, "\(path)")
            #expect(answer.location == "/login", "\(path)")
        }
        #expect(try await client.get("/login").status == 200)
        #expect(try await client.get("/register").status == 200)
    }

    // MARK: - Wrong passwords and throttling

    @Test func anUnknownEmailAndAWrongPasswordGetTheSameAnswer() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        try await server.client().register()
        let client = server.client()
        let wrong = try await client.logIn(email: "ada@example.com", password: "wrong horse")
        let unknown = try await client.logIn(email: "bob@example.com", password: "correct horse")
        #expect(wrong.status == 422)
        #expect(unknown.status == 422)
        #expect(wrong.body.contains("Wrong email or password."))
        func normalized(_ response: WebResponse, _ email: String) -> String {
            response.body.replacingOccurrences(of: email, with: "EMAIL")
        }
        #expect(normalized(wrong, "ada@example.com") == normalized(unknown, "bob@example.com"))
        #expect(wrong.setCookies == unknown.setCookies)
        #expect(client.sessionToken == nil)
        // The email typed is kept; the password never comes back.
        #expect(wrong.body.contains("value=\"ada@example.com\""))
        #expect(!wrong.body.contains("wrong horse"))
    }

    @Test func anEmptyLogInIsAskedAgain() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        _ = try await client.get("/login")
        let answer = try await client.post("/login", [("email", " "), ("password", "")])
        #expect(answer.status == 422)
        #expect(answer.body.contains("Enter your email and your password."))
    }

    @Test func repeatedFailuresLockTheAccountThenLetItGo() async throws {
        let clock = TestClock()
        let server = try accountsServer(clock: clock)
        defer { server.stop() }
        try await server.client().register()
        let client = server.client()
        for _ in 0..<5 { #expect(try await client.logIn(password: "wrong horse").status == 422) }
        // Locked: even the right password is not checked now.
        let locked = try await client.logIn()
        #expect(locked.status == 429)
        #expect(locked.header("retry-after") == "30")
        #expect(locked.body.contains("Try again in 30 seconds."))
        #expect(client.sessionToken == nil)
        // The same for an email that is not registered, from another address's view: locked alike.
        for _ in 0..<5 { _ = try await client.logIn(email: "nobody@example.com", password: "wrong horse") }
        let unknownLocked = try await client.logIn(email: "nobody@example.com", password: "wrong horse")
        #expect(unknownLocked.status == 429)
        clock.advance(seconds: 30)
        #expect(try await client.logIn().status == 303)
    }

    @Test func parallelGuessesGetNoMoreTriesThanSerialOnes() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        try await server.client().register()
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                let client = server.client()
                _ = try await client.get("/login")
                group.addTask {
                    try await client.post("/login", [("email", "ada@example.com"), ("password", "guess-pw")]).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 422 }.count == 5)
        #expect(statuses.filter { $0 == 429 }.count == 11)
    }

    // MARK: - Expiry and revocation

    @Test func anIdleSessionExpires() async throws {
        let clock = TestClock()
        let server = try accountsServer(clock: clock)
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        clock.advance(seconds: 6 * 86_400)
        #expect(try await client.get("/account").status == 200)
        clock.advance(seconds: 7 * 86_400)
        let expired = try await client.get("/account")
        #expect(expired.status == 303)
        #expect(expired.location == "/login?next=%2Faccount")
        // The log-in page drops the dead cookie.
        _ = try await client.get("/login")
        #expect(client.sessionToken == nil)
    }

    @Test func aSessionEndsThirtyDaysAfterLogInHoweverUsed() async throws {
        let clock = TestClock()
        let server = try accountsServer(clock: clock)
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        for _ in 0..<4 {
            clock.advance(seconds: 6 * 86_400)
            #expect(try await client.get("/account").status == 200)
        }
        clock.advance(seconds: 6 * 86_400)
        #expect(try await client.get("/account").status == 303)
    }

    @Test func aRevokedSessionGetsTheLogInPage() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let laptop = server.client()
        try await laptop.register()
        let phone = server.client()
        try await phone.logIn()
        let account = try await laptop.get("/account")
        let ids = account.body.matches(of: /<tr id="session-(\d+)">/).map { String($0.1) }
        #expect(ids.count == 2)
        #expect(account.body.contains("(this browser)"))
        // The phone's row is the one whose button ends it (this browser's logs out).
        let endForms = account.body.matches(of: /sessions\/(\d+)\/revoke" id="end-session-\d+">End</).map {
            String($0.1)
        }
        #expect(endForms.count == 1)
        let revoked = try await laptop.post("/account/sessions/\(endForms[0])/revoke", [])
        #expect(revoked.status == 303)
        #expect(revoked.location == "/account")
        let after = try await phone.get("/account")
        #expect(after.status == 303)
        #expect(after.location == "/login?next=%2Faccount")
        #expect(try await laptop.get("/account").status == 200)
    }

    @Test func endingAnotherSessionAsksFirstAndOnlyThePostWithItsTokenEndsIt() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let laptop = server.client()
        try await laptop.register()
        let phone = server.client()
        try await phone.logIn()
        let account = try await laptop.get("/account")
        let id = try #require(
            account.body.firstMatch(of: /sessions\/(\d+)\/revoke" id="end-session-\d+">End</).map { String($0.1) })
        // The table has links to the question, no form that ends a session at once.
        #expect(!account.body.contains("action=\"/account/sessions/"))
        let confirm = try await laptop.get("/account/sessions/\(id)/revoke")
        #expect(confirm.status == 200)
        #expect(confirm.body.contains("<h1>End the session of <bdi>"))
        #expect(confirm.body.contains("is logged out at once: it will need to log in again.</p>"))
        #expect(
            confirm.body.contains("action=\"/account/sessions/\(id)/revoke\" class=\"card\" id=\"end-session-form\""))
        #expect(confirm.body.contains("<input type=\"hidden\" name=\"csrf\""))
        #expect(confirm.body.contains(">End session</button>"))
        #expect(confirm.body.contains("<a href=\"/account\">Keep it</a>"))
        // Asking ended nothing; a POST without the form's token is refused and ends nothing.
        #expect(try await phone.get("/account").status == 200)
        #expect(try await laptop.post("/account/sessions/\(id)/revoke", [], addCSRF: false).status == 403)
        #expect(try await phone.get("/account").status == 200)
        let ended = try await laptop.post("/account/sessions/\(id)/revoke", [])
        #expect(ended.status == 303 && ended.location == "/account")
        #expect(try await phone.get("/account").status == 303)
        #expect(try await laptop.get("/account").status == 200)
    }

    @Test func loggingOutFromTheSessionsTableAsksFirst() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let account = try await client.get("/account")
        let id = try #require(
            account.body.firstMatch(of: /sessions\/(\d+)\/revoke" id="end-session-\d+">Log out</).map { String($0.1) })
        let confirm = try await client.get("/account/sessions/\(id)/revoke")
        #expect(confirm.status == 200)
        #expect(confirm.body.contains("<h1>Log out of this browser?</h1>"))
        #expect(confirm.body.contains(">Log out</button>"))
        #expect(try await client.get("/account").status == 200)
        #expect(try await client.post("/account/sessions/\(id)/revoke", [], addCSRF: false).status == 403)
        #expect(try await client.get("/account").status == 200)
        let answer = try await client.post("/account/sessions/\(id)/revoke", [])
        #expect(answer.location == "/login")
        #expect(try await client.get("/account").status == 303)
    }

    @Test func endingThisBrowsersSessionLogsOut() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let account = try await client.get("/account")
        let id = try #require(account.body.firstMatch(of: /<tr id="session-(\d+)">/).map { String($0.1) })
        let answer = try await client.post("/account/sessions/\(id)/revoke", [])
        #expect(answer.location == "/login")
        #expect(client.sessionToken == nil)
        #expect(try await client.get("/account").status == 303)
    }

    @Test func anotherUsersSessionOrAnUnknownOneIsNotFound() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let ada = server.client()
        try await ada.register()
        let bob = server.client()
        try await bob.register(registrationFields(email: "bob@example.com", first: "Bob"))
        let bobPage = try await bob.get("/account")
        let bobID = try #require(bobPage.body.firstMatch(of: /<tr id="session-(\d+)">/).map { String($0.1) })
        _ = try await ada.get("/account")
        #expect(try await ada.get("/account/sessions/\(bobID)/revoke").status == 404)
        #expect(try await ada.get("/account/sessions/999/revoke").status == 404)
        #expect(try await ada.post("/account/sessions/\(bobID)/revoke", []).status == 404)
        #expect(try await ada.post("/account/sessions/999/revoke", []).status == 404)
        #expect(try await ada.post("/account/sessions/abc/revoke", []).status == 404)
        #expect(try await bob.get("/account").status == 200)
    }

    @Test func aSessionSurvivesARestartOnTheSameDatabase() async throws {
        let first = try accountsServer(storage: .file)
        let client = first.client()
        try await client.register()
        let url = try #require(first.databaseURL)
        await first.stopAndWait(keepFiles: true)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let second = try accountsServer(databaseURL: url)
        defer { second.stop() }
        let again = second.client()
        let token = try #require(client.sessionToken)
        again.setCookie(WebApp.sessionCookie, token)
        let page = try await again.get("/account")
        #expect(page.status == 200)
        #expect(page.body.contains("<dd>ada@example.com</dd>"))
    }

    @Test func secureCookiesUnderTLSSettings() async throws {
        let server = try accountsServer(configure: { $0.secureCookies = true })
        defer { server.stop() }
        let client = server.client()
        let registered = try await client.register()
        let cookie = try #require(registered.setCookies.first { $0.hasPrefix(WebApp.sessionCookie + "=") })
        #expect(cookie.contains("; Secure"))
    }

    // MARK: - Password and profile

    @Test func changingThePasswordKeepsThisSessionAndEndsTheOthers() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let laptop = server.client()
        try await laptop.register()
        let phone = server.client()
        try await phone.logIn()
        _ = try await laptop.get("/account/password")
        let changed = try await laptop.post(
            "/account/password",
            [
                ("currentPassword", "correct horse"), ("password", "battery staple"),
                ("passwordConfirmation", "battery staple"),
            ])
        #expect(changed.status == 303)
        #expect(changed.location == "/account")
        #expect(try await laptop.get("/account").body.contains("Password changed."))
        #expect(try await phone.get("/account").status == 303)
        let other = server.client()
        #expect(try await other.logIn(password: "correct horse").status == 422)
        #expect(try await other.logIn(password: "battery staple").status == 303)
    }

    @Test func aWrongCurrentPasswordOrABadNewOneChangesNothing() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        _ = try await client.get("/account/password")
        let wrong = try await client.post(
            "/account/password",
            [
                ("currentPassword", "wrong horse"), ("password", "battery staple"),
                ("passwordConfirmation", "battery staple"),
            ])
        #expect(wrong.status == 422)
        #expect(
            wrong.body.contains(
                "<p class=\"error\" id=\"field-currentPassword-error\">The current password is wrong.</p>"))
        let mismatch = try await client.post(
            "/account/password",
            [
                ("currentPassword", "correct horse"), ("password", "battery staple"),
                ("passwordConfirmation", "battery stapler"),
            ])
        #expect(mismatch.status == 422)
        #expect(mismatch.body.contains("id=\"field-passwordConfirmation-error\""))
        let short = try await client.post(
            "/account/password",
            [("currentPassword", "correct horse"), ("password", "short"), ("passwordConfirmation", "short")])
        #expect(short.status == 422)
        #expect(short.body.contains("id=\"field-password-error\""))
        for body in [wrong.body, mismatch.body, short.body] {
            #expect(
                !body.contains("battery staple") && !body.contains("correct horse") && !body.contains("wrong horse"))
        }
        #expect(try await server.client().logIn().status == 303)
    }

    @Test func editingTheProfileSavesAndShowsIt() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        let form = try await client.get("/account/edit")
        #expect(form.body.contains("id=\"field-city\" name=\"city\" type=\"text\" value=\"London\""))
        #expect(form.body.contains("<option value=\"female\" selected>"))
        var fields = registrationFields().filter { !$0.0.hasPrefix("password") }
        fields = fields.map { $0.0 == "city" ? ("city", "Cambridge") : $0 }
        let saved = try await client.postEdit("/account/edit", fields)
        #expect(saved.status == 303)
        #expect(saved.location == "/account")
        let page = try await client.get("/account")
        #expect(page.body.contains("Profile saved."))
        #expect(page.body.contains("<dd>Cambridge</dd>"))
    }

    @Test func aBadProfileEditShowsErrorsBesideTheFieldsAndKeepsTheInput() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register()
        try await server.client().register(registrationFields(email: "bob@example.com", first: "Bob"))
        _ = try await client.get("/account/edit")
        let fields = registrationFields(overrides: ["mobile": "12ab", "city": "Oxford"])
            .filter { !$0.0.hasPrefix("password") }
        let refused = try await client.postEdit("/account/edit", fields)
        #expect(refused.status == 422)
        #expect(refused.body.contains("id=\"field-mobile-error\""))
        #expect(!refused.body.contains("id=\"field-city-error\""))
        #expect(refused.body.contains("value=\"12ab\"") && refused.body.contains("value=\"Oxford\""))
        let taken = try await client.postEdit(
            "/account/edit",
            registrationFields(email: "BOB@example.com").filter { !$0.0.hasPrefix("password") }
                + [("currentPassword", "correct horse")])
        #expect(taken.status == 422)
        #expect(taken.body.contains("<p class=\"error\" id=\"field-email-error\">Email is already registered.</p>"))
        #expect(taken.body.contains("value=\"BOB@example.com\""))
        #expect(try await client.get("/account").body.contains("<dd>London</dd>"))
    }

    @Test func aBadRegistrationShowsErrorsBesideTheFieldsAndKeepsAllButThePasswords() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        let refused = try await client.register(
            registrationFields(
                email: "not an email", password: "secret password",
                overrides: ["passwordConfirmation": "other password", "dateOfBirth": "2099-01-01", "pincode": "12"]))
        #expect(refused.status == 422)
        for name in ["email", "passwordConfirmation", "dateOfBirth", "pincode"] {
            #expect(refused.body.contains("id=\"field-\(name)-error\""), "\(name)")
        }
        #expect(!refused.body.contains("id=\"field-firstName-error\""))
        #expect(refused.body.contains("value=\"not an email\""))
        #expect(refused.body.contains("value=\"Lovelace\""))
        #expect(!refused.body.contains("secret password") && !refused.body.contains("other password"))
        #expect(client.sessionToken == nil)
        // Taken emails are refused, in any case.
        try await server.client().register()
        let taken = try await client.register(registrationFields(email: "ADA@EXAMPLE.COM"))
        #expect(taken.status == 422)
        #expect(taken.body.contains("Email is already registered."))
    }

    // MARK: - Registration policy

    @Test func closedRegistrationRefusesThePageAndTheForm() async throws {
        let server = try accountsServer(registration: .closed)
        defer { server.stop() }
        let client = server.client()
        let page = try await client.get("/register")
        #expect(page.status == 403)
        #expect(page.body.contains("Registration is closed"))
        _ = try await client.get("/login")
        let posted = try await client.post("/register", registrationFields())
        #expect(posted.status == 403)
        #expect(try await server.app.context.users.count() == 0)
    }

    @Test func firstUserRegistrationTakesOnlyTheFirst() async throws {
        let server = try accountsServer(registration: .firstUser)
        defer { server.stop() }
        #expect(try await server.client().register().status == 303)
        let second = server.client()
        #expect(try await second.get("/register").status == 403)
        _ = try await second.get("/login")
        #expect(try await second.post("/register", registrationFields(email: "bob@example.com")).status == 403)
        #expect(try await server.app.context.users.count() == 1)
    }

    // MARK: - CSRF, escaping, logs

    @Test func everyAccountsFormRefusesAMissingOrWrongCSRFToken() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let visitor = server.client()
        _ = try await visitor.get("/login")
        for path in ["/login", "/register"] {
            #expect(try await visitor.post(path, registrationFields(), addCSRF: false).status == 403, "\(path)")
            #expect(try await visitor.post(path, [("csrf", "forged")] + registrationFields()).status == 403, "\(path)")
        }
        #expect(try await server.app.context.users.count() == 0)
        let member = server.client()
        try await member.register()
        let account = try await member.get("/account")
        let id = try #require(account.body.firstMatch(of: /<tr id="session-(\d+)">/).map { String($0.1) })
        let posts: [(String, [(String, String)])] = [
            ("/logout", []),
            ("/account/edit", [("city", "Cambridge")]),
            (
                "/account/password",
                [
                    ("currentPassword", "correct horse"), ("password", "battery staple"),
                    ("passwordConfirmation", "battery staple"),
                ]
            ),
            ("/account/sessions/\(id)/revoke", []),
        ]
        for (path, fields) in posts {
            #expect(try await member.post(path, fields, addCSRF: false).status == 403, "\(path)")
            // The visitor's token is not this session's.
            #expect(try await member.post(path, [("csrf", visitor.csrf ?? "")] + fields).status == 403, "\(path)")
        }
        let after = try await member.get("/account")
        #expect(after.status == 200)
        #expect(after.body.contains("<dd>London</dd>"))
        #expect(try await server.client().logIn().status == 303)
    }

    static let hostile = [
        "<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "a\u{202E}b\u{200B}c",
    ]

    private func expectEscaped(_ body: String, _ value: String, _ context: String) {
        #expect(body.contains(HTML.escape(value)), "\(context)")
        #expect(!body.contains("<script>alert(1)"), "\(context)")
        #expect(!body.contains("<img src=x"), "\(context)")
    }

    @Test(arguments: hostile)
    func hostileTextInEveryProfileFieldComesBackEscaped(_ text: String) async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        let textFields = ["firstName", "lastName", "state", "city", "address"]
        var overrides = Dictionary(uniqueKeysWithValues: textFields.map { ($0, text) })
        if !text.contains("/") { overrides["imageName"] = text }
        let registered = try await client.register(registrationFields(overrides: overrides))
        #expect(registered.status == 303)
        for path in ["/", "/account", "/account/edit"] {
            let page = try await client.get(path)
            #expect(page.status == 200)
            expectEscaped(page.body, text, path)
        }
        // Refused forms show every field's text back, escaped: the ones only valid as digits or an email too.
        let everyField = Dictionary(
            uniqueKeysWithValues: (textFields + ["email", "mobile", "pincode", "dateOfBirth", "imageName", "gender"])
                .map { ($0, text) })
        _ = try await client.get("/account/edit")
        let refusedEdit = try await client.postEdit(
            "/account/edit", registrationFields(overrides: everyField).filter { !$0.0.hasPrefix("password") })
        #expect(refusedEdit.status == 422)
        expectEscaped(refusedEdit.body, text, "edit")
        let visitor = server.client()
        let refusedRegistration = try await visitor.register(registrationFields(overrides: everyField))
        #expect(refusedRegistration.status == 422)
        expectEscaped(refusedRegistration.body, text, "register")
        _ = try await visitor.get("/login")
        let refusedLogIn = try await visitor.post("/login", [("email", text), ("password", "x")])
        expectEscaped(refusedLogIn.body, text, "log in")
    }

    @Test func aHostileUserAgentIsShownEscapedInTheSessionsList() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        _ = try await client.send(
            method: "GET", path: "/register", headers: ["User-Agent": "<script>alert(1)</script>"], body: nil)
        let fields = [("csrf", client.csrf ?? "")] + registrationFields()
        let body = fields.map { WebClient.formEncode($0.0) + "=" + WebClient.formEncode($0.1) }.joined(separator: "&")
        _ = try await client.send(
            method: "POST", path: "/register",
            headers: ["Content-Type": "application/x-www-form-urlencoded", "User-Agent": "<script>alert(1)</script>"],
            body: Data(body.utf8))
        let page = try await client.get("/account")
        #expect(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!page.body.contains("<script>alert(1)"))
    }

    @Test func passwordsAndTokensNeverReachTheLog() async throws {
        let server = try accountsServer()
        defer { server.stop() }
        let client = server.client()
        try await client.register(registrationFields(password: "first-secret-pw"))
        let firstToken = try #require(client.sessionToken)
        _ = try await client.get("/account/password")
        _ = try await client.post(
            "/account/password",
            [
                ("currentPassword", "wrong-secret-pw"), ("password", "second-secret-pw"),
                ("passwordConfirmation", "second-secret-pw"),
            ])
        _ = try await client.post(
            "/account/password",
            [
                ("currentPassword", "first-secret-pw"), ("password", "second-secret-pw"),
                ("passwordConfirmation", "second-secret-pw"),
            ])
        let csrf = try #require(client.csrf)
        _ = try await client.post("/logout", [])
        _ = try await client.logIn(password: "third-wrong-pw")
        try await client.logIn(password: "second-secret-pw")
        let secondToken = try #require(client.sessionToken)
        let log = server.log.joined(separator: "\n")
        #expect(log.contains("POST /login"))
        for secret in [
            "first-secret-pw", "second-secret-pw", "wrong-secret-pw", "third-wrong-pw", firstToken, secondToken, csrf,
        ] {
            #expect(!log.contains(secret))
        }
    }
}
