// flamegraph.test.mjs - the HTML flame graph in a real browser (headless Chromium via playwright-core).
//
// Generates collapsed profiles, turns them into pages with `jsampler convert`, loads them from file://
// and checks: no console or page errors, no network request of any kind, the hot method drawn where
// the page says, search share equal to the share computed here from the collapsed input (each sample
// counted once), click-to-zoom, reset, reverse, tooltip text, hostile names shown verbatim, and the
// load time of a profile with more than 100k distinct frames. If JSAMPLER_HTML names a page written by
// the agent, it gets the load / no-errors / search checks too.
//
// Environment: JSAMPLER_CLI (default build/jsampler), JSAMPLER_HTML (optional), CHROMIUM (default
// /usr/bin/chromium). Last line of output: "N passed, N failed".
import { chromium } from 'playwright-core';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..', '..');
const CLI = process.env.JSAMPLER_CLI || path.join(ROOT, 'build', 'jsampler');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const LOAD_BOUND_MS = 10000;
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

let passed = 0, failed = 0;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'jsampler-browser-'));

function fail(msg) { throw new Error(msg); }
function assert(cond, msg) { if (!cond) fail(msg); }
function near(a, b, eps, what) {
  assert(typeof a === 'number' && Math.abs(a - b) <= eps, `${what}: got ${a}, expected ${b} (within ${eps})`);
}

