import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { App as AntApp } from 'antd';
import { SignedIn } from './support';
import { I18nProvider } from '../src/i18n/I18nProvider';
import { dictionaries } from '../src/i18n/dict';
import { AuthProvider } from '../src/auth';
import { EvidenceCaptures, newestFirst } from '../src/pages/EvidenceCaptures';
import { ApiClient } from '../src/api/client';
import { fileSize, shortHash } from '../src/lib/format';
import type { Capture, CaptureList, Verification } from '../src/api/types';

type Call = { url: string; method: string; auth: string | null };

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });

const KEY = 'ab'.repeat(32);
const SHA = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

function capture(id: number, at: string, extra: Partial<Capture> = {}): Capture {
  return {
    id,
    match_id: 7,
    leaf_index: id - 1,
    captured_at: at,
    reason: id === 1 ? 'first_match' : 'on_demand',
    url: 'http://pirate.example/book/1.html',
    files: [
      { name: 'capture/page.warc', media_type: 'application/warc', size: 12_345, sha256: SHA },
      { name: 'capture/screenshot.png', media_type: 'image/png', size: 2_048_000, sha256: 'f'.repeat(64) },
    ],
    pruned_at: null,
    record: { source: 'fetched', final_url: 'http://pirate.example/book/1.html?p=1', remote_ip: '203.0.113.9', notes: ['robots.txt allowed'] },
    ...extra,
  };
}

const verified: Verification = {
  capture_id: 2,
  ok: true,
  summary: 'verified: 6 checks',
  checks: [
    { what: 'signature', ok: true, detail: 'tree head signed by the key' },
    { what: 'inclusion', ok: true, detail: 'leaf 1 of 2' },
  ],
  package_bytes: 40_960,
  tree_size: 2,
  public_key: KEY,
};

/** A fake server: `captures` answers the list calls in turn (the last one repeats). */
function fakeServer(opts: { captures: (CaptureList | Response)[]; verification?: Verification | Response }) {
  const calls: Call[] = [];
  let listCalls = 0;
  const fn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    const method = (init?.method ?? 'GET').toUpperCase();
    calls.push({ url, method, auth: new Headers(init?.headers).get('Authorization') });
    if (url === '/api/v1/me') return json(200, { key_id: 1, name: null, role: 'admin', owner: null, expires_at: null, created_at: 0 });
    if (url === '/api/v1/matches/7/captures' && method === 'POST') return json(202, { task_id: 99, key: 'capture:7:on_demand:1', state: 'queued' });
    if (url === '/api/v1/matches/7/captures') {
      const r = opts.captures[Math.min(listCalls++, opts.captures.length - 1)];
      return r instanceof Response ? r.clone() : json(200, r);
    }
    if (/\/captures\/\d+\/files\//.test(url)) return new Response(new Blob([new Uint8Array([137, 80, 78, 71])], { type: 'image/png' }), { status: 200 });
    const v = /\/captures\/(\d+)\/verification$/.exec(url);
    if (v) {
      const body = opts.verification ?? verified;
      return body instanceof Response ? body.clone() : json(200, { ...body, capture_id: Number(v[1]) });
    }
    return json(404, { error: { code: 'not_found', message: url } });
  }) as typeof fetch;
  vi.stubGlobal('fetch', fn);
  return { calls, listCalls: () => listCalls };
}

function renderCaptures(lang: 'zh' | 'en' = 'zh') {
  return render(
    <I18nProvider lang={lang}>
      <AntApp>
        <AuthProvider>
          <SignedIn>
            <EvidenceCaptures matchId={7} pollMs={10} pollFor={3000} />
          </SignedIn>
        </AuthProvider>
      </AntApp>
    </I18nProvider>,
  );
}

beforeEach(() => {
  localStorage.clear();
  sessionStorage.clear();
  URL.createObjectURL = vi.fn(() => 'blob:http://localhost/shot');
  URL.revokeObjectURL = vi.fn();
});
afterEach(() => vi.unstubAllGlobals());

