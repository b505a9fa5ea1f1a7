import { configure, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { apiError, fakeServer, json, renderSignedIn, type Handler } from './support';
import { HolderView } from '../src/pages/Holders';
import { NoticeDetail } from '../src/pages/Notices';
import { RemovalStatsView, WatchTimeline } from '../src/pages/Removals';
import type { Holder, Notice, RemovalDetail, RemovalStats, Role } from '../src/api/types';
import {
  defaultRecipient,
  draftFromMatches,
  hoursParts,
  licensedBody,
  noticeActions,
  noticeReference,
  normalizeDomainInput,
  ownerChoices,
  readableFiles,
  timeline,
} from '../src/lib/takedown';

// These pages render large antd tables and drawers: on a loaded 2-core machine one step can
// take seconds. Generous waits keep the tests about behaviour, not speed.
configure({ asyncUtilTimeout: 15000 });
vi.setConfig({ testTimeout: 60000 });

beforeEach(() => {
  localStorage.clear();
  sessionStorage.clear();
});
afterEach(() => vi.unstubAllGlobals());

// ---------------------------------------------------------------------------------------

describe('takedown logic', () => {
  it('names notices as their documents do', () => {
    expect(noticeReference(42)).toBe('ZW-N-000042');
    expect(noticeReference(1234567)).toBe('ZW-N-1234567');
  });

  it('offers each action only in the states that allow it', () => {
    expect(noticeActions({ state: 'draft' }, 'analyst', 0)).toEqual({ send: true, export: true, cancel: true, resolve: false, followUp: false });
    expect(noticeActions({ state: 'sent' }, 'admin', 0)).toEqual({ send: false, export: false, cancel: false, resolve: false, followUp: false });
    expect(noticeActions({ state: 'sent' }, 'holder', 2).followUp).toBe(true);
    expect(noticeActions({ state: 'exported' }, 'holder', 1)).toMatchObject({ send: false, export: true, followUp: true });
    expect(noticeActions({ state: 'sending' }, 'admin', 0).resolve).toBe(true);
    expect(noticeActions({ state: 'sending' }, 'analyst', 0).resolve).toBe(false);
    expect(noticeActions({ state: 'sending' }, 'admin', 0).send).toBe(false);
    expect(noticeActions({ state: 'cancelled' }, 'admin', 3)).toEqual({ send: false, export: false, cancel: false, resolve: false, followUp: false });
  });

  it('cleans licensed domains as the API does and points at rows that are not domains', () => {
    expect(normalizeDomainInput('https://Www.Example.com:8443/x?y#z')).toBe('www.example.com');
    expect(normalizeDomainInput('  ')).toBe('');
    expect(normalizeDomainInput('not a domain')).toBeNull();
    expect(normalizeDomainInput('-bad.example')).toBeNull();
    expect(normalizeDomainInput('例子.中国')).toBe('例子.中国');
    expect(
      licensedBody([
        { domain: 'partner.example' },
        { domain: '' },
        { domain: 'HTTPS://partner.example/', work_id: null },
        { domain: 'partner.example', work_id: 7 },
        { domain: 'bad domain', work_id: 3 },
      ]),
    ).toEqual({ domains: [{ domain: 'partner.example' }, { domain: 'partner.example', work_id: 7 }], errors: [4] });
  });

  it('says durations in the unit that reads best', () => {
    expect(hoursParts(null)).toBeNull();
    expect(hoursParts(0.25)).toEqual({ value: '15', unit: 'min' });
    expect(hoursParts(1.0014)).toEqual({ value: '1.0', unit: 'h' });
    expect(hoursParts(30)).toEqual({ value: '30', unit: 'h' });
    expect(hoursParts(24 * 3.5)).toEqual({ value: '3.5', unit: 'd' });
  });

  it('proposes the notice’s own recipient, else the best suggestion', () => {
    const s = [{ address: 'a@x.example', source: { kind: 'page' }, reason: '' }, { address: 'abuse@x.example', source: { kind: 'conventional' }, reason: '' }];
    expect(defaultRecipient(null, s)).toBe('a@x.example');
    expect(defaultRecipient(' me@y.example ', s)).toBe('me@y.example');
    expect(defaultRecipient(null, [])).toBe('');
  });

  it('lists the PDF and the HTML first', () => {
    expect(readableFiles([{ name: 'evidence-match-1-capture-1.zip' }, { name: 'notice.txt' }, { name: 'notice.html' }, { name: 'notice.pdf' }]).map((f) => f.name)).toEqual([
      'notice.pdf',
      'notice.html',
      'notice.txt',
      'evidence-match-1-capture-1.zip',
    ]);
  });

  it('drafts from the matches page for one site only', () => {
    const rows = [
      { id: 1, site: 'a.example', owner: 'o1', status: 'confirmed' },
      { id: 2, site: 'a.example', owner: 'o1', status: 'new' },
      { id: 3, site: 'b.example', owner: 'o2', status: 'confirmed' },
    ];
    expect(draftFromMatches({}, rows, [])).toBeNull();
    expect(draftFromMatches({ site: 'A.example' }, rows, [])).toEqual({ site: 'a.example', owner: 'o1' });
    expect(draftFromMatches({}, rows, [1, 2])).toEqual({ site: 'a.example', owner: 'o1', matchIds: [1] });
    expect(draftFromMatches({}, rows, [1, 3])).toBeNull();
    expect(draftFromMatches({}, rows.slice(0, 2), [])).toEqual({ site: 'a.example', owner: 'o1' });
  });

  it('offers every known owner once', () => {
    expect(ownerChoices([{ owner: 'b' }], [{ owner: 'a' }, { owner: 'b' }, { owner: '' }])).toEqual(['a', 'b']);
  });

  it('orders a page’s timeline: notices, transitions and the flag by time', () => {
    const d: RemovalDetail = {
      ...watch(5, 'up'),
      flagged_at: 9_000,
      events: [
        { at: 2_000, from: null, to: 'up', http_status: 200, detail: 'up' },
        { at: 4_000, from: 'up', to: 'changed', http_status: 200, detail: 'changed' },
      ],
      notices: [
        { id: 2, reference: 'ZW-N-000002', state: 'draft', sent_at: null, recipient: null, follow_up_of: 1 },
        { id: 1, reference: 'ZW-N-000001', state: 'sent', sent_at: 1_000, recipient: 'a@x.example', follow_up_of: null },
      ],
    };
    expect(timeline(d).map((i) => `${i.kind}@${i.at}`)).toEqual(['notice@1000', 'transition@2000', 'transition@4000', 'flagged@9000']);
  });
});

// ---------------------------------------------------------------------------------------

function holder(version: number, extra: Partial<Holder> = {}): Holder {
  return {
    owner: 'luoguan-books',
    profile: { legal_name: version ? '洛观书局' : '', contact_person: '', address: version ? '北京' : '', phone: version === 2 ? '010-2' : '', email: version ? 'r@luoguan.example' : '' },
    documents: [],
    licensed: [],
    version,
    updated_at: version ? 1_700_000_000_000 : 0,
    updated_by: version ? 'key:2 lg' : '',
    ...extra,
  };
}

describe('rights holder page', () => {
  it('saves the profile with the version it read', async () => {
    const calls = fakeServer('holder', (url, method, body) => {
      if (url === '/api/v1/holders/luoguan-books' && method === 'GET') return json(200, holder(0));
      if (url === '/api/v1/holders/luoguan-books/profile' && method === 'PUT') return json(200, { ...holder(1), profile: { ...holder(1).profile, ...JSON.parse(body!) } });
      if (url.startsWith('/api/v1/works')) return json(200, { items: [], next_cursor: null });
      return undefined;
    });
    const user = userEvent.setup();
    renderSignedIn(<HolderView owner="luoguan-books" />);
    await screen.findByText('尚未填写资料。发送下架通知前，须填写权利人名称、地址和电子邮箱。');
    await user.click(screen.getByTestId('profile-legal_name'));
    await user.paste('洛观书局');
    await user.click(screen.getByTestId('profile-email'));
    await user.paste('r@luoguan.example');
    await user.click(screen.getByTestId('profile-save'));
    await screen.findByText('资料已保存');
    const put = calls.find((c) => c.method === 'PUT')!;
    expect(JSON.parse(put.body!)).toEqual({ version: 0, legal_name: '洛观书局', contact_person: '', address: '', phone: '', email: 'r@luoguan.example' });
    await waitFor(() => expect(screen.getByTestId('holder-version')).toHaveAttribute('data-version', '1'));
  });

  it('on a conflict reloads what is stored and says so', async () => {
    let reads = 0;
    fakeServer('admin', (url, method) => {
      if (url === '/api/v1/holders/luoguan-books' && method === 'GET') return json(200, reads++ === 0 ? holder(1) : holder(2));
      if (url === '/api/v1/holders/luoguan-books/profile') return apiError(409, 'conflict', 'holder luoguan-books changed meanwhile');
      if (url.startsWith('/api/v1/works')) return json(200, { items: [], next_cursor: null });
      return undefined;
    });
    const user = userEvent.setup();
    renderSignedIn(<HolderView owner="luoguan-books" />);
    await waitFor(() => expect(screen.getByTestId('profile-legal_name')).toHaveValue('洛观书局'));
    await user.click(screen.getByTestId('profile-phone'));
    await user.paste('999');
    await user.click(screen.getByTestId('profile-save'));
    await screen.findByText('其他人刚刚修改了该权利人的资料，已重新加载最新内容，请核对后再保存。');
    await waitFor(() => expect(screen.getByTestId('profile-phone')).toHaveValue('010-2'));
    expect(screen.getByTestId('holder-version')).toHaveAttribute('data-version', '2');
  });

  it('saves licensed domains and tells how many matches were re-labelled', async () => {
    const calls = fakeServer('holder', (url, method, body) => {
      if (url === '/api/v1/holders/luoguan-books' && method === 'GET') return json(200, holder(3));
      if (url === '/api/v1/holders/luoguan-books/licensed') {
        const b = JSON.parse(body!);
        return json(200, { holder: { ...holder(4), licensed: b.domains.map((d: { domain: string }) => ({ ...d, added_at: 1, added_by: 'x' })) }, relabelled: { licensed: 3, unlicensed: 1 } });
      }
      if (url.startsWith('/api/v1/works')) return json(200, { items: [], next_cursor: null });
      return undefined;
    });
    const user = userEvent.setup();
    renderSignedIn(<HolderView owner="luoguan-books" />);
    await user.click(await screen.findByTestId('licensed-add'));
    await user.click(screen.getByTestId('licensed-domain'));
    await user.paste('https://Partner.Example/books');
    await user.click(screen.getByTestId('licensed-save'));
    await screen.findByText('授权站点已保存：3 条线索标记为已授权站点，1 条恢复为待审核。');
    expect(JSON.parse(calls.find((c) => c.url.endsWith('/licensed'))!.body!)).toEqual({ version: 3, domains: [{ domain: 'partner.example' }] });
  });

  it('saves the alert settings with the version it read, and refuses a bad address', async () => {
    const calls = fakeServer('holder', (url, method, body) => {
      if (url === '/api/v1/holders/luoguan-books' && method === 'GET') return json(200, holder(3));
      if (url === '/api/v1/holders/luoguan-books/alerts' && method === 'PUT') {
        const { version: _v, ...alerts } = JSON.parse(body!);
        return json(200, { ...holder(4), alerts });
      }
      if (url.startsWith('/api/v1/works')) return json(200, { items: [], next_cursor: null });
      return undefined;
    });
    const user = userEvent.setup();
    renderSignedIn(<HolderView owner="luoguan-books" />);
    await user.click(await screen.findByTestId('alerts-recipients'));
    await user.paste('not-an-address');
    await user.click(screen.getByTestId('alerts-save'));
    await screen.findByText('“not-an-address”不是有效的邮箱地址');
    expect(calls.some((c) => c.url.endsWith('/alerts'))).toBe(false);
    await user.clear(screen.getByTestId('alerts-recipients'));
    await user.paste('a@luoguan.example, b@luoguan.example\na@luoguan.example');
    await user.click(screen.getByTestId('alerts-save'));
    await screen.findByText('提醒设置已保存');
    expect(JSON.parse(calls.find((c) => c.url.endsWith('/alerts'))!.body!)).toEqual({
      version: 3,
      recipients: ['a@luoguan.example', 'b@luoguan.example'],
      min_score: 0.8,
      mode: 'immediate',
      max_per_hour: 6,
      lang: 'zh-CN',
    });
    await waitFor(() => expect(screen.getByTestId('holder-version')).toHaveAttribute('data-version', '4'));
  });

  it('refuses to send a row that is not a domain', async () => {
    const calls = fakeServer('holder', (url) => {
      if (url === '/api/v1/holders/luoguan-books') return json(200, holder(3));
      if (url.startsWith('/api/v1/works')) return json(200, { items: [], next_cursor: null });
      return undefined;
    });
    const user = userEvent.setup();
    renderSignedIn(<HolderView owner="luoguan-books" />);
    await user.click(await screen.findByTestId('licensed-add'));
    await user.click(screen.getByTestId('licensed-domain'));
    await user.paste('no such thing');
    await user.click(screen.getByTestId('licensed-save'));
    await screen.findByText('第 1 行不是有效的域名');
    expect(calls.some((c) => c.url.endsWith('/licensed'))).toBe(false);
  });

  it('is read-only for analysts', async () => {
    fakeServer('analyst', (url) => {
      if (url === '/api/v1/holders/luoguan-books') return json(200, holder(1, { licensed: [{ domain: 'partner.example', work_id: null, added_at: 1, added_by: 'key:1' }] }));
      if (url.startsWith('/api/v1/works')) return json(200, { items: [], next_cursor: null });
      return undefined;
    });
    renderSignedIn(<HolderView owner="luoguan-books" />, 'en');
    await screen.findByText('You can read holder details; only admins and the holder itself can change them.');
    expect(screen.queryByTestId('profile-save')).toBeNull();
    expect(screen.queryByTestId('document-upload')).toBeNull();
    expect(screen.queryByTestId('licensed-save')).toBeNull();
    expect(screen.getByTestId('profile-legal_name')).toBeDisabled();
    expect(screen.getByTestId('licensed-domain')).toHaveValue('partner.example');
  });
});

// ---------------------------------------------------------------------------------------

function notice(state: Notice['state'], extra: Partial<Notice> = {}): Notice {
  return {
    id: 7,
    key: 'notice:k',
    owner: 'luoguan-books',
    site: 'pirate.example',
    lang: 'zh-CN',
    state,
    match_ids: [11, 12],
    page_ids: [21, 22],
    subject: '侵权内容删除通知',
    recipient: null,
    files: [
      { name: 'notice.txt', media_type: 'text/plain', size: 10, sha256: 'a'.repeat(64) },
      { name: 'notice.pdf', media_type: 'application/pdf', size: 2048, sha256: 'b'.repeat(64) },
    ],
    follow_up_of: null,
    created_by: 'key:3 an',
    created_at: 1_700_000_000_000,
    message_id: '<zhiwen-notice-1@localhost>',
    sent_at: null,
    sent_by: null,
    smtp_response: null,
    version: 1,
    ...extra,
  };
}

function noticeServer(role: Role, first: Notice, on: Handler = () => undefined) {
  let current = first;
  const calls = fakeServer(role, (url, method, body) => {
    const mine = on(url, method, body);
    if (mine) {
      if (mine.ok && /\/notices\/7\/(send|export|resolve|cancel)$/.test(url)) mine.clone().json().then((n: Notice) => (current = n));
      return mine;
    }
    if (url === '/api/v1/notices/7') return json(200, current);
    if (url === '/api/v1/sites/pirate.example/contacts')
      return json(200, { items: [{ address: 'dmca@pirate.example', source: { kind: 'page', url: 'http://pirate.example/about' }, reason: 'on the page' }, { address: 'abuse@pirate.example', source: { kind: 'conventional' }, reason: 'RFC 2142' }] });
    if (url.startsWith('/api/v1/matches?')) return json(200, { items: [], next_cursor: null });
    if (url.startsWith('/api/v1/removals?')) return json(200, { items: [watch(21, 'up'), watch(22, 'removed')], next_cursor: null });
    return undefined;
  });
  return calls;
}

describe('notice detail', () => {
  it('fills the recipient from the site’s contacts and sends once, to the chosen address', async () => {
    const calls = noticeServer('analyst', notice('draft'), (url, method, body) =>
      url === '/api/v1/notices/7/send' && method === 'POST' ? json(200, notice('sent', { recipient: JSON.parse(body!).recipient, sent_at: 1_700_000_100_000, smtp_response: '250 OK' })) : undefined,
    );
    const user = userEvent.setup();
    renderSignedIn(<NoticeDetail id={7} />);
    await waitFor(() => expect(screen.getByTestId('recipient')).toHaveValue('dmca@pirate.example'));
    await user.click(screen.getAllByTestId('suggestion')[1]);
    expect(screen.getByTestId('recipient')).toHaveValue('abuse@pirate.example');
    await user.click(screen.getByTestId('notice-send'));
    await user.click(await screen.findByTestId('notice-send-ok'));
    await waitFor(() => expect(screen.getByTestId('notice-detail')).toHaveAttribute('data-state', 'sent'));
    const sends = calls.filter((c) => c.url === '/api/v1/notices/7/send');
    expect(sends).toHaveLength(1);
    expect(JSON.parse(sends[0].body!)).toEqual({ recipient: 'abuse@pirate.example' });
    expect(screen.queryByTestId('notice-send')).toBeNull();
    expect(screen.getByTestId('notice-smtp')).toHaveTextContent('250 OK');
    expect(screen.getByTestId('notice-message-id')).toHaveTextContent('<zhiwen-notice-1@localhost>');
  });

  it('keeps Send disabled without a valid recipient', async () => {
    fakeServer('analyst', (url) => {
      if (url === '/api/v1/notices/7') return json(200, notice('draft'));
      if (url.startsWith('/api/v1/sites/')) return json(200, { items: [] });
      if (url.startsWith('/api/v1/matches?')) return json(200, { items: [], next_cursor: null });
      return undefined;
    });
    const user = userEvent.setup();
    renderSignedIn(<NoticeDetail id={7} />);
    await screen.findByText('没有找到该网站的联系地址，请手动填写。');
    expect(screen.getByTestId('notice-send')).toBeDisabled();
    await user.click(screen.getByTestId('recipient'));
    await user.paste('not-an-address');
    expect(screen.getByTestId('notice-send')).toBeDisabled();
    await user.clear(screen.getByTestId('recipient'));
    await user.click(screen.getByTestId('recipient'));
    await user.paste('legal@pirate.example');
    expect(screen.getByTestId('notice-send')).toBeEnabled();
  });

  it('shows why a send failed, and the state the server holds afterwards', async () => {
    noticeServer('analyst', notice('draft'), (url) =>
      url === '/api/v1/notices/7/send' ? apiError(503, 'unavailable', 'sending through smtp://relay failed: connection refused') : undefined,
    );
    const user = userEvent.setup();
    renderSignedIn(<NoticeDetail id={7} />);
    await waitFor(() => expect(screen.getByTestId('recipient')).toHaveValue('dmca@pirate.example'));
    await user.click(screen.getByTestId('notice-send'));
    await user.click(await screen.findByTestId('notice-send-ok'));
    expect(await screen.findByTestId('notice-error')).toHaveTextContent('发送失败：sending through smtp://relay failed: connection refused');
    expect(screen.getByTestId('notice-detail')).toHaveAttribute('data-state', 'draft');
  });

  it('lets an admin record the outcome of a send left sending; an analyst only sees the hint', async () => {
    noticeServer('admin', notice('sending', { recipient: 'dmca@pirate.example' }), (url, _m, body) =>
      url === '/api/v1/notices/7/resolve' ? json(200, notice(JSON.parse(body!).delivered ? 'sent' : 'draft', { recipient: 'dmca@pirate.example' })) : undefined,
    );
    const user = userEvent.setup();
    const { unmount } = renderSignedIn(<NoticeDetail id={7} />);
    expect(await screen.findByTestId('notice-sending-hint')).toBeInTheDocument();
    expect(screen.queryByTestId('notice-send')).toBeNull();
    await user.click(screen.getByTestId('notice-resolve-delivered'));
    await waitFor(() => expect(screen.getByTestId('notice-detail')).toHaveAttribute('data-state', 'sent'));
    unmount();
    vi.unstubAllGlobals();
    noticeServer('analyst', notice('sending'));
    renderSignedIn(<NoticeDetail id={7} />);
    expect(await screen.findByTestId('notice-sending-hint')).toBeInTheDocument();
    expect(screen.queryByTestId('notice-resolve-delivered')).toBeNull();
  });

  it('offers a second notice when pages of a sent notice are still up', async () => {
    const calls = noticeServer('holder', notice('sent', { recipient: 'dmca@pirate.example', sent_at: 1_700_000_100_000 }), (url, method) =>
      url === '/api/v1/notices' && method === 'POST' ? json(201, notice('draft', { id: 8, follow_up_of: 7 })) : undefined,
    );
    const opened: number[] = [];
    const user = userEvent.setup();
    renderSignedIn(<NoticeDetail id={7} onOpen={(id) => opened.push(id)} />);
    expect(await screen.findByTestId('notice-still-up')).toHaveTextContent('通知中有 1 个网页仍未删除。');
    await user.click(screen.getByTestId('notice-follow-up'));
    await waitFor(() => expect(opened).toEqual([8]));
    expect(JSON.parse(calls.find((c) => c.url === '/api/v1/notices' && c.method === 'POST')!.body!)).toEqual({ owner: 'luoguan-books', site: 'pirate.example', follow_up_of: 7, lang: 'zh-CN' });
    // a delivered notice suggests no recipients and offers no send
    expect(calls.some((c) => c.url.includes('/contacts'))).toBe(false);
    expect(screen.queryByTestId('notice-send')).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------

function watch(pageId: number, state: 'up' | 'changed' | 'removed'): RemovalDetail {
  return {
    page_id: pageId,
    url: `http://pirate.example/book/${pageId}.html`,
    site: 'pirate.example',
    owner: 'luoguan-books',
    state,
    since: 1_000,
    removed_at: state === 'removed' ? 1_000 : null,
    flagged_at: null,
    last_checked_at: 1_000,
    last_error: null,
    unreachable_checks: 0,
    checks: 1,
    events: [],
    notices: [],
  };
}

const figures = (key: string) => ({
  key,
  notices_delivered: 1,
  pages_noticed: 3,
  pages_removed: 2,
  pages_still_up: 1,
  pages_unchecked: 0,
  removal_rate: 2 / 3,
  median_hours_to_removal: 1.0014,
  p90_hours_to_removal: 50,
  pages_flagged: 1,
  matches_licensed: 4,
  matches_infringing: 3,
});

describe('removal tracking', () => {
  const stats: RemovalStats = { at: 1_700_000_000_000, owner: null, total: figures(''), by_site: [figures('pirate.example')], by_holder: [figures('luoguan-books')] };

  it('shows the totals in words: rate, 2 of 3, median and p90, still up, flagged, licensed vs infringing', async () => {
    fakeServer('admin', () => undefined);
    renderSignedIn(<RemovalStatsView stats={stats} perHolder />);
    const rate = await screen.findByTestId('stat-removal-rate');
    expect(rate).toHaveTextContent('67%');
    expect(screen.getByTestId('removal-rate-of')).toHaveTextContent('已删除 2 / 3 个网页');
    expect(screen.getByTestId('stat-median')).toHaveTextContent('1.0 小时');
    expect(screen.getByTestId('stat-p90')).toHaveTextContent('2.1 天');
    expect(screen.getByTestId('stat-still-up')).toHaveTextContent('1');
    expect(screen.getByTestId('stat-flagged')).toHaveTextContent('1');
    expect(screen.getByTestId('stat-licensed')).toHaveTextContent('4 / 3');
    expect(within(screen.getByTestId('removals-by-site')).getByText('pirate.example')).toBeInTheDocument();
    expect(within(screen.getByTestId('removals-by-holder')).getByText('luoguan-books')).toBeInTheDocument();
  });

  it('has no per-holder table for a holder', async () => {
    fakeServer('holder', () => undefined);
    renderSignedIn(<RemovalStatsView stats={{ ...stats, by_holder: [] }} perHolder={false} />, 'en');
    expect(await screen.findByTestId('removal-rate-of')).toHaveTextContent('2 of 3 pages removed');
    expect(screen.queryByTestId('removals-by-holder')).toBeNull();
  });

  it('draws a page’s timeline: the notice, every transition, the flag', async () => {
    fakeServer('holder', (url) =>
      url === '/api/v1/removals/21'
        ? json(200, {
            ...watch(21, 'removed'),
            flagged_at: null,
            events: [
              { at: 2_000_000, from: null, to: 'up', http_status: 200, detail: 'up (HTTP 200), as stored' },
              { at: 3_000_000, from: 'up', to: 'removed', http_status: 404, detail: 'HTTP 404' },
            ],
            notices: [{ id: 7, reference: 'ZW-N-000007', state: 'sent', sent_at: 1_000_000, recipient: 'dmca@pirate.example', follow_up_of: null }],
          })
        : undefined,
    );
    renderSignedIn(<WatchTimeline pageId={21} />);
    await waitFor(() => expect(screen.getAllByTestId('timeline-item')).toHaveLength(3));
    const items = screen.getAllByTestId('timeline-item');
    expect(items.map((i) => i.getAttribute('data-kind'))).toEqual(['notice', 'transition', 'transition']);
    expect(items[0]).toHaveTextContent('发出通知 ZW-N-000007');
    expect(items[1]).toHaveTextContent('首次复查：仍在线');
    expect(items[2]).toHaveTextContent('仍在线 → 已删除');
    expect(items[2]).toHaveTextContent('HTTP 404');
  });
});
