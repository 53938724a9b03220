"""Shared fixtures of the browser tests: the server scripts/e2e.sh started,
Debian's headless Chromium through its chromedriver, screenshots, and the
checks that no hostile text ever ran as script."""

import base64
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import uuid

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

DESKTOP = (1280, 900)
PHONE = (390, 844)

# Text that would run or break out of markup if a page pasted it in raw:
# a script element, an attribute break-out into an image whose error runs
# script, a right-to-left override and a zero-width space.
SCRIPT = "<script>alert(1)</script>"
BREAKOUT = '"><img src=x onerror=alert(1)>'
RTL = "\u202eevil"
ZERO_WIDTH = "zero\u200bwidth"

# Installed in every document before the page's own scripts (through the
# DevTools protocol, which the page's Content-Security-Policy does not
# govern): records every alert, confirm or prompt, and every
# Content-Security-Policy violation, in sessionStorage so that a page that
# navigates away right after still leaves its trace for the next check.
TRAP = r"""
(() => {
  const note = (kind, detail) => {
    try {
      const list = JSON.parse(sessionStorage.getItem('e2e-trap') || '[]');
      list.push(kind + ': ' + detail);
      sessionStorage.setItem('e2e-trap', JSON.stringify(list));
    } catch (e) {}
  };
  for (const name of ['alert', 'confirm', 'prompt']) {
    const original = window[name];
    window[name] = function (...args) { note(name, String(args[0])); return original.apply(this, args); };
  }
  document.addEventListener('securitypolicyviolation', (event) => {
    note('csp', event.violatedDirective + ' ' + event.blockedURI + ' ' + (event.sample || ''));
  });
})();
"""


# The innermost elements that reach past the right edge of a page `width`
# pixels wide (described by tag, id and class), for the overflow report.
OVERFLOW = r"""
const width = arguments[0];
const out = [];
for (const element of document.body.querySelectorAll('*')) {
  const box = element.getBoundingClientRect();
  if (box.width === 0 || box.right <= width + 1) continue;
  if ([...element.children].some(child => child.getBoundingClientRect().right > width + 1)) continue;
  const name = element.tagName.toLowerCase() + (element.id ? '#' + element.id : '')
    + (element.className && typeof element.className === 'string' ? '.' + element.className.trim().split(/\s+/).join('.') : '');
  if (!out.includes(name)) out.push(name);
}
return out.slice(0, 8);
"""


def _interrupt(signum, frame):
    raise KeyboardInterrupt


# scripts/e2e.sh stops the tests with SIGTERM when it is stopped itself:
# handled like Ctrl-C, so the fixtures still close their browsers.
signal.signal(signal.SIGTERM, _interrupt)


def base_url():
    url = os.environ.get("RECORDS_E2E_URL")
    if not url:
        pytest.exit("RECORDS_E2E_URL is not set: run the browser tests with scripts/e2e.sh", returncode=2)
    return url.rstrip("/")


