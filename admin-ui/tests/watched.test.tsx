import { configure, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { fakeServer, json, renderSignedIn } from './support';
import { LiveMatches } from '../src/pages/Overview';
import { WatchedSites } from '../src/pages/WatchedSites';
import type { MatchItem, WatchedSite } from '../src/api/types';
import { LIVE_EMPTY, liveUpdate } from '../src/lib/live';
import { siteSchedule, splitLines } from '../src/lib/watched';

configure({ asyncUtilTimeout: 15000 });
vi.setConfig({ testTimeout: 60000 });

beforeEach(() => {
  localStorage.clear();
  sessionStorage.clear();
});

function match(id: number): MatchItem {
  return {
    id,
    work_id: 1,
    work_title: `红楼梦 第${id}回`,
    owner: 'luoguan-books',
    section_id: id,
    section_ordinal: id,
    section_title: '',
    page_id: 100 + id,
    url: `http://pirate.example/${id}.html`,
    site: 'pirate.example',
    kind: 'identical',
    score: 0.9,
    duplicate: false,
    copied_chars: 3000,
    coverage: 0.95,
    first_seen: 1_790_000_000_000 + id,
    last_seen: 1_790_000_000_000 + id,
    status: 'new',
  };
}

const site: WatchedSite = {
  id: 'pirate.example',
  owner: 'luoguan-books',
  holders: ['luoguan-books'],
  host: 'pirate.example',
  entry_points: [
    { url: 'http://pirate.example/rss.xml', last_visit: 1_790_000_000_000, next_visit: 1_790_000_120_000, interval_secs: 120, visits: 5, not_modified: 3, visits_with_new: 2, visits_with_copies: 1, last_outcome: '304' },
    { url: 'http://pirate.example/book/1/', last_visit: 1_790_000_060_000, next_visit: 1_790_000_090_000, interval_secs: 60, visits: 4, not_modified: 4, visits_with_new: 0, visits_with_copies: 0, last_outcome: '304' },
  ],
  chapter_patterns: ['/book/1/\\d+\\.html$'],
  min_delay_secs: null,
  created_at: 1_789_000_000_000,
  updated_at: 1_789_000_000_000,
  updated_by: 'key:1',
  version: 3,
};

describe('live matches', () => {
  it('marks the matches above the first poll as new, once each', () => {
    let s = liveUpdate(LIVE_EMPTY, [match(3), match(2)], 20);
    expect(s.baseline).toBe(3);
    expect(s.fresh).toEqual([]);
    s = liveUpdate(s, [match(5), match(4), match(3)], 20);
    expect(s.fresh.sort()).toEqual([4, 5]);
    s = liveUpdate(s, [match(6), match(5), match(4)], 20);
    expect(s.fresh.sort()).toEqual([4, 5, 6]);
    expect(s.more).toBe(false);
    // A poll of nothing but new matches: more may have come than one page shows.
    s = liveUpdate(s, [match(8), match(7)], 2);
    expect(s.more).toBe(true);
  });

  it('polls and shows a match found after the page opened', async () => {
    let newest = 2;
    const calls = fakeServer('holder', (url) => {
      if (url.startsWith('/api/v1/matches?')) {
        const items = [];
        for (let id = newest; id >= 1; id--) items.push(match(id));
        return json(200, { items, next_cursor: null });
      }
      return undefined;
    });
    renderSignedIn(<LiveMatches pollMs={100} />);
    expect(await screen.findByText('红楼梦 第2回')).toBeInTheDocument();
    expect(screen.queryByTestId('live-new')).toBeNull();
    expect(calls.some((c) => c.url.includes('sort=-id'))).toBe(true);
    newest = 3;
    expect(await screen.findByText('红楼梦 第3回')).toBeInTheDocument();
    await waitFor(() => expect(screen.getAllByTestId('live-new')).toHaveLength(1));
    expect(screen.getByTestId('live-fresh')).toHaveTextContent('打开本页后新增 1 条');
  });
});

describe('watched sites', () => {
  it('sums a site schedule over its entry points', () => {
    const k = siteSchedule(site);
    expect(k).toEqual({ lastVisit: 1_790_000_060_000, nextVisit: 1_790_000_090_000, interval: 60, visits: 9, notModified: 7, withNew: 2, withCopies: 1 });
    expect(siteSchedule({ ...site, entry_points: [{ ...site.entry_points[0], visits: 0, not_modified: 0, visits_with_new: 0, visits_with_copies: 0, last_visit: null, interval_secs: 0 }] }).nextVisit).toBeNull();
    expect(splitLines(' http://a/1 \r\n\n  http://a/2\n')).toEqual(['http://a/1', 'http://a/2']);
  });

  it('lists the sites and lets a holder add one for itself', async () => {
    const calls = fakeServer('holder', (url, method) => {
      if (url === '/api/v1/watched-sites' && method === 'GET') return json(200, { items: [site] });
      if (url === '/api/v1/watched-sites' && method === 'POST') return json(201, { outcome: 'inserted', site: { ...site, id: 'b.example', host: 'b.example' } });
      return undefined;
    });
    renderSignedIn(<WatchedSites />);
    expect(await screen.findByText('pirate.example')).toBeInTheDocument();
    expect(screen.getByTestId('watched-visits')).toHaveTextContent('9 次，7 次无变化，2 次有新章节');
    expect(screen.queryByTestId('watched-add-owner')).toBeNull();
    const user = userEvent.setup();
    await user.type(screen.getByTestId('watched-add-entries'), 'http://b.example/rss.xml{enter}http://b.example/list/');
    await user.type(screen.getByTestId('watched-add-delay'), '5');
    await user.click(screen.getByTestId('watched-add-submit'));
    expect(await screen.findByText('已开始监测 b.example')).toBeInTheDocument();
    const post = calls.find((c) => c.method === 'POST');
    expect(JSON.parse(post?.body ?? '{}')).toEqual({ entry_points: ['http://b.example/rss.xml', 'http://b.example/list/'], chapter_patterns: [], min_delay_secs: 5 });
  });

  it('refuses an empty list of entry points before asking the server', async () => {
    const calls = fakeServer('admin', (url, method) => (url.startsWith('/api/v1/watched-sites') && method === 'GET' ? json(200, { items: [] }) : undefined));
    renderSignedIn(<WatchedSites />, 'en');
    expect(await screen.findByText('No site is watched yet')).toBeInTheDocument();
    const user = userEvent.setup();
    await user.type(screen.getByTestId('watched-add-owner'), 'luoguan-books');
    await user.click(screen.getByTestId('watched-add-submit'));
    expect(await screen.findByText('At least one entry point is required')).toBeInTheDocument();
    expect(calls.some((c) => c.method === 'POST')).toBe(false);
  });

  it('gives an analyst the list without the forms', async () => {
    const shared = { ...site, holders: ['luoguan-books', 'jinling-press'] };
    fakeServer('analyst', (url) => (url.startsWith('/api/v1/watched-sites') ? json(200, { items: [shared] }) : undefined));
    renderSignedIn(<WatchedSites />);
    const table = await screen.findByTestId('watched-table');
    expect(within(table).getByText('pirate.example')).toBeInTheDocument();
    expect(within(table).getByText('luoguan-books、jinling-press')).toBeInTheDocument();
    expect(screen.queryByTestId('watched-add')).toBeNull();
    expect(screen.queryByTestId('watched-remove')).toBeNull();
  });
});