describe('evidence captures', () => {
  it('lists the captures newest first with reason, source, final URL, IP, notes and files', async () => {
    fakeServer({
      captures: [{ items: [capture(1, '2026-11-20T08:00:00Z'), capture(2, '2026-11-21T09:30:00Z')], first_capture_pending: false, public_key: KEY }],
    });
    renderCaptures('zh');
    const items = await screen.findAllByTestId('capture-item');
    expect(items.map((i) => i.getAttribute('data-capture-id'))).toEqual(['2', '1']);
    expect(items[0]).toHaveAttribute('data-selected', 'true');
    expect(within(items[0]).getByTestId('capture-reason')).toHaveTextContent('手动取证');
    expect(within(items[1]).getByTestId('capture-reason')).toHaveTextContent('发现时自动取证');
    expect(within(items[0]).getByTestId('capture-source')).toHaveTextContent('实时抓取');
    expect(within(items[0]).getByTestId('capture-final-url')).toHaveTextContent('http://pirate.example/book/1.html?p=1');
    expect(items[0]).toHaveTextContent('203.0.113.9');
    expect(within(items[0]).getByTestId('capture-notes')).toHaveTextContent('robots.txt allowed');
    const files = within(items[0]).getByTestId('capture-files');
    expect(files).toHaveTextContent('capture/page.warc · 12 KB · e3b0c44298fc…');
    expect(files).toHaveTextContent('capture/screenshot.png · 2.0 MB');
    expect(screen.getByTestId('public-key')).toHaveTextContent(KEY);
    expect(screen.getByTestId('verify-hint')).toHaveTextContent(`离线验证：zhiwen evidence verify 文件.zip --public-key ${KEY}`);
    expect(await screen.findByTestId('verification-title')).toHaveTextContent('验证通过');
  });

  it('fetches the screenshot with the key and shows it as an object URL', async () => {
    const { calls } = fakeServer({ captures: [{ items: [capture(2, '2026-11-21T09:30:00Z')], first_capture_pending: false, public_key: KEY }] });
    renderCaptures();
    const img = await screen.findByTestId('capture-screenshot');
    expect(img).toHaveAttribute('src', 'blob:http://localhost/shot');
    expect(screen.getByTestId('screenshot-link')).toHaveAttribute('href', 'blob:http://localhost/shot');
    const shot = calls.find((c) => c.url.includes('/files/'));
    expect(shot?.url).toBe('/api/v1/matches/7/captures/2/files/capture/screenshot.png');
    expect(shot?.auth).toBe('Bearer zw_testkey');
  });

  it('says when a capture has no screenshot and asks for none', async () => {
    const c = capture(1, '2026-11-21T09:30:00Z', {
      files: [{ name: 'capture/page.warc', media_type: 'application/warc', size: 10, sha256: SHA }],
      record: { source: 'stored', notes: ['no screenshot: the page was not fetched live'] },
    });
    const { calls } = fakeServer({ captures: [{ items: [c], first_capture_pending: false, public_key: KEY }] });
    renderCaptures('en');
    expect(await screen.findByTestId('no-screenshot')).toHaveTextContent('This capture has no screenshot');
    expect(screen.getByTestId('capture-source')).toHaveTextContent('stored copy');
    expect(calls.some((x) => x.url.includes('/files/'))).toBe(false);
  });

  it('captures again: posts, shows it is pending, polls until the new capture appears and selects it', async () => {
    const one = { items: [capture(1, '2026-11-20T08:00:00Z')], first_capture_pending: false, public_key: KEY };
    const two = { ...one, items: [...one.items, capture(2, '2026-11-21T09:30:00Z')] };
    const server = fakeServer({ captures: [one, one, one, two] });
    const user = userEvent.setup();
    renderCaptures('zh');
    await screen.findAllByTestId('capture-item');
    await user.click(screen.getByTestId('capture-again'));
    expect(await screen.findByTestId('capture-pending')).toHaveTextContent('正在取证，请稍候…');
    expect(server.calls.filter((c) => c.method === 'POST' && c.url === '/api/v1/matches/7/captures')).toHaveLength(1);
    await waitFor(() => expect(screen.getAllByTestId('capture-item')).toHaveLength(2));
    expect(server.listCalls()).toBeGreaterThanOrEqual(4);
    expect(screen.getAllByTestId('capture-item')[0]).toHaveAttribute('data-capture-id', '2');
    expect(screen.getAllByTestId('capture-item')[0]).toHaveAttribute('data-selected', 'true');
    await waitFor(() => expect(screen.queryByTestId('capture-pending')).toBeNull());
    await waitFor(() => expect(server.calls.some((c) => c.url === '/api/v1/matches/7/captures/2/verification')).toBe(true));
  });

  it('shows what failed when the package does not verify', async () => {
    fakeServer({
      captures: [{ items: [capture(2, '2026-11-21T09:30:00Z')], first_capture_pending: false, public_key: KEY }],
      verification: {
        ...verified,
        ok: false,
        summary: 'NOT verified: capture/page.warc was changed',
        checks: [
          { what: 'signature', ok: true, detail: 'tree head signed by the key' },
          { what: 'file capture/page.warc', ok: false, detail: 'capture/page.warc was changed' },
        ],
      },
    });
    renderCaptures('en');
    const v = await screen.findByTestId('verification');
    expect(v).toHaveAttribute('data-ok', 'false');
    expect(screen.getByTestId('verification-title')).toHaveTextContent('Not verified');
    expect(screen.getByTestId('verification-summary')).toHaveTextContent('NOT verified: capture/page.warc was changed');
    const checks = within(screen.getByTestId('verification-checks')).getAllByRole('listitem');
    expect(checks[0]).toHaveAttribute('data-ok', 'false');
    expect(checks[0]).toHaveTextContent('file capture/page.warc · capture/page.warc was changed');
  });

  it('a server without captures (501) gets a quiet note, not an error page', async () => {
    fakeServer({ captures: [json(501, { error: { code: 'not_implemented', message: 'evidence captures are not enabled on this server' } })] });
    renderCaptures('en');
    expect(await screen.findByTestId('captures-disabled')).toHaveTextContent('This server does not make evidence captures.');
    expect(screen.queryByTestId('error-message')).toBeNull();
    expect(screen.queryByTestId('capture-again')).toBeNull();
  });

  it('other errors use the usual error state', async () => {
    fakeServer({ captures: [json(403, { error: { code: 'forbidden', message: 'no' } })] });
    renderCaptures('zh');
    expect(await screen.findByTestId('error-message')).toHaveTextContent('您的账号没有权限执行此操作');
  });

  it('says the first capture is queued, then shows it when it is made', async () => {
    const queued = { items: [], first_capture_pending: true, public_key: KEY };
    const done = { items: [capture(1, '2026-11-21T09:30:00Z')], first_capture_pending: false, public_key: KEY };
    fakeServer({ captures: [queued, queued, done] });
    renderCaptures('zh');
    expect(await screen.findByTestId('captures-queued')).toHaveTextContent('取证排队中');
    await screen.findByTestId('capture-item');
  });

  it('says there is none yet when nothing is queued', async () => {
    fakeServer({ captures: [{ items: [], first_capture_pending: false, public_key: KEY }] });
    renderCaptures('en');
    expect(await screen.findByTestId('captures-empty')).toHaveTextContent('No captures yet');
    expect(screen.getByTestId('download-package')).toBeDisabled();
  });
});

