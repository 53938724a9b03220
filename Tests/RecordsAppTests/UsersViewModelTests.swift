import Foundation
import Observation
import TestSupport
import Testing

@testable import RecordsApp

@MainActor
@Suite("Users: view models")
struct UsersViewModelTests {
    // MARK: - Registration

    @Test("Registration: each bad field gets its own error; nothing is saved")
    func registrationFieldErrors() async throws {
        let store = usersStore(try emptyDatabase())
        let model = RegistrationViewModel(store: store)
        model.form = validForm()
        model.form.firstName = ""
        model.form.email = "not an email"
        model.form.passwordConfirmation = "different"
        #expect(await model.register() == nil)
        #expect(Set(model.fieldErrors.keys) == [.firstName, .email, .passwordConfirmation])
        #expect(model.error(for: .firstName) == "First name is required.")
        #expect(model.error(for: .passwordConfirmation) == "Password again does not match the password.")
        #expect(model.error(for: .city) == nil)
        #expect(model.errorMessage == nil)
        #expect(model.registeredUser == nil)
        #expect(!model.isRegistering)
        #expect(try await store.count() == 0)
    }

    @Test("Registration: validate() checks as the user types, without saving")
    func registrationValidate() async throws {
        let store = usersStore(try emptyDatabase())
        let model = RegistrationViewModel(store: store)
        #expect(!model.validate())
        // An empty password matches its empty confirmation.
        // The optional fields may stay blank.
        #expect(Set(model.fieldErrors.keys) == [.firstName, .lastName, .email, .password])
        model.form = validForm()
        #expect(model.validate())
        #expect(model.fieldErrors.isEmpty)
        #expect(try await store.count() == 0)
    }

    @Test("Registration: a valid form registers and clears the errors; a taken email is the email's error")
    func registrationSuccessAndTakenEmail() async throws {
        let store = usersStore(try emptyDatabase())
        let model = RegistrationViewModel(store: store)
        model.form = validForm()
        model.form.pincode = "12"
        #expect(await model.register() == nil)
        model.form.pincode = "110001"
        let user = try #require(await model.register())
        #expect(model.registeredUser == user)
        #expect(model.fieldErrors.isEmpty)
        #expect(try await store.user(id: user.id) == user)

        let again = RegistrationViewModel(store: store)
        again.form = validForm(email: "ADA@EXAMPLE.COM")
        #expect(await again.register() == nil)
        #expect(again.fieldErrors == [.email: "Email is already registered."])
    }

    @Test("Registration: observers hear about new errors")
    func registrationIsObservable() async throws {
        let model = RegistrationViewModel(store: usersStore(try emptyDatabase()))
        let changed = Flag()
        withObservationTracking {
            _ = model.fieldErrors
        } onChange: {
            changed.set()
        }
        _ = await model.register()
        #expect(changed.isSet)
    }

    @Test("Registration: a database failure is an error message, not a field error")
    func registrationDatabaseFailure() async throws {
        let database = try emptyDatabase()
        let model = RegistrationViewModel(store: usersStore(database))
        model.form = validForm()
        database.close()
        #expect(await model.register() == nil)
        #expect(model.fieldErrors.isEmpty)
        #expect(model.errorMessage?.contains("closed") == true)
    }

    // MARK: - Profile

    @Test("Profile: load fills the form; save writes only what changed")
    func profileSave() async throws {
        let database = try emptyDatabase()
        let store = usersStore(database)
        let ada = try await store.register(validForm())
        // A date the original tutorial's app wrote, in its own format, must survive an edit
        // of another field.
        try database.write { db in
            try db.execute("UPDATE User_Master SET USER_DOB = '10/12/1990' WHERE UID = ?", arguments: [ada.id])
        }
        let model = ProfileViewModel(store: store, userID: ada.id)
        await model.load()
        #expect(model.form?.email == "ada@example.com")
        #expect(model.form?.dateOfBirth == "10/12/1990")
        #expect(!model.hasChanges)
        model.form?.city = "Cambridge"
        #expect(model.hasChanges)
        #expect((await model.save()))
        #expect(model.user?.city == "Cambridge")
        #expect(try await store.user(id: ada.id)?.dateOfBirth == "10/12/1990")
        #expect(!model.hasChanges)
        #expect((await model.save()), "nothing to save is not a failure")
    }

    @Test("Profile: bad fields get their errors and nothing is saved")
    func profileFieldErrors() async throws {
        let store = usersStore(try emptyDatabase())
        let ada = try await store.register(validForm())
        try await store.register(validForm(email: "bob@example.com"))
        let model = ProfileViewModel(store: store, userID: ada.id)
        await model.load()
        model.form?.mobile = "12"
        model.form?.dateOfBirth = "2030-01-01"
        #expect(!(await model.save()))
        #expect(Set(model.fieldErrors.keys) == [.mobile, .dateOfBirth])
        model.form?.mobile = "1234567"
        model.form?.dateOfBirth = "1990-12-10"
        model.form?.email = "BOB@example.com"
        #expect(!(await model.save()))
        #expect(model.fieldErrors == [.email: "Email is already registered."])
        #expect(try await store.user(id: ada.id) == ada)
    }

    @Test("Profile: an unknown user is an error message")
    func profileUnknownUser() async throws {
        let model = ProfileViewModel(store: usersStore(try emptyDatabase()), userID: 99)
        await model.load()
        #expect(model.user == nil && model.form == nil)
        #expect(model.errorMessage == "no user with ID 99")
        #expect(!(await model.save()))
    }

    @Test("Profile: the password changes only with the current one")
    func profilePasswordChange() async throws {
        let store = usersStore(try emptyDatabase())
        let ada = try await store.register(validForm(password: "correct horse"))
        let model = ProfileViewModel(store: store, userID: ada.id)
        await model.load()

        model.currentPassword = "wrong horse"
        model.newPassword = "battery staple"
        model.newPasswordConfirmation = "battery staple"
        #expect(await !model.changePassword())
        #expect(model.fieldErrors == [.currentPassword: "the current password is wrong"])
        #expect(!model.passwordChanged)

        model.currentPassword = "correct horse"
        model.newPasswordConfirmation = "battery stapler"
        #expect(await !model.changePassword())
        #expect(model.fieldErrors == [.passwordConfirmation: "Password again does not match the password."])

        model.newPasswordConfirmation = "battery staple"
        #expect(await model.changePassword())
        #expect(model.passwordChanged)
        #expect(model.fieldErrors.isEmpty)
        #expect(model.currentPassword.isEmpty && model.newPassword.isEmpty && model.newPasswordConfirmation.isEmpty)
        #expect(try await store.authenticate(email: "ada@example.com", password: "battery staple").id == ada.id)
    }
}
