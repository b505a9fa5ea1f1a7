import type { MatchFilters, MatchSort, ReviewStatus } from '../api/types';
import { REVIEW_STATUSES } from '../api/types';

const SORTS: MatchSort[] = ['-last_seen', 'last_seen', '-score', 'score', '-id', 'id', '-first_seen', 'first_seen'];
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The API query of a filter: only set values, in a fixed order (so the same filter gives
 * the same URL, which keeps cursors valid), the default sort left out.
 */
export function filtersToQuery(f: MatchFilters): URLSearchParams {
  const qs = new URLSearchParams();
  const put = (k: string, v: string | number | undefined) => {
    if (v === undefined || v === '' || (typeof v === 'number' && Number.isNaN(v))) return;
    qs.set(k, String(v));
  };
  put('work_id', f.work_id);
  put('section_id', f.section_id);
  put('owner', f.owner?.trim());
  put('site', f.site?.trim().toLowerCase());
  put('kind', f.kind);
  put('status', f.status);
  if (f.min_score !== undefined && f.min_score > 0) put('min_score', clampScore(f.min_score));
  if (f.max_score !== undefined && f.max_score < 1) put('max_score', clampScore(f.max_score));
  put('from', f.from);
  put('to', f.to);
  if (f.sort && f.sort !== '-last_seen') put('sort', f.sort);
  return qs;
}

/** The filter a URL's query string describes; anything malformed is dropped, never guessed. */
export function queryToFilters(qs: URLSearchParams): MatchFilters {
  const f: MatchFilters = {};
  const int = (k: string) => {
    const v = qs.get(k);
    if (v === null || !/^\d+$/.test(v)) return undefined;
    return Number(v);
  };
  const score = (k: string) => {
    const v = qs.get(k);
    if (v === null || v === '') return undefined;
    const n = Number(v);
    return Number.isFinite(n) && n >= 0 && n <= 1 ? n : undefined;
  };
  const work = int('work_id');
  if (work !== undefined) f.work_id = work;
  const section = int('section_id');
  if (section !== undefined) f.section_id = section;
  const owner = qs.get('owner');
  if (owner) f.owner = owner;
  const site = qs.get('site');
  if (site) f.site = site;
  const kind = qs.get('kind');
  if (kind) f.kind = kind;
  const status = qs.get('status');
  if (status && (REVIEW_STATUSES as string[]).includes(status)) f.status = status as ReviewStatus;
  const min = score('min_score');
  if (min !== undefined) f.min_score = min;
  const max = score('max_score');
  if (max !== undefined) f.max_score = max;
  const from = qs.get('from');
  if (from && DATE.test(from)) f.from = from;
  const to = qs.get('to');
  if (to && DATE.test(to)) f.to = to;
  const sort = qs.get('sort');
  if (sort && (SORTS as string[]).includes(sort)) f.sort = sort as MatchSort;
  return f;
}

function clampScore(n: number): string {
  const c = Math.min(1, Math.max(0, n));
  return String(Math.round(c * 100) / 100);
}

/** The API sort of an Ant Design table sorter (column key + order). */
export function sortOf(columnKey: string | undefined, order: 'ascend' | 'descend' | null | undefined): MatchSort | undefined {
  if (!order || !columnKey) return undefined;
  const field = columnKey === 'score' ? 'score' : columnKey === 'first_seen' ? 'first_seen' : columnKey === 'last_seen' ? 'last_seen' : undefined;
  if (!field) return undefined;
  return (order === 'descend' ? `-${field}` : field) as MatchSort;
}
