#!/usr/bin/env bash
# Make sure Debian's headless Chromium and its ChromeDriver are present for the browser tests.
# Idempotent and fast when both are installed. Never fails the build by itself: if the install
# cannot happen, it warns on stderr and the browser tests then fail with their own clear error
# (they are not skipped).
set -uo pipefail

have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/bin/$1" ]; }

if have chromium && have chromedriver; then
    exit 0
fi

warn() { echo "ensure-chromium: warning: $*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
    warn "chromium/chromedriver missing and not root; install packages 'chromium chromium-driver'."
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    warn "chromium/chromedriver missing and apt-get not found; browser tests will fail."
    exit 0
fi

echo "ensure-chromium: installing chromium and chromium-driver with apt-get ..." >&2
if ! { apt-get update -qq \
        && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver \
           >/dev/null; }; then
    warn "apt-get could not install chromium chromium-driver; browser tests will fail."
    exit 0
fi

if have chromium && have chromedriver; then
    echo "ensure-chromium: $(chromium --version 2>/dev/null || echo chromium installed)" >&2
else
    warn "apt-get finished but chromium/chromedriver still not found."
fi
exit 0
