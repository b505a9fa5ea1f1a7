//! `GET /api/v1/openapi.json`: the OpenAPI 3 document of the API, built from the route
//! table below (kept next to `routes::routes`; a test checks that every documented
//! operation answers with its documented statuses and never a 5xx), and the interactive
//! page at `/api/v1/docs/` (Swagger UI, vendored into the binary: nothing is fetched).

use serde_json::{json, Map, Value};

struct Op {
    method: &'static str,
    path: &'static str,
    summary: &'static str,
    params: &'static [(&'static str, &'static str, &'static str)],
    body: Option<fn() -> Value>,
    ok: u16,
    errors: &'static [u16],
}

const ID: (&str, &str, &str) = ("id", "path", "integer");
const OWNER: (&str, &str, &str) = ("owner", "path", "string");
const PAGING: [(&str, &str, &str); 2] = [("cursor", "query", "string"), ("limit", "query", "integer")];
/// The filters of the match list, with the parameters an operation adds to them: the
/// list and the export take the same filters.
macro_rules! match_filters {
    ($($extra:expr),* $(,)?) => {
        &[
            ("work_id", "query", "integer"),
            ("section_id", "query", "integer"),
            ("page_id", "query", "integer"),
            ("site", "query", "string"),
            ("kind", "query", "match_kind"),
            ("status", "query", "status"),
            ("min_score", "query", "score"),
            ("max_score", "query", "score"),
            ("from", "query", "date"),
            ("to", "query", "date"),
            ("owner", "query", "string"),
            ("sort", "query", "sort"),
            $($extra),*
        ]
    };
}

const MATCH_FILTERS: &[(&str, &str, &str)] = match_filters!(PAGING[0], PAGING[1]);
const EXPORT_PARAMS: &[(&str, &str, &str)] = match_filters!(("format", "query", "format"));

