import { useCallback, useEffect, useRef, useState } from 'react';
import type { Page } from '../api/types';

export interface Paged<T> {
  items: T[];
  /** The cursor of the next page; `null` once the last page is shown. */
  cursor: string | null;
  loading: boolean;
  error: unknown;
  /** Append the next page. */
  loadMore: () => void;
  /** Load the first page again (after a change, or to retry). */
  reload: () => void;
}

/**
 * A cursor-paged list, the one way the dashboard's tables load: the first page when `deps`
 * change (or on `reload`), the next one appended on `loadMore`. An answer to an older request
 * (filters changed meanwhile) is ignored, so a slow first page never overwrites a newer one.
 */
export function usePaged<T>(fetch: (cursor: string | undefined) => Promise<Page<T>>, deps: unknown[]): Paged<T> {
  const [items, setItems] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>();
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  const next = useRef<string | null>(null);
  const fetchRef = useRef(fetch);
  fetchRef.current = fetch;

  const run = useCallback((more: boolean) => {
    const mine = ++seq.current;
    setLoading(true);
    fetchRef.current(more ? (next.current ?? undefined) : undefined).then(
      (page) => {
        if (seq.current !== mine) return;
        setItems((old) => (more ? [...old, ...page.items] : page.items));
        next.current = page.next_cursor;
        setCursor(page.next_cursor);
        setError(undefined);
        setLoading(false);
      },
      (e: unknown) => {
        if (seq.current !== mine) return;
        setError(e);
        setLoading(false);
      },
    );
  }, []);

  useEffect(() => {
    run(false);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const loadMore = useCallback(() => run(true), [run]);
  const reload = useCallback(() => setTick((x) => x + 1), []);
  return { items, cursor, loading, error, loadMore, reload };
}
