"""The Contacts app: the list, the add form of its own ("Added “…”." in the
banner, the problems beside the fields), find by name; hostile text in
every field shows as text."""

from conftest import BREAKOUT, RTL, SCRIPT, ZERO_WIDTH, unique


def field_values(browser):
    return {name: browser.find(f"#field-{name}").get_attribute("value") for name in ("name", "address", "contact")}


def test_add_a_contact_and_find_it(signed_in):
    browser = signed_in
    name = unique("Joan Clarke ")
    browser.get("/contacts")
    browser.screenshot("contacts", phone=True)
    browser.click_link("#add-contact")
    assert browser.path == "/contacts/new"
    browser.screenshot("contacts-add", phone=True)

    # Nothing typed: the summary at the top, the problems beside the fields.
    browser.submit("#save-contact")
    assert browser.exists("#form-error")
    assert browser.text_of("#field-name-error") == "Name is required."
    assert browser.text_of("#field-contact-error") == "Phone, email or web address is required."
    browser.screenshot("contacts-failed", phone=True)

    browser.fill({"name": name, "address": "Bletchley Park", "contact": "+44 1908 640404"})
    browser.submit("#save-contact")
    assert browser.path == "/contacts"
    assert f"Added \u201c{name}\u201d." in browser.status_line()
    rows = [tr.text for tr in browser.find_all("#contacts-list tbody tr")]
    assert any(name in row and "Bletchley Park" in row and "+44 1908 640404" in row for row in rows), rows
    # The phone number is a tel: link.
    assert browser.find_all('#contacts-list a[href="tel:+441908640404"]')

    # Find by name (ignoring case): the match, with Edit beside it.
    browser.get("/contacts/find")
    browser.fill({"name": name.upper()})
    browser.submit("#find-contact")
    assert "Match found" in browser.status_line()
    assert len(browser.find_all("#matches li")) == 1

    # The list's search box finds it by a word of its name.
    browser.get("/contacts")
    browser.fill({"q": name.split()[-1]})
    browser.submit('#contacts-search button[type="submit"]')
    assert len(browser.find_all("#contacts-list tbody tr")) == 1


def test_hostile_text_in_every_contact_field_shows_as_text(signed_in):
    browser = signed_in
    marker = unique("c")
    values = {
        "name": SCRIPT + RTL + " " + marker,
        "address": BREAKOUT + ZERO_WIDTH,
        "contact": SCRIPT + BREAKOUT + RTL,
    }
    browser.get("/contacts/new")
    browser.fill(values)
    browser.submit("#save-contact")
    assert "Added" in browser.status_line()

    browser.get("/contacts?q=" + marker)
    rows = browser.find_all("#contacts-list tbody tr")
    assert len(rows) == 1
    cell = "return arguments[0].querySelector(arguments[1]).textContent"
    title = browser.driver.execute_script(cell, rows[0], ".title")
    address = browser.driver.execute_script(cell, rows[0], 'td[data-label="Address"]')
    contact = browser.driver.execute_script(cell, rows[0], 'td[data-label="Phone or email"]')
    assert title == values["name"]
    assert (address, contact) == (values["address"], values["contact"])
    browser.screenshot("contacts-hostile")

    browser.get("/contacts/find")
    browser.fill({"name": values["name"]})
    browser.submit("#find-contact")
    assert "Match found" in browser.status_line()
    assert browser.text_of("#matches li .title") == values["name"]

    # The edit form, and a refused edit, keep it as typed.
    browser.click_link("#matches li .row-actions a")
    assert field_values(browser) == values
    browser.fill({"address": ""})
    browser.submit("#save-contact")
    assert browser.text_of("#field-address-error") == "Address is required."
    assert browser.find("#field-name").get_attribute("value") == values["name"]
    assert browser.find("#field-contact").get_attribute("value") == values["contact"]
