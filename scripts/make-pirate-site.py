#!/usr/bin/env python3
"""Generate the demo's local "pirate site" from the bundled samples.

The site copies the registered works (samples/works/classics.jsonl) the way real pirate
sites do, and also carries pages that copy nothing:

- a chapter in traditional script with homophone swaps and ad lines, as Big5 bytes;
- a chapter copied whole inside site navigation, as GBK bytes;
- a chapter cut short, with homophones;
- a chapter split over two pages (the second one reachable only through sitemap.xml);
- an excerpt of a chapter embedded in an unrelated blog post;
- a full copy under /vip/, which robots.txt forbids (a polite crawler never sees it);
- innocent pages: second chapters of the same novels that nobody registered, in the
  same site layout with the same ads; news stories; an essay quoting famous one-liners.

Traditional script comes from OpenCC's tables shipped in the repository
(samples/site/opencc/STCharacters.txt; services/core/data/opencc/TSPhrases.txt inverted). Ad lines are real ones (samples/site/ad-lines.txt).
The output is deterministic for a given --base-url (fixed random seed, sorted inputs).

Besides the site it writes a manifest (JSON: every page's path and what it is expected
to be: a copy of which work, or innocent) that scripts/demo.sh uses to check the result.

Usage: python3 scripts/make-pirate-site.py --out DIR --base-url http://127.0.0.1:PORT/ --manifest FILE
"""
import argparse
import html
import json
import os
import random

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SITE_NAME = "笔趣书屋 免费小说阅读网"

# Same-reading swaps pirates use to dodge exact-match filters (同音字替代).
HOMOPHONES = {"在": "再", "他": "她", "的": "得", "是": "事", "有": "又", "那": "哪", "做": "作",
              "已": "以", "到": "道", "里": "理", "时": "十", "见": "件", "和": "合", "之": "知",
              "去": "趣", "意": "义", "心": "新", "事": "是", "来": "莱", "说": "烁"}


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_s2t():
    """Simplified -> traditional: OpenCC's STCharacters table (each character's first,
    most common traditional form), plus OpenCC's traditional -> simplified phrase table
    inverted where a phrase maps one way only."""
    def table(path):
        pairs = []
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith("#") or "\t" not in line:
                    continue
                key, values = line.rstrip("\n").split("\t", 1)
                pairs.append((key, values.split(" ")))
        return pairs

    chars = {s: ts[0] for s, ts in table(os.path.join(ROOT, "samples", "site", "opencc", "STCharacters.txt"))}
    phrases = {}
    for trad, simps in table(os.path.join(ROOT, "services", "core", "data", "opencc", "TSPhrases.txt")):
        if len(simps) == 1:
            phrases.setdefault(simps[0], trad)
    return chars, phrases


S2T_CHARS, S2T_PHRASES = load_s2t()
LONGEST = max(len(k) for k in S2T_PHRASES)


def traditional(text):
    out, i = [], 0
    while i < len(text):
        for n in range(min(LONGEST, len(text) - i), 1, -1):
            if text[i:i + n] in S2T_PHRASES:
                out.append(S2T_PHRASES[text[i:i + n]])
                i += n
                break
        else:
            out.append(S2T_CHARS.get(text[i], text[i]))
            i += 1
    return "".join(out)


def paragraphs(text):
    return [p.strip().strip("\u3000") for p in text.split("\n") if p.strip().strip("\u3000")]


