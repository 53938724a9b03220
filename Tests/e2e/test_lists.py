"""The list pages as tables: a click on a column's heading sorts by it and
the heading shows the order; the count says how many and which page; at a
phone's width the rows are cards and nothing is wider than the screen."""

import re

from conftest import DESKTOP, PHONE, records, unique


def set_width(browser, size, mobile):
    width, height = size
    browser.driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )


# The page's live script may swap the list for a fresh copy at any moment
# (another test's change), so the lists are read in one script each.
def texts(browser, css):
    return browser.driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.textContent)", css)


def row_ids(browser, table):
    return browser.driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.id)", f"#{table} tbody tr")


def sorted_heading(browser, table):
    """The heading marked as the order: its aria-sort and its text."""
    headings = browser.driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])]"
        ".map(h => [h.getAttribute('aria-sort'), h.textContent])", f"#{table} th[aria-sort]")
    assert len(headings) == 1, headings
    return tuple(headings[0])


def row_of(browser, table, text):
    """The ID of the row whose text has `text`."""
    return browser.driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].find(r => r.textContent.includes(arguments[1])).id",
        f"#{table} tbody tr", text)


def click_heading(browser, link):
    before = browser.path
    browser.click_link(link)
    browser.wait.until(lambda _: browser.path != before or "sort=" in browser.driver.current_url)


def fits_the_screen(browser):
    """Nothing wider than the window, and no scrolling sideways."""
    scroll, inner = browser.driver.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth]")
    assert scroll <= inner, f"{browser.path}: {scroll}px wide at {inner}px"


def one_line(browser, css):
    """Whether the element's text takes a single line (no word broken)."""
    return browser.driver.execute_script(
        "return document.querySelector(arguments[0]).getClientRects().length", css) == 1


def count_line(browser, nouns):
    found = texts(browser, "#list-count")
    assert len(found) == 1, found
    text = found[0]
    match = re.fullmatch(r"([\d,]+) (\w+) · page (\d+) of (\d+)", text)
    assert match and match.group(2) in nouns, text
    return int(match.group(1).replace(",", "")), int(match.group(3)), int(match.group(4))


