"""The site around the apps: the error page, and signing in being required."""


def test_a_missing_page_shows_the_not_found_page(browser):
    browser.get("/no/such/page")
    assert browser.find("h1").text == "Page not found"
    assert browser.exists('link[rel="stylesheet"]')
    # The stylesheet loaded and applies (the header has the brand colour).
    colour = browser.driver.execute_script(
        "return getComputedStyle(document.querySelector('header.site')).backgroundColor"
    )
    assert colour == "rgb(47, 93, 80)"
    browser.screenshot("not-found", phone=True)
