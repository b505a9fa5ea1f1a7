#!/usr/bin/env bash
# Make Debian's Chromium, a CJK font and poppler's pdftotext available: the dashboard's
# end-to-end tests drive Chromium (playwright-core), `zhiwen serve` prints PDF evidence
# reports with it (the font makes the Chinese print as text, not boxes), the ingest tests
# capture pages with it (`zhiwen_ingest::render`: screenshot and print), and the API
# tests read those PDFs back with pdftotext. Idempotent: installs only what is missing.
set -euo pipefail
# shellcheck source=lib/apt.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/apt.sh"

missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
fc-list :lang=zh 2>/dev/null | grep -q . || missing+=(fonts-noto-cjk)
command -v pdftotext >/dev/null 2>&1 || missing+=(poppler-utils)
if [ "${#missing[@]}" -gt 0 ]; then
    apt_install "${missing[@]}"
fi
/usr/bin/chromium --version 2>/dev/null || true