def test_people_table_sorts_by_its_headings_at_both_widths(signed_in):
    browser = signed_in
    tag = unique("")
    records("people", "add", "--first", "Old", "--last", f"Aaaa{tag}", "--age", "150")
    records("people", "add", "--first", "Young", "--last", f"Aaab{tag}", "--age", "0")
    for label, size, mobile in (("desktop", DESKTOP, False), ("phone", PHONE, True)):
        set_width(browser, size, mobile)
        browser.get("/people?size=100")
        count, page, pages = count_line(browser, ("people", "person"))
        assert count >= 2 and page == 1 and pages == (count + 99) // 100
        assert texts(browser, "#page-size-100[aria-current=true]") == ["100"]
        # By last name, A to Z, shown on the last name's heading.
        assert sorted_heading(browser, "people-list") == ("ascending", "Last name ▲")
        ids = row_ids(browser, "people-list")
        old_id = row_of(browser, "people-list", f"Aaaa{tag}")
        young_id = row_of(browser, "people-list", f"Aaab{tag}")
        assert ids.index(old_id) < ids.index(young_id)
        assert one_line(browser, f"#{old_id} a.title")
        if mobile:
            fits_the_screen(browser)
        if not mobile:
            # Both widths; the helper puts the window back to a desktop's.
            browser.screenshot("lists-people-by-name", phone=True)

        # A click on "Age": youngest first, the indicator moves there.
        click_heading(browser, "#sort-age")
        assert "sort=age" in browser.driver.current_url and "size=100" in browser.driver.current_url
        assert sorted_heading(browser, "people-list") == ("ascending", "Age ▲")
        ids = row_ids(browser, "people-list")
        assert ids.index(young_id) < ids.index(old_id)
        ages = texts(browser, '#people-list tbody td[data-label="Age"]')
        known = [int(age) for age in ages if age != "unknown"]
        assert known == sorted(known)
        assert "unknown" not in ages or ages.index("unknown") >= len(known)
        assert count_line(browser, ("people", "person"))[0] == count
        if mobile:
            fits_the_screen(browser)
        if not mobile:
            # Both widths; the helper puts the window back to a desktop's.
            browser.screenshot("lists-people-by-age", phone=True)

        # A click on the active heading reverses the order: oldest first,
        # unknown ages still last, the arrow turned; the page size is kept.
        browser.click_link("#sort-age")
        browser.wait.until(lambda _: "order=desc" in browser.driver.current_url)
        assert "sort=age" in browser.driver.current_url and "size=100" in browser.driver.current_url
        assert sorted_heading(browser, "people-list") == ("descending", "Age ▼")
        ids = row_ids(browser, "people-list")
        assert ids.index(old_id) < ids.index(young_id)
        ages = texts(browser, '#people-list tbody td[data-label="Age"]')
        known = [int(age) for age in ages if age != "unknown"]
        assert known == sorted(known, reverse=True)
        assert "unknown" not in ages or ages.index("unknown") >= len(known)
        if not mobile:
            browser.screenshot("lists-people-by-age-descending", phone=True)
        # And once more: youngest first again.
        browser.click_link("#sort-age")
        browser.wait.until(lambda _: "order=desc" not in browser.driver.current_url)
        assert sorted_heading(browser, "people-list") == ("ascending", "Age ▲")

        # And back to the names.
        click_heading(browser, "#sort-name")
        assert sorted_heading(browser, "people-list") == ("ascending", "Last name ▲")
    browser.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_coffee_table_shows_prices_and_sorts_by_them(signed_in):
    browser = signed_in
    cheap = unique("Cheap ")
    dear = unique("Dear ")
    records("coffee", "add", "--name", dear, "--price", "999")
    records("coffee", "add", "--name", cheap, "--price", "0.01")
    for label, size, mobile in (("desktop", DESKTOP, False), ("phone", PHONE, True)):
        set_width(browser, size, mobile)
        browser.get("/coffee?size=100")
        count_line(browser, ("coffee", "coffees"))
        assert sorted_heading(browser, "coffee-list") == ("ascending", "Name ▲")
        click_heading(browser, "#sort-price")
        assert sorted_heading(browser, "coffee-list") == ("ascending", "Price ▲")
        rows = browser.driver.execute_script(
            "return [...document.querySelectorAll('#coffee-list tbody tr')].map(r => "
            "[r.querySelector('a.title').textContent, r.querySelector('td[data-label=\"Price\"]').textContent])")
        names = [name for name, _ in rows]
        prices = [price for _, price in rows]
        assert names.index(cheap) < names.index(dear)
        assert prices[names.index(cheap)] == "0.01" and prices[names.index(dear)] == "999.00"
        numbers = [float(price) for price in prices if re.fullmatch(r"[\d.]+", price)]
        assert numbers == sorted(numbers)
        if mobile:
            fits_the_screen(browser)
        if not mobile:
            # Both widths; the helper puts the window back to a desktop's.
            browser.screenshot("lists-coffee-by-price", phone=True)
    browser.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_contacts_table_links_phones_and_emails(signed_in):
    browser = signed_in
    name = unique("Table Contact ")
    records("contacts", "add", "--name", name, "--address", "1 Long Road, Anytown", "--contact",
            "someone.else@example.org")
    # A web address with no place to break (the original tutorial's weather
    # station has one): its card must still fit a phone.
    web = unique("Web Contact ")
    address = "http://www.example.org/" + "without-a-place-to-break-" * 3 + "clientraw.txt"
    records("contacts", "add", "--name", web, "--address", "Elgol", "--contact", address)
    for label, size, mobile in (("desktop", DESKTOP, False), ("phone", PHONE, True)):
        set_width(browser, size, mobile)
        browser.get("/contacts?q=" + name.split()[-1])
        assert count_line(browser, ("match", "matches"))[0] == 1
        hrefs = browser.driver.execute_script(
            "return [...document.querySelectorAll('#contacts-list a[href^=\"mailto:\"]')].map(a => a.href)")
        assert hrefs == ["mailto:someone.else@example.org"]
        if mobile:
            fits_the_screen(browser)
            assert one_line(browser, '#contacts-list a[href^="mailto:"]')
            browser.get("/contacts?q=" + web.split()[-1])
            assert texts(browser, '#contacts-list td[data-label="Phone or email"]') == [address]
            fits_the_screen(browser)
            # The table scrolls sideways rather than widen the page, so the
            # card itself is measured: the address's cell ends inside it.
            cell, card = browser.driver.execute_script(
                "const td = document.querySelector('#contacts-list td[data-label=\"Phone or email\"]');"
                "return [td.getBoundingClientRect().right, td.closest('tr').getBoundingClientRect().right]")
            assert cell <= card + 1, f"the address's cell ends at {cell}px, its card at {card}px"
        if not mobile:
            # Both widths; the helper puts the window back to a desktop's.
            browser.screenshot("lists-contacts", phone=True)
    browser.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
