// End-to-end tests of the dashboard in headless Chromium against a real `zhiwen serve`.
//
// The run builds nothing itself (scripts/test-ui.sh builds the UI and the binary first):
//   1. a fresh embedded data directory, seeded by real imports (`zhiwen import works`,
//      `zhiwen import pages` of the generated pirate site and the bundled samples) and a
//      real matching run (`zhiwen match`);
//   2. keys made with `zhiwen keys create` (an admin and two rights holders);
//   3. an SMTP server on a loopback port (aiosmtpd, storing what it receives in a Maildir)
//      and `zhiwen serve` on a free loopback port, serving admin-ui/dist and sending its
//      takedown notices through that SMTP server;
//   4. Debian's Chromium driven by playwright-core walks through the dashboard as users
//      would, and saves screenshots of the main pages (into target/screenshots/, or into
//      docs/screenshots/ for the README when E2E_SCREENSHOTS=docs). A failed step prints
//      what each open page shows (address, messages) and saves its screenshot under
//      target/e2e-failures/.
//
// Environment: ZHIWEN_BIN (default target/debug/zhiwen), CHROMIUM (default
// /usr/bin/chromium), ZHIWEN_SMTPD_PYTHON (a python with aiosmtpd: scripts/setup-smtp.sh), E2E_SCREENSHOTS=0 to skip writing the screenshots (=docs to refresh the
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
// The pages of the generated site also crawled live from a loopback port: three copies of
// one holder's works (洛观书局: 三国演义 and the two halves of 水浒传), the site a notice goes to.
const LIVE_PAGE = 'book/sanguo/1.html';
const LIVE_PAGES = [LIVE_PAGE, 'book/shuihu/1.html', 'book/shuihu/1_2.html'];
// A contact page of the live site: where the suggested recipient of its notices comes from.
const CONTACT_PAGE = 'contact.html';
const CONTACT_ADDRESS = 'copyright@pirate-mirror.example';
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
    writeFileSync(
      join(site, CONTACT_PAGE),
      `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>联系我们</title></head><body><h1>联系我们</h1><p>版权投诉请发邮件至 ${CONTACT_ADDRESS}</p></body></html>\n`,
    );
    const seeds = join(data, 'seeds.txt');
    writeFileSync(seeds, [...LIVE_PAGES, CONTACT_PAGE].map((p) => `${live.base}${p}\n`).join(''));
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
  return { keys, live, site };
}

/** aiosmtpd on a loopback port, keeping every message it accepts in the Maildir `dir`. */
async function startSmtp(dir) {
  const python = process.env.ZHIWEN_SMTPD_PYTHON;
  if (!python) throw new Error('ZHIWEN_SMTPD_PYTHON is not set: run scripts/setup-smtp.sh (scripts/test-ui.sh does)');
  const port = await freePort();
  // `dir` must not exist yet: the handler makes the Maildir (cur/, new/, tmp/) itself.
  const proc = spawn(python, ['-m', 'aiosmtpd', '-n', '-l', `127.0.0.1:${port}`, '-c', 'aiosmtpd.handlers.Mailbox', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr.on('data', (d) => (log += d));
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) throw new Error(`the SMTP server exited (${proc.exitCode}):\n${log}`);
    const up = await new Promise((res) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.end();
        res(true);
      });
      c.once('error', () => res(false));
    });
    if (up) return { proc, url: `smtp://127.0.0.1:${port}` };
    await sleep(100);
  }
  proc.kill();
  throw new Error(`the SMTP server did not listen within 10 s:\n${log}`);
}

/** The messages the SMTP server stored (file names in the Maildir's new/ and cur/). */
function mailbox(dir) {
  return ['new', 'cur'].flatMap((sub) => (existsSync(join(dir, sub)) ? readdirSync(join(dir, sub)).map((f) => join(dir, sub, f)) : []));
}

