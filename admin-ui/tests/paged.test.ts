import { act, renderHook, waitFor } from '@testing-library/react';
import type { Page } from '../src/api/types';
import { usePaged } from '../src/lib/usePaged';

/** A fetch whose answers the test releases by hand, in any order. */
function controlled() {
  const calls: { filter: string; cursor: string | undefined; answer: (p: Page<string>) => void }[] = [];
  const fetch = (filter: string) => (cursor: string | undefined) =>
    new Promise<Page<string>>((resolve) => calls.push({ filter, cursor, answer: resolve }));
  return { calls, fetch };
}

describe('usePaged', () => {
  it('loads the first page, appends the next with its cursor, and stops at the end', async () => {
    const { calls, fetch } = controlled();
    const { result } = renderHook(() => usePaged(fetch('all'), ['all']));
    expect(result.current.loading).toBe(true);
    await act(async () => calls[0].answer({ items: ['a', 'b'], next_cursor: 'c2' }));
    expect(result.current.items).toEqual(['a', 'b']);
    expect(result.current.cursor).toBe('c2');
    act(() => result.current.loadMore());
    expect(calls[1].cursor).toBe('c2');
    await act(async () => calls[1].answer({ items: ['c'], next_cursor: null }));
    expect(result.current.items).toEqual(['a', 'b', 'c']);
    expect(result.current.cursor).toBeNull();
    expect(result.current.loading).toBe(false);
  });

  it('ignores the answer to an older filter that arrives after the newer one', async () => {
    const { calls, fetch } = controlled();
    const { result, rerender } = renderHook(({ f }) => usePaged(fetch(f), [f]), { initialProps: { f: 'old' } });
    rerender({ f: 'new' });
    await waitFor(() => expect(calls.map((c) => c.filter)).toEqual(['old', 'new']));
    await act(async () => calls[1].answer({ items: ['new-1'], next_cursor: null }));
    await act(async () => calls[0].answer({ items: ['old-1'], next_cursor: 'stale' }));
    expect(result.current.items).toEqual(['new-1']);
    expect(result.current.cursor).toBeNull();
  });

  it('keeps the error until a reload answers, then shows the first page again', async () => {
    let fail = true;
    const fetch = (cursor: string | undefined) =>
      fail ? Promise.reject(new Error('down')) : Promise.resolve({ items: [cursor ?? 'first'], next_cursor: null });
    const { result } = renderHook(() => usePaged(fetch, []));
    await waitFor(() => expect(result.current.error).toBeInstanceOf(Error));
    fail = false;
    act(() => result.current.reload());
    await waitFor(() => expect(result.current.items).toEqual(['first']));
    expect(result.current.error).toBeUndefined();
  });
});
