//! The evidence package of a match, as `zhiwen evidence export` and
//! `GET /api/v1/matches/{id}/evidence-package` write it: the capture's files, its record,
//! inclusion proof and signed tree head ([`zhiwen_capture::EvidenceService::package`]),
//! plus what people read: the match's report in Chinese and English and a README saying
//! how to verify, and the manifest's details (URLs, times, work, section, scores and the
//! passages with their offsets).

use serde_json::json;
use zhiwen_capture::EvidenceService;
use zhiwen_evidence::PackageFile;
use zhiwen_store::{Capture, MatchDetail};

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::evidence::{page_original, passages};
use crate::report::match_report_html;
use crate::AppState;

/// How to verify a package, for whoever receives it (zh-CN first, then English).
const README: &str = "\
zhiwen（指纹）证据包
====================

本证据包由 zhiwen 生成，保存了一次网页取证的全部内容：
- capture/ 下的文件：取证时获取的网页原始数据（WARC/1.1 格式，含全部 HTTP 头、最终网址、所连接的 IP 地址和时间），
  以及浏览器渲染的整页截图（PNG）和打印件（PDF，如有）；
- capture.json：取证记录（每个文件的 SHA-256），它是 zhiwen 证据日志（仅追加的默克尔树，RFC 6962/9162）中的一片叶子；
- proof.json：该叶子包含在树中的证明；tree-head.json：zhiwen 用 Ed25519 密钥签名的树头；
- report.zh-CN.html / report.en.html（及 report.zh-CN.pdf，如有）：匹配报告（原作品与网页的对照段落）；
- manifest.json 与 manifest.sig：包内每个文件的 SHA-256，以及 zhiwen 对清单的签名。

如何验证（可离线进行）：
  zhiwen evidence verify 本文件.zip --public-key <权利人提供的 zhiwen 公钥>
改动包内任何文件的任何一个字节，验证都会失败。若您保存过 zhiwen 早先发布的树头，可加
  --earlier 早先的树头.json --consistency <一致性证明>
以证明日志自那时起只被追加、未被改写。
本包证明：这些文件就是 zhiwen 记录在其签名日志中的文件。它本身不证明取证时间（时间来自 zhiwen 的时钟），
可信时间来自第三方保存的已发布树头或时间戳机构的签名。

zhiwen evidence package
=======================

This package holds one capture of a web page made by zhiwen:
- the files under capture/: what zhiwen received (WARC/1.1: every HTTP header, the final URL, the IP address
  connected to, the time), and the page as a browser rendered it (full-page PNG screenshot and PDF print, when made);
- capture.json: the capture record (every file's SHA-256), a leaf of zhiwen's append-only Merkle log (RFC 6962/9162);
- proof.json: the proof that the leaf is in the tree; tree-head.json: the tree head signed with zhiwen's Ed25519 key;
- report.zh-CN.html / report.en.html (and report.zh-CN.pdf, when printed): the match report (the passages of the work and
  of the page side by side);
- manifest.json and manifest.sig: every file's SHA-256, and zhiwen's signature of that list.

To verify, offline:
  zhiwen evidence verify THIS.zip --public-key <zhiwen's public key, as given to you by the rights holder>
Changing any byte of any file makes verification fail. With a tree head zhiwen published earlier, add
  --earlier that-head.json --consistency <consistency proof>
to check that the log was only appended to since then.
What it proves: the files are the ones zhiwen recorded in its signed log. On its own it does not prove when the
capture was made (the time is zhiwen's clock): trusted time comes from published heads kept by others, or from a
time-stamp authority's signature of a head.
";

/// The capture a package of `d` is made of: `capture_id` when given (it must be one of
/// this match's), else the newest.
async fn chosen_capture(service: &EvidenceService, d: &MatchDetail, capture_id: Option<i64>) -> ApiResult<Capture> {
    let captures = service.stores().evidence.captures_of_match(d.record.id).await?;
    let found = match capture_id {
        Some(id) => captures.into_iter().find(|c| c.id == id),
        None => captures.into_iter().next_back(),
    };
    found.ok_or_else(|| match capture_id {
        Some(id) => ApiError::not_found("capture", id),
        None => ApiError::new(
            ErrorCode::Conflict,
            format!(
                "match {} has no capture yet: request one (POST /api/v1/matches/{}/captures)",
                d.record.id, d.record.id
            ),
        ),
    })
}

/// The package of match `d` (its newest capture, or `capture_id`): the zip's bytes and
/// the capture it holds.
pub async fn match_package(
    state: &AppState,
    service: &EvidenceService,
    d: &MatchDetail,
    capture_id: Option<i64>,
) -> ApiResult<(Capture, Vec<u8>)> {
    let capture = chosen_capture(service, d, capture_id).await?;
    let page = page_original(state, d);
    let m = &d.record;
    let c = &m.comparison;
    let details = json!({
        "match": {
            "id": m.id,
            "kind": m.kind,
            "score": m.score,
            "status": m.status.as_str(),
            "first_seen": m.first_seen.rfc3339(),
            "last_seen": m.last_seen.rfc3339(),
            "copied_chars": c.copied_chars,
            "coverage_of_section": c.evidence_coverage_a,
            "coverage_of_page": c.evidence_coverage_b,
        },
        "page": { "id": m.page_id, "url": d.url, "site": m.site },
        "work": { "id": d.work.id, "external_id": d.work.external_id, "title": d.work.title, "author": d.work.author, "owner": d.work.owner },
        "section": { "id": m.section_id, "ordinal": d.section_ordinal, "title": d.section_title },
        "passages": passages(d, &page).iter().map(|p| json!({
            "chars": p.chars,
            "work": { "start": p.work.start, "end": p.work.end, "text": p.work.text },
            "page": { "start": p.page.start, "end": p.page.end, "text": p.page.text },
        })).collect::<Vec<_>>(),
        "capture": {
            "id": capture.id,
            "leaf_index": capture.leaf_index,
            "captured_at": capture.captured_at.rfc3339(),
            "reason": capture.reason,
            "url": capture.url,
        },
        "public_key": service.public_key(),
    });
    let report_zh = match_report_html(state, d, true);
    let mut extra = vec![PackageFile { name: "README.txt".into(), bytes: README.as_bytes().to_vec() }];
    // The printed report too, when the server has a browser (the PDF reports' own).
    if let Some(chromium) = &state.config.chromium {
        match crate::pdf::print(chromium, &report_zh).await {
            Ok(pdf) => extra.push(PackageFile { name: "report.zh-CN.pdf".into(), bytes: pdf }),
            Err(e) => {
                tracing::warn!(match_id = m.id, error = %e.message, "the report of the package cannot be printed")
            }
        }
    }
    extra.push(PackageFile { name: "report.zh-CN.html".into(), bytes: report_zh.into_bytes() });
    extra.push(PackageFile { name: "report.en.html".into(), bytes: match_report_html(state, d, false).into_bytes() });
    let bytes = service.package(capture.id, &extra, details).await?;
    Ok((capture, bytes))
}