async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e && e.message ? e.message.split('\n')[0] : e}`);
  }
}

// ---- inputs ---------------------------------------------------------------------------------
// Three leaf methods under a common root, 60/30/10; burnA is reached twice (400 directly and 200
// through a recursive dispatch), so "app.Work.dispatch" appears twice in one stack.
const HOT = 'app.Work.burnA';
const EVIL = 'x.Evil</script><script>alert(1)</script><!--&lt"\'\\\u2028\u00fc\u65b9\u{1F525}\u0001';
const TITLE = 'split </title><script>alert(2)</script> & "quotes"';
const SPLIT = [
  ['java.lang.Thread.run;app.Main.main;app.Work.dispatch;app.Work.burnA', 400],
  ['java.lang.Thread.run;app.Main.main;app.Work.dispatch;app.Work.helper;app.Work.dispatch;app.Work.burnA', 200],
  ['java.lang.Thread.run;app.Main.main;app.Work.dispatch;app.Work.burnB', 300],
  [`java.lang.Thread.run;app.Main.main;app.Work.dispatch;${EVIL};app.Work.burnC`, 100],
];

function writeCollapsed(file, lines) {
  fs.writeFileSync(file, lines.map(([s, w]) => `${s} ${w}\n`).join(''));
}

// Share (%) of the weight of lines with at least one frame matching pred, from the collapsed input.
function shareOf(lines, pred) {
  let hit = 0, all = 0;
  for (const [s, w] of lines) {
    all += w;
    if (s.split(';').some(pred)) hit += w;
  }
  return 100 * hit / all;
}

// Weight of the call path prefix (root first), from the collapsed input.
function pathWeight(lines, prefix) {
  let w = 0;
  for (const [s, n] of lines) {
    const f = s.split(';');
    if (prefix.every((p, i) => f[i] === p)) w += n;
  }
  return w;
}

// 100,000 distinct leaves under 1,000 parents, plus one 3,000-frame-deep stack.
function bigProfile() {
  const lines = [];
  for (let i = 0; i < 100000; i++) {
    lines.push([`bench.Main.main;bench.p${i % 100}.C${i % 1000}.run;bench.leaf.L${i}.work(J)V`, 1 + (i % 7)]);
  }
  const deep = [];
  for (let d = 0; d < 3000; d++) deep.push(`bench.deep.D${d}.recurse`);
  lines.push([`bench.Main.main;${deep.join(';')}`, 100000]);
  return lines;
}

function convert(input, output, extra = []) {
  execFileSync(CLI, ['convert', ...extra, input, output], { stdio: ['ignore', 'pipe', 'pipe'] });
  assert(fs.existsSync(output), `${CLI} wrote no ${output}`);
}

// ---- browser --------------------------------------------------------------------------------
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jsampler-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: CHROMIUM,
  headless: true,
  args: ARGS,
  viewport: { width: 1200, height: 800 },
  offline: false,
});
const network = [];   // every request that is not file:, about: or data:
const local = (u) => /^(file|about|data|blob):/.test(u);
await context.route('**/*', (route) => {
  const u = route.request().url();
  if (local(u)) return route.continue();
  network.push(u);
  return route.abort();
});
context.on('request', (r) => { if (!local(r.url()) && !network.includes(r.url())) network.push(r.url()); });

// Opens url in a fresh page, collecting console errors, page errors and dialogs.
async function open(url) {
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); d.dismiss().catch(() => {}); });
  const t0 = Date.now();
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => window.jsampler && window.jsampler.ready === true, null, { timeout: 60000 });
  return { page, problems, wallMs: Date.now() - t0 };
}

const hook = (page, fn, arg) => page.evaluate(fn, arg);
const rectOf = (page, name) => hook(page, (n) => window.jsampler.rectOf(n), name);
const centre = (r) => [r.x + r.width / 2, r.y + r.height / 2];
const canvasWidth = (page) => hook(page, () => document.getElementById('fg').getBoundingClientRect().width);
const matchedText = (page) => page.$eval('#matched', (e) => e.textContent);
function matchedPct(text) {
  const m = /([0-9.]+)%/.exec(text);
  return m ? Number(m[1]) : NaN;
}
function sameColour(a, b, tol = 2) {
  return Array.isArray(a) && Array.isArray(b) && a.every((v, i) => Math.abs(v - b[i]) <= tol);
}

// Load, no errors, hottest frame drawn, search for it reported consistently. Returns the page.
async function basicChecks(label, url, expectShare) {
  let pg;
  await check(`${label}: loads with no console errors, page errors or dialogs`, async () => {
    pg = await open(url);
    const st = await hook(pg.page, () => ({ total: window.jsampler.totalWeight, problem: window.jsampler.problem }));
    assert(st.total > 0, 'total weight is 0');
    assert(!st.problem, `page reports: ${st.problem}`);
    assert(pg.problems.length === 0, pg.problems.join(' | '));
  });
  if (!pg) return null;
  const { page } = pg;
  await check(`${label}: the frame with the largest self weight is drawn and hit-tests to itself`, async () => {
    const h = await hook(page, () => window.jsampler.hottest());
    assert(h && h.self > 0, 'no hottest frame');
    await hook(page, (n) => window.jsampler.show(n), h.node);
    let r = await rectOf(page, h.node);
    if (!r || r.width < 2) {   // too narrow in the whole view: zoom to it (the check is about drawing)
      await hook(page, (n) => window.jsampler.zoomTo(n), h.node);
      r = await rectOf(page, h.node);
    }
    assert(r && r.width >= 2, `hottest frame ${h.name} is not drawn`);
    const px = await hook(page, ([x, y]) => window.jsampler.pixelAt(x, y), [r.x + 1, r.y + 1]);
    const want = await hook(page, (n) => window.jsampler.colorOf(n), h.node);
    assert(sameColour(px, want), `pixel ${px} at ${h.name} is not its colour ${want}`);
    const [cx, cy] = centre(r);
    const hit = await hook(page, ([x, y]) => window.jsampler.hitTest(x, y), [cx, cy]);
    assert(hit && hit.node === h.node, `hit test at the hottest frame gives ${hit && hit.name}`);
  });
  await check(`${label}: searching the hottest frame highlights it and reports its share`, async () => {
    const h = await hook(page, () => window.jsampler.hottest());
    await page.fill('#search', '');
    await page.locator('#search').pressSequentially(h.name);   // real key presses
    assert((await page.inputValue('#search')) === h.name, 'the search box does not hold the typed name');
    const text = await matchedText(page);
    const shown = matchedPct(text);
    const hookPct = await hook(page, () => window.jsampler.matchedPercent());
    assert(shown > 0 && shown <= 100, `#matched says "${text}"`);
    near(shown, hookPct, 0.01, '#matched vs matchedPercent()');
    assert(shown >= h.percent - 0.01, `share ${shown}% below the frame's own ${h.percent}%`);
    if (expectShare !== undefined) near(shown, expectShare(h.name), 0.1, `#matched for "${h.name}"`);
    const r = await rectOf(page, h.node);
    const px = await hook(page, ([x, y]) => window.jsampler.pixelAt(x, y), [r.x + 1, r.y + 1]);
    const hl = await hook(page, () => window.jsampler.highlightColor);
    assert(sameColour(px, hl, 0), `hottest frame not highlighted: pixel ${px}, want ${hl}`);
    await page.fill('#search', '');
    assert((await matchedText(page)) === '', '#matched not cleared with the search box');
    await hook(page, () => window.jsampler.reset());
    assert(pg.problems.length === 0, pg.problems.join(' | '));
  });
  return pg;
}

