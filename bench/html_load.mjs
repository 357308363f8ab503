// html_load.mjs PAGE.html [loads=3] - load time of a jsampler flame graph in headless Debian Chromium.
//
// Reuses the playwright-core installed for the browser test (java-test-harness/browser). Each load is a fresh
// page in one browser: load_ms is navigation to the 'load' event, ready_ms navigation until the page says it
// has drawn (window.jsampler.ready), page_ms the page's own figure (navigation start to its script done).
// Prints one JSON line: {"load_ms": [...], "ready_ms": [...], "page_ms": [...], "nodes": N}.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(HERE, '..', 'java-test-harness', 'browser', 'package.json'));
const { chromium } = require('playwright-core');

const page_file = process.argv[2];
const loads = Number(process.argv[3] || 3);
if (!page_file || !fs.existsSync(page_file)) {
  console.error('usage: node html_load.mjs PAGE.html [loads]');
  process.exit(2);
}
const url = pathToFileURL(path.resolve(page_file)).href;
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'jsampler-bench-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
  viewport: { width: 1200, height: 800 },
});
const result = { load_ms: [], ready_ms: [], page_ms: [], nodes: null };
try {
  for (let i = 0; i < loads; i++) {
    const page = await context.newPage();
    const t0 = performance.now();
    await page.goto(url, { waitUntil: 'load', timeout: 120000 });
    const t1 = performance.now();
    await page.waitForFunction(() => window.jsampler && window.jsampler.ready === true, null, { timeout: 120000 });
    const t2 = performance.now();
    result.load_ms.push(Math.round(t1 - t0));
    result.ready_ms.push(Math.round(t2 - t0));
    if (result.nodes === null) {
      result.nodes = await page.evaluate(() => window.jsampler.nodeCount ?? null);
    }
    result.page_ms.push(await page.evaluate(() => Math.round(window.jsampler.loadMs ?? -1)));
    await page.close();
  }
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
console.log(JSON.stringify(result));
