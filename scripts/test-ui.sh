#!/usr/bin/env bash
# The dashboard's checks (admin-ui/): installs what they need (Debian's chromium and a CJK
# font with apt-get, the npm packages locked in package-lock.json), then typecheck, unit tests
# (Vitest), the production build, and the end-to-end tests in headless Chromium against a
# real `zhiwen serve` seeded by real imports and a real matching run.
# The end-to-end run saves screenshots of the main pages into docs/screenshots/
# (E2E_SCREENSHOTS=0 skips them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT="$PWD"

step() { printf '\n==> %s\n' "$*"; }

step "browser and fonts for the end-to-end tests (Debian chromium, fonts-noto-cjk)"
scripts/setup-browser.sh

step "Node.js and npm (Debian's nodejs and npm when missing)"
scripts/setup-node.sh

step "npm packages (admin-ui, the versions in package-lock.json)"
cd "$ROOT/admin-ui"
# `npm install` rather than `npm ci`: the lock holds only the platform packages the
# registry served when it was made (rollup's linux binaries), and `npm ci` refuses a lock
# without every platform's optional package. With a lock in place `npm install` installs
# exactly the locked versions and leaves package-lock.json unchanged.
npm install --no-audit --no-fund

step "typecheck (tsc)"
npm run --silent typecheck

step "unit tests (vitest)"
npm test --silent

step "production build (vite build -> admin-ui/dist, served by zhiwen serve)"
npm run --silent build

step "building zhiwen"
cd "$ROOT"
cargo build --locked --bin zhiwen

step "end-to-end tests (headless chromium, real zhiwen serve)"
cd "$ROOT/admin-ui"
ZHIWEN_BIN="$ROOT/target/debug/zhiwen" CHROMIUM=/usr/bin/chromium node e2e/run.mjs
