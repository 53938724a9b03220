import Foundation
import Observation

/// Field errors of a failed save, keyed by field; problems that belong to
/// no field (an empty change set) go to `other`.
private func splitProblems(_ error: ValidationError) -> (fields: [UserField: String], other: String?) {
    var fields: [UserField: String] = [:]
    var other: [String] = []
    for problem in error.problems {
        if let field = UserField(rawValue: problem.field), fields[field] == nil {
            fields[field] = problem.message
        } else {
            other.append(problem.message)
        }
    }
    return (fields, other.isEmpty ? nil : other.joined(separator: "; "))
}

/// The registration screen's state (the original tutorial's form): the fields as typed,
/// one error message per field at fault, and the user once registered.
///
/// ```swift
/// let model = RegistrationViewModel(store: UsersStore(database: database))
/// model.form.firstName = "Ada"          // bind each field to a text field
/// ...
/// if let user = await model.register() { show(user) }
/// model.error(for: .email)              // "email is already registered"
/// ```
///
/// ``register()`` awaits the store, which hashes the password away from the
/// main actor (it takes about 0.4 s at the default cost), so the screen
/// stays responsive.
@MainActor
@Observable
public final class RegistrationViewModel {
    /// The fields, as typed.
    public var form = RegistrationForm()

    /// The message for each field at fault after ``validate()`` or
    /// ``register()``; empty when all is well.
    public private(set) var fieldErrors: [UserField: String] = [:]

    /// An error that is not a field's (the database failed), for display.
    public private(set) var errorMessage: String?

    /// The user once registered.
    public private(set) var registeredUser: User?

    /// Whether ``register()`` is running; a second call meanwhile does
    /// nothing.
    public private(set) var isRegistering = false

    private let store: UsersStore

    /// Creates a view model with an empty form.
    public init(store: UsersStore) {
        self.store = store
    }

    /// The message for one field, or nil.
    public func error(for field: UserField) -> String? { fieldErrors[field] }

    /// Checks every field without saving, filling ``fieldErrors`` (for
    /// checking as the user types). A taken email is found only by
    /// ``register()``.
    ///
    /// - Returns: Whether the form is valid.
    @discardableResult
    public func validate() -> Bool {
        do {
            _ = try form.validated(today: store.currentDate)
            fieldErrors = [:]
            return true
        } catch let error as ValidationError {
            fieldErrors = splitProblems(error).fields
        } catch {
            errorMessage = String(describing: error)
        }
        return false
    }

    /// Validates and registers the form.
    ///
    /// - Returns: The new user, or nil with ``fieldErrors`` or
    ///   ``errorMessage`` telling why; nothing was saved then.
    @discardableResult
    public func register() async -> User? {
        guard !isRegistering else { return nil }
        isRegistering = true
        defer { isRegistering = false }
        let form = self.form
        let store = self.store
        do {
            let user = try await store.register(form)
            fieldErrors = [:]
            errorMessage = nil
            registeredUser = user
            return user
        } catch let error as ValidationError {
            (fieldErrors, errorMessage) = splitProblems(error)
        } catch {
            fieldErrors = [:]
            errorMessage = String(describing: error)
        }
        return nil
    }
}

/// A profile's fields as typed in an edit form: every field of ``User``
/// but its ID, as text.
public struct ProfileForm: Sendable, Equatable {
    /// The first name.
    public var firstName: String
    /// The last name.
    public var lastName: String
    /// The email address.
    public var email: String
    /// The mobile number.
    public var mobile: String
    /// The state.
    public var state: String
    /// The city.
    public var city: String
    /// The postal code.
    public var pincode: String
    /// The address.
    public var address: String
    /// One of ``Gender/names``.
    public var gender: String
    /// `YYYY-MM-DD`.
    public var dateOfBirth: String
    /// The profile picture's file name.
    public var imageName: String

    /// The form filled with a user's profile.
    public init(_ user: User) {
        firstName = user.firstName
        lastName = user.lastName
        email = user.email
        mobile = user.mobile
        state = user.state
        city = user.city
        pincode = user.pincode
        address = user.address
        gender = user.gender.name
        dateOfBirth = user.dateOfBirth
        imageName = user.imageName
    }

    /// The fields that differ from `user`'s, so that a field left alone is
    /// never rewritten (nor checked: a date of birth imported from the original tutorial
    /// in another format stays as it is).
    public func changes(from user: User) -> ProfileChanges {
        let original = ProfileForm(user)
        func changed(_ keyPath: KeyPath<ProfileForm, String>) -> String? {
            self[keyPath: keyPath] == original[keyPath: keyPath] ? nil : self[keyPath: keyPath]
        }
        return ProfileChanges(
            firstName: changed(\.firstName), lastName: changed(\.lastName), email: changed(\.email),
            mobile: changed(\.mobile), state: changed(\.state), city: changed(\.city), pincode: changed(\.pincode),
            address: changed(\.address), gender: changed(\.gender), dateOfBirth: changed(\.dateOfBirth),
            imageName: changed(\.imageName))
    }
}

/// The profile screen's state (the original tutorial's edit mode): the user's fields to
/// edit, and the password change, which needs the current password.
///
/// ```swift
/// let model = ProfileViewModel(store: store, userID: ada.id)
/// await model.load()
/// model.form?.city = "Cambridge"
/// await model.save()                // only changed fields are written
/// model.currentPassword = old
/// model.newPassword = new; model.newPasswordConfirmation = new
/// await model.changePassword()      // or fieldErrors[.currentPassword]
/// ```
@MainActor
@Observable
public final class ProfileViewModel {
    /// The user being edited.
    public let userID: Int64

