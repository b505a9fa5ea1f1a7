import type {
  NewWatchedSiteBody,
  WatchedSite,
  BulkReviewResult,
  CaptureList,
  ContactSuggestion,
  DraftNoticeBody,
  AlertSettings,
  Holder,
  HolderDocument,
  HolderProfile,
  LicensedSaved,
  Notice,
  NoticeState,
  RemovalDetail,
  RemovalState,
  RemovalStats,
  RemovalWatch,
  CaptureRequested,
  MatchDetail,
  MatchFilters,
  MatchItem,
  Me,
  NewWorkBody,
  Page,
  ReviewStatus,
  SectionText,
  Stats,
  Task,
  WorkDetail,
  UploadResult,
  Verification,
  WorkItem,
  WorkSaved,
} from './types';
import { filtersToQuery } from '../lib/filters';

/** An error the API answered with (`{"error":{"code","message"}}`) or a network failure (`code: "network"`). */
export class ApiError extends Error {
  constructor(
    public readonly status: number,
    public readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type FetchLike = typeof fetch;

export interface ClientOptions {
  key: string;
  base?: string;
  fetch?: FetchLike;
  /** Called on every 401, so the app can send the user back to sign-in. */
  onUnauthorized?: () => void;
}

/** The error code of a status when the body does not say (e.g. a proxy's HTML page). */
export function codeOfStatus(status: number): string {
  switch (status) {
    case 400:
      return 'bad_request';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 409:
      return 'conflict';
    case 413:
      return 'payload_too_large';
    case 429:
      return 'rate_limited';
    case 502:
    case 503:
    case 504:
      return 'unavailable';
    default:
      return 'internal';
  }
}

async function errorOf(res: Response): Promise<ApiError> {
  let code = codeOfStatus(res.status);
  let message = `HTTP ${res.status}`;
  try {
    const body = await res.json();
    if (body && body.error) {
      code = String(body.error.code ?? code);
      message = String(body.error.message ?? message);
    }
  } catch {
    /* not JSON: keep the status */
  }
  return new ApiError(res.status, code, message);
}

/** The dashboard's view of the admin API v1. */
export class ApiClient {
  private readonly key: string;
  private readonly base: string;
  private readonly fetchFn: FetchLike;
  private readonly onUnauthorized?: () => void;

  constructor(opts: ClientOptions) {
    this.key = opts.key;
    this.base = opts.base ?? '';
    this.fetchFn = opts.fetch ?? ((...args) => fetch(...args));
    this.onUnauthorized = opts.onUnauthorized;
  }

  /** A raw authorised request; errors become `ApiError`. */
  async raw(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${this.key}`);
    let res: Response;
    try {
      res = await this.fetchFn(this.base + path, { ...init, headers });
    } catch (e) {
      throw new ApiError(0, 'network', e instanceof Error ? e.message : String(e));
    }
    if (!res.ok) {
      const err = await errorOf(res);
      if (res.status === 401) this.onUnauthorized?.();
      throw err;
    }
    return res;
  }

  private async json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await this.raw(path, init);
    return (await res.json()) as T;
  }

  private send<T>(method: string, path: string, body: unknown): Promise<T> {
    return this.json<T>(path, {
      method,
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  me(): Promise<Me> {
    return this.json('/api/v1/me');
  }

  stats(params: { from?: string; to?: string; work_id?: number; top?: number } = {}): Promise<Stats> {
    return this.json(`/api/v1/stats${query(params)}`);
  }

  works(params: { q?: string; owner?: string; cursor?: string | null; limit?: number } = {}): Promise<Page<WorkItem>> {
    return this.json(`/api/v1/works${query(params)}`);
  }

  work(id: number): Promise<WorkDetail> {
    return this.json(`/api/v1/works/${id}`);
  }

  section(workId: number, sectionId: number): Promise<SectionText> {
    return this.json(`/api/v1/works/${workId}/sections/${sectionId}`);
  }

  createWork(body: NewWorkBody): Promise<WorkSaved> {
    return this.send('POST', '/api/v1/works', body);
  }

  uploadWork(file: Blob, filename: string, owner?: string): Promise<UploadResult> {
    return this.json(`/api/v1/works/upload${query({ filename, owner })}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream' },
      body: file,
    });
  }

  deleteWork(id: number): Promise<{ deleted: boolean; sections: number; matches: number }> {
    return this.json(`/api/v1/works/${id}`, { method: 'DELETE' });
  }

  workReport(id: number, lang: 'zh' | 'en', filters: MatchFilters = {}): Promise<string> {
    const params: Record<string, string | number | undefined> = { lang };
    if (filters.status) params.status = filters.status;
    if (filters.min_score !== undefined) params.min_score = filters.min_score;
    return this.raw(`/api/v1/works/${id}/report${query(params)}`).then((r) => r.text());
  }

