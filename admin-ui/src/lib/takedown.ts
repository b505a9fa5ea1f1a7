// The logic of the takedown pages, apart from their components (unit-tested on its own).
import type { ContactSuggestion, Notice, RemovalDetail, RemovalState, Role } from '../api/types';

/** A notice's reference, as its documents print it: `ZW-N-000042`. */
export function noticeReference(id: number): string {
  return `ZW-N-${String(id).padStart(6, '0')}`;
}

/** What may be done with a notice now, by whom. */
export interface NoticeActions {
  /** Send by e-mail (a draft only; the API sends at most once). */
  send: boolean;
  /** Export the .eml for sending by hand (a draft, or again once exported). */
  export: boolean;
  /** Withdraw it (a draft). */
  cancel: boolean;
  /** Record the outcome of a send that did not finish (admin, `sending`). */
  resolve: boolean;
  /** Draft a second notice (a delivered notice whose pages are still up). */
  followUp: boolean;
}

export function noticeActions(n: Pick<Notice, 'state'>, role: Role, pagesStillUp: number): NoticeActions {
  const delivered = n.state === 'sent' || n.state === 'exported';
  return {
    send: n.state === 'draft',
    export: n.state === 'draft' || n.state === 'exported',
    cancel: n.state === 'draft',
    resolve: n.state === 'sending' && role === 'admin',
    followUp: delivered && pagesStillUp > 0,
  };
}

/** A plausible e-mail address (the server checks it again). */
export function isEmail(s: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s.trim());
}

/**
 * The recipient to propose: the one already on the notice, else the first suggestion
 * (the API orders them best first), else nothing.
 */
export function defaultRecipient(current: string | null | undefined, suggestions: ContactSuggestion[]): string {
  if (current && current.trim()) return current.trim();
  return suggestions[0]?.address ?? '';
}

/** The files of a notice a person opens to read it: the PDF first, then the HTML. */
export function readableFiles<T extends { name: string }>(files: T[]): T[] {
  const rank = (n: string) => (n === 'notice.pdf' ? 0 : n === 'notice.html' ? 1 : n === 'notice.txt' ? 2 : n === 'notice.eml' ? 3 : 4);
  return files.slice().sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
}

/** A licensed-domain row being edited (work optional). */
export interface LicensedRow {
  domain: string;
  work_id?: number | null;
}

/**
 * The body of a licensed-domains save: trimmed rows, empty ones left out, duplicates
 * once; `errors` holds the indexes of rows that are not domains (nothing is sent then).
 */
export function licensedBody(rows: LicensedRow[]): { domains: { domain: string; work_id?: number }[]; errors: number[] } {
  const domains: { domain: string; work_id?: number }[] = [];
  const errors: number[] = [];
  rows.forEach((r, i) => {
    const d = normalizeDomainInput(r.domain);
    if (d === '') return;
    if (d === null) {
      errors.push(i);
      return;
    }
    const work = r.work_id ?? undefined;
    if (domains.some((x) => x.domain === d && x.work_id === work)) return;
    domains.push(work === undefined ? { domain: d } : { domain: d, work_id: work });
  });
  return { domains, errors };
}

/** `https://Www.Example.com/x` -> `www.example.com`; '' when blank; null when not a host name. */
export function normalizeDomainInput(input: string): string | null {
  let s = input.trim().toLowerCase();
  if (!s) return '';
  const scheme = s.indexOf('://');
  if (scheme >= 0) s = s.slice(scheme + 3);
  s = s.split(/[/?#]/)[0];
  s = s.replace(/:\d+$/, '').replace(/\.$/, '');
  const ok = s.length > 0 && s.length <= 253 && s.split('.').every((l) => l.length > 0 && l.length <= 63 && !l.startsWith('-') && !l.endsWith('-') && /^[a-z0-9\-\u0080-\uffff]+$/.test(l));
  return ok ? s : null;
}

/** Hours in words: `36 min`, `5.2 h`, `3.1 d` (the unit labels come from the dictionary). */
export function hoursParts(h: number | null | undefined): { value: string; unit: 'min' | 'h' | 'd' } | null {
  if (h === null || h === undefined || !Number.isFinite(h) || h < 0) return null;
  if (h < 1) return { value: String(Math.max(1, Math.round(h * 60))), unit: 'min' };
  if (h < 48) return { value: h < 10 ? h.toFixed(1) : String(Math.round(h)), unit: 'h' };
  const d = h / 24;
  return { value: d < 10 ? d.toFixed(1) : String(Math.round(d)), unit: 'd' };
}

/** One line of a page's timeline: a notice, a state transition, or the flag for a second notice. */
export type TimelineItem =
  | { kind: 'notice'; at: Millis; id: number; reference: string; state: string; recipient: string | null; followUpOf: number | null }
  | { kind: 'transition'; at: Millis; from: RemovalState | null; to: RemovalState; httpStatus: number | null; detail: string }
  | { kind: 'flagged'; at: Millis };
type Millis = number;

/** The timeline of a watched page: notices sent and every transition, oldest first. */
export function timeline(d: RemovalDetail): TimelineItem[] {
  const items: TimelineItem[] = [];
  for (const n of d.notices) {
    if (n.sent_at === null) continue;
    items.push({ kind: 'notice', at: n.sent_at, id: n.id, reference: n.reference, state: n.state, recipient: n.recipient, followUpOf: n.follow_up_of });
  }
  for (const e of d.events) items.push({ kind: 'transition', at: e.at, from: e.from, to: e.to, httpStatus: e.http_status, detail: e.detail });
  if (d.flagged_at !== null) items.push({ kind: 'flagged', at: d.flagged_at });
  const order = { notice: 0, transition: 1, flagged: 2 } as const;
  return items.sort((a, b) => a.at - b.at || order[a.kind] - order[b.kind]);
}

/** The one site of a selection of matches (`null` when none or several). */
export function singleSite<T extends { site: string }>(rows: T[]): string | null {
  const sites = new Set(rows.map((r) => r.site));
  return sites.size === 1 ? [...sites][0] : null;
}

/** The owners a holder picker offers: the stored holders' and the works' owners, once, sorted. */
export function ownerChoices(holders: { owner: string }[], works: { owner: string }[]): string[] {
  return [...new Set([...holders.map((h) => h.owner), ...works.map((w) => w.owner)].filter(Boolean))].sort();
}

/**
 * What a notice drafted from the matches page covers: the site of the filter, or the one
 * site of the selected rows; the holder likewise; the selected confirmed matches only
 * (none selected: every confirmed match of the holder on the site). `null` when no single
 * site is known.
 */
export function draftFromMatches(
  filters: { site?: string; owner?: string },
  rows: { id: number; site: string; owner: string; status: string }[],
  selected: number[],
): { site: string; owner?: string; matchIds?: number[] } | null {
  const chosen = rows.filter((r) => selected.includes(r.id));
  const site = filters.site?.trim().toLowerCase() || singleSite(chosen) || (rows.length > 0 ? singleSite(rows) : null);
  if (!site) return null;
  const owners = new Set((chosen.length ? chosen : rows.filter((r) => r.site === site)).map((r) => r.owner));
  const owner = filters.owner?.trim() || (owners.size === 1 ? [...owners][0] : undefined);
  const confirmed = chosen.filter((r) => r.site === site && r.status === 'confirmed').map((r) => r.id);
  return confirmed.length ? { site, owner, matchIds: confirmed } : { site, owner };
}
