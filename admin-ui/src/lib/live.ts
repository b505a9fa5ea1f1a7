import { useEffect, useRef } from 'react';
import type { MatchItem } from '../api/types';

/** What the live panel of new matches shows. */
export interface LiveState {
  /** The newest match id when the panel opened (`null`: not loaded yet): newer ones are new. */
  baseline: number | null;
  /** The newest matches, newest first. */
  items: MatchItem[];
  /** Ids of the matches found since the panel opened. */
  fresh: number[];
  /** A poll returned only new matches: more may have come than were shown. */
  more: boolean;
}

export const LIVE_EMPTY: LiveState = { baseline: null, items: [], fresh: [] as number[], more: false };

/**
 * The state after a poll that returned `latest` (the newest matches, newest first, at most
 * `limit`). The first poll sets the baseline; later ones add the ids above it.
 */
export function liveUpdate(state: LiveState, latest: MatchItem[], limit: number): LiveState {
  const newest = latest.reduce((m, x) => Math.max(m, x.id), 0);
  if (state.baseline === null) return { baseline: newest, items: latest, fresh: [], more: false };
  const fresh = new Set(state.fresh);
  const added = latest.filter((m) => m.id > (state.baseline ?? 0) && !fresh.has(m.id));
  added.forEach((m) => fresh.add(m.id));
  const allNew = latest.length >= limit && latest.every((m) => m.id > (state.baseline ?? 0));
  return { baseline: state.baseline, items: latest, fresh: [...fresh], more: state.more || (allNew && added.length === latest.length) };
}

/** Call `tick` every `ms` while the tab is visible, and at once when it becomes visible again. */
export function usePolling(tick: () => void, ms: number): void {
  const saved = useRef(tick);
  saved.current = tick;
  useEffect(() => {
    const run = () => {
      if (document.visibilityState !== 'hidden') saved.current();
    };
    const timer = window.setInterval(run, ms);
    document.addEventListener('visibilitychange', run);
    return () => {
      window.clearInterval(timer);
      document.removeEventListener('visibilitychange', run);
    };
  }, [ms]);
}
