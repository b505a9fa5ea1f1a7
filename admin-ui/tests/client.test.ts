import { ApiClient, ApiError, filenameFrom, query } from '../src/api/client';

type Call = { url: string; init: RequestInit };

function fakeFetch(respond: (url: string, init: RequestInit) => Response) {
  const calls: Call[] = [];
  const fn = (async (url: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ url: String(url), init: init ?? {} });
    return respond(String(url), init ?? {});
  }) as typeof fetch;
  return { fn, calls };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });

describe('ApiClient', () => {
  it('sends the key as a bearer token', async () => {
    const { fn, calls } = fakeFetch(() => json(200, { key_id: 1, role: 'holder', owner: 'demo', name: null, expires_at: null, created_at: 0 }));
    const me = await new ApiClient({ key: 'zw_abc', fetch: fn }).me();
    expect(me.owner).toBe('demo');
    expect(calls[0].url).toBe('/api/v1/me');
    expect(new Headers(calls[0].init.headers).get('Authorization')).toBe('Bearer zw_abc');
  });

  it('turns the error body into an ApiError with code and message', async () => {
    const { fn } = fakeFetch(() => json(404, { error: { code: 'not_found', message: 'match 4711 not found' } }));
    const err = await new ApiClient({ key: 'k', fetch: fn }).match(4711).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(404);
    expect(err.code).toBe('not_found');
    expect(err.message).toBe('match 4711 not found');
  });

  it('calls onUnauthorized on 401 so the user is sent back to sign-in', async () => {
    const { fn } = fakeFetch(() => new Response('nope', { status: 401 }));
    let signedOut = 0;
    const err = await new ApiClient({ key: 'k', fetch: fn, onUnauthorized: () => signedOut++ }).stats().catch((e) => e);
    expect(err.code).toBe('unauthorized');
    expect(signedOut).toBe(1);
  });

  it('reports a network failure as code "network"', async () => {
    const fn = (async () => {
      throw new TypeError('Failed to fetch');
    }) as typeof fetch;
    const err = await new ApiClient({ key: 'k', fetch: fn }).me().catch((e) => e);
    expect(err.code).toBe('network');
  });

  it('asks for matches with the filter, cursor and limit', async () => {
    const { fn, calls } = fakeFetch(() => json(200, { items: [], next_cursor: null }));
    await new ApiClient({ key: 'k', fetch: fn }).matches({ work_id: 7, status: 'new' }, 'abc', 100);
    expect(calls[0].url).toBe('/api/v1/matches?work_id=7&status=new&cursor=abc&limit=100');
  });

  it('posts bulk reviews as JSON', async () => {
    const { fn, calls } = fakeFetch(() => json(200, { updated: [1], unchanged: [2], not_found: [] }));
    const r = await new ApiClient({ key: 'k', fetch: fn }).bulkReview([1, 2], 'dismissed', '误报');
    expect(r.updated).toEqual([1]);
    expect(calls[0].init.method).toBe('POST');
    expect(JSON.parse(String(calls[0].init.body))).toEqual({ ids: [1, 2], status: 'dismissed', note: '误报' });
  });

  it('exports with the server file name', async () => {
    const { fn, calls } = fakeFetch(
      () => new Response('\ufeffmatch_id\n1\n', { status: 200, headers: { 'Content-Disposition': "attachment; filename*=UTF-8''%E5%8C%B9%E9%85%8D.csv" } }),
    );
    const r = await new ApiClient({ key: 'k', fetch: fn }).exportMatches('csv', { site: 'a.example' });
    expect(calls[0].url).toBe('/api/v1/exports/matches?site=a.example&format=csv');
    expect(r.filename).toBe('匹配.csv');
    expect(await r.blob.text()).toContain('match_id');
  });

  it('downloads the PDF evidence report, and passes the 501 of a server without Chromium on', async () => {
    const { fn, calls } = fakeFetch(
      () => new Response('%PDF-1.4', { status: 200, headers: { 'Content-Disposition': 'attachment; filename="evidence-report-work-7.pdf"' } }),
    );
    const r = await new ApiClient({ key: 'k', fetch: fn }).workReportPdf(7, 'en', { status: 'confirmed' });
    expect(calls[0].url).toBe('/api/v1/works/7/report?lang=en&format=pdf&status=confirmed');
    expect(r.filename).toBe('evidence-report-work-7.pdf');
    expect(await r.blob.text()).toBe('%PDF-1.4');
    const { fn: none } = fakeFetch(() => json(501, { error: { code: 'not_implemented', message: 'PDF reports need Chromium' } }));
    const err = await new ApiClient({ key: 'k', fetch: none }).workReportPdf(7, 'zh').catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(501);
    expect(err.message).toContain('Chromium');
  });
});

describe('helpers', () => {
  it('query skips empty values', () => {
    expect(query({ q: '红楼', owner: '', cursor: null, limit: 50 })).toBe('?q=%E7%BA%A2%E6%A5%BC&limit=50');
    expect(query({})).toBe('');
  });
  it('filenameFrom reads plain and RFC 6266 names', () => {
    expect(filenameFrom('attachment; filename="zhiwen-matches.csv"')).toBe('zhiwen-matches.csv');
    expect(filenameFrom(null)).toBeNull();
  });
});

describe('errors without a JSON body', () => {
  it('take their code from the status', async () => {
    const { fn } = fakeFetch(() => new Response('<html>Bad Gateway</html>', { status: 502 }));
    const err = await new ApiClient({ key: 'k', fetch: fn }).me().catch((e) => e);
    expect(err.code).toBe('unavailable');
  });
});