fn new_work() -> Value {
    json!({"type": "object", "required": ["external_id", "title", "text"], "properties": {
        "owner": {"type": "string"}, "external_id": {"type": "string"}, "title": {"type": "string"},
        "author": {"type": "string"}, "text": {"type": "string"}}})
}
fn patch_work() -> Value {
    json!({"type": "object", "properties": {"title": {"type": "string"}, "author": {"type": "string"}}})
}
fn review() -> Value {
    json!({"type": "object", "required": ["status"], "properties": {
        "status": {"type": "string", "enum": ["new", "confirmed", "dismissed", "takedown_sent"]},
        "note": {"type": "string"}}})
}
fn holder_profile() -> Value {
    json!({"type": "object", "required": ["version", "legal_name", "contact_person", "address", "phone", "email"], "properties": {
        "version": {"type": "integer", "description": "the version read (0: none stored yet)"},
        "legal_name": {"type": "string"}, "contact_person": {"type": "string"}, "address": {"type": "string"},
        "phone": {"type": "string"}, "email": {"type": "string"}}})
}
fn licensed_domains() -> Value {
    json!({"type": "object", "required": ["version", "domains"], "properties": {
        "version": {"type": "integer"},
        "domains": {"type": "array", "maxItems": 1000, "items": {"type": "object", "required": ["domain"], "properties": {
            "domain": {"type": "string"}, "work_id": {"type": "integer", "description": "only this work (default: every work)"}}}}}})
}
fn holder_alerts() -> Value {
    json!({"type": "object", "required": ["version", "recipients", "min_score", "mode", "max_per_hour", "lang"], "properties": {
        "version": {"type": "integer", "description": "the version read (0: none stored yet)"},
        "recipients": {"type": "array", "maxItems": 20, "items": {"type": "string", "format": "email"}, "description": "who is e-mailed (empty: alerts off)"},
        "min_score": {"type": "number", "minimum": 0, "maximum": 1, "description": "only new matches with at least this score"},
        "mode": {"type": "string", "enum": ["immediate", "digest"], "description": "an e-mail per task that finds new matches, or one a day"},
        "max_per_hour": {"type": "integer", "minimum": 1, "maximum": 60, "description": "most e-mails per hour; matches over the limit go out in the next allowed e-mail"},
        "lang": {"type": "string", "enum": ["zh-CN", "en"]}}})
}
fn watched_site() -> Value {
    json!({"type": "object", "required": ["entry_points"], "properties": {
        "id": {"type": "string", "description": "default: the host of the entry points (host or host:port)"},
        "owner": {"type": "string", "description": "the holder (a holder's key: always itself)"},
        "entry_points": {"type": "array", "minItems": 1, "maxItems": 50, "items": {"type": "string"},
            "description": "index or category pages, sitemaps, RSS/Atom feeds, all on one host"},
        "chapter_patterns": {"type": "array", "maxItems": 20, "items": {"type": "string"},
            "description": "regular expressions a chapter link (the whole URL) must match; none: every link on the host"},
        "min_delay_secs": {"type": "integer", "minimum": 1, "maximum": 86400,
            "description": "politeness budget: least seconds between two requests to the host (default: the server's)"}}})
}
fn draft_notice() -> Value {
    json!({"type": "object", "required": ["site"], "properties": {
        "owner": {"type": "string", "description": "the holder (a holder's key: always itself)"},
        "site": {"type": "string"},
        "provider_sites": {"type": "array", "items": {"type": "string"}, "maxItems": 49, "description": "other sites of the same hosting provider, in the same notice"},
        "match_ids": {"type": "array", "items": {"type": "integer"}, "maxItems": 500, "description": "default: every confirmed match of the holder on the site"},
        "lang": {"type": "string", "enum": ["zh-CN", "en"]},
        "recipient": {"type": "string"},
        "follow_up_of": {"type": "integer", "description": "a second notice for the pages of this one still up"}}})
}
fn recipient() -> Value {
    json!({"type": "object", "properties": {"recipient": {"type": "string"}}})
}
fn resolve_notice() -> Value {
    json!({"type": "object", "required": ["delivered"], "properties": {"delivered": {"type": "boolean"}}})
}
fn template_source() -> Value {
    json!({"type": "object", "required": ["source"], "properties": {"source": {"type": "string", "description": "a minijinja template"}}})
}
fn document_upload() -> Value {
    json!({"type": "string", "format": "binary", "maxLength": 10_485_760})
}
fn bulk_review() -> Value {
    json!({"type": "object", "required": ["ids", "status"], "properties": {
        "ids": {"type": "array", "items": {"type": "integer"}, "maxItems": 1000},
        "status": {"type": "string", "enum": ["new", "confirmed", "dismissed", "takedown_sent"]},
        "note": {"type": "string"}}})
}
fn start_match() -> Value {
    json!({"type": "object", "properties": {
        "scope": {"type": "string", "enum": ["new", "all", "since"]}, "since": {"type": "string", "format": "date"}}})
}
fn start_crawl() -> Value {
    json!({"type": "object", "required": ["seeds"], "properties": {
        "seeds": {"type": "array", "items": {"type": "string", "format": "uri"}, "minItems": 1, "maxItems": 1000},
        "max_pages": {"type": "integer", "minimum": 0}, "max_depth": {"type": "integer", "minimum": 0},
        "allowed_domains": {"type": "array", "items": {"type": "string"}}}})
}
fn upload() -> Value {
    json!({"type": "string", "format": "binary"})
}

