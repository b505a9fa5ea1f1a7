#!/usr/bin/env python3
"""The helper of scripts/bench-latency.sh (issue #29): a local pirate network on loopback,
the webhook receiver, and the report. Standard library only.

  bench_latency.py works --out FILE
      The works to register: three chapters of every four of the public-domain classics
      (tests/corpus/novels_classics.jsonl.gz); the fourth of each four stays unregistered
      and is what the innocent chapter pages carry.

  bench_latency.py network --dir RUN --sites N --rate R --minutes M [--drain-secs D]
      N pirate sites, each its own host on one port (127.0.1.1, 127.0.1.2, ...: all of
      127/8 is loopback on Linux), each with /index.html (half the sites) or /rss.xml (the
      other half) listing its newest chapters, ETag/Last-Modified and 304 answers,
      robots.txt, and the chapter pages; each site starts with one innocent page (its
      back catalogue). Also the webhook receiver. Writes RUN/network.json when
      listening; publishes once RUN/go exists: new pages at random times (a Poisson
      process of R pages per second over all sites, each on a random site) for M minutes,
      most of them copies of registered chapters transformed the way pirate sites do
      (traditional script, homophones, ad lines, cut short, split, GBK/Big5), the rest
      innocent (unregistered chapters of the same novels in the same layout, news). Then
      waits until every copy was alerted and no alert came for 20 s, or D seconds passed,
      and writes RUN/done. Records: RUN/published.jsonl (each page, its kind and its
      publication time), RUN/fetches.jsonl (each chapter page's first fetch),
      RUN/alerts.jsonl (each match the webhook delivered, with its arrival time). Runs
      until SIGTERM.

  bench_latency.py report --dir RUN --mode MODE [--json OUT]
      The figures of a run (reads the files above, RUN/cpu.json, RUN/matches-before.jsonl,
      RUN/matches-after.jsonl: the match list before and after the daily task). Prints a
      Markdown table; exits 1 if a copy was missed or an innocent page accused, or if the
      daily task found new matches.
"""
import argparse
import gzip
import html
import json
import os
import random
import re
import signal
import socket
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OWNER = "bench-press"
SITE_NAME = "笔趣书屋 免费小说阅读网"
LISTED = 60  # newest chapters an index or feed lists

# Same-reading swaps pirates use to dodge exact-match filters (as scripts/make-pirate-site.py).
HOMOPHONES = {"在": "再", "他": "她", "的": "得", "是": "事", "有": "又", "那": "哪", "做": "作",
              "已": "以", "到": "道", "里": "理", "时": "十", "见": "件", "和": "合", "之": "知",
              "去": "趣", "意": "义", "心": "新", "事": "是", "来": "莱", "说": "烁"}