try {
  assert(fs.existsSync(CLI), `${CLI} is not built`);
  const splitIn = path.join(work, 'split.collapsed'), splitOut = path.join(work, 'split.html');
  writeCollapsed(splitIn, SPLIT);
  convert(splitIn, splitOut, ['--title', TITLE]);
  const splitShare = (term) => shareOf(SPLIT, (f) => f.includes(term));

  const pg = await basicChecks('split 60/30/10', pathToFileURL(splitOut).href, splitShare);
  if (pg) {
    const { page, problems } = pg;

    await check('split: title, totals and hooks', async () => {
      assert((await page.title()) === TITLE, `document.title is ${JSON.stringify(await page.title())}`);
      assert((await page.$eval('#title', (e) => e.textContent)) === TITLE, '#title differs');
      const j = await hook(page, () => ({ t: window.jsampler.totalWeight, f: window.jsampler.frameCount, h: window.jsampler.hottest() }));
      assert(j.t === 1000, `totalWeight ${j.t}`);
      assert(j.f === 8, `frameCount ${j.f}`);
      assert(j.h.name === HOT && j.h.self === 400, `hottest ${JSON.stringify(j.h)}`);
      const scripts = await hook(page, () => document.querySelectorAll('script').length); // data, the frames block, code
      assert(scripts === 3, `${scripts} script elements (a name escaped its string)`);
      for (const id of ['search', 'reset', 'reverse', 'matched', 'tooltip', 'fg', 'regex']) {
        assert(await page.$(`#${id}`), `#${id} missing`);
      }
    });

    await check('split: search share equals the collapsed input (substring, regex, once per sample)', async () => {
      for (const [term, regex, expect] of [
        [HOT, false, splitShare(HOT)],
        ['app.Work.dispatch', false, splitShare('app.Work.dispatch')],
        ['burn[AB]$', true, shareOf(SPLIT, (f) => /burn[AB]$/.test(f))],
        ['Evil</script>', false, splitShare('Evil</script>')],
      ]) {
        await page.setChecked('#regex', regex);
        await page.fill('#search', term);
        const shown = matchedPct(await matchedText(page));
        near(shown, expect, 0.1, `#matched for ${term}`);
      }
      near(splitShare(HOT), 60, 1e-9, 'input share of the hot method');
      near(splitShare('app.Work.dispatch'), 100, 1e-9, 'input share of dispatch');
      await page.setChecked('#regex', true);
      await page.fill('#search', '(');
      assert(/invalid/.test(await matchedText(page)), 'a bad regex is not reported');
      await page.setChecked('#regex', false);
      await page.fill('#search', '');
      assert(problems.length === 0, problems.join(' | '));
    });

    await check('split: tooltip shows the name, samples and % of total', async () => {
      const r = await rectOf(page, HOT);
      const [x, y] = centre(r);
      await page.mouse.move(x, y);
      await page.waitForSelector('#tooltip:not([hidden])', { timeout: 5000 });
      const text = await page.$eval('#tooltip', (e) => e.textContent);
      const w = pathWeight(SPLIT, ['java.lang.Thread.run', 'app.Main.main', 'app.Work.dispatch', HOT]);
      assert(text.includes(HOT), `tooltip "${text}" lacks the name`);
      assert(text.includes(`${w} samples`), `tooltip "${text}" lacks "${w} samples"`);
      assert(text.includes(`${(100 * w / 1000).toFixed(2)}%`), `tooltip "${text}" lacks the percentage`);
      await page.mouse.move(1, 1);
    });

    await check('split: a hostile frame name is drawn and shown verbatim', async () => {
      const r = await rectOf(page, EVIL);
      assert(r, 'the hostile frame is not drawn');
      const [x, y] = centre(r);
      await page.mouse.move(x, y);
      await page.waitForSelector('#tooltip:not([hidden])', { timeout: 5000 });
      const text = await page.$eval('#tooltip', (e) => e.textContent);
      assert(text.startsWith(EVIL), `tooltip shows ${JSON.stringify(text.slice(0, 80))}`);
      assert(text.includes('100 samples') && text.includes('10.00%'), `tooltip "${text}"`);
      assert(problems.length === 0, problems.join(' | '));
      await page.mouse.move(1, 1);
    });

    let before;
    await check('split: a click on a frame zooms so that it spans the full width', async () => {
      before = await rectOf(page, HOT);
      const target = 'app.Work.helper';
      const r = await rectOf(page, target);
      assert(r, `${target} is not drawn`);
      await page.mouse.click(...centre(r));
      const cw = await canvasWidth(page);
      const z = await rectOf(page, target);
      assert((await hook(page, () => window.jsampler.zoomed())) === target, 'zoomed() differs');
      assert(z && z.x <= (await page.$eval('#fg', (e) => e.getBoundingClientRect().left)) + 0.5 && z.width >= cw - 1,
        `zoomed frame spans ${z && z.width} of ${cw} px`);
      const anc = await rectOf(page, 'app.Main.main');
      assert(anc && anc.width >= cw - 1, 'an ancestor is not shown full width');
      assert((await rectOf(page, 'app.Work.burnB')) === null, 'a frame outside the zoom is still drawn');
      const deeper = await rectOf(page, HOT);
      assert(deeper && deeper.width >= cw - 1, 'the only child of the zoomed frame is not full width');
    });

    await check('split: reset restores the whole profile', async () => {
      await page.click('#reset');
      assert((await hook(page, () => window.jsampler.zoomed())) === 'all', 'still zoomed');
      const after = await rectOf(page, HOT);
      assert(JSON.stringify(after) === JSON.stringify(before), `rect ${JSON.stringify(after)} != ${JSON.stringify(before)}`);
      assert(await rectOf(page, 'app.Work.burnB'), 'burnB not drawn after reset');
    });

    await check('split: reverse toggles between flame (root at bottom) and icicle (root at top)', async () => {
      const st = async () => ({
        rev: await hook(page, () => window.jsampler.isReverse()),
        pressed: await page.$eval('#reverse', (e) => e.getAttribute('aria-pressed')),
        root: await rectOf(page, 'all'),
        hot: await rectOf(page, HOT),
      });
      const a = await st();
      assert(!a.rev && a.root.y > a.hot.y, `flame expected first: ${JSON.stringify(a)}`);
      await page.click('#reverse');
      const b = await st();
      assert(b.rev && b.pressed === 'true' && b.root.y < b.hot.y, `icicle expected: ${JSON.stringify(b)}`);
      const hit = await hook(page, ([x, y]) => window.jsampler.hitTest(x, y), centre(b.hot));
      assert(hit && hit.name === HOT, 'hit test wrong in icicle mode');
      await page.click('#reverse');
      const c = await st();
      assert(!c.rev && c.pressed === 'false' && JSON.stringify(c.hot) === JSON.stringify(a.hot), 'not restored');
      assert(problems.length === 0, problems.join(' | '));
    });
    await page.close();
  }

  // ---- 100k distinct frames -----------------------------------------------------------------
  const big = bigProfile();
  const bigIn = path.join(work, 'big.collapsed'), bigOut = path.join(work, 'big.html');
  writeCollapsed(bigIn, big);
  const c0 = Date.now();
  convert(bigIn, bigOut);
  const convertMs = Date.now() - c0;
  let bigPage;
  await check(`100k frames: loads and renders within ${LOAD_BOUND_MS} ms`, async () => {
    bigPage = await open(pathToFileURL(bigOut).href);
    const j = await hook(bigPage.page, () => ({
      frames: window.jsampler.frameCount, nodes: window.jsampler.nodeCount, depth: window.jsampler.maxDepth,
      loadMs: window.jsampler.loadMs, scriptMs: window.jsampler.scriptMs, renderMs: window.jsampler.lastRenderMs,
    }));
    const mb = (fs.statSync(bigOut).size / 1048576).toFixed(1);
    console.log(`     100k-frame page: ${j.frames} distinct frames, ${j.nodes} nodes, depth ${j.depth}, ${mb} MB; ` +
      `convert ${convertMs} ms; load+first render ${bigPage.wallMs} ms wall ` +
      `(page: ready at ${j.loadMs.toFixed(0)} ms, script ${j.scriptMs.toFixed(0)} ms, render ${j.renderMs.toFixed(1)} ms)`);
    assert(j.frames >= 100000, `only ${j.frames} distinct frames`);
    assert(bigPage.wallMs < LOAD_BOUND_MS, `took ${bigPage.wallMs} ms`);
    assert(bigPage.problems.length === 0, bigPage.problems.join(' | '));
  });
  if (bigPage) {
    const page = bigPage.page;
    await check('100k frames: search, zoom into a 3000-deep stack, reverse, all fast and error-free', async () => {
      const t0 = Date.now();
      await page.fill('#search', 'bench.leaf.L4');
      const shown = matchedPct(await matchedText(page));
      const searchMs = Date.now() - t0;
      near(shown, shareOf(big, (f) => f.includes('bench.leaf.L4')), 0.1, '#matched');
      assert(await hook(page, () => window.jsampler.zoomTo('bench.deep.D1500.recurse')), 'zoomTo failed');
      const r = await rectOf(page, 'bench.deep.D1500.recurse');
      assert(r && r.width >= (await canvasWidth(page)) - 1, 'deep frame not full width after zoom');
      const zoomRender = await hook(page, () => window.jsampler.render());
      await page.click('#reverse');
      await page.click('#reset');
      const fullRender = await hook(page, () => window.jsampler.render());
      console.log(`     search ${searchMs} ms; render zoomed ${zoomRender.toFixed(1)} ms, whole ${fullRender.toFixed(1)} ms`);
      assert(fullRender < 2000, `a render took ${fullRender} ms`);
      assert(bigPage.problems.length === 0, bigPage.problems.join(' | '));
    });
    await page.close();
  }

  // ---- a page written by the agent ----------------------------------------------------------
  const agentHtml = process.env.JSAMPLER_HTML;
  if (agentHtml && fs.existsSync(agentHtml)) {
    const p = await basicChecks(`agent page ${path.basename(agentHtml)}`, pathToFileURL(path.resolve(agentHtml)).href);
    if (p) await p.page.close();
  } else {
    console.log(`skip agent page: JSAMPLER_HTML ${agentHtml ? `(${agentHtml}) does not exist` : 'is not set'}`);
  }

  await check('no network request was made by any page', async () => {
    assert(network.length === 0, `requests: ${network.slice(0, 5).join(', ')}`);
  });
} catch (e) {
  failed++;
  console.log(`FAIL setup: ${e && e.message ? e.message.split('\n')[0] : e}`);
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
  fs.rmSync(work, { recursive: true, force: true });
}

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
