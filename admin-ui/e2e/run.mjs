// End-to-end tests of the dashboard in headless Chromium against a real `zhiwen serve`.
//
// The run builds nothing itself (scripts/test-ui.sh builds the UI and the binary first):
//   1. a fresh embedded data directory, seeded by real imports (`zhiwen import works`,
//      `zhiwen import pages` of the generated pirate site and the bundled samples) and a
//      real matching run (`zhiwen match`);
//   2. keys made with `zhiwen keys create` (an admin and two rights holders);
//   3. `zhiwen serve` on a free loopback port, serving admin-ui/dist;
//   4. Debian's Chromium driven by playwright-core walks through the dashboard as users
//      would, and saves screenshots of the main pages (into target/screenshots/, or into
//      docs/screenshots/ for the README when E2E_SCREENSHOTS=docs).
//
// Environment: ZHIWEN_BIN (default target/debug/zhiwen), CHROMIUM (default
// /usr/bin/chromium), E2E_SCREENSHOTS=0 to skip writing the screenshots (=docs to refresh the
// README's), E2E_KEEP=1 to keep the
// data directory of a failed run.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, copyFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

const UI = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROOT = resolve(UI, '..');
const BIN = process.env.ZHIWEN_BIN ?? join(ROOT, 'target', 'debug', 'zhiwen');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
// A test run leaves the repository as it was: screenshots go under target/ unless asked for.
const SHOTS =
  process.env.E2E_SCREENSHOTS === 'docs' ? join(ROOT, 'docs', 'screenshots') : join(ROOT, 'target', 'screenshots');
const WRITE_SHOTS = process.env.E2E_SCREENSHOTS !== '0';
const PIRATE = 'http://pirate.example/';
// The page of the generated site that is also crawled live from a loopback port.
const LIVE_PAGE = 'book/sanguo/1.html';
// The kinds of copy a match records, as the dashboard names them in Chinese.
const KIND_LABELS = { identical: '完全相同', near_duplicate: '整章近似', embedded: '整章嵌入', excerpt: '摘抄片段' };

const data = mkdtempSync(join(tmpdir(), 'zhiwen-e2e-'));
const env = {
  ...process.env,
  ZHIWEN_DATA_DIR: join(data, 'store'),
  ZHIWEN_STORE: 'embedded',
  ZHIWEN_INDEX: 'embedded',
  ZHIWEN_UI_DIR: join(UI, 'dist'),
  RUST_LOG: process.env.RUST_LOG ?? 'warn',
};
for (const k of ['ZHIWEN_CONFIG', 'ZHIWEN_MONGO_URI', 'ZHIWEN_MONGO_DATABASE', 'ZHIWEN_REDIS_URL', 'ZHIWEN_REDIS_PREFIX']) delete env[k];

