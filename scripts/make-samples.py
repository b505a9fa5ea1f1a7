#!/usr/bin/env python3
"""Regenerate the bundled demo samples in samples/ from the test corpus.

The samples are public-domain classics (see samples/README.md). The pirate-style copy
is made the way pirate sites make theirs: traditional script (OpenCC's Apache-2.0
STPhrases/STCharacters tables), a few homophone swaps, ad lines from real pirate sites
inserted between paragraphs, the chapter cut short, site boilerplate around it, and
Big5 bytes. Deterministic (fixed random seed), so re-running gives the same files.

It also writes the data of the one-command demo (scripts/demo.sh): the registered works
(samples/works/classics.jsonl: the first chapter of each of the four classic novels,
assigned to two fictional rights holders), the chapters that stay unregistered
(samples/site/unregistered.jsonl: second chapters, innocent pages of the demo's pirate
site) and a selection of real pirate-site ad lines (samples/site/ad-lines.txt).
samples/site/filler.jsonl (news, a blog post, an essay) is original text written for the
demo and is not generated.

Usage: python3 scripts/make-samples.py [CORPUS_DIR]   (default: .test-corpus, made by
scripts/setup-corpus.sh)
"""
import html
import json
import os
import random
import sys

corpus = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".test-corpus")
out_dir = os.path.join(os.path.dirname(__file__), "..", "samples")
rng = random.Random(20261121)


