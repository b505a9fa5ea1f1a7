#!/usr/bin/env bash
# The dashboard's checks (admin-ui/): installs what they need (Debian's chromium and a CJK
# font with apt-get, the npm packages locked in package-lock.json), then typecheck, unit tests
# (Vitest), the production build, and the end-to-end tests in headless Chromium against a
# real `zhiwen serve` seeded by real imports and a real matching run, sending its takedown
# notices to a loopback SMTP server (aiosmtpd, scripts/setup-smtp.sh).
# The end-to-end run saves screenshots of the main pages into target/screenshots/
# (E2E_SCREENSHOTS=docs: into docs/screenshots/ for the README; =0: none).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"

source scripts/lib/steps.sh

step "browser and fonts for the end-to-end tests (Debian chromium, fonts-noto-cjk)"
scripts/setup-browser.sh

step "Node.js and npm (Debian's nodejs and npm when missing)"
scripts/setup-node.sh

step "npm packages (admin-ui, the versions in package-lock.json)"
cd "$ROOT/admin-ui"
# `npm ci`: exactly the locked versions (the lock holds every platform's optional
# packages), never a rewritten package-lock.json. Skipped when node_modules already holds
# what this lock names.
LOCK_SUM="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ "$(cat node_modules/.zhiwen-lock 2>/dev/null || true)" != "$LOCK_SUM" ]; then
    npm ci --no-audit --no-fund
    echo "$LOCK_SUM" >node_modules/.zhiwen-lock
fi

step "typecheck (tsc)"
npm run --silent typecheck

step "unit tests (vitest)"
npm test --silent

step "production build (vite build -> admin-ui/dist, served by zhiwen serve)"
npm run --silent build

step "building zhiwen"
cd "$ROOT"
cargo build --locked --bin zhiwen

step "SMTP server for the notice steps (aiosmtpd in .test-servers/venv)"
# scripts/test.sh exports it; run alone, this script sets it up the same way.
if [ -z "${ZHIWEN_SMTPD_PYTHON:-}" ]; then
    ZHIWEN_SMTPD_PYTHON="$(scripts/setup-smtp.sh)"
fi
export ZHIWEN_SMTPD_PYTHON
echo "smtpd python: $ZHIWEN_SMTPD_PYTHON"

step "end-to-end tests (headless chromium, real zhiwen serve)"
cd "$ROOT/admin-ui"
ZHIWEN_BIN="$ROOT/target/debug/zhiwen" CHROMIUM=/usr/bin/chromium node e2e/run.mjs