/** An RFC 3339 time `ms` from now, whole seconds (what `zhiwen recheck --now` reads). */
function isoIn(ms) {
  return new Date(Date.now() + ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

async function startServe(smtpUrl) {
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
  const proc = spawn(BIN, args, { env: { ...env, ZHIWEN_SMTP_URL: smtpUrl }, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
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
// The browser of the run: a failed step reports what each of its open pages showed.
let watchedBrowser = null;
async function step(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`  ✓ ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    results.push({ name, ok: false });
    console.log(`  ✗ ${name}\n${e.stack ?? e}`);
    await reportPages(name).catch((r) => console.log(`  (the pages could not be captured: ${r})`));
    throw e;
  }
}

/** What the open pages show when a step fails: address, messages, and a screenshot under target/. */
async function reportPages(name) {
  if (!watchedBrowser) return;
  const dir = join(ROOT, 'target', 'e2e-failures');
  mkdirSync(dir, { recursive: true });
  let n = 0;
  for (const ctx of watchedBrowser.contexts()) {
    for (const p of ctx.pages()) {
      n += 1;
      const shown = await p.evaluate(() =>
        [...document.querySelectorAll('.ant-message-notice, .ant-alert, .ant-form-item-explain-error, [data-testid="error-message"]')]
          .map((e) => e.innerText.trim())
          .filter(Boolean),
      );
      const file = join(dir, `${name.replace(/[^\p{L}\p{N}]+/gu, '-').slice(0, 60)}-${n}.png`);
      await p.screenshot({ path: file });
      console.log(`  page ${n}: ${p.url()}\n    messages: ${JSON.stringify(shown)}\n    screenshot: ${file}`);
    }
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
  const { keys, live, site } = await seed();
  const mailDir = join(data, 'mail');
  const smtp = await startSmtp(mailDir).catch((e) => {
    live.proc.kill();
    throw e;
  });
  const serve = await startServe(smtp.url).catch((e) => {
    live.proc.kill();
    smtp.proc.kill();
    throw e;
  });
  const { base } = serve;
  console.log(`zhiwen serve on ${base}`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  watchedBrowser = browser;
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
      await page.getByTestId('start-match').click();
      // The server answers with the task it queued, or with the matching task of the same
      // scope still pending from an earlier step (it never queues two): that answer names
      // the row that must finish. (Counting rows failed when one was pending; reading the
      // id back from the 3-second message failed once in CI with nothing else to go on.)
      const answered = page.waitForResponse(
        (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/v1/tasks/match',
        { timeout: 30000 },
      );
      const okButton = page.getByTestId('start-match-ok');
      await okButton.click();
      // A click that lands while the dialog animates in can be lost; a user clicks again
      // (the server never queues a second task of the same scope, whatever the clicks).
      for (let again = 0; again < 2; again++) {
        const sent = await Promise.race([answered.then(() => true), sleep(5000).then(() => false)]);
        if (sent || !(await okButton.isVisible())) break;
        console.log('    (no request 5 s after the click on OK, the dialog still open: clicking again)');
        await okButton.click();
      }
      const res = await answered;
      const started = await res.json().catch(() => null);
      assert.ok(res.ok() && Number.isInteger(started?.id), `POST /api/v1/tasks/match answered ${res.status()}: ${JSON.stringify(started)}`);
      const id = started.id;
      // and the admin is told which task it is
      await page.locator('.ant-message').getByText(`任务已创建（编号 ${id}）`).waitFor({ timeout: 15000 });
      const row = page.getByTestId('tasks-table').locator(`tbody tr[data-row-key="${id}"]`);
      await row.locator('[data-state="succeeded"]').waitFor({ timeout: 120000 });
      const task = (await api(base, keys.admin, '/api/v1/tasks?limit=500')).body.items.find((t) => t.id === id);
      assert.equal(task?.state, 'succeeded', `task ${id} as the API lists it`);
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

    await step('watched sites: a holder watches a site from the dashboard, the server visits it at once, the holder stops watching it; the overview lists its newest matches live', async () => {
      const wctx = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'zh-CN' });
      const wp = await wctx.newPage();
      await signIn(wp, base, keys.demo);
      const liveRows = await waitRowsSettled(wp, 'live-table');
      const newest = (await api(base, keys.demo, '/api/v1/matches?sort=-id&limit=1')).body.items[0];
      assert.match((await liveRows.first().innerText()), new RegExp(newest.work_title.slice(0, 4)), 'the newest match first');
      await wp.getByTestId('nav').getByText('监测站点').click();
      await wp.getByText('还没有监测站点').waitFor();
      await wp.getByTestId('watched-add-entries').fill(`${live.base}sitemap.xml`);
      // a pattern no link of the site matches: the visit stores nothing, the later steps see no new task
      await wp.getByTestId('watched-add-patterns').fill('/never-a-chapter-[0-9]+\\.html$');
      await wp.getByTestId('watched-add-submit').click();
      const host = new URL(live.base).host;
      await wp.getByText(`已开始监测 ${host}`).waitFor();
      const listed = (await api(base, keys.demo, '/api/v1/watched-sites')).body.items;
      assert.deepEqual(listed.map((s) => [s.host, s.owner]), [[host, 'demo']]);
      // a new entry point is due at once: the server's watch loop visits it
      let visited = null;
      for (let i = 0; i < 120 && !visited; i++) {
        const s = (await api(base, keys.demo, `/api/v1/watched-sites/${encodeURIComponent(listed[0].id)}`)).body;
        if (s.entry_points[0].visits >= 1) visited = s;
        else await sleep(500);
      }
      assert.ok(visited, 'the site was visited within 60 s');
      await wp.reload();
      await wp.getByTestId('watched-visits').filter({ hasText: /^[1-9][0-9]* 次/ }).waitFor();
      await shot(wp, 'watched-sites');
      await wp.getByTestId('watched-remove').click();
      await wp.getByTestId('watched-remove-ok').click();
      await wp.getByText(`已停止监测 ${host}`).waitFor();
      assert.equal((await api(base, keys.demo, '/api/v1/watched-sites')).body.items.length, 0);
      await wctx.close();
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

    // ---- After a match: the holder's record, a notice sent by e-mail, the pages re-checked.
    const liveMatches = allMatches.filter((m) => m.url.startsWith(live.base));
    const byId = (a, b) => a - b;
    let lp; // the holder 洛观书局, signed in
    let rp; // a reviewer (analyst), signed in
    let noticeId;
    const newPage = async (key) => {
      const c = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'zh-CN', acceptDownloads: true });
      const p = await c.newPage();
      p.on('pageerror', (e) => consoleErrors.push(String(e)));
      await signIn(p, base, key);
      return p;
    };
    // a time as the dashboard shows it (the browser's time zone)
    const shownTime = (p, ms) =>
      p.evaluate((t) => {
        const d = new Date(t);
        const two = (n) => (n < 10 ? `0${n}` : String(n));
        return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
      }, ms);
    const statValue = async (p, id) => (await p.getByTestId(id).locator('.ant-statistic-content-value').innerText()).trim();

    await step('rights holder: the holder fills in its profile (saved with the version read; a stale save reloads and says so)', async () => {
      assert.equal(liveMatches.length, LIVE_PAGES.length, `one match per live page: ${liveMatches.map((m) => m.url)}`);
      assert.ok(liveMatches.every((m) => m.owner === 'luoguan-books' && m.site === '127.0.0.1'));
      lp = await newPage(keys.luoguan);
      await lp.getByTestId('nav').getByText('权利人').click();
      await lp.waitForURL(/\/holders\/luoguan-books$/);
      await lp.getByTestId('profile-card').waitFor();
      assert.equal(await lp.getByTestId('holder-picker').count(), 0, 'a holder sees its own record only');
      const profile = { legal_name: '洛观书局有限公司', contact_person: '王编辑', address: '北京市东城区书香路 1 号', phone: '010-12345678', email: 'rights@luoguan.example' };
      for (const [k, v] of Object.entries(profile)) await lp.getByTestId(`profile-${k}`).fill(v);
      await lp.getByTestId('profile-save').click();
      await lp.getByText('资料已保存').waitFor();
      await lp.locator('[data-testid="holder-version"][data-version="1"]').waitFor({ state: 'attached' });
      const stored = (await api(base, keys.luoguan, '/api/v1/holders/luoguan-books')).body;
      assert.equal(stored.version, 1);
      assert.deepEqual(stored.profile, profile);
      // an admin saves first: the page's save names a stale version, is refused, and reloads
      const other = await api(base, keys.admin, '/api/v1/holders/luoguan-books/profile', { method: 'PUT', body: JSON.stringify({ ...profile, phone: '010-87654321', version: 1 }) });
      assert.equal(other.status, 200);
      await lp.getByTestId('profile-phone').fill('010-00000000');
      await lp.getByTestId('profile-save').click();
      await lp.getByText('其他人刚刚修改了该权利人的资料，已重新加载最新内容，请核对后再保存。').waitFor();
      await lp.locator('[data-testid="holder-version"][data-version="2"]').waitFor({ state: 'attached' });
      assert.equal(await lp.getByTestId('profile-phone').inputValue(), '010-87654321', 'the stored value is shown, not overwritten');
      // a rights document: uploaded, listed, kept under its SHA-256
      const doc = join(data, '著作权登记证书.txt');
      writeFileSync(doc, '洛观书局 著作权登记证书（测试件）\n');
      await lp.getByTestId('documents-card').locator('input[type=file]').setInputFiles(doc);
      await lp.getByTestId('documents-table').getByText('著作权登记证书.txt').waitFor();
      const docs = (await api(base, keys.luoguan, '/api/v1/holders/luoguan-books')).body.documents;
      assert.equal(docs.length, 1);
      assert.equal(docs[0].size, readFileSync(doc).length);
      await shot(lp, 'holder');
    });

    await step('rights holder: a licensed domain re-labels the matches on it; they show as licensed, never as a review choice', async () => {
      const onIt = (await api(base, keys.luoguan, '/api/v1/matches?site=pirate.example&limit=500')).body.items.filter((m) => m.status === 'new' || m.status === 'confirmed');
      assert.ok(onIt.length >= 1, 'the holder has matches on the domain it licenses');
      await lp.getByTestId('licensed-add').click();
      await lp.getByTestId('licensed-domain').last().fill('https://Pirate.Example/');
      await lp.getByTestId('licensed-save').click();
      await lp.getByText(`授权站点已保存：${onIt.length} 条线索标记为已授权站点，0 条恢复为待审核。`).waitFor();
      const holder = (await api(base, keys.luoguan, '/api/v1/holders/luoguan-books')).body;
      assert.deepEqual(holder.licensed.map((l) => l.domain), ['pirate.example']);
      await lp.goto(`${base}/matches?status=licensed`);
      await waitRowCount(lp, 'matches-table', onIt.length);
      assert.equal(await lp.getByTestId('matches-table').locator('[data-status="licensed"]').count(), onIt.length);
      await lp.getByTestId('matches-table').locator('thead .ant-checkbox-input').check();
      await lp.getByTestId('bulk-bar').waitFor();
      assert.equal(await lp.getByTestId('bulk-bar').getByText('已授权站点').count(), 0, 'no review button sets licensed');
      await shot(lp, 'matches-licensed');
    });

    await step('notices: a reviewer confirms the live site’s matches and drafts a notice for that site from the matches page', async () => {
      rp = await newPage(keys.analyst);
      await rp.goto(`${base}/matches?site=127.0.0.1`);
      await waitRowCount(rp, 'matches-table', liveMatches.length);
      await rp.getByTestId('matches-table').locator('thead .ant-checkbox-input').check();
      await rp.getByTestId('bulk-confirm').click();
      await rp.waitForFunction(
        (n) => document.querySelectorAll('[data-testid="matches-table"] [data-status="confirmed"]').length === n,
        liveMatches.length,
      );
      await rp.getByTestId('draft-notice').click();
      await rp.getByTestId('draft-site').waitFor();
      assert.equal(await rp.getByTestId('draft-site').inputValue(), '127.0.0.1');
      await rp.getByTestId('draft-ok').click();
      await rp.waitForURL(/\/notices\?id=\d+/);
      await rp.locator('[data-testid="notice-detail"][data-state="draft"]').waitFor({ timeout: 60000 });
      noticeId = Number(await rp.getByTestId('notice-detail').getAttribute('data-notice-id'));
      const n = (await api(base, keys.analyst, `/api/v1/notices/${noticeId}`)).body;
      assert.equal(n.owner, 'luoguan-books');
      assert.equal(n.site, '127.0.0.1');
      assert.deepEqual([...n.match_ids].sort(byId), liveMatches.map((m) => m.id).sort(byId));
      await rp.getByTestId('notice-matches').locator('tbody tr.ant-table-row').nth(liveMatches.length - 1).waitFor();
      assert.equal(await rp.getByTestId('notice-message-id').innerText(), n.message_id);
      assert.ok(n.files.some((f) => f.name === 'notice.html'));
      // the printable notice opens in a new tab and states the holder
      const [popup] = await Promise.all([rp.waitForEvent('popup'), rp.getByTestId('open-notice.html').click()]);
      await popup.waitForLoadState();
      assert.ok((await popup.content()).includes('洛观书局有限公司'), 'the notice states the holder');
      await popup.close();
      await shot(rp, 'notice-draft');
    });

    await step('notices: the reviewer picks the suggested address and sends the notice; the SMTP server got exactly one message', async () => {
      // the suggestions of the site's contact page, the best one proposed
      await rp.getByTestId('suggestion').filter({ hasText: CONTACT_ADDRESS }).waitFor();
      assert.equal(await rp.getByTestId('recipient').inputValue(), CONTACT_ADDRESS);
      await rp.getByTestId('recipient').fill('');
      assert.equal(await rp.getByTestId('notice-send').isDisabled(), true, 'no send without a recipient');
      // picked from the recipient chooser's list
      await rp.getByTestId('recipient').click();
      await rp.getByTestId('recipient-option').filter({ hasText: CONTACT_ADDRESS }).click();
      assert.equal(await rp.getByTestId('recipient').inputValue(), CONTACT_ADDRESS);
      assert.equal(mailbox(mailDir).length, 0);
      await rp.getByTestId('notice-send').click();
      await rp.getByTestId('notice-send-ok').click();
      await rp.locator('[data-testid="notice-detail"][data-state="sent"]').waitFor({ timeout: 60000 });
      assert.equal(await rp.getByTestId('notice-recipient').innerText(), CONTACT_ADDRESS);
      assert.equal(await rp.getByTestId('notice-send').count(), 0, 'no send button once sent');
      const n = (await api(base, keys.analyst, `/api/v1/notices/${noticeId}`)).body;
      assert.equal(n.state, 'sent');
      const mails = mailbox(mailDir);
      assert.equal(mails.length, 1, 'exactly one message reached the SMTP server');
      const mail = readFileSync(mails[0], 'utf8');
      assert.ok(mail.includes(n.message_id), 'the message carries the notice’s Message-ID');
      assert.ok(/^To:.*copyright@pirate-mirror\.example/im.test(mail), 'addressed to the chosen recipient');
      // sending again never mails twice
      const again = await api(base, keys.analyst, `/api/v1/notices/${noticeId}/send`, { method: 'POST', body: '{}' });
      assert.ok([200, 409].includes(again.status), `a second send: ${again.status}`);
      assert.equal(mailbox(mailDir).length, 1);
      await shot(rp, 'notice');
    });

    await step('removal tracking: two pages taken down; after a re-check the page lists exactly those two removed, with their time', async () => {
      for (const p of LIVE_PAGES.slice(1)) rmSync(join(site, p));
      const at = isoIn(3600_000);
      zhiwen('recheck', '--capture-allow-loopback', '--now', at);
      await lp.getByTestId('nav').getByText('下架跟踪').click();
      const rows = await waitRowCount(lp, 'removals-table', LIVE_PAGES.length);
      const removed = rows.filter({ has: lp.locator('[data-testid="removal-state"][data-state="removed"]') });
      assert.equal(await removed.count(), 2);
      const when = await shownTime(lp, Date.parse(at));
      for (let i = 0; i < 2; i++) {
        const text = await removed.nth(i).innerText();
        assert.ok(LIVE_PAGES.slice(1).some((p) => text.includes(p)), `a removed page: ${text}`);
        assert.equal(await removed.nth(i).getByTestId('removed-at').innerText(), when);
      }
      const up = rows.filter({ has: lp.locator('[data-testid="removal-state"][data-state="up"]') });
      assert.equal(await up.count(), 1);
      assert.ok((await up.innerText()).includes(LIVE_PAGE));
      assert.equal(await lp.getByTestId('removal-rate-of').innerText(), '已删除 2 / 3 个网页');
      await shot(lp, 'removals-checked');
    });

    await step('removal tracking: eight days on, the page still up is flagged; the figures say 2 of 3 removed; its timeline', async () => {
      zhiwen('recheck', '--capture-allow-loopback', '--now', isoIn(9 * 86_400_000));
      await lp.reload();
      await waitRowCount(lp, 'removals-table', LIVE_PAGES.length);
      const flagged = lp.getByTestId('removals-table').locator('tbody tr.ant-table-row').filter({ has: lp.getByTestId('flagged-tag') });
      await flagged.first().waitFor();
      assert.equal(await flagged.count(), 1);
      assert.ok((await flagged.innerText()).includes(LIVE_PAGE));
      assert.equal(await lp.getByTestId('removal-rate-of').innerText(), '已删除 2 / 3 个网页');
      assert.equal(await statValue(lp, 'stat-removal-rate'), '67%');
      assert.equal(await statValue(lp, 'stat-still-up'), '1');
      assert.equal(await statValue(lp, 'stat-flagged'), '1');
      // removed at the first re-check, an hour after the notice went out
      assert.match(await statValue(lp, 'stat-median'), /^(1\.0 小时|60 分钟)$/);
      // the live site's row (the licensed domain has a row too: its matches are counted licensed)
      const siteRow = lp.getByTestId('removals-by-site').locator('tbody tr.ant-table-row').filter({ hasText: '127.0.0.1' });
      assert.equal(await siteRow.count(), 1);
      assert.match(await siteRow.innerText(), /127\.0\.0\.1\s+1\s+3\s+2\s+67%/);
      assert.equal(await lp.getByTestId('removals-by-holder').count(), 0, 'a holder sees its own figures only');
      await lp.getByTestId('removals-filter-flagged').click();
      await lp.waitForURL(/flagged=1/);
      const rows = await waitRowCount(lp, 'removals-table', 1);
      await rows.first().getByTestId('timeline-link').click();
      await lp.getByTestId('watch-detail').waitFor();
      const items = lp.getByTestId('timeline-item');
      await items.nth(2).waitFor();
      assert.deepEqual(await items.evaluateAll((els) => els.map((e) => e.getAttribute('data-kind'))), ['notice', 'transition', 'flagged']);
      assert.ok((await items.first().innerText()).includes(`ZW-N-${String(noticeId).padStart(6, '0')}`));
      assert.equal(await items.nth(1).getAttribute('data-to'), 'up');
      await shot(lp, 'removal-timeline');
      await lp.context().close();
    });

    await step('notices: the sent notice offers a second notice for the page still up; reviewers see the figures per holder', async () => {
      await rp.goto(`${base}/notices?id=${noticeId}`);
      await rp.getByTestId('notice-still-up').waitFor();
      assert.match(await rp.getByTestId('notice-still-up').innerText(), /通知中有 1 个网页仍未删除。/);
      await rp.getByTestId('notice-follow-up').click();
      await rp.waitForFunction(
        (id) => {
          const d = document.querySelector('[data-testid="notice-detail"]');
          return d && d.getAttribute('data-notice-id') !== String(id) && d.getAttribute('data-state') === 'draft';
        },
        noticeId,
        { timeout: 60000 },
      );
      const second = (await api(base, keys.analyst, `/api/v1/notices/${await rp.getByTestId('notice-detail').getAttribute('data-notice-id')}`)).body;
      assert.equal(second.follow_up_of, noticeId);
      assert.deepEqual(second.match_ids, [liveMatches.find((m) => m.url.endsWith(LIVE_PAGE)).id]);
      await rp.goto(`${base}/removals`);
      await rp.getByTestId('removals-by-holder').getByText('luoguan-books').waitFor();
      await shot(rp, 'removals');
      await rp.context().close();
    });

    assert.deepEqual(consoleErrors, [], 'no uncaught errors in the page');
    ok = true;
  } finally {
    await browser.close();
    serve.proc.kill('SIGTERM');
    live.proc.kill('SIGTERM');
    smtp.proc.kill('SIGTERM');
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

