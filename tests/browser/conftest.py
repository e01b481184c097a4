"""The capture app in headless Chromium against a devhost with the scripted model: the app
served from web/dist on a loopback origin, which the devhost (CORS) and Azurite (Blob CORS,
for the voice note's PUT) allow."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from testkit import webapp
from testkit.support import KEY, running_devhost


@pytest.fixture(scope="session")
def chromium() -> str:
    found = webapp.find_chromium()
    if found is None:
        pytest.fail(webapp.NO_CHROMIUM, pytrace=False)
    return found


@pytest.fixture(scope="session")
def app_origin() -> Iterator[str]:
    """web/dist, built from the sources as they are, served on its own loopback origin."""
    webapp.build()
    with webapp.serving() as origin:
        yield origin


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], app_origin: str, tmp_path_factory) -> Iterator[str]:
    webapp.allow_uploads_from(scripted_env["AzureWebJobsStorage"], app_origin)
    log_dir = tmp_path_factory.mktemp("browser")
    with running_devhost(scripted_env, log_dir, cors=app_origin) as url:
        yield url


@pytest.fixture
def browser(
    chromium: str, app_origin: str, host: str, fake, tmp_path_factory
) -> Callable[..., dict]:
    """Runs a scenario of drive.mjs against the module's devhost; what the person saw. Fails
    on any page error, CSP refusal, or serious or critical axe-core violation."""
    fake.reset()
    # The app's pictures (docs/app.md) change only when asked: a test run leaves the tree as is.
    if os.environ.get("UPDATE_SCREENSHOTS"):
        screenshots = webapp.SCREENSHOTS
    else:
        screenshots = tmp_path_factory.mktemp("screenshots")
    screenshots.mkdir(parents=True, exist_ok=True)

    def run(scenario: str, **extra: str) -> dict:
        seen = webapp.drive(
            scenario,
            {
                "APP_URL": f"{app_origin}/",
                "API_URL": f"{host}/api",
                "API_KEY": KEY["X-API-Key"],
                "CHROMIUM": chromium,
                "AUDIO": str(webapp.SPEECH),
                "SCREENSHOTS": str(screenshots),
                **extra,
            },
        )
        assert seen["pageErrors"] == [], seen["pageErrors"]
        assert seen["csp"] == [], seen["csp"]
        violations = {screen: found for screen, found in seen["violations"].items() if found}
        assert violations == {}, f"accessibility (axe-core, serious or critical): {violations}"
        return seen

    return run
