//! `GET /api/v1/works/{id}/report`: a printable evidence report of one work for a legal
//! team (zh-CN by default, `?lang=en`): the work, then per infringing URL the dates, the
//! similarity, the plain-words finding and the copied passages side by side, with the
//! copied text highlighted in its context. Self-contained HTML (inline CSS, no scripts,
//! nothing fetched), laid out for printing. `?format=pdf` prints the same HTML to PDF
//! with a headless Chromium ([`crate::pdf`]).

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use zhiwen_store::{MatchDetail, MatchQuery, MatchSort, MatchSortKey, ReviewStatus, Timestamp};

use crate::auth::visible_work;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::evidence::{explanation, page_original, passages, reasons, Quote};
use crate::query;
use crate::AppState;

/// Matches shown in one report (the strongest first).
const MAX_MATCHES: u32 = 200;

#[derive(Deserialize)]
pub(crate) struct ReportParams {
    lang: Option<String>,
    /// `html` (default) or `pdf`.
    format: Option<String>,
    status: Option<String>,
    min_score: Option<f64>,
}

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn when(t: Timestamp) -> String {
    let d = t.to_offset();
    format!("{} {:02}:{:02} UTC", t.day(), d.hour(), d.minute())
}

struct L {
    zh: bool,
}

impl L {
    fn t<'a>(&self, zh: &'a str, en: &'a str) -> &'a str {
        if self.zh {
            zh
        } else {
            en
        }
    }
}

fn side(q: &Quote) -> String {
    let (before, text, after) = q.shown();
    format!(
        "<span class=ctx>{}</span><mark>{}</mark><span class=ctx>{}</span><div class=off>[{}, {})</div>",
        esc(before),
        esc(text),
        esc(after),
        q.start,
        q.end
    )
}

pub(crate) async fn work_report(
    state: web::Data<AppState>,
    caller: Caller,
    id: web::Path<i64>,
    q: web::Query<ReportParams>,
) -> ApiResult<HttpResponse> {
    let work = visible_work(&state, &caller, *id).await?;
    let pdf = match q.format.as_deref().unwrap_or("html") {
        "html" => None,
        "pdf" => Some(state.config.chromium.clone().ok_or_else(|| {
            ApiError::new(ErrorCode::NotImplemented,
                "PDF reports need Chromium on the server (zhiwen serve --chromium PATH); the HTML report prints the same",
            )
        })?),
        other => return Err(ApiError::new(ErrorCode::BadRequest, format!("format: expected html or pdf, got {other:?}"))),
    };
    let l = L { zh: !matches!(q.lang.as_deref(), Some("en")) };
    let mut mq = MatchQuery { work_id: Some(work.id), ..Default::default() };
    match q.status.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => mq.status = Some(query::status(s)?),
        None => mq.not_status = vec![ReviewStatus::Dismissed],
    }
    if let Some(m) = q.min_score {
        if !(0.0..=1.0).contains(&m) {
            return Err(ApiError::new(ErrorCode::BadRequest, "min_score: expected a number in 0..1"));
        }
        mq.min_score = Some(m);
    }
    let total = state.stores.queries.count_matches(&mq).await?;
    let sort = MatchSort { key: MatchSortKey::Score, descending: true };
    let rows = state.stores.queries.query_matches(&mq, sort, None, MAX_MATCHES).await?;
    let now = Timestamp::now();
    let title = format!("{} · {}", l.t("侵权证据报告", "Evidence report"), work.title);
    let mut html = head(&l, &title);
    html.push_str("<table class=meta>");
    for (k, v) in [
        (l.t("作品", "Work"), work.title.clone()),
        (l.t("作者", "Author"), work.author.clone()),
        (l.t("权利人", "Rights holder"), work.owner.clone()),
        (l.t("作品编号", "Work id"), work.external_id.clone()),
        (l.t("章节数", "Sections"), work.section_count.to_string()),
        (l.t("报告生成时间", "Report generated"), when(now)),
        (l.t("涉嫌侵权网页", "Infringing pages"), total.to_string()),
    ] {
        html.push_str(&format!("<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v)));
    }
    html.push_str("</table>");
    if total > rows.len() as u64 {
        html.push_str(&format!(
            "<p class=note>{} {} / {}</p>",
            l.t("本报告列出相似度最高的匹配：", "This report lists the strongest matches:"),
            rows.len(),
            total
        ));
    }
    if rows.is_empty() {
        html.push_str(&format!("<p>{}</p>", l.t("没有匹配记录。", "No matches.")));
    }
    for (i, r) in rows.iter().enumerate() {
        let Some(d) = state.stores.queries.match_detail(r.id).await? else { continue };
        html.push_str(&match_section(&state, &l, i + 1, &d));
    }
    html.push_str(&footer(&l));
    match pdf {
        None => Ok(HttpResponse::Ok().content_type("text/html; charset=utf-8").body(html)),
        Some(chromium) => {
            let bytes = crate::pdf::print(&chromium, &html).await?;
            Ok(HttpResponse::Ok()
                .content_type("application/pdf")
                .insert_header((
                    actix_web::http::header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"evidence-report-work-{}.pdf\"", work.id),
                ))
                .body(bytes))
        }
    }
}

