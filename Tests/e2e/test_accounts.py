"""The Users app's accounts as the way in: register, log in and out, the
profile; hostile text in every account field shows as text."""

from conftest import (
    BREAKOUT,
    PASSWORD,
    RTL,
    SCRIPT,
    ZERO_WIDTH,
    log_in,
    log_out,
    profile,
    register,
    unique,
)


def profile_text(browser):
    """The account page's profile, label to value, as in the document."""
    return browser.driver.execute_script(
        """
        const result = {};
        for (const dt of document.querySelectorAll('#profile dt')) result[dt.textContent] = dt.nextElementSibling.textContent;
        return result;
        """
    )


def test_register_log_out_and_log_in_again(open_browser):
    browser = open_browser("newcomer")
    values = profile(first="Grace", last="Hopper")
    register(browser, values, screenshot="register")
    assert browser.path == "/"
    assert "Welcome, Grace" in browser.status_line()
    assert browser.find("header .who").text == "Grace Hopper"
    browser.screenshot("home", phone=True)

    log_out(browser)
    assert browser.path == "/login"
    assert "You have logged out" in browser.status_line()
    assert not browser.exists("header .who")

    # A wrong password: the same answer as an unknown email, the email kept.
    log_in(browser, values["email"], "not the password", screenshot="login")
    assert browser.text_of("#form-error") == "Wrong email or password."
    assert browser.find("#field-email").get_attribute("value") == values["email"]
    assert browser.find("#field-password").get_attribute("value") == ""
    browser.screenshot("login-failed", phone=True)

    log_in(browser, values["email"])
    assert browser.path == "/"
    assert "Welcome back, Grace" in browser.status_line()


def test_a_page_asks_to_log_in_then_opens(open_browser):
    browser = open_browser("visitor")
    values = profile()
    register(browser, values)
    log_out(browser)

    browser.get("/people")
    assert browser.path.startswith("/login?next=")
    log_in(browser, values["email"])
    assert browser.path == "/people"


def test_registration_errors_show_beside_the_fields_with_the_input_kept(open_browser):
    browser = open_browser("mistaken")
    values = profile(first="Alan", last="")
    values.update({"email": "not an email"})
    register(browser, values)
    assert browser.text_of("#form-error") == "Check the fields marked below."
    for name in ("lastName", "email"):
        assert browser.exists(f"#field-{name}-error"), name
        assert browser.find(f"#field-{name}").get_attribute("value") == values[name]
    assert browser.text_of("#field-lastName-error") == "Last name is required."
    assert browser.find("#field-firstName").get_attribute("value") == "Alan"
    # Passwords are never sent back.
    assert browser.find("#field-password").get_attribute("value") == ""
    browser.screenshot("register-invalid", phone=True)


def test_edit_the_profile_then_log_out(signed_in):
    browser = signed_in
    browser.get("/account")
    browser.screenshot("account", phone=True)
    browser.click_link("#edit-profile")
    browser.screenshot("account-edit", phone=True)
    browser.fill({"firstName": "Amazing", "city": "New York", "gender": "other"})
    browser.submit("#profile-submit")
    assert browser.path == "/account"
    assert "Profile saved" in browser.status_line()
    shown = profile_text(browser)
    assert shown["Name"] == "Amazing Hopper"
    assert shown["City"] == "New York"
    assert shown["Gender"] == "other"
    assert browser.find("header .who").text == "Amazing Hopper"

    log_out(browser)
    browser.get("/account")
    assert browser.path.startswith("/login")


def test_hostile_text_in_every_account_field_shows_as_text(open_browser):
    browser = open_browser("hostile")
    email = f"{unique('hostile')}@example.com"
    names = {"firstName": SCRIPT, "lastName": BREAKOUT}
    # An address that is refused is kept as typed.
    register(browser, {**names, "email": BREAKOUT})
    assert browser.path == "/register"
    for name, value in {**names, "email": BREAKOUT}.items():
        assert browser.find(f"#field-{name}").get_attribute("value") == value, name
    assert browser.exists("#field-email-error")
    browser.screenshot("register-hostile")

    browser.fill({"email": email})
    browser.driver.execute_script("document.getElementById('register-form').noValidate = true")
    browser.fill({"password": PASSWORD, "passwordConfirmation": PASSWORD})
    browser.submit("#register-submit")
    assert browser.path == "/", browser.main_text()
    assert browser.text_of("header .who") == f"{SCRIPT} {BREAKOUT}"

    # The optional fields, on the profile page: text kept, digits refused.
    text_fields = {
        "state": SCRIPT + RTL + ZERO_WIDTH,
        "city": BREAKOUT + RTL,
        "address": SCRIPT + BREAKOUT + ZERO_WIDTH + RTL,
    }
    refused = {"mobile": SCRIPT, "pincode": BREAKOUT + RTL}
    browser.get("/account/edit")
    browser.fill({**text_fields, **refused})
    browser.driver.execute_script("document.getElementById('profile-form').noValidate = true")
    browser.submit("#profile-submit")
    for name, value in {**text_fields, **refused}.items():
        assert browser.find(f"#field-{name}").get_attribute("value") == value, name
    for name in refused:
        assert browser.exists(f"#field-{name}-error"), name
    browser.fill({"mobile": "5550100", "pincode": "12345", "currentPassword": PASSWORD})
    browser.driver.execute_script("document.getElementById('profile-form').noValidate = true")
    browser.submit("#profile-submit")
    assert browser.path == "/account", browser.main_text()

    shown = profile_text(browser)
    assert shown["Name"] == f"{SCRIPT} {BREAKOUT}"
    assert shown["State"] == text_fields["state"]
    assert shown["City"] == text_fields["city"]
    assert shown["Address"] == text_fields["address"]
    browser.screenshot("account-hostile", phone=True)

    # The log-in form keeps a hostile email as typed.
    log_out(browser)
    browser.driver.execute_script("document.getElementById('login-form').noValidate = true")
    log_in(browser, SCRIPT, "whatever password")
    assert browser.find("#field-email").get_attribute("value") == SCRIPT
