"""The hostile-text checks themselves: each catches what it is for, on
pages of a throwaway loopback server that do run or carry script."""

import http.server
import threading

import pytest

PAGES = {
    # Script that runs: a dialog opens.
    "/runs": ("", "<p>x</p><script>alert(1)</script>"),
    # Inline script the policy blocks: nothing opens, but it was there.
    "/blocked": ("script-src 'self'", "<p>x</p><script>alert(1)</script>"),
    # An element made of text that should have been escaped (its handler
    # left out: the element alone is what this check looks for).
    "/element": ("", "<p>x</p><img src=x>"),
    # Plain text: nothing to find.
    "/clean": ("script-src 'self'", "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>"),
}


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        policy, body = PAGES.get(self.path, ("", "missing"))
        data = f"<!doctype html><html><head><title>t</title></head><body>{body}</body></html>".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        if policy:
            self.send_header("Content-Security-Policy", policy)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *arguments):
        pass


@pytest.fixture(scope="module")
def pages():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    "path,complaint",
    [("/runs", "a dialog opened"), ("/blocked", "script ran or was blocked"), ("/element", "an <img src=x>")],
)
def test_the_check_catches_script_that_ran_or_was_injected(open_browser, pages, path, complaint):
    browser = open_browser("checks")
    browser.driver.get(pages + path)
    with pytest.raises(AssertionError, match=complaint):
        browser.check_no_script_ran()


def test_the_check_passes_escaped_text(open_browser, pages):
    browser = open_browser("checks")
    browser.driver.get(pages + "/clean")
    browser.check_no_script_ran()
    assert browser.text_of("p") == "<script>alert(1)</script>"