/// One match's part of a report: its page, dates, similarity, finding, reasons and the
/// copied passages side by side.
fn match_section(state: &AppState, l: &L, n: usize, d: &MatchDetail) -> String {
    let r = &d.record;
    let page = page_original(state, d);
    let items = passages(d, &page);
    let (zh, en) = explanation(d);
    let mut html = String::from("<section class=match>");
    html.push_str(&format!("<h2>{n}. <a href=\"{}\">{}</a></h2>", esc(&d.url), esc(&d.url)));
    html.push_str("<table class=meta>");
    for (k, v) in [
        (l.t("网站", "Site"), r.site.clone()),
        (l.t("章节", "Section"), format!("{} {}", d.section_ordinal + 1, d.section_title)),
        (l.t("首次发现", "First seen"), when(r.first_seen)),
        (l.t("最近发现", "Last seen"), when(r.last_seen)),
        (l.t("相似度", "Similarity"), format!("{:.1}%", r.score * 100.0)),
        (l.t("类型", "Kind"), r.kind.clone()),
        (l.t("审核状态", "Review status"), r.status.as_str().to_owned()),
        (l.t("结论", "Finding"), if l.zh { zh } else { en }),
    ] {
        html.push_str(&format!("<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v)));
    }
    html.push_str("</table>");
    let (reasons_zh, reasons_en) = reasons(d);
    let lines = if l.zh { reasons_zh } else { reasons_en };
    if !lines.is_empty() {
        html.push_str(&format!("<p class=why>{}</p><ul class=why>", esc(l.t("判定依据", "Why"))));
        for line in &lines {
            html.push_str(&format!("<li>{}</li>", esc(line)));
        }
        html.push_str("</ul>");
    }
    html.push_str(&format!(
        "<table class=pass><tr><th>{}</th><th>{}</th></tr>",
        l.t("原作品", "Original work"),
        l.t("涉嫌侵权网页", "Infringing page")
    ));
    for p in &items {
        html.push_str(&format!("<tr><td>{}</td><td>{}</td></tr>", side(&p.work), side(&p.page)));
    }
    html.push_str("</table></section>");
    html
}

fn head(l: &L, title: &str) -> String {
    format!(
        "<!doctype html><html lang={}><head><meta charset=utf-8><title>{}</title><style>{}</style></head><body><h1>{}</h1>",
        if l.zh { "zh-CN" } else { "en" },
        esc(title),
        CSS,
        esc(title)
    )
}

fn footer(l: &L) -> String {
    format!(
        "<footer>{}</footer></body></html>",
        l.t(
            "由 zhiwen（指纹）生成。引文直接摘自原作品与网页原文；偏移量为字符位置。",
            "Generated by zhiwen. Quotes are taken verbatim from the work and the page as fetched; offsets are character positions."
        )
    )
}

/// The report of one match (zh-CN, or English with `zh == false`): what an evidence
/// package carries beside the capture.
pub(crate) fn match_report_html(state: &AppState, d: &MatchDetail, zh: bool) -> String {
    let l = L { zh };
    let title = format!("{} · {}", l.t("侵权证据报告", "Evidence report"), d.work.title);
    let mut html = head(&l, &title);
    html.push_str("<table class=meta>");
    for (k, v) in [
        (l.t("作品", "Work"), d.work.title.clone()),
        (l.t("作者", "Author"), d.work.author.clone()),
        (l.t("权利人", "Rights holder"), d.work.owner.clone()),
        (l.t("作品编号", "Work id"), d.work.external_id.clone()),
        (l.t("报告生成时间", "Report generated"), when(Timestamp::now())),
    ] {
        html.push_str(&format!("<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(&v)));
    }
    html.push_str("</table>");
    html.push_str(&match_section(state, &l, 1, d));
    html.push_str(&footer(&l));
    html
}

const CSS: &str = "body{font-family:'Noto Serif CJK SC','Songti SC',serif;max-width:60em;margin:2em auto;color:#111}\
h1{font-size:1.5em}h2{font-size:1.1em;word-break:break-all}table{border-collapse:collapse;width:100%;margin:.5em 0}\
th,td{border:1px solid #999;padding:.3em .5em;vertical-align:top;text-align:left}.meta th{width:9em;background:#f3f3f3}\
.pass td{width:50%;white-space:pre-wrap;word-break:break-all}mark{background:#ffe066}.ctx{color:#777}.off{color:#999;font-size:.8em}\
section.match{page-break-inside:avoid;margin-top:1.5em}.note{color:#555}footer{margin-top:2em;color:#666;font-size:.85em}\
@media print{a{color:#000;text-decoration:none}}";