class Site:
    def __init__(self, base_url, out, rng):
        self.base = base_url.rstrip("/") + "/"
        self.out = out
        self.rng = rng
        self.pages = []  # (path, title, expectation dict)
        with open(os.path.join(ROOT, "samples", "site", "ad-lines.txt"), encoding="utf-8") as f:
            self.ads = [a.strip() for a in f if a.strip()]

    def homophones(self, text, rate):
        return "".join(HOMOPHONES[c] if c in HOMOPHONES and self.rng.random() < rate else c for c in text)

    def with_ads(self, paras, every):
        out = []
        for i, p in enumerate(paras):
            out.append(p)
            if i % every == every - 1:
                out.append(self.rng.choice(self.ads))
        return out

    def write(self, path, text, charset="utf-8"):
        full = os.path.join(self.out, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(text.encode(charset, errors="xmlcharrefreplace"))

    def chapter_page(self, path, title, paras, expect, charset="utf-8", trad=False, prev=None, nxt=None, listed=True):
        t = traditional if trad else (lambda s: s)
        nav = (
            f'<div class="nav"><a href="/">{t("首页")}</a> | <a href="/top.html">{t("排行榜")}</a> | '
            f'<a href="/">{t("全本小说")}</a> | <a href="/">{t("我的书架")}</a></div>\n'
        )
        pager = '<div class="pager">'
        if prev:
            pager += f'<a href="{prev}">{t("上一页")}</a> '
        pager += f'<a href="/">{t("目录")}</a>'
        if nxt:
            pager += f' <a href="{nxt}">{t("下一页")}</a>'
        pager += "</div>\n"
        body = "<br><br>\n".join(html.escape(p) for p in paras)
        page = (
            f'<!DOCTYPE html>\n<html><head><meta charset="{charset}"><title>{html.escape(title)} - '
            f"{html.escape(t(SITE_NAME))}</title>\n"
            "<script>var ad_slot = 'top';</script>\n<style>#content{line-height:2}</style></head>\n<body>\n"
            + nav
            + f'<div class="banner">{t("最新章节免费阅读，无弹窗广告，手机用户请访问本站")}</div>\n'
            f"<h1>{html.escape(title)}</h1>\n"
            f'<div id="content">\n{body}\n</div>\n'
            + pager
            + f'<div class="footer">{t("本站所有小说均来自网友上传，如有侵权请联系删除")} &copy; 2026</div>\n'
            "</body></html>\n"
        )
        self.write(path, page, charset)
        self.pages.append((path, title, dict(expect, listed=listed)))

    def article_page(self, path, title, paras, expect, section):
        body = "\n".join(f"<p>{html.escape(p)}</p>" for p in paras)
        page = (
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)} - {section}</title></head>\n'
            f'<body><div class="nav"><a href="/">首页</a> | <a href="/">{section}</a></div>\n'
            f'<article><h1>{html.escape(title)}</h1>\n{body}\n</article>\n'
            '<div class="footer">版权所有 &copy; 2026 本地生活网</div></body></html>\n'
        )
        self.write(path, page)
        self.pages.append((path, title, dict(expect, listed=True)))

    def finish(self, manifest_path):
        listed = [(p, t) for p, t, e in self.pages if e["listed"] and not p.startswith("vip/")]
        links = "\n".join(f'<li><a href="/{p}">{html.escape(t)}</a></li>' for p, t in listed)
        self.write(
            "index.html",
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{SITE_NAME}</title></head>\n'
            f"<body><h1>{SITE_NAME}</h1>\n<p>最新更新</p>\n<ul>\n{links}\n</ul>\n"
            '<p><a href="/vip/index.html">VIP 全本下载</a></p></body></html>\n',
        )
        self.write("top.html", '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>排行榜</title></head>'
                   '<body><h1>排行榜</h1><p>本周暂无排行。</p><a href="/">首页</a></body></html>\n')
        self.write("robots.txt", f"User-agent: *\nDisallow: /vip/\n\nSitemap: {self.base}sitemap.xml\n")
        urls = [""] + sorted(p for p, _, e in self.pages if not p.startswith("vip/"))
        self.write(
            "sitemap.xml",
            '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            + "".join(f"  <url><loc>{html.escape(self.base + u)}</loc></url>\n" for u in urls)
            + "</urlset>\n",
        )
        manifest = {
            "base_url": self.base,
            "pages": [dict(e, url=self.base + p, title=t) for p, t, e in self.pages],
        }
        with open(manifest_path, "w", encoding="utf-8") as f:
            json.dump(manifest, f, ensure_ascii=False, indent=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--manifest", required=True)
    args = ap.parse_args()

    rng = random.Random(20261122)
    site = Site(args.base_url, args.out, rng)
    works = {w["id"]: w for w in read_jsonl(os.path.join(ROOT, "samples", "works", "classics.jsonl"))}
    others = {w["id"]: w for w in read_jsonl(os.path.join(ROOT, "samples", "site", "unregistered.jsonl"))}
    filler = {d["id"]: d for d in read_jsonl(os.path.join(ROOT, "samples", "site", "filler.jsonl"))}

    def copy(work_id, how):
        return {"expect": "copy", "work": work_id, "how": how}

    def innocent(how):
        return {"expect": "innocent", "how": how}

    # 红楼梦 1: traditional script, 10% homophones, an ad line every 4 paragraphs, Big5.
    w = works["hongloumeng-001"]
    paras = site.with_ads([traditional(site.homophones(p, 0.10)) for p in paragraphs(w["text"])], 4)
    site.chapter_page("book/hongloumeng/1.html", traditional(w["title"]), paras,
                      copy(w["id"], "traditional script (Big5), 10% homophones, ads"), "big5", True,
                      nxt="/book/hongloumeng/2.html")
    # 红楼梦 2: not registered; same layout, traditional, Big5.
    w2 = others["hongloumeng-002"]
    paras = site.with_ads([traditional(p) for p in paragraphs(w2["text"])], 4)
    site.chapter_page("book/hongloumeng/2.html", traditional(w2["title"]), paras,
                      innocent("unregistered chapter of the same novel, same layout"), "big5", True,
                      prev="/book/hongloumeng/1.html")

    # 西游记 1: copied whole, GBK.
    w = works["xiyouji-001"]
    site.chapter_page("book/xiyouji/1.html", w["title"], site.with_ads(paragraphs(w["text"]), 6),
                      copy(w["id"], "whole chapter in site navigation (GBK)"), "gbk", nxt="/book/xiyouji/2.html")
    w2 = others["xiyouji-002"]
    site.chapter_page("book/xiyouji/2.html", w2["title"], site.with_ads(paragraphs(w2["text"]), 6),
                      innocent("unregistered chapter of the same novel, same layout"), "gbk",
                      prev="/book/xiyouji/1.html")

    # 三国演义 1: cut to the first 45%, 5% homophones.
    w = works["sanguo-001"]
    ps = paragraphs(w["text"])
    cut = ps[: max(3, int(len(ps) * 0.45))]
    site.chapter_page("book/sanguo/1.html", w["title"], site.with_ads([site.homophones(p, 0.05) for p in cut], 5),
                      copy(w["id"], "first 45% only, 5% homophones"), nxt="/book/sanguo/2.html")
    w2 = others["sanguo-002"]
    site.chapter_page("book/sanguo/2.html", w2["title"], site.with_ads(paragraphs(w2["text"]), 5),
                      innocent("unregistered chapter of the same novel, same layout"), prev="/book/sanguo/1.html")

    # 水浒传 1: split over two pages, traditional; the second page only in sitemap.xml.
    w = works["shuihu-001"]
    ps = [traditional(p) for p in paragraphs(w["text"])]
    half = len(ps) // 2
    title = traditional(w["title"])
    site.chapter_page("book/shuihu/1.html", title + "（1/2）", site.with_ads(ps[:half], 4),
                      copy(w["id"], "first half of a chapter split over two pages, traditional"), "utf-8", True,
                      nxt="/book/shuihu/1_2.html")
    site.chapter_page("book/shuihu/1_2.html", title + "（2/2）", site.with_ads(ps[half:], 4),
                      copy(w["id"], "second half, reachable only through sitemap.xml"), "utf-8", True,
                      prev="/book/shuihu/1.html", listed=False)

    # An excerpt (about 30%, from the middle) of 西游记 1 embedded in an unrelated blog post.
    w = works["xiyouji-001"]
    ps = paragraphs(w["text"])
    total = sum(len(p) for p in ps)
    chosen, size = [], 0
    for p in ps[len(ps) // 3:]:
        chosen.append(p)
        size += len(p)
        if size >= total * 0.3:
            break
    blog = paragraphs(filler["blog-reading-notes"]["text"])
    site.article_page("blog/reading-notes.html", filler["blog-reading-notes"]["title"],
                      blog[:2] + chosen + blog[2:], copy(w["id"], f"~30% excerpt embedded in a blog post ({size} chars)"),
                      "读书博客")

    # Innocent articles: news and an essay quoting famous one-liners.
    for doc_id in sorted(filler):
        d = filler[doc_id]
        if d["kind"] == "news":
            site.article_page(f"news/{doc_id[5:]}.html", d["title"], paragraphs(d["text"]),
                              innocent("unrelated news story"), "本地新闻")
        elif d["kind"] == "essay":
            site.article_page(f"essay/{doc_id[6:]}.html", d["title"], paragraphs(d["text"]),
                              innocent("essay quoting famous one-line quotes of the novels"), "随笔")

    # Forbidden by robots.txt: a full copy a polite crawler must not fetch.
    w = works["hongloumeng-001"]
    site.chapter_page("vip/hongloumeng-1.html", w["title"], paragraphs(w["text"]),
                      {"expect": "not_crawled", "work": w["id"], "how": "full copy under /vip/, Disallow in robots.txt"})
    site.write("vip/index.html", '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>VIP</title></head>'
               '<body><a href="/vip/hongloumeng-1.html">红楼梦 全本</a></body></html>\n')

    site.finish(args.manifest)
    print(f"{len(site.pages)} pages, index.html, sitemap.xml, robots.txt in {args.out}")


main()
