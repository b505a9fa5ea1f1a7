#!/usr/bin/env python3
"""Write the small seed corpora of the fuzz targets into seeds/<target>/.

Deterministic and licence-clean: the only text is the first lines of the bundled
public-domain sample (samples/hongloumeng-01.txt, Hongloumeng chapter 1) and hand-made
markup. Run from anywhere: python3 services/ingest/fuzz/make_seeds.py
The output is committed; libFuzzer reads it as a read-only second corpus directory:
  cargo +nightly fuzz run warc corpus/warc seeds/warc -- -max_total_time=240
"""
import gzip
import io
import pathlib
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
SAMPLE = HERE.parent.parent.parent / "samples" / "hongloumeng-01.txt"
lines = [l for l in SAMPLE.read_text(encoding="utf-8").splitlines() if l.strip()]
title, body = lines[0], lines[1][:120]
# A short traditional-script line (hand-converted) so Big5 seeds hold characters GBK lacks.
TRAD_TITLE = "紅樓夢 第一回"
trad = "此開卷第一回也。作者自云：曾歷過一番夢幻之後，故將真事隱去，而借通靈說此《石頭記》一書也。"


def write(target, name, data):
    d = HERE / "seeds" / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))


def html(text, charset, meta=True, page_title=None):
    head = f'<meta charset="{charset}">' if meta else ""
    return (
        f"<html><head>{head}<title>{page_title or title}</title><script>var ad=1;</script></head>"
        f'<body><div class="nav"><a href="/a/1.html">上一頁</a> <a href="/a/3.html">下一頁</a></div>'
        f"<div id=\"content\"><p>{text}</p><p>{text[:40]}</p></div>"
        f"<div class=\"footer\">本站網址 www.example.com</div></body></html>"
    )


# chapters: plain text with headings of every kind the splitter knows.
chapters = f"{title}\n\n{body}\n\n第二回 贾夫人仙逝扬州城\n\n{body[:60]}\n\n卷二\n\n第3章 测试\n{body[60:]}\n"
write("chapters", "headings.txt", b"\x00" + chapters.encode("utf-8"))
write("chapters", "short-sections.txt", b"\x01" + chapters.encode("utf-8"))

# html: UTF-8, GBK and Big5 pages (the html target decodes through the canonicaliser).
write("html", "utf8.html", html(body, "utf-8"))
write("html", "gbk.html", html(body, "gbk").encode("gbk"))
write("html", "big5.html", html(trad, "big5", page_title=TRAD_TITLE).encode("big5"))

# charset: first byte picks the hint (0 none, 1 utf-8, 2 gbk, 3 big5, 4 utf-16le, 5 bogus).
write("charset", "gbk-hinted.html", b"\x02" + html(body, "gbk").encode("gbk"))
write("charset", "big5-undeclared.html", b"\x00" + html(trad, "big5", meta=False, page_title=TRAD_TITLE).encode("big5"))
write("charset", "utf16le-bom.txt", b"\x04" + b"\xff\xfe" + body.encode("utf-16-le"))
write("charset", "utf8-text.txt", b"\x01" + body.encode("utf-8"))


# warc: a warcinfo, a response with an HTTP message (chunked + gzip), a resource record.
def record(kind, uri, payload, extra=b""):
    head = (
        b"WARC/1.0\r\n"
        + f"WARC-Type: {kind}\r\n".encode()
        + b"WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-000000000001>\r\n"
        + b"WARC-Date: 2024-01-01T00:00:00Z\r\n"
        + (f"WARC-Target-URI: {uri}\r\n".encode() if uri else b"")
        + extra
        + f"Content-Length: {len(payload)}\r\n\r\n".encode()
    )
    return head + payload + b"\r\n\r\n"