  /** The same evidence report as a PDF printed by the server (501 when it has no Chromium). */
  async workReportPdf(id: number, lang: 'zh' | 'en', filters: MatchFilters = {}): Promise<{ blob: Blob; filename: string }> {
    const params: Record<string, string | number | undefined> = { lang, format: 'pdf' };
    if (filters.status) params.status = filters.status;
    if (filters.min_score !== undefined) params.min_score = filters.min_score;
    const res = await this.raw(`/api/v1/works/${id}/report${query(params)}`);
    const filename = filenameFrom(res.headers.get('Content-Disposition')) ?? `evidence-report-work-${id}.pdf`;
    return { blob: await res.blob(), filename };
  }

  matches(filters: MatchFilters, cursor?: string | null, limit = 50): Promise<Page<MatchItem>> {
    const qs = filtersToQuery(filters);
    if (cursor) qs.set('cursor', cursor);
    qs.set('limit', String(limit));
    return this.json(`/api/v1/matches?${qs.toString()}`);
  }

  match(id: number): Promise<MatchDetail> {
    return this.json(`/api/v1/matches/${id}`);
  }

  review(id: number, status: ReviewStatus, note?: string): Promise<MatchDetail> {
    return this.send('POST', `/api/v1/matches/${id}/review`, note ? { status, note } : { status });
  }

  bulkReview(ids: number[], status: ReviewStatus, note?: string): Promise<BulkReviewResult> {
    return this.send('POST', '/api/v1/matches/review', note ? { ids, status, note } : { ids, status });
  }

  /** The export of the current filter, with the server's file name. */
  async exportMatches(format: 'csv' | 'xlsx', filters: MatchFilters): Promise<{ blob: Blob; filename: string }> {
    const qs = filtersToQuery(filters);
    qs.set('format', format);
    const res = await this.raw(`/api/v1/exports/matches?${qs.toString()}`);
    const filename = filenameFrom(res.headers.get('Content-Disposition')) ?? `zhiwen-matches.${format}`;
    return { blob: await res.blob(), filename };
  }

  /** The evidence captures of a match (501 when the server runs without captures). */
  captures(matchId: number): Promise<CaptureList> {
    return this.json(`/api/v1/matches/${matchId}/captures`);
  }

  /** Queue a capture of the match now (the worker runs it within seconds). */
  requestCapture(matchId: number): Promise<CaptureRequested> {
    return this.json(`/api/v1/matches/${matchId}/captures`, { method: 'POST' });
  }

  /** A file of a capture (e.g. `capture/screenshot.png`) as a blob: it needs the key header. */
  async captureFile(matchId: number, captureId: number, name: string): Promise<Blob> {
    const path = name.split('/').map(encodeURIComponent).join('/');
    const res = await this.raw(`/api/v1/matches/${matchId}/captures/${captureId}/files/${path}`);
    return res.blob();
  }

  /** The capture's package checked with the server's public key, as a third party would. */
  verification(matchId: number, captureId: number): Promise<Verification> {
    return this.json(`/api/v1/matches/${matchId}/captures/${captureId}/verification`);
  }

  /** The verifiable evidence package (zip) of a capture, with the server's file name. */
  async evidencePackage(matchId: number, captureId: number): Promise<{ blob: Blob; filename: string }> {
    const res = await this.raw(`/api/v1/matches/${matchId}/evidence-package${query({ capture: captureId })}`);
    const filename = filenameFrom(res.headers.get('Content-Disposition')) ?? `evidence-match-${matchId}-capture-${captureId}.zip`;
    return { blob: await res.blob(), filename };
  }

  tasks(params: { state?: string; kind?: string; cursor?: string | null; limit?: number } = {}): Promise<Page<Task>> {
    return this.json(`/api/v1/tasks${query(params)}`);
  }

  task(id: number): Promise<Task> {
    return this.json(`/api/v1/tasks/${id}`);
  }

  startMatch(scope: 'new' | 'all' | 'since', since?: string): Promise<Task> {
    return this.send('POST', '/api/v1/tasks/match', scope === 'since' ? { scope, since } : { scope });
  }

  startCrawl(seeds: string[], maxPages?: number, maxDepth?: number): Promise<Task> {
    return this.send('POST', '/api/v1/tasks/crawl', { seeds, max_pages: maxPages, max_depth: maxDepth });
  }

  cancelTask(id: number): Promise<Task> {
    return this.json(`/api/v1/tasks/${id}/cancel`, { method: 'POST' });
  }

  // Rights holders -------------------------------------------------------------------

  holders(): Promise<{ items: Holder[] }> {
    return this.json('/api/v1/holders');
  }

  holder(owner: string): Promise<Holder> {
    return this.json(`/api/v1/holders/${encodeURIComponent(owner)}`);
  }

  /** Save the profile; `version` is the one read (409 `conflict` when someone saved meanwhile). */
  saveProfile(owner: string, version: number, profile: HolderProfile): Promise<Holder> {
    return this.send('PUT', `/api/v1/holders/${encodeURIComponent(owner)}/profile`, { version, ...profile });
  }

  /** Replace the holder's e-mail alerts of new matches. */
  saveAlerts(owner: string, version: number, alerts: AlertSettings): Promise<Holder> {
    return this.send('PUT', `/api/v1/holders/${encodeURIComponent(owner)}/alerts`, { version, ...alerts });
  }