def chapters():
    with gzip.open(os.path.join(ROOT, "tests", "corpus", "novels_classics.jsonl.gz"), "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    rows.sort(key=lambda r: r["id"])
    registered = [r for i, r in enumerate(rows) if i % 4 != 3]
    unregistered = [r for i, r in enumerate(rows) if i % 4 == 3]
    # The novels repeat themselves (水浒传 76 describes the battle formation of 109 again
    # in other words): an unregistered chapter that carries a registered chapter's
    # passages is no innocent page. Left out: those sharing 60 or more 10-character
    # shingles (punctuation removed) with the registered chapters of their novel (4 of
    # 115; the next shares 41, scattered stock phrases).
    def shingles(text):
        t = re.sub(r"[\W_]+", "", text)
        return {hash(t[i:i + 10]) for i in range(max(1, len(t) - 9))}

    seen = {}
    for r in registered:
        seen.setdefault(r["id"].rsplit("-", 1)[0], set()).update(shingles(r["text"]))
    unregistered = [r for r in unregistered
                    if len(shingles(r["text"]) & seen.get(r["id"].rsplit("-", 1)[0], set())) < 60]
    return registered, unregistered


def cmd_works(args):
    registered, _ = chapters()
    with open(args.out, "w", encoding="utf-8") as f:
        for r in registered:
            f.write(json.dumps({"id": r["id"], "title": r["title"], "owner": OWNER, "source": r["source"],
                                "text": r["text"]}, ensure_ascii=False) + "\n")
    print(f"{len(registered)} works in {args.out}")


# --- page making (the demo's transformations, scripts/make-pirate-site.py) -----------------

def load_s2t():
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


class Maker:
    def __init__(self, rng):
        self.rng = rng
        self.registered, self.unregistered = chapters()
        with open(os.path.join(ROOT, "samples", "site", "filler.jsonl"), encoding="utf-8") as f:
            self.news = [json.loads(line) for line in f if line.strip()]
        with open(os.path.join(ROOT, "samples", "site", "ad-lines.txt"), encoding="utf-8") as f:
            self.ads = [a.strip() for a in f if a.strip()]
        self.s2t_chars, self.s2t_phrases = load_s2t()
        self.longest = min(8, max(len(k) for k in self.s2t_phrases))

    def traditional(self, text):
        out, i = [], 0
        while i < len(text):
            for n in range(min(self.longest, len(text) - i), 1, -1):
                if text[i:i + n] in self.s2t_phrases:
                    out.append(self.s2t_phrases[text[i:i + n]])
                    i += n
                    break
            else:
                out.append(self.s2t_chars.get(text[i], text[i]))
                i += 1
        return "".join(out)

    def homophones(self, text, rate):
        return "".join(HOMOPHONES[c] if c in HOMOPHONES and self.rng.random() < rate else c for c in text)

    def with_ads(self, paras, every):
        out = []
        for i, p in enumerate(paras):
            out.append(p)
            if i % every == every - 1:
                out.append(self.rng.choice(self.ads))
        return out

    @staticmethod
    def paragraphs(text):
        return [p.strip().strip("\u3000") for p in text.split("\n") if p.strip().strip("\u3000")]

    def chapter_html(self, title, paras, charset, trad):
        t = self.traditional if trad else (lambda s: s)
        body = "<br><br>\n".join(html.escape(p) for p in paras)
        page = (
            f'<!DOCTYPE html>\n<html><head><meta charset="{charset}"><title>{html.escape(title)} - '
            f"{html.escape(t(SITE_NAME))}</title>\n"
            "<script>var ad_slot = 'top';</script></head>\n<body>\n"
            f'<div class="nav"><a href="/">{t("首页")}</a> | <a href="/top.html">{t("排行榜")}</a></div>\n'
            f'<div class="banner">{t("最新章节免费阅读，无弹窗广告，手机用户请访问本站")}</div>\n'
            f"<h1>{html.escape(title)}</h1>\n"
            f'<div id="content">\n{body}\n</div>\n'
            f'<div class="pager"><a href="/index.html">{t("目录")}</a></div>\n'
            f'<div class="footer">{t("本站所有小说均来自网友上传，如有侵权请联系删除")} &copy; 2026</div>\n'
            "</body></html>\n"
        )
        return page.encode(charset, errors="xmlcharrefreplace"), f"text/html; charset={charset}"

    def copy(self):
        """A copy of a registered chapter: (title, body, content type, what, work id)."""
        w = self.rng.choice(self.registered)
        ps = self.paragraphs(w["text"])
        how = self.rng.choice(["trad-homophones-ads-big5", "whole-ads-gbk", "cut45-homophones",
                               "second-half-trad", "homophones-ads"])
        if how == "trad-homophones-ads-big5":
            paras = self.with_ads([self.traditional(self.homophones(p, 0.10)) for p in ps], 4)
            body = self.chapter_html(self.traditional(w["title"]), paras, "big5", True)
        elif how == "whole-ads-gbk":
            body = self.chapter_html(w["title"], self.with_ads(ps, 6), "gbk", False)
        elif how == "cut45-homophones":
            cut = ps[: max(3, int(len(ps) * 0.45))]
            body = self.chapter_html(w["title"], self.with_ads([self.homophones(p, 0.05) for p in cut], 5),
                                     "utf-8", False)
        elif how == "second-half-trad":
            half = ps[len(ps) // 2:]
            body = self.chapter_html(self.traditional(w["title"]) + "（2/2）",
                                     self.with_ads([self.traditional(p) for p in half], 4), "utf-8", True)
        else:
            body = self.chapter_html(w["title"], self.with_ads([self.homophones(p, 0.08) for p in ps], 3),
                                     "utf-8", False)
        return w["title"], body, how, w["id"]

    def innocent(self):
        if self.rng.random() < 0.85:
            w = self.rng.choice(self.unregistered)
            ps = self.paragraphs(w["text"])
            if self.rng.random() < 0.5:
                body = self.chapter_html(self.traditional(w["title"]),
                                         self.with_ads([self.traditional(p) for p in ps], 4), "utf-8", True)
                how = "unregistered-chapter-trad"
            else:
                body = self.chapter_html(w["title"], self.with_ads(ps, 5), "gbk", False)
                how = "unregistered-chapter-gbk"
            return w["title"], body, how, None
        d = self.rng.choice(self.news)
        paras = self.paragraphs(d["text"])
        page = (
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(d["title"])}</title></head>\n'
            f'<body><div class="nav"><a href="/">首页</a></div>\n<article><h1>{html.escape(d["title"])}</h1>\n'
            + "\n".join(f"<p>{html.escape(p)}</p>" for p in paras)
            + "\n</article></body></html>\n"
        )
        return d["title"], (page.encode("utf-8"), "text/html; charset=utf-8"), f"filler-{d['kind']}", None


# --- the network ------------------------------------------------------------------------------

class Site:
    def __init__(self, index, host, port):
        self.index = index
        self.host = host
        self.base = f"http://{host}:{port}"
        self.feed = index % 2 == 1
        self.entry = self.base + ("/rss.xml" if self.feed else "/index.html")
        self.lock = threading.Lock()
        self.pages = {}  # path -> (body bytes, content type)
        self.listing = []  # (path, title), newest first
        self.version = 0
        self.modified = time.time()
        self.entry_body = b""
        self.rebuild()

    def rebuild(self):
        items = self.listing[:LISTED]
        if self.feed:
            xml_items = "".join(
                f"<item><title>{html.escape(t)}</title><link>{self.base}{p}</link></item>" for p, t in items)
            self.entry_body = (
                '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
                f"<title>{SITE_NAME}</title><link>{self.base}/</link>{xml_items}</channel></rss>"
            ).encode("utf-8")
        else:
            links = "\n".join(f'<li><a href="{p}">{html.escape(t)}</a></li>' for p, t in items)
            self.entry_body = (
                f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{SITE_NAME}</title></head>\n'
                f'<body><h1>{SITE_NAME}</h1><div class="nav"><a href="/">首页</a> <a href="/top.html">排行榜</a>'
                f"</div>\n<p>最新更新</p>\n<ul>\n{links}\n</ul></body></html>\n"
            ).encode("utf-8")

    def publish(self, path, title, body, ctype):
        with self.lock:
            self.pages[path] = (body, ctype)
            self.listing.insert(0, (path, title))
            self.version += 1
            self.modified = time.time()
            self.rebuild()
            return time.time()

    def etag(self):
        return f'"v{self.version}"'


class Network:
    def __init__(self, run_dir, n_sites):
        self.dir = run_dir
        self.port, self.servers = self.bind_all(n_sites)
        self.sites = [Site(i, self.host(i), self.port) for i in range(n_sites)]
        self.by_host = {s.host: s for s in self.sites}
        self.out_lock = threading.Lock()
        self.fetched = set()
        self.fetches = open(os.path.join(run_dir, "fetches.jsonl"), "a", encoding="utf-8")
        self.alerts = open(os.path.join(run_dir, "alerts.jsonl"), "a", encoding="utf-8")
        self.alerted = set()
        self.last_alert = time.time()
        self.requests = {"entry": 0, "entry_304": 0, "chapter": 0, "robots": 0, "other": 0}

    @staticmethod
    def host(i):
        return f"127.0.{1 + i // 250}.{1 + i % 250}"

    def bind_all(self, n):
        rng = random.Random()
        for _ in range(200):
            port = rng.randrange(20000, 60000)
            socks = []
            try:
                for i in range(n):
                    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                    socks.append(s)
                    s.bind((self.host(i), port))
                for s in socks:
                    s.close()
                return port, None
            except OSError:
                for s in socks:
                    s.close()
        raise SystemExit("no port free on every site address")

    def handler(self):
        net = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def send(self, status, body=b"", ctype="text/plain; charset=utf-8", headers=()):
                self.send_response(status)
                for k, v in headers:
                    self.send_header(k, v)
                if status != 304:
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if status != 304 and self.command != "HEAD":
                    self.wfile.write(body)

            def do_HEAD(self):
                self.do_GET()

            def do_GET(self):
                host = self.server.server_address[0]
                site = net.by_host[host]
                path = self.path.split("?", 1)[0]
                if path == "/robots.txt":
                    net.requests["robots"] += 1
                    return self.send(200, b"User-agent: *\nDisallow: /vip/\n")
                if path in ("/index.html", "/rss.xml", "/"):
                    if (path == "/rss.xml") != site.feed and path != "/":
                        return self.send(404, b"not found")
                    with site.lock:
                        etag, body, modified = site.etag(), site.entry_body, site.modified
                    net.requests["entry"] += 1
                    validators = [("ETag", etag), ("Last-Modified", formatdate(modified, usegmt=True))]
                    inm = self.headers.get("If-None-Match")
                    if inm is not None and inm.strip() == etag:
                        net.requests["entry_304"] += 1
                        return self.send(304, headers=validators)
                    ctype = "application/rss+xml; charset=utf-8" if site.feed else "text/html; charset=utf-8"
                    return self.send(200, body, ctype, validators)
                with site.lock:
                    page = site.pages.get(path)
                if page is None:
                    net.requests["other"] += 1
                    return self.send(404, b"not found")
                net.requests["chapter"] += 1
                url = site.base + path
                if url not in net.fetched:
                    net.fetched.add(url)
                    with net.out_lock:
                        net.fetches.write(json.dumps({"url": url, "t": time.time()}) + "\n")
                        net.fetches.flush()
                self.send(200, page[0], page[1])

        return Handler

    def hook_handler(self):
        net = self

        class Hook(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                t = time.time()
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                try:
                    payload = json.loads(raw)
                except ValueError:
                    payload = {}
                with net.out_lock:
                    for m in payload.get("matches", []) if payload.get("event") == "zhiwen.matches" else []:
                        rec = {"t": t, "url": m.get("url"), "work_id": m.get("work_id"), "score": m.get("score"),
                               "kind": m.get("kind"), "match_id": m.get("match_id")}
                        net.alerts.write(json.dumps(rec) + "\n")
                        net.alerted.add(m.get("url"))
                        net.last_alert = t
                    net.alerts.flush()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        return Hook

    def serve(self):
        handler = self.handler()
        for s in self.sites:
            server = ThreadingHTTPServer((s.host, self.port), handler)
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, daemon=True).start()
        hook = ThreadingHTTPServer(("127.0.0.1", 0), self.hook_handler())
        hook.daemon_threads = True
        threading.Thread(target=hook.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{hook.server_address[1]}/hook"


def cmd_network(args):
    run = args.dir
    net = Network(run, args.sites)
    hook = net.serve()
    rng = random.Random(args.seed)
    maker = Maker(rng)
    published = open(os.path.join(run, "published.jsonl"), "a", encoding="utf-8")
    # A back catalogue: one innocent page on each site before the watching starts, as a
    # live site has (its first visit finds something, as every later one does).
    for site in net.sites:
        title, (body, ctype), how, _ = maker.innocent()
        t = site.publish("/book/0.html", title, body, ctype)
        published.write(json.dumps({"url": site.base + "/book/0.html", "site": site.host, "kind": "backlog",
                                    "how": how, "work": None, "t": t}, ensure_ascii=False) + "\n")
    published.flush()
    info = {"port": net.port, "webhook": hook,
            "sites": [{"host": s.host, "base": s.base, "entry": s.entry, "id": f"{s.host}:{net.port}"}
                      for s in net.sites]}
    with open(os.path.join(run, "network.json.tmp"), "w") as f:
        json.dump(info, f, indent=1)
    os.replace(os.path.join(run, "network.json.tmp"), os.path.join(run, "network.json"))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *a: stop.set())
    signal.signal(signal.SIGINT, lambda *a: stop.set())
    while not os.path.exists(os.path.join(run, "go")) and not stop.is_set():
        stop.wait(0.1)
    start = time.time()
    end = start + args.minutes * 60
    next_t = start + rng.expovariate(args.rate)
    counter = 0
    copies = set()
    while not stop.is_set():
        if next_t >= end:
            break
        site = rng.choice(net.sites)
        if rng.random() < args.copy_share:
            title, (body, ctype), how, work = maker.copy()
            kind = "copy"
        else:
            title, (body, ctype), how, work = maker.innocent()
            kind = "innocent"
        counter += 1
        path = f"/book/{counter}.html"
        delay = next_t - time.time()
        if delay > 0:
            stop.wait(delay)
        t = site.publish(path, title, body, ctype)
        url = site.base + path
        if kind == "copy":
            copies.add(url)
        published.write(json.dumps({"url": url, "site": site.host, "kind": kind, "how": how, "work": work,
                                    "t": t, "late_by": max(0.0, t - next_t)}, ensure_ascii=False) + "\n")
        published.flush()
        next_t += rng.expovariate(args.rate)
    stopped = time.time()
    print(f"published {counter} pages in {stopped - start:.0f} s", file=sys.stderr)
    # Drain: every copy alerted and 20 s without an alert, or the drain bound.
    deadline = stopped + args.drain_secs
    while not stop.is_set() and time.time() < deadline:
        with net.out_lock:
            pending = len(copies - net.alerted)
            quiet = time.time() - max(net.last_alert, stopped)
        if pending == 0 and quiet >= 20:
            break
        stop.wait(1)
    with open(os.path.join(run, "requests.json"), "w") as f:
        json.dump(dict(net.requests, publish_start=start, publish_end=stopped, drained=time.time()), f)
    open(os.path.join(run, "done"), "w").close()
    print(f"drained after {time.time() - stopped:.0f} s", file=sys.stderr)
    stop.wait()


# --- the report -------------------------------------------------------------------------------

def read_jsonl(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_lines(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [line for line in f if line.strip()]


def pct(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    k = max(0, min(len(s) - 1, int(round(p / 100 * len(s) + 0.5)) - 1))
    return s[k]


def cmd_report(args):
    run = args.dir
    pages = read_jsonl(os.path.join(run, "published.jsonl"))
    alerts = read_jsonl(os.path.join(run, "alerts.jsonl"))
    fetches = {f["url"]: f["t"] for f in read_jsonl(os.path.join(run, "fetches.jsonl"))}
    before = read_jsonl(os.path.join(run, "matches-before.jsonl"))
    after = read_jsonl(os.path.join(run, "matches-after.jsonl"))
    cpu = json.load(open(os.path.join(run, "cpu.json")))
    req = json.load(open(os.path.join(run, "requests.json")))
    works = {}
    for line in read_jsonl(os.path.join(run, "works.jsonl")):
        works[line["id"]] = line
    first_alert = {}
    for a in alerts:
        # Only the alerts of the run: the daily task afterwards sends its own new matches.
        if a["t"] <= req["drained"]:
            first_alert.setdefault(a["url"], a)
    stored = {}
    for m in before:
        stored.setdefault(m["url"], []).append(m)
    copies = [p for p in pages if p["kind"] == "copy"]
    innocent = [p for p in pages if p["kind"] == "innocent"]
    backlog = [p for p in pages if p["kind"] == "backlog"]
    pages = copies + innocent
    lat, to_fetch, fetch_to_alert, missed, wrong = [], [], [], [], []
    below_min = 0
    for p in copies:
        a = first_alert.get(p["url"])
        if a is None:
            missed.append(p)
            if stored.get(p["url"]):
                below_min += 1
            continue
        lat.append(a["t"] - p["t"])
        if p["url"] in fetches:
            to_fetch.append(fetches[p["url"]] - p["t"])
            fetch_to_alert.append(a["t"] - fetches[p["url"]])
        hits = [m for m in stored.get(p["url"], [])]
        if hits and not any(m.get("work_external_id") == p["work"] for m in hits):
            wrong.append(p)
    # The back catalogue (one innocent page a site, there before the watching) counts here too.
    accused = [p for p in innocent + backlog if p["url"] in first_alert or stored.get(p["url"])]
    before_ids = {m["match_id"] for m in before}
    new_after = [m for m in after if m["match_id"] not in before_ids]
    restarts_log = os.path.join(run, "..", "restarts.log")
    restarts = len(read_lines(restarts_log))
    n = len(pages)
    span = req["publish_end"] - req["publish_start"]
    r = {
        "mode": args.mode,
        "pages": n,
        "copies": len(copies),
        "innocent": len(innocent),
        "backlog_innocent": len(backlog),
        "publish_seconds": round(span, 1),
        "pages_per_second": round(n / span, 2) if span else None,
        "copies_alerted": len(lat),
        "copies_missed": len(missed),
        "missed_but_matched_below_webhook_min_score": below_min,
        "alerted_as_wrong_work": len(wrong),
        "innocent_accused": len(accused),
        "latency_p50": round(pct(lat, 50), 1),
        "latency_p95": round(pct(lat, 95), 1),
        "latency_max": round(max(lat), 1) if lat else None,
        "publication_to_fetch_p50": round(pct(to_fetch, 50), 1),
        "publication_to_fetch_p95": round(pct(to_fetch, 95), 1),
        "fetch_to_alert_p50": round(pct(fetch_to_alert, 50), 1),
        "fetch_to_alert_p95": round(pct(fetch_to_alert, 95), 1),
        "cpu_seconds": round(cpu["zhiwen"], 1),
        "cpu_ms_per_page": round(1000 * cpu["zhiwen"] / n, 1) if n else None,
        "cpu_by_process": cpu.get("by_process"),
        "cpu_servers_seconds": cpu.get("servers"),
        "entry_requests": req["entry"],
        "entry_304": req["entry_304"],
        "chapter_requests": req["chapter"],
        "process_restarts": restarts,
        "daily_task_new_matches": len(new_after),
        "matches_in_store": len(before),
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)
    print(f"\n### {args.mode}\n")
    print("| pages (copies / innocent) | copies alerted | missed | innocent accused | p50 | p95 | max | "
          "CPU per page | daily task: new matches |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {n} ({len(copies)} / {len(innocent)}) | {len(lat)} | {len(missed)} | {len(accused)} | "
          f"{r['latency_p50']} s | {r['latency_p95']} s | {r['latency_max']} s | "
          f"{r['cpu_ms_per_page']} ms | {len(new_after)} |")
    print(f"\n(+ {len(backlog)} innocent back-catalogue pages, one a site, checked for accusations too)")
    print(f"published over {span:.0f} s ({r['pages_per_second']} pages/s); publication -> first fetch "
          f"p50 {r['publication_to_fetch_p50']} s, p95 {r['publication_to_fetch_p95']} s; first fetch -> alert "
          f"p50 {r['fetch_to_alert_p50']} s, p95 {r['fetch_to_alert_p95']} s")
    print(f"index/feed requests {req['entry']} ({req['entry_304']} answered 304), chapter requests "
          f"{req['chapter']}; zhiwen CPU {cpu['zhiwen']:.1f} s {cpu.get('by_process')}; "
          f"servers CPU {cpu.get('servers')}; processes restarted: {restarts}")
    if missed:
        print(f"missed copies ({below_min} of them matched below the webhook's min_score):")
        for p in missed[:20]:
            print(f"  {p['url']} {p['how']} {p['work']} stored matches: "
                  + ", ".join(f"{m['work_external_id']} {m['score']:.2f}" for m in stored.get(p['url'], [])))
    if accused:
        print("innocent pages accused:")
        for p in accused[:20]:
            print(f"  {p['url']} {p['how']}")
    if new_after:
        print(f"the daily task found {len(new_after)} new matches, e.g. {new_after[0].get('url')}")
    ok = not missed and not accused and not new_after
    sys.exit(0 if ok else 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("works")
    w.add_argument("--out", required=True)
    n = sub.add_parser("network")
    n.add_argument("--dir", required=True)
    n.add_argument("--sites", type=int, default=100)
    n.add_argument("--rate", type=float, default=10.0)
    n.add_argument("--minutes", type=float, default=3.0)
    n.add_argument("--drain-secs", type=float, default=300.0)
    n.add_argument("--copy-share", type=float, default=0.8)
    n.add_argument("--seed", type=int, default=29)
    r = sub.add_parser("report")
    r.add_argument("--dir", required=True)
    r.add_argument("--mode", required=True)
    r.add_argument("--json")
    args = ap.parse_args()
    {"works": cmd_works, "network": cmd_network, "report": cmd_report}[args.cmd](args)


main()
