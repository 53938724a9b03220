"""The Coffee app as a person uses it: add a coffee, upload a picture and
see it, replace a wrong file's refusal; hostile text in its fields."""

import os
import struct
import zlib

import pytest

from conftest import BREAKOUT, RTL, SCRIPT, ZERO_WIDTH, unique


def png(width, height):
    """A real PNG: a colour gradient, so the browser has something to decode."""
    rows = []
    for y in range(height):
        row = bytearray([0])
        for x in range(width):
            row += bytes((x * 255 // width, y * 255 // height, 128))
        rows.append(bytes(row))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows)))
            + chunk(b"IEND", b""))


@pytest.fixture
def files(tmp_path):
    picture = tmp_path / "espresso.png"
    picture.write_bytes(png(160, 120))
    text = tmp_path / "notes.png"
    text.write_text("not a picture at all\n")
    return {"picture": str(picture), "text": str(text)}


def add_coffee(browser, name, price):
    browser.get("/coffee")
    browser.click_link("#add-coffee")
    browser.fill({"name": name, "price": price})
    browser.submit('#coffee-form button[type="submit"]')


def test_add_a_coffee_and_upload_a_picture_that_is_displayed(signed_in, files):
    browser = signed_in
    name = unique("Espresso ")
    browser.get("/coffee")
    browser.screenshot("coffee-list", phone=True)
    browser.click_link("#add-coffee")
    browser.screenshot("coffee-add", phone=True)
    browser.fill({"name": name, "price": "3.50"})
    browser.submit('#coffee-form button[type="submit"]')
    assert browser.path.startswith("/coffee/")
    assert f"Added \u201c{name}\u201d." in browser.status_line()
    assert browser.text_of("#coffee-name") == name
    assert browser.text_of("#price") == "3.50"
    assert browser.text_of("#picture-summary") == "none"
    coffee_path = browser.path

    # A file that is not a picture is refused beside the field; nothing stored.
    browser.fill({"picture": files["text"]})
    browser.submit('#picture-form button[type="submit"]')
    assert browser.exists("#field-picture-error")
    browser.screenshot("coffee-picture-refused", phone=True)
    browser.get(coffee_path)
    assert browser.text_of("#picture-summary") == "none"

    # A real picture is stored and shown: the browser decoded it.
    browser.fill({"picture": files["picture"]})
    browser.submit('#picture-form button[type="submit"]')
    browser.get(coffee_path)
    image = browser.find("img#picture")
    browser.wait.until(lambda d: d.execute_script("return arguments[0].complete", image))
    assert browser.driver.execute_script("return arguments[0].naturalWidth", image) == 160
    assert browser.driver.execute_script("return arguments[0].naturalHeight", image) == 120
    browser.screenshot("coffee-detail", phone=True)

    # Its thumbnail, made by the server and decoded by the browser: 96 x 72.
    size = browser.driver.execute_async_script(
        "const done = arguments[arguments.length - 1]; const image = new Image();"
        "image.onload = () => done([image.naturalWidth, image.naturalHeight]);"
        "image.onerror = () => done(null); image.src = location.pathname + '/thumbnail';"
    )
    assert size == [96, 72]

    # Found by the list's search box.
    browser.get("/coffee")
    browser.fill({"q": name.split()[-1]})
    browser.submit('#coffee-search button[type="submit"]')
    assert [a.text for a in browser.find_all("#coffee-list tbody a.title")] == [name]

    # Remove the picture, then delete the coffee, each after confirming.
    browser.get(coffee_path)
    browser.click_link("#remove-picture")
    browser.screenshot("coffee-remove-picture")
    browser.submit('#remove-picture-form button[type="submit"]')
    browser.get(coffee_path)
    assert browser.text_of("#picture-summary") == "none"
    assert not browser.exists("img#picture")
    browser.click_link("#delete-coffee")
    browser.screenshot("coffee-delete")
    browser.submit('#delete-form button[type="submit"]')
    browser.get(coffee_path)
    assert browser.find("h1").text == "Page not found"


def test_hostile_text_in_every_coffee_field_shows_as_text(signed_in, files):
    browser = signed_in
    name = SCRIPT + " " + BREAKOUT + RTL + ZERO_WIDTH + " " + unique("m")
    add_coffee(browser, name, "2.25")
    assert browser.text_of("#coffee-name") == name
    browser.fill({"picture": files["picture"]})
    browser.submit('#picture-form button[type="submit"]')
    alt = browser.find("img#picture").get_attribute("alt")
    assert alt == f"Picture of {name}"
    browser.screenshot("coffee-hostile")

    # In the list, and the price field keeps refused text as typed.
    browser.get("/coffee?q=" + name.split()[-1])
    titles = [browser.driver.execute_script("return arguments[0].textContent", a)
              for a in browser.find_all("#coffee-list tbody a.title")]
    assert titles == [name]
    browser.click_link("#coffee-list tbody a.title")
    browser.click_link("#edit-coffee")
    assert browser.find("#field-name").get_attribute("value") == name
    browser.fill({"price": BREAKOUT})
    browser.submit('#coffee-form button[type="submit"]')
    assert browser.text_of("#field-price-error") == (
        "Price must be a number such as 3.50 (digits, with a point for the decimals).")
    assert browser.find("#field-price").get_attribute("value") == BREAKOUT
    assert browser.find("#field-name").get_attribute("value") == name