describe('captures in the API client', () => {
  it('downloads the package of a capture with the server file name', async () => {
    const calls: string[] = [];
    const fn = (async (url: RequestInfo | URL) => {
      calls.push(String(url));
      return new Response('PK', { status: 200, headers: { 'Content-Disposition': 'attachment; filename="evidence-match-7-capture-2.zip"' } });
    }) as typeof fetch;
    const { blob, filename } = await new ApiClient({ key: 'k', fetch: fn }).evidencePackage(7, 2);
    expect(calls[0]).toBe('/api/v1/matches/7/evidence-package?capture=2');
    expect(filename).toBe('evidence-match-7-capture-2.zip');
    expect(blob.size).toBe(2);
  });

  it('helpers: newest first, file sizes, short hashes', () => {
    expect(newestFirst([capture(1, '2026-11-20T08:00:00Z'), capture(3, '2026-11-22T08:00:00Z'), capture(2, '2026-11-21T08:00:00Z')]).map((c) => c.id)).toEqual([3, 2, 1]);
    expect(fileSize(812)).toBe('812 B');
    expect(fileSize(12_345)).toBe('12 KB');
    expect(fileSize(5_000)).toBe('4.9 KB');
    expect(fileSize(3 * 1024 * 1024)).toBe('3.0 MB');
    expect(shortHash(SHA)).toBe('e3b0c44298fc…');
  });

  it('every capture text is in both languages', () => {
    const keys = Object.keys(dictionaries.zh).filter((k) => k.startsWith('capture.'));
    expect(keys.length).toBeGreaterThan(20);
    for (const k of keys) {
      expect(dictionaries.en[k as keyof typeof dictionaries.en], k).toBeTruthy();
      expect(dictionaries.zh[k as keyof typeof dictionaries.zh], k).toBeTruthy();
    }
  });
});