const OPS: &[Op] = &[
    Op { method: "get", path: "/api/v1/me", summary: "The calling key", params: &[], body: None, ok: 200, errors: &[] },
    Op {
        method: "get",
        path: "/api/v1/stats",
        summary: "Statistics for a date range",
        params: &[
            ("from", "query", "date"),
            ("to", "query", "date"),
            ("work_id", "query", "integer"),
            ("top", "query", "integer"),
        ],
        body: None,
        ok: 200,
        errors: &[400, 404],
    },
    Op {
        method: "get",
        path: "/api/v1/works",
        summary: "List and search works",
        params: &[("q", "query", "string"), ("owner", "query", "string"), PAGING[0], PAGING[1]],
        body: None,
        ok: 200,
        errors: &[400],
    },
    Op {
        method: "post",
        path: "/api/v1/works",
        summary: "Register a work (JSON)",
        params: &[],
        body: Some(new_work),
        ok: 201,
        errors: &[400, 403, 409, 413],
    },
    Op {
        method: "post",
        path: "/api/v1/works/upload",
        summary: "Register works from an uploaded file",
        params: &[
            ("owner", "query", "string"),
            ("filename", "query", "string"),
            ("title", "query", "string"),
            ("author", "query", "string"),
        ],
        body: Some(upload),
        ok: 201,
        errors: &[400, 403, 413],
    },
    Op {
        method: "get",
        path: "/api/v1/works/{id}",
        summary: "A work with its sections",
        params: &[ID],
        body: None,
        ok: 200,
        errors: &[400, 404],
    },
    Op {
        method: "patch",
        path: "/api/v1/works/{id}",
        summary: "Change a work's title or author",
        params: &[ID],
        body: Some(patch_work),
        ok: 200,
        errors: &[400, 403, 404],
    },
    Op {
        method: "delete",
        path: "/api/v1/works/{id}",
        summary: "Delete a work with its fingerprints, index entries and matches",
        params: &[ID],
        body: None,
        ok: 200,
        errors: &[400, 403, 404],
    },
    Op {
        method: "get",
        path: "/api/v1/works/{id}/sections/{section_id}",
        summary: "One section with its text",
        params: &[ID, ("section_id", "path", "integer")],
        body: None,
        ok: 200,
        errors: &[400, 404],
    },
    Op {
        method: "get",
        path: "/api/v1/works/{id}/report",
        summary: "Printable evidence report (HTML, or PDF printed by the server's Chromium)",
        params: &[
            ID,
            ("lang", "query", "lang"),
            ("status", "query", "status"),
            ("min_score", "query", "score"),
            ("format", "query", "report_format"),
        ],
        body: None,
        ok: 200,
        errors: &[400, 404, 501, 503],
    },
    Op {
        method: "get",
        path: "/api/v1/pages",
        summary: "Search pages",
        params: &[
            ("url", "query", "string"),
            ("site", "query", "string"),
            ("from", "query", "date"),
            ("to", "query", "date"),
            PAGING[0],
            PAGING[1],
        ],
        body: None,
        ok: 200,
        errors: &[400],
    },
    Op {
        method: "get",
        path: "/api/v1/pages/{id}",
        summary: "A page",
        params: &[ID, ("body", "query", "boolean")],
        body: None,
        ok: 200,
        errors: &[400, 404],
    },
    Op {
        method: "get",
        path: "/api/v1/matches",
        summary: "List matches",
        params: MATCH_FILTERS,
        body: None,
        ok: 200,
        errors: &[400],
    },
    Op {
        method: "get",
        path: "/api/v1/matches/{id}",
        summary: "A match with its evidence",
        params: &[ID],
        body: None,
        ok: 200,
        errors: &[400, 404],
    },
    Op {
        method: "post",
        path: "/api/v1/matches/{id}/review",
        summary: "Change a match's review status",
        params: &[ID],
        body: Some(review),
        ok: 200,
        errors: &[400, 404, 409],
    },
    Op {
        method: "post",
        path: "/api/v1/matches/review",
        summary: "Change the review status of many matches",
        params: &[],
        body: Some(bulk_review),
        ok: 200,
        errors: &[400],
    },
    Op {
        method: "get",
        path: "/api/v1/matches/{id}/captures",
        summary: "The evidence captures of a match (and whether its first capture is still queued)",
        params: &[ID],
        body: None,
        ok: 200,
        errors: &[400, 404, 501],
    },
    Op {
        method: "post",
        path: "/api/v1/matches/{id}/captures",
        summary: "Capture the match's page again, now (queued; the worker runs it within seconds)",
        params: &[ID],
        body: None,
        ok: 202,
        errors: &[400, 404, 501],
    },
    Op {
        method: "get",
        path: "/api/v1/matches/{id}/captures/{capture}/files/{name}",
        summary: "One captured file (WARC, screenshot PNG, print PDF), as an attachment",
        params: &[ID, ("capture", "path", "integer"), ("name", "path", "string")],
        body: None,
        ok: 200,
        errors: &[400, 404, 409, 501],
    },
    Op {
        method: "get",
        path: "/api/v1/matches/{id}/captures/{capture}/verification",
        summary: "The capture's evidence package checked as a third party checks it",
        params: &[ID, ("capture", "path", "integer")],
        body: None,
        ok: 200,
        errors: &[400, 404, 409, 501],
    },
    Op {
        method: "get",
        path: "/api/v1/matches/{id}/evidence-package",
        summary: "The verifiable evidence package (zip) of the match's newest capture, or of ?capture=",
        params: &[ID, ("capture", "query", "integer")],
        body: None,
        ok: 200,
        errors: &[400, 404, 409, 501],
    },
    Op {
        method: "get",
        path: "/api/v1/evidence/tree-head",
        summary: "The evidence log's current signed tree head",
        params: &[],
        body: None,
        ok: 200,
        errors: &[501],
    },
    Op {
        method: "get",
        path: "/api/v1/evidence/tree-heads",
        summary: "Signed tree heads made since a time (Unix milliseconds)",
        params: &[("since", "query", "integer"), ("limit", "query", "integer")],
        body: None,
        ok: 200,
        errors: &[400, 501],
    },
    Op {
        method: "get",
        path: "/api/v1/evidence/consistency",
        summary: "RFC 9162 consistency proof between the log's trees of two sizes",
        params: &[("from", "query", "integer"), ("to", "query", "integer")],
        body: None,
        ok: 200,
        errors: &[400, 501],
    },
    Op {
        method: "get",
        path: "/api/v1/holders",
        summary: "Rights holders (a holder: itself) with profile, rights documents, licensed domains and alert settings",
        params: &[],
        body: None,
        ok: 200,
        errors: &[],
    },
    Op {
        method: "get",
        path: "/api/v1/holders/{owner}",
        summary: "A rights holder (an empty one, version 0, when nothing is recorded)",
        params: &[OWNER],
        body: None,
        ok: 200,
        errors: &[404],
    },
    Op {
        method: "put",
        path: "/api/v1/holders/{owner}/profile",
        summary: "Set the holder's legal name and contact details (compare-and-set on version)",
        params: &[OWNER],
        body: Some(holder_profile),
        ok: 200,
        errors: &[400, 403, 404, 409],
    },
    Op {
        method: "put",
        path: "/api/v1/holders/{owner}/licensed",
        summary: "Replace the licensed domains; the holder's matches are re-labelled",
        params: &[OWNER],
        body: Some(licensed_domains),
        ok: 200,
        errors: &[400, 403, 404, 409],
    },
    Op {
        method: "put",
        path: "/api/v1/holders/{owner}/alerts",
        summary: "Set the holder's e-mail alerts of new matches: recipients, threshold, immediate or daily digest, hourly limit, language (compare-and-set on version)",
        params: &[OWNER],
        body: Some(holder_alerts),
        ok: 200,
        errors: &[400, 403, 404, 409],
    },
    Op {
        method: "post",
        path: "/api/v1/holders/{owner}/documents",
        summary: "Upload a document proving the holder's rights (raw body, at most 10 MiB)",
        params: &[OWNER, ("name", "query", "string"), ("version", "query", "integer")],
        body: Some(document_upload),
        ok: 201,
        errors: &[400, 403, 404, 409, 413],
    },
    Op {
        method: "get",
        path: "/api/v1/holders/{owner}/documents/{sha256}",
        summary: "A rights document, as an attachment",
        params: &[OWNER, ("sha256", "path", "string")],
        body: None,
        ok: 200,
        errors: &[404, 409],
    },
    Op {
        method: "delete",
        path: "/api/v1/holders/{owner}/documents/{sha256}",
        summary: "Remove a rights document from the profile (the file stays in the evidence store)",
        params: &[OWNER, ("sha256", "path", "string"), ("version", "query", "integer")],
        body: None,
        ok: 200,
        errors: &[400, 403, 404, 409],
    },
    Op {
        method: "get",
        path: "/api/v1/notices",
        summary: "Takedown notices (a holder: its own), oldest first",
        params: &[("owner", "query", "string"), ("state", "query", "notice_state"), ("site", "query", "string"), PAGING[0], PAGING[1]],
        body: None,
        ok: 200,
        errors: &[400],
    },
    Op {
        method: "post",
        path: "/api/v1/notices",
        summary: "Draft a notice from the holder's confirmed matches on a site (idempotent: the same selection is the same notice)",
        params: &[],
        body: Some(draft_notice),
        ok: 201,
        errors: &[400, 404, 409, 501],
    },
    Op {
        method: "get",
        path: "/api/v1/notices/{id}",
        summary: "A notice: its matches, pages, files, state and Message-ID",
        params: &[ID],
        body: None,
        ok: 200,
        errors: &[400, 404],
    },
    Op {
        method: "post",
        path: "/api/v1/notices/{id}/send",
        summary: "Send the notice by SMTP, at most once (a sent notice is returned as it is)",
        params: &[ID],
        body: Some(recipient),
        ok: 200,
        errors: &[400, 404, 409, 501, 503],
    },
    Op {
        method: "post",
        path: "/api/v1/notices/{id}/export",
        summary: "Export the notice as an .eml to send by hand (files/notice.eml); its matches are under notice",
        params: &[ID],
        body: Some(recipient),
        ok: 200,
        errors: &[400, 404, 409, 501],
    },
    Op {
        method: "post",
        path: "/api/v1/notices/{id}/resolve",
        summary: "Record the outcome of a send that did not finish (admin, after looking for its Message-ID)",
        params: &[ID],
        body: Some(resolve_notice),
        ok: 200,
        errors: &[400, 403, 404, 409, 501],
    },
    Op {
        method: "post",
        path: "/api/v1/notices/{id}/cancel",
        summary: "Withdraw a draft",
        params: &[ID],
        body: None,
        ok: 200,
        errors: &[400, 404, 409, 501],
    },
    Op {
        method: "get",
        path: "/api/v1/notices/{id}/files/{name}",
        summary: "A rendered file of the notice (notice.pdf, notice.html, notice.txt, notice.eml, evidence packages)",
        params: &[ID, ("name", "path", "string")],
        body: None,
        ok: 200,
        errors: &[400, 404, 409, 501],
    },
    Op {
        method: "get",
        path: "/api/v1/sites/{host}/contacts",
        summary: "Where a notice about the site could go: security.txt, addresses on its pages, abuse@",
        params: &[("host", "path", "string")],
        body: None,
        ok: 200,
        errors: &[400, 501],
    },
    Op {
        method: "get",
        path: "/api/v1/notice-templates",
        summary: "The notice templates in force (zh-CN and en; subject, text, html)",
        params: &[],
        body: None,
        ok: 200,
        errors: &[501],
    },
    Op {
        method: "put",
        path: "/api/v1/notice-templates/{lang}/{part}",
        summary: "Replace one template (admin); refused unless it renders a complete notice",
        params: &[("lang", "path", "string"), ("part", "path", "string")],
        body: Some(template_source),
        ok: 200,
        errors: &[400, 403, 501],
    },
    Op {
        method: "get",
        path: "/api/v1/removals",
        summary: "The removal watch of the pages under notice or confirmed: state, since, transitions",
        params: &[("owner", "query", "string"), ("state", "query", "removal_state"), ("flagged", "query", "boolean"), ("site", "query", "string"), PAGING[0], PAGING[1]],
        body: None,
        ok: 200,
        errors: &[400],
    },
    Op {
        method: "get",
        path: "/api/v1/removals/stats",
        summary: "Time to removal (median, p90), removal rate, pages still up and flagged, licensed vs infringing, per site and per holder",
        params: &[("owner", "query", "string")],
        body: None,
        ok: 200,
        errors: &[400],
    },
    Op {
        method: "get",
        path: "/api/v1/removals/{page_id}",
        summary: "One page's timeline: its transitions and the notices that named it",
        params: &[("page_id", "path", "integer")],
        body: None,
        ok: 200,
        errors: &[400, 404],
    },
    Op {
        method: "get",
        path: "/api/v1/watched-sites",
        summary: "The watched sites (a holder: those that concern it) with the schedule state of each entry point",
        params: &[("owner", "query", "string")],
        body: None,
        ok: 200,
        errors: &[400],
    },
    Op {
        method: "post",
        path: "/api/v1/watched-sites",
        summary: "Watch a site (201), update the one of the same id, or join it when it concerns other holders (200; entry points kept keep their schedule)",
        params: &[],
        body: Some(watched_site),
        ok: 201,
        errors: &[400, 403, 409],
    },
    Op {
        method: "get",
        path: "/api/v1/watched-sites/{id}",
        summary: "One watched site",
        params: &[("id", "path", "string")],
        body: None,
        ok: 200,
        errors: &[404],
    },
    Op {
        method: "delete",
        path: "/api/v1/watched-sites/{id}",
        summary: "Stop watching a site: a holder leaves it, an admin stops it for all (its pages stay stored)",
        params: &[("id", "path", "string")],
        body: None,
        ok: 200,
        errors: &[403, 404],
    },
    Op {
        method: "get",
        path: "/api/v1/tasks",
        summary: "List tasks",
        params: &[("state", "query", "task_state"), ("kind", "query", "string"), PAGING[0], PAGING[1]],
        body: None,
        ok: 200,
        errors: &[400, 403],
    },
    Op {
        method: "get",
        path: "/api/v1/tasks/{id}",
        summary: "A task with its progress",
        params: &[ID],
        body: None,
        ok: 200,
        errors: &[400, 403, 404],
    },
    Op {
        method: "post",
        path: "/api/v1/tasks/match",
        summary: "Start a matching run",
        params: &[],
        body: Some(start_match),
        ok: 202,
        errors: &[400, 403],
    },
    Op {
        method: "post",
        path: "/api/v1/tasks/crawl",
        summary: "Start a crawl",
        params: &[],
        body: Some(start_crawl),
        ok: 202,
        errors: &[400, 403],
    },
    Op {
        method: "post",
        path: "/api/v1/tasks/{id}/cancel",
        summary: "Cancel a task",
        params: &[ID],
        body: None,
        ok: 200,
        errors: &[400, 403, 404, 409],
    },
    Op {
        method: "get",
        path: "/api/v1/exports/matches",
        summary: "Export the filtered match list (CSV, XLSX, JSON array, JSON Lines)",
        params: EXPORT_PARAMS,
        body: None,
        ok: 200,
        errors: &[400],
    },
];

