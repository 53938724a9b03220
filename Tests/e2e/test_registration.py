"""Registration as a newcomer meets it: only what an account needs, the
rest of the profile (and a picture) added later on the profile pages,
messages that name the field as its label does, ISO dates, and the
account page's sessions table readable on a phone."""

from conftest import PASSWORD, PHONE, optional_profile, profile, register
from test_coffee import png

# Each table cell of the sessions list: its text must fit it, and no rule
# may let a word break anywhere inside it.
CELLS = """
const cells = [...document.querySelectorAll('#sessions th, #sessions td')];
return cells.map(cell => {
    const style = getComputedStyle(cell);
    return {
        text: cell.textContent.trim().slice(0, 40),
        overflowWrap: style.overflowWrap,
        wordBreak: style.wordBreak,
        scrollWidth: cell.scrollWidth,
        clientWidth: cell.clientWidth,
    };
});
"""


def test_register_with_three_fields_then_complete_the_profile(open_browser, tmp_path):
    browser = open_browser("short-registration")
    values = profile(first="Grace", last="Hopper")
    browser.get("/register")
    # Only what an account needs is asked for.
    asked = {element.get_attribute("name") for element in browser.find_all("#register-form input:not([type=hidden])")}
    assert asked == {"firstName", "lastName", "email", "password", "passwordConfirmation"}
    register(browser, values, screenshot="registration-short")
    assert browser.path == "/", browser.main_text()

    browser.get("/account")
    shown = {dt.text: dt.find_element("xpath", "following-sibling::dd[1]").text for dt in browser.find_all("#profile dt")}
    assert shown["Postal code"] == "Not given"
    assert browser.exists("#no-picture")

    # The optional fields, on the profile page; the date is the ISO form
    # its picker sends, with no hint naming another format.
    browser.get("/account/edit")
    date = browser.find("#field-dateOfBirth")
    assert date.get_attribute("type") == "date"
    assert not browser.exists("#field-dateOfBirth-hint")
    extra = optional_profile()
    browser.fill({**extra, "pincode": "12"})
    browser.driver.execute_script("document.getElementById('profile-form').noValidate = true")
    browser.submit("#profile-submit")
    # The message names the field as its label does, as a sentence.
    assert browser.text_of("#field-pincode-error") == "Postal code must be 3 to 10 digits."
    assert browser.find("#field-dateOfBirth").get_attribute("value") == extra["dateOfBirth"]
    browser.screenshot("profile-invalid", phone=True)
    # The mobile number identifies the account: it changes with the password.
    browser.fill({"pincode": extra["pincode"], "currentPassword": PASSWORD})
    browser.submit("#profile-submit")
    assert browser.path == "/account", [e.text for e in browser.find_all(".error")]
    shown = {dt.text: dt.find_element("xpath", "following-sibling::dd[1]").text for dt in browser.find_all("#profile dt")}
    assert shown["Postal code"] == extra["pincode"]
    assert shown["Date of birth"] == "1906-12-09"
    browser.get("/account/edit")
    assert browser.find("#field-dateOfBirth").get_attribute("value") == "1906-12-09"

    # The picture: uploaded on the account page, shown there.
    picture = tmp_path / "grace.png"
    picture.write_bytes(png(64, 64))
    browser.get("/account")
    browser.fill({"picture": str(picture)})
    browser.submit("#picture-submit")
    assert "Picture saved." in browser.status_line()
    image = browser.find("#profile-picture")
    browser.wait.until(lambda _: browser.driver.execute_script("return arguments[0].naturalWidth", image) == 64)
    browser.screenshot("account-with-picture", phone=True)

    # A file that is not a picture is refused beside the field; the picture stays.
    text = tmp_path / "notes.png"
    text.write_bytes(b"not a picture at all")
    browser.fill({"picture": str(text)})
    browser.submit("#picture-submit")
    assert "is not a PNG, JPEG, GIF or WebP picture" in browser.text_of("#field-picture-error")
    assert browser.text_of("#field-picture-error").startswith("The picture was refused: ")
    assert browser.exists("#profile-picture")


def test_a_registration_missing_fields_names_them_by_their_labels(open_browser):
    browser = open_browser("registration-labels")
    register(browser, {"firstName": "", "lastName": "Hopper", "email": ""})
    assert browser.path == "/register"
    assert browser.text_of("#field-firstName-error") == "First name is required."
    assert browser.text_of("#field-email-error") == "Email is required."
    browser.fill({"password": PASSWORD, "passwordConfirmation": PASSWORD + "!"})
    browser.fill({"firstName": "Grace", "email": "not an address"})
    browser.driver.execute_script("document.getElementById('register-form').noValidate = true")
    browser.submit("#register-submit")
    assert browser.text_of("#field-passwordConfirmation-error") == "Password again does not match the password."
    browser.screenshot("registration-errors", phone=True)


def test_the_sessions_table_fits_a_phone_without_breaking_words(open_browser):
    browser = open_browser("sessions-phone")
    register(browser, profile())
    assert browser.path == "/", browser.main_text()
    width, height = PHONE
    browser.driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True}
    )
    try:
        browser.get("/account")
        assert browser.exists("#sessions")
        page_width = browser.driver.execute_script("return document.documentElement.scrollWidth")
        viewport = browser.driver.execute_script("return window.innerWidth")
        assert page_width <= viewport, f"the page is {page_width}px wide in a {viewport}px window"
        cells = browser.driver.execute_script(CELLS)
        assert cells, "the sessions table has cells"
        for cell in cells:
            assert cell["overflowWrap"] != "anywhere", cell
            assert cell["wordBreak"] != "break-all", cell
            assert cell["scrollWidth"] <= cell["clientWidth"], cell
    finally:
        browser.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    browser.screenshot("account-sessions", phone=True)