  /** Replace the licensed domains; the holder's matches are re-labelled. */
  saveLicensed(owner: string, version: number, domains: { domain: string; work_id?: number }[]): Promise<LicensedSaved> {
    return this.send('PUT', `/api/v1/holders/${encodeURIComponent(owner)}/licensed`, { version, domains });
  }

  uploadDocument(owner: string, version: number, file: Blob, name: string): Promise<HolderDocument> {
    return this.json(`/api/v1/holders/${encodeURIComponent(owner)}/documents${query({ name, version })}`, {
      method: 'POST',
      headers: { 'Content-Type': file.type || 'application/octet-stream' },
      body: file,
    });
  }

  async holderDocument(owner: string, sha256: string): Promise<Blob> {
    const res = await this.raw(`/api/v1/holders/${encodeURIComponent(owner)}/documents/${sha256}`);
    return res.blob();
  }

  deleteDocument(owner: string, version: number, sha256: string): Promise<Holder> {
    return this.json(`/api/v1/holders/${encodeURIComponent(owner)}/documents/${sha256}${query({ version })}`, { method: 'DELETE' });
  }

  // Takedown notices -----------------------------------------------------------------

  notices(params: { owner?: string; state?: NoticeState; site?: string; cursor?: string | null; limit?: number } = {}): Promise<Page<Notice>> {
    return this.json(`/api/v1/notices${query(params)}`);
  }

  notice(id: number): Promise<Notice> {
    return this.json(`/api/v1/notices/${id}`);
  }

  /** Draft a notice (the same request again answers the same notice). */
  draftNotice(body: DraftNoticeBody): Promise<Notice> {
    return this.send('POST', '/api/v1/notices', body);
  }

  /** Send by e-mail (at most once: a second call is refused, never a second mail). */
  sendNotice(id: number, recipient?: string): Promise<Notice> {
    return this.send('POST', `/api/v1/notices/${id}/send`, recipient ? { recipient } : {});
  }

  /** Export for sending by hand (then `files/notice.eml`). */
  exportNotice(id: number, recipient?: string): Promise<Notice> {
    return this.send('POST', `/api/v1/notices/${id}/export`, recipient ? { recipient } : {});
  }

  /** Record the outcome of a send left `sending` (admin). */
  resolveNotice(id: number, delivered: boolean): Promise<Notice> {
    return this.send('POST', `/api/v1/notices/${id}/resolve`, { delivered });
  }

  cancelNotice(id: number): Promise<Notice> {
    return this.json(`/api/v1/notices/${id}/cancel`, { method: 'POST' });
  }

  async noticeFile(id: number, name: string): Promise<{ blob: Blob; filename: string }> {
    const res = await this.raw(`/api/v1/notices/${id}/files/${encodeURIComponent(name)}`);
    return { blob: await res.blob(), filename: filenameFrom(res.headers.get('Content-Disposition')) ?? name };
  }

  siteContacts(host: string): Promise<{ items: ContactSuggestion[] }> {
    return this.json(`/api/v1/sites/${encodeURIComponent(host)}/contacts`);
  }

  // Removal tracking -----------------------------------------------------------------

  removals(params: { owner?: string; state?: RemovalState; flagged?: boolean; site?: string; cursor?: string | null; limit?: number } = {}): Promise<Page<RemovalWatch>> {
    const p: Record<string, string | number | null | undefined> = { ...params, flagged: params.flagged === undefined ? undefined : String(params.flagged) };
    return this.json(`/api/v1/removals${query(p)}`);
  }

  removal(pageId: number): Promise<RemovalDetail> {
    return this.json(`/api/v1/removals/${pageId}`);
  }

  removalStats(owner?: string): Promise<RemovalStats> {
    return this.json(`/api/v1/removals/stats${query({ owner })}`);
  }

  watchedSites(owner?: string): Promise<{ items: WatchedSite[] }> {
    return this.json(`/api/v1/watched-sites${query({ owner })}`);
  }

  /** Add a site, or update the one with the same host (idempotent). */
  addWatchedSite(body: NewWatchedSiteBody): Promise<{ outcome: 'inserted' | 'updated' | 'unchanged'; site: WatchedSite }> {
    return this.send('POST', '/api/v1/watched-sites', body);
  }

  deleteWatchedSite(id: string): Promise<{ deleted: string }> {
    return this.json(`/api/v1/watched-sites/${encodeURIComponent(id)}`, { method: 'DELETE' });
  }
}

/** `?a=1&b=x` of the defined, non-empty values (empty string when none). */
export function query(params: Record<string, string | number | null | undefined>): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === null || v === '') continue;
    qs.set(k, String(v));
  }
  const s = qs.toString();
  return s ? `?${s}` : '';
}

/** The file name of a `Content-Disposition` header (RFC 6266 `filename*` preferred). */
export function filenameFrom(header: string | null): string | null {
  if (!header) return null;
  const star = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  if (star) {
    try {
      return decodeURIComponent(star[1].trim());
    } catch {
      /* fall through */
    }
  }
  const plain = /filename\s*=\s*"?([^";]+)"?/.exec(header);
  return plain ? plain[1].trim() : null;
}
