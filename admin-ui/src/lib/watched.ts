import type { WatchedSite } from '../api/types';

/** The non-empty trimmed lines of a text box. */
export function splitLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

/** A site's schedule at a glance, over its entry points. */
export interface SiteSchedule {
  /** The latest visit of any entry point (`null`: none visited yet). */
  lastVisit: number | null;
  /** When the next entry point is due (`null`: none). */
  nextVisit: number | null;
  /** The shortest current interval, in seconds (`null`: none set yet). */
  interval: number | null;
  visits: number;
  notModified: number;
  withNew: number;
  withCopies: number;
}

export function siteSchedule(site: WatchedSite): SiteSchedule {
  let lastVisit: number | null = null;
  let nextVisit: number | null = null;
  let interval: number | null = null;
  let visits = 0;
  let notModified = 0;
  let withNew = 0;
  let withCopies = 0;
  for (const e of site.entry_points) {
    if (e.last_visit !== null) lastVisit = Math.max(lastVisit ?? 0, e.last_visit);
    nextVisit = nextVisit === null ? e.next_visit : Math.min(nextVisit, e.next_visit);
    if (e.interval_secs > 0) interval = interval === null ? e.interval_secs : Math.min(interval, e.interval_secs);
    visits += e.visits;
    notModified += e.not_modified;
    withNew += e.visits_with_new;
    withCopies += e.visits_with_copies;
  }
  // A site never visited is due now: show no date from 1970.
  if (visits === 0) nextVisit = null;
  return { lastVisit, nextVisit, interval, visits, notModified, withNew, withCopies };
}