fn schema(kind: &str) -> Value {
    match kind {
        "integer" => json!({"type": "integer", "format": "int64"}),
        "score" => json!({"type": "number", "minimum": 0, "maximum": 1}),
        "date" => json!({"type": "string", "format": "date"}),
        "status" => json!({"type": "string", "enum": ["new", "confirmed", "dismissed", "takedown_sent", "licensed"]}),
        "match_kind" => json!({"type": "string", "enum": zhiwen_store::MATCH_KINDS}),
        "notice_state" => json!({"type": "string", "enum": ["draft", "sending", "sent", "exported", "cancelled"]}),
        "removal_state" => json!({"type": "string", "enum": ["up", "changed", "removed"]}),
        "boolean" => json!({"type": "boolean"}),
        "task_state" => json!({"type": "string", "enum": ["queued", "running", "succeeded", "failed", "cancelled"]}),
        "sort" => {
            json!({"type": "string", "enum": ["id", "-id", "score", "-score", "first_seen", "-first_seen", "last_seen", "-last_seen"]})
        }
        "lang" => json!({"type": "string", "enum": ["zh", "en"]}),
        "format" => json!({"type": "string", "enum": ["csv", "xlsx", "json", "jsonl"]}),
        "report_format" => json!({"type": "string", "enum": ["html", "pdf"]}),
        _ => json!({"type": "string"}),
    }
}