    /// The user as saved; nil before ``load()`` or when there is no such user.
    public private(set) var user: User?

    /// The fields as edited; nil until loaded.
    public var form: ProfileForm?

    /// The current password, to change it.
    public var currentPassword = ""
    /// The new password.
    public var newPassword = ""
    /// The new password typed again.
    public var newPasswordConfirmation = ""

    /// The message for each field at fault after the last save or password
    /// change.
    public private(set) var fieldErrors: [UserField: String] = [:]

    /// An error that is not a field's, for display; nil after a success.
    public private(set) var errorMessage: String?

    /// Whether the last ``changePassword()`` succeeded.
    public private(set) var passwordChanged = false

    /// The user, or that the user was deleted (found by ``load()``, or by
    /// anyone while ``start()`` runs).
    public private(set) var state: DetailState = .shown

    /// The error of the observation's last read, if it failed.
    @ObservationIgnored private var readError: String?

    private let store: UsersStore

    /// Creates a view model; call ``start()`` (or ``load()``).
    public init(store: UsersStore, userID: Int64) {
        self.store = store
        self.userID = userID
    }

    /// The message for one field, or nil.
    public func error(for field: UserField) -> String? { fieldErrors[field] }

    /// Whether the form differs from the saved profile.
    public var hasChanges: Bool {
        guard let user, let form else { return false }
        return !form.changes(from: user).isEmpty
    }

    /// Reads the user and fills the form, discarding edits.
    public func load() async {
        do {
            user = try await store.user(id: userID)
            form = user.map(ProfileForm.init)
            fieldErrors = [:]
            errorMessage = user == nil ? RecordNotFoundError(kind: "user", id: userID).description : nil
            if user == nil { state = .deleted(kind: "user", id: userID) }
        } catch {
            errorMessage = String(describing: error)
        }
    }

    /// Reads the user, then again after every committed change of the
    /// users, by anyone (another screen, connection or process), until the
    /// calling task is cancelled (SwiftUI's `.task { await model.start() }`).
    /// The form follows the stored profile while it has no edits; edits
    /// are kept. When the user is deleted, ``state`` says so, ``user`` and
    /// ``form`` become nil and the observation ends. A user that cannot be
    /// read leaves its error in ``errorMessage`` and the observation goes
    /// on (mended, the user shows again); an error that ends it (the
    /// database closed) is left in ``errorMessage``.
    public func start() async {
        guard !state.isDeleted else { return }
        do {
            for try await _ in store.changes {
                do {
                    if try await follow() { return }
                } catch {
                    readError = String(describing: error)
                    errorMessage = readError
                }
            }
        } catch {
            errorMessage = String(describing: error)
        }
    }

    /// Reads the user again; returns whether the user is gone. A user read
    /// clears an error of a read before it, not that of an action.
    private func follow() async throws -> Bool {
        let (edited, formBefore) = (hasChanges, form)
        guard let stored = try await store.user(id: userID) else {
            user = nil
            form = nil
            state = .deleted(kind: "user", id: userID)
            return true
        }
        // Fields typed while the user was read are edits too.
        if form == formBefore && (!edited || form == nil) { form = ProfileForm(stored) }
        user = stored
        if readError != nil && errorMessage == readError { errorMessage = nil }
        readError = nil
        return false
    }

    /// Saves the fields that changed.
    ///
    /// - Returns: Whether the profile is saved (true when nothing changed).
    @discardableResult
    public func save() async -> Bool {
        guard let user, let form else {
            errorMessage = RecordNotFoundError(kind: "user", id: userID).description
            return false
        }
        let changes = form.changes(from: user)
        if changes.isEmpty { return true }
        do {
            let saved = try await store.updateProfile(id: userID, with: changes)
            self.user = saved
            self.form = ProfileForm(saved)
            fieldErrors = [:]
            errorMessage = nil
            return true
        } catch let error as ValidationError {
            (fieldErrors, errorMessage) = splitProblems(error)
        } catch {
            fieldErrors = [:]
            errorMessage = String(describing: error)
        }
        return false
    }

    /// Changes the password from ``currentPassword`` to ``newPassword``,
    /// hashing away from the main actor. The three fields are emptied on
    /// success; a wrong current password is ``UserField/currentPassword``'s
    /// error.
    ///
    /// - Returns: Whether the password was changed.
    @discardableResult
    public func changePassword() async -> Bool {
        let (store, id) = (self.store, userID)
        let (current, new, confirmation) = (currentPassword, newPassword, newPasswordConfirmation)
        passwordChanged = false
        do {
            try await store.changePassword(id: id, current: current, new: new, confirmation: confirmation)
            currentPassword = ""
            newPassword = ""
            newPasswordConfirmation = ""
            fieldErrors = [:]
            errorMessage = nil
            passwordChanged = true
            return true
        } catch let error as ValidationError {
            (fieldErrors, errorMessage) = splitProblems(error)
        } catch AuthenticationError.wrongCurrentPassword {
            fieldErrors = [.currentPassword: AuthenticationError.wrongCurrentPassword.description]
            errorMessage = nil
        } catch {
            fieldErrors = [:]
            errorMessage = String(describing: error)
        }
        return false
    }
}
