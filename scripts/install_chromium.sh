#!/usr/bin/env bash
# Install Debian's Chromium + ChromeDriver for the browser tests, when they are missing.
set -eu
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] && [ -d /usr/share/fonts/truetype/noto ]; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "warning: apt-get not available; browser tests will be skipped without /usr/bin/chromium" >&2
    exit 0
fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver fonts-noto-color-emoji >/dev/null