def chapter(chapter_id):
    with open(os.path.join(corpus, "novels_classics.jsonl"), encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            if d["id"] == chapter_id:
                return d
    raise SystemExit(f"{chapter_id} not found in {corpus}")


def load_table(name):
    table = {}
    with open(os.path.join(corpus, "opencc", name), encoding="utf-8") as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 2 and parts[0] not in table:
                table[parts[0]] = parts[1].split(" ")[0]
    return table


phrases = load_table("STPhrases.txt")
chars = load_table("STCharacters.txt")
longest = max(len(k) for k in phrases)


def to_traditional(text):
    out, i = [], 0
    while i < len(text):
        for n in range(min(longest, len(text) - i), 1, -1):
            if text[i:i + n] in phrases:
                out.append(phrases[text[i:i + n]])
                i += n
                break
        else:
            out.append(chars.get(text[i], text[i]))
            i += 1
    return "".join(out)


# Same-initial swaps pirates use to dodge exact-match filters (同音字替代).
HOMOPHONES = {"在": "再", "他": "她", "的": "得", "是": "事", "有": "又", "那": "哪", "做": "作",
              "已": "以", "到": "道", "里": "理", "时": "十", "见": "件", "和": "合", "之": "知"}


def swap_homophones(text, rate):
    return "".join(HOMOPHONES[c] if c in HOMOPHONES and rng.random() < rate else c for c in text)


def ad_lines():
    with open(os.path.join(corpus, "pirate_site_ad_lines.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    return [r[2] for r in rows if len(r) == 3 and r[2].strip()]


def main():
    os.makedirs(out_dir, exist_ok=True)
    work = chapter("novel-hongloumeng-001")
    other = chapter("novel-hongloumeng-002")
    with open(os.path.join(out_dir, "hongloumeng-01.txt"), "w", encoding="utf-8") as f:
        f.write(work["title"] + "\n\n" + work["text"].strip() + "\n")

    paragraphs = [p.strip() for p in work["text"].split("\n") if p.strip()]
    kept = paragraphs[: max(3, int(len(paragraphs) * 0.6))]
    ads = ad_lines()
    body = []
    for i, p in enumerate(kept):
        body.append(html.escape(to_traditional(swap_homophones(p, 0.3))))
        if i % 4 == 3:
            body.append(html.escape(rng.choice(ads)))
    page = (
        '<!DOCTYPE html>\n<html><head><meta charset="big5"><title>'
        + html.escape(to_traditional(work["title"])) + " - 免費小說閱讀網</title>\n"
        "<script>var ad_slot = 'top'; document.write('<div class=ad>廣告</div>');</script>\n"
        "<style>#content{line-height:2}</style></head>\n<body>\n"
        '<div class="nav"><a href="/">首頁</a> | <a href="/top">排行榜</a> | <a href="/full">全本小說</a> | <a href="/user">我的書架</a></div>\n'
        '<div class="banner">最新章節免費閱讀，無彈窗廣告</div>\n'
        "<h1>" + html.escape(to_traditional(work["title"])) + "</h1>\n"
        '<div id="content">\n' + "<br><br>\n".join(body) + "\n</div>\n"
        '<div class="footer"><a href="/prev">上一章</a> <a href="/list">目錄</a> <a href="/next">下一章</a><br>'
        "本站所有小說均來自網友上傳 &copy; 2026</div>\n</body></html>\n"
    )
    with open(os.path.join(out_dir, "pirate-copy-big5.html"), "wb") as f:
        f.write(page.encode("big5", errors="xmlcharrefreplace"))

    innocent = (
        "<!DOCTYPE html>\n<html><head><meta charset=\"gbk\"><title>" + html.escape(other["title"]) + "</title></head>\n"
        "<body><div class=\"nav\"><a href=\"/\">首页</a></div><div id=\"content\">"
        + "<br>\n".join(html.escape(p.strip()) for p in other["text"].split("\n") if p.strip())
        + "</div></body></html>\n"
    )
    with open(os.path.join(out_dir, "other-chapter-gbk.html"), "wb") as f:
        f.write(innocent.encode("gbk", errors="xmlcharrefreplace"))
    print("wrote", ", ".join(sorted(os.listdir(out_dir))))


# The demo's registered works: (corpus id, external id, author, rights holder).
DEMO_WORKS = [
    ("novel-hongloumeng-001", "hongloumeng-001", "曹雪芹", "jinling-press"),
    ("novel-xiyouji-001", "xiyouji-001", "吴承恩", "jinling-press"),
    ("novel-sanguo-001", "sanguo-001", "罗贯中", "luoguan-books"),
    ("novel-shuihu-001", "shuihu-001", "施耐庵", "luoguan-books"),
]
# Chapters of the same novels that nobody registers (innocent pages of the demo site).
DEMO_UNREGISTERED = [
    ("novel-hongloumeng-002", "hongloumeng-002", "曹雪芹"),
    ("novel-xiyouji-002", "xiyouji-002", "吴承恩"),
    ("novel-sanguo-002", "sanguo-002", "罗贯中"),
]


def demo_data():
    works_dir = os.path.join(out_dir, "works")
    site_dir = os.path.join(out_dir, "site")
    os.makedirs(works_dir, exist_ok=True)
    os.makedirs(site_dir, exist_ok=True)

    def line(doc, external_id, author, owner=None):
        rec = {"id": external_id, "title": doc["title"], "author": author}
        if owner:
            rec["owner"] = owner
        rec["source"] = doc["source"]
        rec["text"] = doc["text"].strip()
        return json.dumps(rec, ensure_ascii=False) + "\n"

    with open(os.path.join(works_dir, "classics.jsonl"), "w", encoding="utf-8") as f:
        for cid, eid, author, owner in DEMO_WORKS:
            f.write(line(chapter(cid), eid, author, owner))
    with open(os.path.join(site_dir, "unregistered.jsonl"), "w", encoding="utf-8") as f:
        for cid, eid, author in DEMO_UNREGISTERED:
            f.write(line(chapter(cid), eid, author))
    picker = random.Random(20261122)
    ads = sorted(set(ad_lines()))
    chosen = sorted(picker.sample(ads, 16))
    with open(os.path.join(site_dir, "ad-lines.txt"), "w", encoding="utf-8") as f:
        f.write("".join(a.strip() + "\n" for a in chosen))
    print("wrote samples/works/classics.jsonl, samples/site/unregistered.jsonl, samples/site/ad-lines.txt")


main()
demo_data()