function zhiwen(...args) {
  const r = spawnSync(BIN, args, { env, cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`zhiwen ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function freePort() {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The records of an RFC 4180 CSV text (quoted cells may hold commas, quotes and line breaks). */
function csvRecords(text) {
  const records = [];
  let record = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c === '"') {
      quoted = true;
    } else if (c === ',') {
      record.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      record.push(cell);
      records.push(record);
      record = [];
      cell = '';
    } else {
      cell += c;
    }
  }
  if (cell !== '' || record.length > 0) {
    record.push(cell);
    records.push(record);
  }
  return records;
}

function keyOf(out) {
  const m = /zw_[A-Za-z0-9]{20,}/.exec(out);
  if (!m) throw new Error(`no key in the output of zhiwen keys create:\n${out}`);
  return m[0];
}

// ---------------------------------------------------------------------------------------
// Seeding: real imports and a real matching run.

/**
 * The generated site served on a loopback port (Python's http.server, a process of its own:
 * the synchronous `zhiwen` calls below block this one), so a page can be crawled, captured
 * live (screenshot and print) and captured again.
 */
async function startSite(dir) {
  const port = await freePort();
  const proc = spawn('python3', ['-m', 'http.server', '--bind', '127.0.0.1', String(port), '--directory', dir], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) throw new Error(`the local site exited (${proc.exitCode})`);
    try {
      if ((await fetch(base + 'robots.txt')).ok) return { proc, base };
    } catch {
      /* not up yet */
    }
    await sleep(100);
  }
  proc.kill();
  throw new Error('the local site did not start');
}

async function seed() {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run cargo build --bin zhiwen first`);
  if (!existsSync(join(UI, 'dist', 'index.html'))) throw new Error('admin-ui/dist is missing: run npm run build first');
  zhiwen('import', 'works', 'samples/works/classics.jsonl', '--owner', 'demo');
  zhiwen('import', 'works', 'samples/hongloumeng-01.txt', '--owner', 'demo');
  const site = join(data, 'site');
  mkdirSync(site, { recursive: true });
  const gen = spawnSync('python3', ['scripts/make-pirate-site.py', '--out', site, '--base-url', PIRATE, '--manifest', join(data, 'site.json')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (gen.status !== 0) throw new Error(`make-pirate-site.py failed:\n${gen.stderr}`);
  copyFileSync(join(ROOT, 'samples', 'pirate-copy-big5.html'), join(site, 'pirate-copy-big5.html'));
  copyFileSync(join(ROOT, 'samples', 'other-chapter-gbk.html'), join(site, 'other-chapter-gbk.html'));
  zhiwen('import', 'pages', site, '--base-url', PIRATE);
  // One page crawled from the local site: its match is captured live (screenshot, print).
  const live = await startSite(site);
  try {
    const seeds = join(data, 'seeds.txt');
    writeFileSync(seeds, `${live.base}${LIVE_PAGE}\n`);
    zhiwen('crawl', '--seeds', seeds, '--job', 'e2e', '--allow-loopback', '--depth', '0', '--delay-ms', '0');
    // The matching run captures its new matches (the imported pages from their stored copy).
    zhiwen('match', '--capture-allow-loopback', '--chromium', CHROMIUM);
  } catch (e) {
    live.proc.kill();
    throw e;
  }
  const keys = {
    admin: keyOf(zhiwen('keys', 'create', '--role', 'admin', '--name', '版权中心管理员')),
    jinling: keyOf(zhiwen('keys', 'create', '--role', 'holder', '--owner', 'jinling-press', '--name', '金陵出版社')),
    luoguan: keyOf(zhiwen('keys', 'create', '--role', 'holder', '--owner', 'luoguan-books', '--name', '洛观书局')),
    demo: keyOf(zhiwen('keys', 'create', '--role', 'holder', '--owner', 'demo', '--name', 'demo')),
    analyst: keyOf(zhiwen('keys', 'create', '--role', 'analyst', '--name', '分析员')),
  };
  return { keys, live };
}

async function startServe() {
  const port = await freePort();
  const help = spawnSync(BIN, ['serve', '--help'], { env, encoding: 'utf8' }).stdout ?? '';
  const args = ['serve', '--listen', `127.0.0.1:${port}`];
  if (help.includes('--ui-dir')) args.push('--ui-dir', join(UI, 'dist'));
  // no daily catch-up task: the tasks the test sees are the ones it started
  if (help.includes('--no-scheduler')) args.push('--no-scheduler');
  // the same browser prints the PDF evidence reports, and renders the captures
  if (help.includes('--chromium')) args.push('--chromium', CHROMIUM);
  // a capture on demand fetches the page again from the local site (captures follow the crawls' address policy)
  if (help.includes('--crawl-allow-loopback')) args.push('--crawl-allow-loopback');
  const proc = spawn(BIN, args, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout.on('data', (d) => (log += d));
  proc.stderr.on('data', (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`zhiwen serve exited (${proc.exitCode}):\n${log}`);
    try {
      const r = await fetch(`${base}/health`);
      if (r.ok) return { proc, base, log: () => log };
    } catch {
      /* not up yet */
    }
    await sleep(200);
  }
  proc.kill();
  throw new Error(`zhiwen serve did not answer /health within 60 s:\n${log}`);
}

async function api(base, key, path, init = {}) {
  const r = await fetch(base + path, { ...init, headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) } });
  const body = await r.json().catch(() => null);
  return { status: r.status, body };
}

// ---------------------------------------------------------------------------------------
// A tiny test runner: named steps, in order; the first failure ends the run.

const results = [];
async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`  ✓ ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`  ✗ ${name}\n${e.stack ?? e}`);
    throw e;
  }
}

async function shot(page, name) {
  if (!WRITE_SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.waitForTimeout(1500); // chart animations
  await page.evaluate(() => document.querySelectorAll('.ant-message-notice').forEach((n) => n.remove()));
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });
}

async function signIn(page, base, key) {
  await page.goto(`${base}/`);
  await page.waitForURL(/\/signin/);
  await page.getByTestId('key-input').fill(key);
  await page.getByTestId('sign-in').click();
  await page.getByTestId('whoami').waitFor();
}

/** Open the "register works" dialog on one of its tabs (retrying while the dialog animates in). */
async function openUploadTab(page, tab, ready) {
  // a dialog that is still closing (after the previous save) must be gone first
  await page.waitForFunction(
    () => ![...document.querySelectorAll('.ant-modal-wrap')].some((w) => getComputedStyle(w).display !== 'none'),
    null,
    { timeout: 10000 },
  );
  for (let attempt = 0; attempt < 5; attempt++) {
    if (!(await page.locator('.ant-modal-wrap:visible').count())) await page.getByTestId('upload-open').click();
    await page.locator('.ant-modal-wrap:visible').first().waitFor();
    await page.getByRole('tab', { name: tab }).click();
    try {
      await ready.waitFor({ state: 'visible', timeout: 3000 });
      return;
    } catch {
      /* try again */
    }
  }
  throw new Error(`the ${tab} tab of the upload dialog did not open`);
}

async function waitRowCount(page, testId, n) {
  await page.waitForFunction(
    ([id, want]) => document.querySelectorAll(`[data-testid="${id}"] tbody tr.ant-table-row`).length === want,
    [testId, n],
    { timeout: 15000 },
  ).catch(async () => {
    const got = await page.getByTestId(testId).locator('tbody tr.ant-table-row').count();
    throw new Error(`${testId}: expected ${n} rows, found ${got}`);
  });
  return page.getByTestId(testId).locator('tbody tr.ant-table-row');
}

async function waitRowsSettled(page, testId) {
  await page.getByTestId(testId).locator('tbody tr.ant-table-row').first().waitFor({ timeout: 15000 });
  // the table shows a spinner while it loads; wait for it to go away
  await page.waitForFunction(
    (id) => {
      const t = document.querySelector(`[data-testid="${id}"]`);
      return t && !t.querySelector('.ant-spin-spinning');
    },
    testId,
    { timeout: 15000 },
  );
  return page.getByTestId(testId).locator('tbody tr.ant-table-row');
}

// ---------------------------------------------------------------------------------------

async function main() {
  console.log(`data directory: ${data}`);
  const { keys, live } = await seed();
  const serve = await startServe().catch((e) => {
    live.proc.kill();
    throw e;
  });
  const { base } = serve;
  console.log(`zhiwen serve on ${base}`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  let ok = false;
  try {
    // What the API says, to check the UI against.
    const allMatches = (await api(base, keys.admin, '/api/v1/matches?limit=500')).body.items;
    const works = (await api(base, keys.admin, '/api/v1/works?limit=500')).body.items;
    assert.ok(allMatches.length >= 3, `the seeded store should have several matches, has ${allMatches.length}`);
    const sanguo = works.find((w) => w.external_id === 'sanguo-001');
    const hlm = works.find((w) => w.external_id === 'hongloumeng-001');
    assert.ok(sanguo && hlm, 'the classics are registered');
    const hlmMatches = allMatches.filter((m) => m.work_id === hlm.id);
    assert.ok(hlmMatches.length >= 1 && hlmMatches.length < allMatches.length, '红楼梦 has some but not all matches');

    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true, locale: 'zh-CN' });
    const page = await ctx.newPage();
    const consoleErrors = [];
    page.on('pageerror', (e) => consoleErrors.push(String(e)));

    await step('a wrong key is refused with a message that says what to do', async () => {
      await page.goto(`${base}/`);
      await page.waitForURL(/\/signin/);
      await shot(page, 'signin');
      await page.getByTestId('key-input').fill('zw_' + 'x'.repeat(43));
      await page.getByTestId('sign-in').click();
      await page.getByTestId('signin-error').waitFor();
      assert.match(await page.getByTestId('signin-error').innerText(), /密钥无效、已吊销或已过期，请重新登录/);
    });

    await step('the admin signs in and sees the overview (counts, trend chart, top sites, most copied works)', async () => {
      await page.getByTestId('key-input').fill(keys.admin);
      await page.getByTestId('sign-in').click();
      await page.getByTestId('page-overview').waitFor();
      await page.getByTestId('trend-chart').locator('canvas').first().waitFor();
      const stat = async (id) => Number((await page.getByTestId(id).locator('.ant-statistic-content-value').innerText()).replace(/,/g, ''));
      // every seeded match was first seen a moment ago: this week, and today unless the run crossed midnight UTC
      assert.equal(await stat('stat-new-week'), allMatches.length);
      const today = await stat('stat-new-today');
      assert.ok(today === allMatches.length || today === 0, `new today: ${today}`);
      await page.getByTestId('sites-chart').locator('canvas').first().waitFor();
      const topWorks = await page.getByTestId('top-works').locator('tbody tr.ant-table-row').count();
      assert.ok(topWorks >= 2, `top works lists the copied works (${topWorks})`);
      assert.match(await page.getByTestId('whoami').innerText(), /管理员/);
      // the kinds of copy the matcher recorded, counted the way the matches list has them
      for (const [kind, label] of Object.entries(KIND_LABELS)) {
        const n = allMatches.filter((m) => m.kind === kind).length;
        assert.equal(await page.getByTestId(`kind-count-${kind}`).innerText(), `${label} ${n}`);
      }
      await shot(page, 'overview');
    });

    await step('works: the list and a work page with its chapters and copy counts', async () => {
      await page.getByTestId('nav').getByText('作品').click();
      await waitRowCount(page, 'works-table', works.length);
      await shot(page, 'works');
      await page.getByTestId('works-table').getByText(hlm.title).click();
      await page.getByTestId('work-title').waitFor();
      assert.equal(await page.getByTestId('work-title').innerText(), hlm.title);
      const sec = page.getByTestId('sections-table').locator('tbody tr.ant-table-row');
      assert.ok((await sec.count()) >= 1);
      await shot(page, 'work');
    });

    let matchId;
    let liveMatchId;
    let hpHolder;
    await step('matches: filtering by work narrows the table to that work', async () => {
      await page.getByTestId('nav').getByText('侵权线索').click();
      let rows = await waitRowCount(page, 'matches-table', allMatches.length);
      await page.getByTestId('filter-work').click();
      await page.locator('.ant-select-dropdown .ant-select-item-option').filter({ hasText: hlm.title }).click();
      await page.waitForURL(new RegExp(`work_id=${hlm.id}`));
      await page.waitForFunction(
        (n) => document.querySelectorAll('[data-testid="matches-table"] tbody tr.ant-table-row').length === n,
        hlmMatches.length,
      );
      rows = await waitRowsSettled(page, 'matches-table');
      assert.equal(await rows.count(), hlmMatches.length);
      for (const text of await rows.allInnerTexts()) assert.ok(text.includes(hlm.title), `row of another work: ${text}`);
      await shot(page, 'matches');
      matchId = hlmMatches[0].id;
    });

    await step('matches: every match shows a kind of copy, and filtering by kind shows only that kind', async () => {
      for (const m of allMatches) assert.ok(m.kind in KIND_LABELS, `match ${m.id} has kind ${m.kind}`);
      const kind = allMatches[0].kind;
      const ofKind = allMatches.filter((m) => m.kind === kind);
      await page.goto(`${base}/matches`);
      await waitRowCount(page, 'matches-table', allMatches.length);
      await page.getByTestId('filter-kind').click();
      await page.locator('.ant-select-dropdown:visible .ant-select-item-option').filter({ hasText: KIND_LABELS[kind] }).click();
      await page.waitForURL(new RegExp(`kind=${kind}`));
      await page.waitForFunction(
        (n) => document.querySelectorAll('[data-testid="matches-table"] tbody tr.ant-table-row').length === n,
        ofKind.length,
      );
      const rows = await waitRowsSettled(page, 'matches-table');
      assert.equal(await rows.count(), ofKind.length);
      const tags = page.getByTestId('matches-table').getByTestId('kind-tag');
      for (let i = 0; i < (await tags.count()); i++) {
        assert.equal(await tags.nth(i).getAttribute('data-kind'), kind);
        assert.equal(await tags.nth(i).innerText(), KIND_LABELS[kind]);
      }
    });

    await step('evidence: the passages side by side, copied text highlighted, the score in plain words', async () => {
      await page.goto(`${base}/matches/${matchId}`);
      await page.getByTestId('explanation').waitFor();
      const explanation = await page.getByTestId('explanation').innerText();
      assert.match(explanation, /%/);
      assert.match(explanation, /第\s*\d+\s*章|本页/);
      const workMarks = page.getByTestId('passage-work').first().locator('mark.copied');
      const pageMarks = page.getByTestId('passage-page').first().locator('mark.copied');
      assert.equal(await workMarks.count(), 1);
      assert.equal(await pageMarks.count(), 1);
      const copied = await workMarks.first().innerText();
      assert.ok(copied.length >= 20, `a real passage is highlighted (${copied.length} chars)`);
      const detail = (await api(base, keys.admin, `/api/v1/matches/${matchId}`)).body;
      const squash = (x) => x.replace(/\s+/g, '');
      assert.equal(squash(copied), squash(detail.passages[0].work.text), 'the highlighted text is the quoted passage');
      // The page side reads as the page's visible text, not its markup.
      const pageSide = await page.getByTestId('passage-page').first().innerText();
      assert.doesNotMatch(pageSide, /<\/?[a-z]/i, 'no tags around the copied passage');
      if (detail.passages[0].page.visible) {
        assert.equal(squash(await pageMarks.first().innerText()), squash(detail.passages[0].page.visible.text));
      }
      assert.equal(await page.getByTestId('open-page').getAttribute('href'), detail.match.url);
      // the kind of copy, and the verdict it was decided from
      assert.equal(await page.getByTestId('kind-tag').first().getAttribute('data-kind'), detail.match.kind);
      assert.ok(detail.match.verdict_kind, 'the detail names the verdict');
      assert.ok((await page.getByTestId('verdict-kind').innerText()).length > 0);
      await shot(page, 'evidence');
    });

    await step('evidence: confirming a match changes its status, and it stays changed', async () => {
      await page.getByTestId('review-confirm').click();
      await page.getByTestId('review-card').locator('[data-status="confirmed"]').waitFor();
      await page.reload();
      await page.getByTestId('review-card').locator('[data-status="confirmed"]').waitFor();
      const detail = (await api(base, keys.admin, `/api/v1/matches/${matchId}`)).body;
      assert.equal(detail.match.status, 'confirmed');
      assert.equal(detail.review_log.at(-1).to, 'confirmed');
    });

    await step('evidence captures: the live page was captured when matched; its screenshot loads and its package verifies', async () => {
      const liveMatch = allMatches.find((m) => m.url.startsWith(live.base));
      assert.ok(liveMatch, `the crawled page ${live.base}${LIVE_PAGE} was matched`);
      liveMatchId = liveMatch.id;
      const list = (await api(base, keys.admin, `/api/v1/matches/${liveMatchId}/captures`)).body;
      await page.goto(`${base}/matches/${liveMatchId}`);
      await page.getByTestId('captures').waitFor();
      await page.getByTestId('capture-item').first().waitFor({ timeout: 30000 });
      assert.ok((await page.getByTestId('capture-item').count()) >= 1, 'at least one capture');
      assert.equal(await page.getByTestId('capture-source').first().innerText(), '实时抓取');
      assert.match(await page.getByTestId('capture-files').first().innerText(), /capture\/screenshot\.png/);
      const img = page.getByTestId('capture-screenshot');
      await img.waitFor({ timeout: 15000 });
      await page.waitForFunction(() => {
        const i = document.querySelector('[data-testid="capture-screenshot"]');
        return i && i.complete && i.naturalWidth > 0;
      }, null, { timeout: 15000 });
      assert.match(await img.getAttribute('src'), /^blob:/);
      await page.locator('[data-testid="verification"][data-ok="true"]').waitFor({ timeout: 30000 });
      assert.match(await page.getByTestId('verification-title').innerText(), /验证通过/);
      assert.equal(await page.getByTestId('public-key').innerText(), list.public_key);
      assert.match(await page.getByTestId('verify-hint').innerText(), /zhiwen evidence verify .*--public-key/);
      await shot(page, 'evidence-captures');
    });

    await step('evidence captures: capture again yields a second capture that verifies, and its package downloads', async () => {
      const before = await page.getByTestId('capture-item').count();
      const firstId = await page.getByTestId('capture-item').first().getAttribute('data-capture-id');
      await page.getByTestId('capture-again').click();
      await page.getByTestId('capture-pending').waitFor();
      await page.waitForFunction(
        (n) => document.querySelectorAll('[data-testid="capture-item"]').length > n,
        before,
        { timeout: 65000 },
      );
      await page.getByTestId('capture-pending').waitFor({ state: 'detached' });
      const newest = page.getByTestId('capture-item').first();
      assert.notEqual(await newest.getAttribute('data-capture-id'), firstId);
      assert.equal(await newest.getAttribute('data-selected'), 'true');
      assert.equal(await newest.getByTestId('capture-reason').innerText(), '手动取证');
      const newId = Number(await newest.getAttribute('data-capture-id'));
      await page.locator('[data-testid="verification"][data-ok="true"]').waitFor({ timeout: 30000 });
      await page.waitForFunction(() => {
        const i = document.querySelector('[data-testid="capture-screenshot"]');
        return i && i.complete && i.naturalWidth > 0;
      }, null, { timeout: 15000 });
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('download-package').click()]);
      assert.equal(download.suggestedFilename(), `evidence-match-${liveMatchId}-capture-${newId}.zip`);
      const file = join(data, 'evidence.zip');
      await download.saveAs(file);
      const zip = readFileSync(file);
      assert.ok(zip.length > 0, 'the package is not empty');
      assert.equal(zip.subarray(0, 2).toString('latin1'), 'PK', 'a zip file');
    });

    await step('matches: filter by status, export the filter as CSV and read it back', async () => {
      await page.goto(`${base}/matches?status=confirmed`);
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="matches-table"] tbody tr.ant-table-row').length === 1);
      await page.getByTestId('export').hover();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-csv').click()]);
      const file = join(data, 'export.csv');
      await download.saveAs(file);
      const text = readFileSync(file, 'utf8');
      assert.ok(text.startsWith('\ufeff'), 'CSV starts with a BOM (Excel opens it as UTF-8)');
      // Records, not lines: the evidence cells are quoted passages that may span lines.
      const records = csvRecords(text.slice(1));
      const header = records[0];
      const idCol = header.indexOf('match_id');
      const statusCol = header.indexOf('status');
      assert.ok(idCol >= 0 && statusCol >= 0, `columns: ${header}`);
      assert.equal(records.length, 2, `one confirmed match exported:\n${text.slice(0, 2000)}`);
      const cells = records[1];
      assert.equal(cells.length, header.length, 'every column of the record');
      assert.equal(Number(cells[idCol]), matchId);
      assert.equal(cells[statusCol], 'confirmed');
    });

    await step('matches: Excel export and the printable evidence report of a work (HTML and PDF)', async () => {
      await page.goto(`${base}/matches?work_id=${hlm.id}`);
      await waitRowCount(page, 'matches-table', hlmMatches.length);
      await page.getByTestId('export').hover();
      const [xlsx] = await Promise.all([page.waitForEvent('download'), page.getByText('导出 Excel').click()]);
      const xfile = join(data, 'export.xlsx');
      await xlsx.saveAs(xfile);
      assert.equal(readFileSync(xfile).subarray(0, 2).toString('latin1'), 'PK', 'an xlsx (zip) file');
      await page.getByTestId('export').hover();
      const [popup] = await Promise.all([page.waitForEvent('popup'), page.getByText('取证报告（HTML）').click()]);
      await popup.waitForLoadState();
      const report = await popup.content();
      assert.ok(report.includes(hlm.title.split(' ')[0]), 'the report names the work');
      assert.ok(report.includes('pirate.example'), 'the report lists the copying pages');
      await popup.close();
      await page.getByTestId('export').hover();
      const [pdf] = await Promise.all([page.waitForEvent('download'), page.getByText('取证报告（PDF）').click()]);
      assert.equal(pdf.suggestedFilename(), `evidence-report-work-${hlm.id}.pdf`);
      const pfile = join(data, 'report.pdf');
      await pdf.saveAs(pfile);
      assert.equal(readFileSync(pfile).subarray(0, 5).toString('latin1'), '%PDF-', 'a PDF printed by the server');
    });

    await step('matches: bulk review marks every selected match', async () => {
      const xyj = works.find((w) => w.external_id === 'xiyouji-001');
      const xyjMatches = allMatches.filter((m) => m.work_id === xyj.id);
      assert.ok(xyjMatches.length >= 1, '西游记 was copied');
      await page.goto(`${base}/matches?work_id=${xyj.id}`);
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="matches-table"] tbody tr.ant-table-row').length === n, xyjMatches.length);
      await page.getByTestId('matches-table').locator('thead .ant-checkbox-input').check();
      await page.getByTestId('bulk-takedown').click();
      await page.waitForFunction(
        (n) => document.querySelectorAll('[data-testid="matches-table"] [data-status="takedown_sent"]').length === n,
        xyjMatches.length,
      );
      const after = (await api(base, keys.admin, `/api/v1/matches?work_id=${xyj.id}&limit=500`)).body.items;
      assert.ok(after.every((m) => m.status === 'takedown_sent'));
    });

    await step('tasks: the admin starts a matching run and watches it finish', async () => {
      await page.getByTestId('nav').getByText('任务').click();
      await page.getByTestId('page-tasks').waitFor();
      const before = (await api(base, keys.admin, '/api/v1/tasks?limit=500')).body.items.length;
      await page.getByTestId('start-match').click();
      await page.getByTestId('start-match-ok').click();
      await page.waitForFunction((n) => document.querySelectorAll('[data-testid="tasks-table"] tbody tr.ant-table-row').length > n, before, { timeout: 15000 });
      await page.getByTestId('tasks-table').locator('tbody tr.ant-table-row').first().locator('[data-state="succeeded"]').waitFor({ timeout: 120000 });
      await shot(page, 'tasks');
    });

    await step('the language switches to English and back', async () => {
      await page.goto(`${base}/matches?status=confirmed`);
      await page.getByTestId('lang-toggle').click();
      await page.getByRole('heading', { name: 'Matches' }).waitFor();
      await page.getByTestId('matches-table').getByText('Confirmed').first().waitFor();
      assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
      await shot(page, 'matches-en');
      await page.getByTestId('lang-toggle').click();
      await page.getByRole('heading', { name: '侵权线索' }).waitFor();
    });

    await step('a rights holder sees only its own works, and no admin actions', async () => {
      const hctx = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'zh-CN' });
      const hp = await hctx.newPage();
      await signIn(hp, base, keys.jinling);
      assert.match(await hp.getByTestId('whoami').innerText(), /版权方/);
      assert.equal(await hp.getByTestId('nav').getByText('任务').count(), 0, 'no tasks menu for holders');
      await hp.getByTestId('nav').getByText('作品').click();
      const rows = await waitRowsSettled(hp, 'works-table');
      const texts = (await rows.allInnerTexts()).join('\n');
      assert.ok(texts.includes(hlm.title), 'own work listed');
      assert.ok(!texts.includes(sanguo.title), 'another holder’s work is not listed');
      await hp.goto(`${base}/works/${sanguo.id}`);
      await hp.getByTestId('error-message').waitFor();
      assert.match(await hp.getByTestId('error-message').innerText(), /找不到该内容/);
      const foreign = allMatches.find((m) => m.work_id === sanguo.id);
      if (foreign) {
        await hp.goto(`${base}/matches/${foreign.id}`);
        await hp.getByTestId('error-message').waitFor();
      }
      await hp.goto(`${base}/matches`);
      const mrows = await waitRowsSettled(hp, 'matches-table');
      const mt = (await mrows.allInnerTexts()).join('\n');
      assert.ok(!mt.includes('三国演义') && !mt.includes('水浒传'), 'no matches of another holder');
      await hp.goto(`${base}/tasks`);
      await hp.getByTestId('error-message').waitFor();
      assert.match(await hp.getByTestId('error-message').innerText(), /没有权限/);
      hpHolder = { hctx, hp };
    });

    await step('a rights holder registers a work by pasting its text', async () => {
      const { hctx, hp } = hpHolder;
      await hp.goto(`${base}/works`);
      await waitRowsSettled(hp, 'works-table');
      await openUploadTab(hp, '粘贴文本', hp.getByTestId('paste-title'));
      await hp.getByTestId('paste-title').fill('金陵新书 第一章');
      await hp.getByTestId('paste-external-id').fill('jinling-new-001');
      await hp.getByTestId('paste-text').fill('第一章 春雨\n' + '江南三月，细雨如丝，城南的旧书铺又开了门。'.repeat(20));
      await hp.getByTestId('paste-save').click();
      await hp.getByText('作品已保存（新登记，共 1 章）').waitFor();
      await hp.getByTestId('works-table').getByText('金陵新书 第一章').waitFor();
      const mine = (await api(base, keys.jinling, '/api/v1/works?q=jinling-new')).body.items;
      assert.equal(mine.length, 1);
      assert.equal(mine[0].owner, 'jinling-press', 'the holder’s own owner is forced');
      // and by uploading a file (GBK bytes, detected by the server)
      await openUploadTab(hp, '上传文件', hp.getByText('选择文件'));
      await hp.locator('.ant-modal input[type=file]').setInputFiles(join(ROOT, 'samples', 'other-chapter-gbk.html'));
      await hp.getByText(/^已登记：/).waitFor({ timeout: 30000 });
      const uploaded = (await api(base, keys.jinling, '/api/v1/works?limit=500')).body.items;
      assert.equal(uploaded.length, mine.length + 3, `two classics, the pasted work and the uploaded file: ${uploaded.map((w) => w.title)}`);
      await hctx.close();
    });

    await step('an analyst watches tasks but gets no start or upload buttons', async () => {
      const actx = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'zh-CN' });
      const ap = await actx.newPage();
      await signIn(ap, base, keys.analyst);
      await ap.getByTestId('nav').getByText('任务').click();
      await ap.getByText('您可以查看任务，但只有管理员可以启动或取消任务。').waitFor();
      await waitRowsSettled(ap, 'tasks-table');
      assert.equal(await ap.getByTestId('start-match').count(), 0);
      await ap.getByTestId('nav').getByText('作品').click();
      await waitRowsSettled(ap, 'works-table');
      assert.equal(await ap.getByTestId('upload-open').count(), 0);
      await actx.close();
    });

    assert.deepEqual(consoleErrors, [], 'no uncaught errors in the page');
    ok = true;
  } finally {
    await browser.close();
    serve.proc.kill('SIGTERM');
    live.proc.kill('SIGTERM');
    if (!ok) console.log(`\nzhiwen serve log (tail):\n${serve.log().slice(-4000)}`);
    if (ok || process.env.E2E_KEEP !== '1') rmSync(data, { recursive: true, force: true });
  }
  const passed = results.filter((r) => r.ok).length;
  console.log(`\ne2e: ${passed} passed, ${results.length - passed} failed`);
  if (WRITE_SHOTS) console.log(`screenshots: ${readdirSync(SHOTS).filter((f) => f.endsWith('.png')).join(', ')}`);
}

main().catch((e) => {
  console.error(`e2e failed: ${e.message ?? e}`);
  process.exit(1);
});

