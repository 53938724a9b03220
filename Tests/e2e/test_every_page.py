"""Every page of the site, as a desktop and as a phone show it: the pages a
signed-in person reaches by following links from the start page, plus the
ones no link leads to (signed-out pages, a search, a form sent with
errors, a missing page). Each is saved as a screenshot at both widths, so
anyone can look at the whole site after a run, and each must fit a phone's
width: a page that scrolls sideways at 390 px fails."""

import json
import re
from collections import deque
from urllib.parse import urljoin, urlsplit, parse_qsl

from conftest import DESKTOP, PHONE, records, unique
from test_coffee import png

# Pages whose links are not pages to look at: they act (log out), stream
# (events), answer JSON or bytes (API, pictures, thumbnails, static files).
NOT_PAGES = re.compile(r"^/(logout|events|api/|static/)|/picture|/thumbnail")

# The most pages the walk visits, so that a page that links to an endless
# set of addresses (a pager, say) cannot make the run endless.
MOST_PAGES = 60

# The page's width beyond the viewport: what a person would have to scroll
# sideways to read.
SIDEWAYS = "return document.documentElement.scrollWidth - window.innerWidth"


def shape(path):
    """A page's address without what only changes its content's order or
    page: one screenshot of `/people?sort=age&page=2` stands for all the
    sorted and paged variants of the list."""
    parts = urlsplit(path)
    keys = sorted(key for key, _ in parse_qsl(parts.query) if key not in ("sort", "page", "order", "direction", "size"))
    # Records' IDs vary between runs; a record's pages have one shape each.
    return re.sub(r"/\d+", "/N", parts.path) + ("?" + "&".join(keys) if keys else "")


def name_of(path):
    """A file name for the page's screenshots."""
    text = shape(path).strip("/").replace("/", "-").replace("?", "-").replace("&", "-")
    return "page-" + (text or "start")


def look_at(browser, path, failures, name=None):
    """Screenshots at both widths, and the phone width checked."""
    browser.screenshot(name or name_of(path), phone=True)
    browser.driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 1, "mobile": True},
    )
    try:
        sideways = browser.driver.execute_script(SIDEWAYS)
    finally:
        browser.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    if sideways > 0:
        failures.append(f"{path} is {sideways}px wider than a {PHONE[0]}px phone")


def links(browser):
    """The site's own pages the current page links to."""
    hrefs = browser.driver.execute_script("return [...document.querySelectorAll('a[href]')].map(a => a.href)")
    found = []
    for href in hrefs:
        if not href.startswith(browser.base + "/"):
            continue
        path = href[len(browser.base) :].split("#")[0]
        if path and not NOT_PAGES.search(path):
            found.append(path)
    return found


def test_every_page_is_saved_at_both_widths_and_fits_a_phone(open_browser, tmp_path):
    failures = []

    # Signed out: the pages anyone sees.
    visitor = open_browser("visitor")
    for path in ("/login", "/register", "/no-such-page"):
        visitor.get(path)
        look_at(visitor, path, failures)

    # One record of each app, so that every kind of page has something on it.
    browser = open_browser("signed-in")
    from conftest import sign_up

    sign_up(browser)
    records("people", "add", "--first", "Ada", "--last", unique("Lovelace "), "--age", "36")
    records("contacts", "add", "--name", unique("Jane Doe "), "--address", "1 Main Street", "--contact", "+1 555 0100")
    coffee = json.loads(records("coffee", "add", "--name", unique("Espresso "), "--price", "3.50", "--json"))
    picture = tmp_path / "espresso.png"
    picture.write_bytes(png(160, 120))
    records("coffee", "picture", "set", str(coffee["id"]), str(picture))

    # Every page a link leads to, from the start page.
    seen = set()
    queue = deque(["/"])
    visited = 0
    while queue and visited < MOST_PAGES:
        path = queue.popleft()
        if shape(path) in seen:
            continue
        seen.add(shape(path))
        browser.get(path)
        if not browser.path.startswith(path.split("?")[0]):
            # Sent elsewhere (a page that needs something first): the page
            # it was sent to is walked in its own turn.
            continue
        visited += 1
        look_at(browser, path, failures)
        queue.extend(links(browser))

    # Pages no link leads to: a search, and each app's add form sent empty.
    for path in ("/people?q=ada", "/contacts?q=jane", "/coffee?q=espresso"):
        if shape(path) not in seen:
            browser.get(path)
            look_at(browser, path, failures)
    browser.get("/people/new")
    if browser.exists('form [type="submit"]'):
        browser.driver.execute_script("for (const f of document.forms) f.noValidate = true")
        browser.submit('main form [type="submit"]')
        look_at(browser, browser.path, failures, name="page-people-new-errors")

    assert visited >= 8, f"the walk reached only {visited} pages: {sorted(seen)}"
    assert not failures, "pages scroll sideways on a phone:\n" + "\n".join(failures)