class Browser:
    """One browser session (its own profile, so its own cookies) with the
    helpers the flows use."""

    def __init__(self, name):
        self.name = name
        self.base = base_url()
        self.profile = tempfile.mkdtemp(prefix="chromium-e2e-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for argument in (
            "--headless=new",
            "--no-sandbox",
            "--disable-dev-shm-usage",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--password-store=basic",
            "--lang=en-US",
            f"--user-data-dir={self.profile}",
            f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
        ):
            options.add_argument(argument)
        # Leave a dialog open rather than dismissing it, so the checks see it.
        options.set_capability("unhandledPromptBehavior", "ignore")
        # The driver's path is given, so Selenium Manager never runs (it would
        # download a browser or driver).
        service = Service(executable_path=CHROMEDRIVER, log_output=subprocess.DEVNULL)
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_page_load_timeout(30)
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": TRAP})
        # The uploaded pictures' decoding and the live updates take a moment.
        self.wait = WebDriverWait(self.driver, 10)

    def quit(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    # Navigation -----------------------------------------------------------

    def get(self, path):
        self.driver.get(self.base + path)
        self.check_no_script_ran()

    @property
    def path(self):
        url = self.driver.current_url
        return url[len(self.base) :] if url.startswith(self.base) else url

    def find(self, css):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def find_all(self, css):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def exists(self, css):
        return len(self.find_all(css)) > 0

    def text_of(self, css):
        """The element's text exactly as in the document (textContent), with
        zero-width and bidirectional characters kept. Looked up and read in
        one script: the page's live script may swap the element for a fresh
        copy at any moment, which would leave a found element stale."""
        text = self.driver.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? e.textContent : null", css)
        if text is None:
            self.find(css)  # raises NoSuchElementException, naming the selector
        return text

    def main_text(self):
        return self.text_of("main")

    def fill(self, fields):
        """Types into each field (by name): clears it first."""
        for name, value in fields.items():
            element = self.find(f'[name="{name}"]')
            kind = element.get_attribute("type")
            tag = element.tag_name.lower()
            if tag == "select":
                Select(element).select_by_value(value)
            elif kind in ("checkbox", "radio"):
                if element.is_selected() != bool(value):
                    element.click()
            elif kind == "file":
                element.send_keys(value)
            elif kind in ("date",):
                # A date input takes keystrokes in the locale's order; set it directly.
                self.driver.execute_script("arguments[0].value = arguments[1]", element, value)
            else:
                element.clear()
                element.send_keys(value)

    def submit(self, css):
        """Clicks the button and waits for the next page. The page's live
        script may swap a list (and the links in it) for a fresh copy
        between finding the element and clicking it; the fresh copy's
        element is then found and clicked instead."""
        old = self.find("html")
        for attempt in range(3):
            try:
                self.find(css).click()
                break
            except StaleElementReferenceException:
                if attempt == 2:
                    raise
        self.wait.until(lambda _: self._stale(old))
        self.wait.until(lambda d: d.execute_script("return document.readyState") == "complete")
        self.check_no_script_ran()

    def click_link(self, css):
        self.submit(css)

    @staticmethod
    def _stale(element):
        try:
            element.is_enabled()
            return False
        except Exception:
            return True

    def status_line(self):
        """The status lines' text, without the invisible marks that set a
        name apart from the sentence around it (U+2068, U+2069)."""
        elements = self.find_all('[role="status"]')
        return " ".join(e.text for e in elements).replace("\u2068", "").replace("\u2069", "")

    # Checks ---------------------------------------------------------------

    def check_no_script_ran(self):
        """No dialog is open, the trap saw no alert and no blocked inline
        script, and no element came out of the hostile text."""
        try:
            alert = self.driver.switch_to.alert
            text = alert.text
            alert.dismiss()
            raise AssertionError(f"{self.name}: a dialog opened on {self.path}: {text!r}")
        except NoAlertPresentException:
            pass
        trapped = self.driver.execute_script("return sessionStorage.getItem('e2e-trap')")
        assert trapped in (None, "[]"), f"{self.name}: script ran or was blocked on {self.path}: {trapped}"
        assert not self.find_all('img[src="x"]'), f"{self.name}: an <img src=x> was made from text on {self.path}"
        inline = self.driver.execute_script(
            "return [...document.scripts].filter(s => s.textContent.includes('alert(')).length"
        )
        assert inline == 0, f"{self.name}: a script element holds hostile text on {self.path}"

    # Screenshots ----------------------------------------------------------

    def screenshot(self, name, phone=False):
        """Saves the whole page (not only what fits the window) at a
        desktop's size, and as a phone shows it too when asked."""
        directory = pathlib.Path(os.environ.get("RECORDS_E2E_SCREENSHOTS", "screenshots"))
        directory.mkdir(parents=True, exist_ok=True)
        sizes = [("desktop", DESKTOP, False)] + ([("phone", PHONE, True)] if phone else [])
        try:
            for label, (width, height), mobile in sizes:
                self.driver.execute_cdp_cmd(
                    "Emulation.setDeviceMetricsOverride",
                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
                )
                full = self.driver.execute_script("return document.documentElement.scrollHeight")
                wide = self.driver.execute_script(OVERFLOW, width)
                if wide:
                    # Not a failure (the layout is the page authors' to fix):
                    # a list for review beside the screenshots.
                    with open(directory / "overflow.txt", "a", encoding="utf-8") as report:
                        report.write(f"{name}-{label} ({self.path}): wider than {width}px: {', '.join(wide)}\n")
                shot = self.driver.execute_cdp_cmd(
                    "Page.captureScreenshot",
                    {
                        "format": "png",
                        "captureBeyondViewport": True,
                        "clip": {"x": 0, "y": 0, "width": width, "height": min(max(full, height), 6000), "scale": 1},
                    },
                )
                (directory / f"{name}-{label}.png").write_bytes(base64.b64decode(shot["data"]))
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.fixture
def open_browser():
    """Opens browser sessions, each with its own cookies; all are closed
    after the test."""
    browsers = []

    def make(name="browser"):
        browser = Browser(name)
        browsers.append(browser)
        return browser

    yield make
    for browser in browsers:
        browser.quit()


@pytest.fixture
def browser(open_browser):
    return open_browser("browser")


def unique(prefix):
    """A name no other test uses."""
    return f"{prefix}{uuid.uuid4().hex[:8]}"


def records(*arguments, stdin=None):
    """Runs the records command on the served database, in another process."""
    command = [os.environ["RECORDS_BIN"], "--database", os.environ["RECORDS_E2E_DATABASE"], *arguments]
    result = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"{' '.join(command)} failed: {result.stderr}"
    return result.stdout


# Accounts -------------------------------------------------------------------

PASSWORD = "correct horse battery staple"


def profile(first="Grace", last="Hopper", email=None):
    """A valid registration: what an account needs, the password aside
    (the rest of the profile is optional: ``optional_profile``)."""
    return {
        "firstName": first,
        "lastName": last,
        "email": email or f"{unique('user')}@example.com",
    }


def optional_profile():
    """The profile's optional fields, as the profile page takes them."""
    return {
        "mobile": "+15550100",
        "state": "Virginia",
        "city": "Arlington",
        "pincode": "22201",
        "address": "1 Navy Yard",
        "gender": "female",
        "dateOfBirth": "1906-12-09",
    }


def register(browser, values, password=PASSWORD, screenshot=None):
    """Fills the registration form and sends it (the browser's own checks
    of the form skipped, so the server's are the ones tested)."""
    browser.get("/register")
    if screenshot:
        browser.screenshot(screenshot, phone=True)
    browser.fill(values)
    browser.fill({"password": password, "passwordConfirmation": password})
    browser.driver.execute_script("document.getElementById('register-form').noValidate = true")
    browser.submit("#register-submit")


def log_in(browser, email, password=PASSWORD, screenshot=None):
    if not browser.path.startswith("/login"):
        browser.get("/login")
    if screenshot:
        browser.screenshot(screenshot, phone=True)
    browser.fill({"email": email, "password": password})
    browser.submit("#login-submit")


def log_out(browser):
    """The header's Log out button."""
    browser.submit('header form[action="/logout"] button')


def sign_up(browser):
    """Registers a new account through the page; it is then signed in."""
    values = profile()
    register(browser, values)
    assert browser.path == "/", f"registration failed: {browser.main_text()}"
    return values


@pytest.fixture
def signed_in(open_browser):
    """A browser signed in to an account of its own."""
    browser = open_browser("signed-in")
    sign_up(browser)
    return browser