page = html(body, "gbk").encode("gbk")
gz = gzip.compress(page, mtime=0)
chunked = f"{len(gz):x}\r\n".encode() + gz + b"\r\n0\r\n\r\n"
http = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=gbk\r\n"
    b"Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked
)
plain_http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + html(body, "utf-8").encode("utf-8")
warc = (
    record("warcinfo", None, b"software: hand-made seed\r\n", b"Content-Type: application/warc-fields\r\n")
    + record("response", "http://example.com/book/1.html", http, b"Content-Type: application/http; msgtype=response\r\n")
    + record("response", "http://example.com/book/2.html", plain_http, b"Content-Type: application/http; msgtype=response\r\n")
    + record("resource", "http://example.com/book/3.txt", body.encode("utf-8"), b"Content-Type: text/plain\r\n")
)
write("warc", "three-records.warc", warc)
write("warc", "response-only.warc", record("response", "http://example.com/x", plain_http))
# A record whose Content-Length runs past it, between two good ones (resynchronisation).
good = record("resource", "http://example.com/book/3.txt", body.encode("utf-8"), b"Content-Type: text/plain\r\n")
bad = record("resource", "http://example.com/bad", b"short", b"Content-Type: text/plain\r\n").replace(
    b"Content-Length: 5", b"Content-Length: 500"
)
write("warc", "corrupt-length.warc", good + bad + good)

# warc_gz: one gzip member per record (Common Crawl style), then the same with a damaged
# member and a member cut short.
members = [
    gzip.compress(r, mtime=0)
    for r in (
        record("warcinfo", None, b"software: hand-made seed\r\n", b"Content-Type: application/warc-fields\r\n"),
        record("response", "http://example.com/book/1.html", http, b"Content-Type: application/http; msgtype=response\r\n"),
        good,
    )
]
write("warc_gz", "per-record.warc.gz", b"".join(members))
damaged = bytearray(members[1])
for i in range(len(damaged) // 2, len(damaged) // 2 + 8):
    damaged[i] ^= 0xA5
write("warc_gz", "damaged-member.warc.gz", members[0] + bytes(damaged) + members[2] + members[2][: len(members[2]) // 2])

# epub: the smallest valid package (mimetype, container, OPF, two spine documents).
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as z:
    def add(name, text, method=zipfile.ZIP_DEFLATED):
        info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
        info.compress_type = method
        z.writestr(info, text)

    add("mimetype", "application/epub+zip", zipfile.ZIP_STORED)
    add(
        "META-INF/container.xml",
        '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
        "</rootfiles></container>",
    )
    add(
        "OEBPS/content.opf",
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        f'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>红楼梦</dc:title><dc:creator>曹雪芹</dc:creator></metadata>'
        '<manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="c2" href="text/c2.xhtml" media-type="application/xhtml+xml"/></manifest>'
        '<spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>',
    )
    add("OEBPS/c1.xhtml", f"<html><body><h1>{title}</h1><p>{body}</p></body></html>")
    add("OEBPS/text/c2.xhtml", f"<html><body><h1>第二回</h1><p>{body[:50]}</p></body></html>")
write("epub", "two-chapters.epub", buf.getvalue())


# epub: two small bombs that reach the bound checks: one spine document of 2 MiB that
# deflates about a thousand times, and 70 entries (over the target's bound of 64).
def small_epub(docs, spine, extra=0):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        def add(name, data):
            info = zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)

        add("META-INF/container.xml", '<container><rootfiles><rootfile full-path="c.opf"/></rootfiles></container>')
        items = "".join(f'<item id="d{i}" href="d{i}.xhtml" media-type="application/xhtml+xml"/>' for i in range(len(docs)))
        refs = "".join(f'<itemref idref="d{i}"/>' for i in spine)
        add("c.opf", f"<package><manifest>{items}</manifest><spine>{refs}</spine></package>")
        for i, d in enumerate(docs):
            add(f"d{i}.xhtml", d)
        for i in range(extra):
            add(f"x{i}.css", "p{}")
    return out.getvalue()


write("epub", "ratio-bomb.epub", small_epub([b"<p>" + "啊".encode() * ((2 << 20) // 3) + b"</p>"], [0]))
write("epub", "many-entries.epub", small_epub([f"<p>{body}</p>".encode()], [0, 0, 0], extra=70))

# url: a few shapes of URL the normaliser must keep idempotent.
for i, u in enumerate(
    [
        "HTTP://Example.COM:80/a/./b/../c.html?b=2&a=1#frag",
        "https://例子.测试/路径/页面.html?q=红楼梦",
        "http://example.com/%7Euser/%e7%ba%a2?utm_source=x",
    ]
):
    write("url", f"url{i}.txt", u)
print("seeds written to", HERE / "seeds")