fn error_response(status: u16) -> Value {
    let description = match status {
        400 => "invalid input",
        401 => "missing, unknown, revoked or expired key",
        403 => "the role may not do this",
        404 => "no such id (or not the caller's)",
        409 => "state does not allow it",
        413 => "body too large",
        429 => "rate limited",
        500 => "a bug or a store failure",
        501 => "not set up on this server (PDF reports: no Chromium; evidence: captures off)",
        503 => "store or index not reachable, timeout, or the PDF printer failed",
        _ => "error",
    };
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

/// The document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for op in OPS {
        let mut o = Map::new();
        o.insert("summary".into(), json!(op.summary));
        o.insert("operationId".into(), json!(format!("{}{}", op.method, op.path.replace(['/', '{', '}'], "_"))));
        let params: Vec<Value> = op
            .params
            .iter()
            .map(|(name, place, kind)| {
                json!({"name": name, "in": place, "required": *place == "path", "schema": schema(kind)})
            })
            .collect();
        if !params.is_empty() {
            o.insert("parameters".into(), Value::Array(params));
        }
        if let Some(body) = op.body {
            let ct = if op.path.ends_with("/upload") || op.path.ends_with("/documents") {
                "application/octet-stream"
            } else {
                "application/json"
            };
            o.insert("requestBody".into(), json!({"required": true, "content": {ct: {"schema": body()}}}));
        }
        let mut responses = Map::new();
        let ok_type = if op.path.ends_with("/report") {
            json!({"text/html": {}, "application/pdf": {}})
        } else if op.path.starts_with("/api/v1/exports") {
            json!({"text/csv": {}, "application/json": {}, "application/x-ndjson": {}, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": {}})
        } else {
            json!({"application/json": {"schema": {"type": "object"}}})
        };
        responses.insert(op.ok.to_string(), json!({"description": "success", "content": ok_type}));
        if op.ok == 201 {
            responses.insert("200".into(), json!({"description": "updated or unchanged", "content": {"application/json": {"schema": {"type": "object"}}}}));
        }
        for e in op.errors.iter().chain(&[401, 429]) {
            responses.insert(e.to_string(), error_response(*e));
        }
        o.insert("responses".into(), Value::Object(responses));
        let item = paths.entry(op.path.to_string()).or_insert_with(|| json!({}));
        item[op.method] = Value::Object(o);
    }
    for (path, summary) in [("/health", "Liveness"), ("/ready", "Store and index reachable")] {
        paths.insert(
            path.into(),
            json!({"get": {"summary": summary, "security": [], "operationId": format!("get{}", path.replace('/', "_")),
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}},
                              "503": {"description": "not ready", "content": {"application/json": {"schema": {"type": "object"}}}}}}}),
        );
    }
    let error_codes: Vec<&str> = crate::error::ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    json!({
        "openapi": "3.0.3",
        "info": {"title": "zhiwen admin API", "version": "1.6", "description": "See docs/api.md. Authorization: Bearer <key>."},
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "object",
                "required": ["code", "message"], "properties": {"code": {"type": "string", "enum": error_codes}, "message": {"type": "string"}}}}}}
        }
    })
}

/// The interactive page and the document, as one actix service.
pub(crate) fn swagger() -> utoipa_swagger_ui::SwaggerUi {
    utoipa_swagger_ui::SwaggerUi::new("/api/v1/docs/{_:.*}").external_url_unchecked("/api/v1/openapi.json", document())
}
