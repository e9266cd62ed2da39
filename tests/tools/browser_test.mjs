// Opens the exported viewer in headless Chromium (playwright-core) and checks what a reader
// relies on. Usage: node browser_test.mjs PAGE.html SCREENSHOT.png [HOSTILE.html]
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(path.join(process.env.PLAYWRIGHT_MODULES, 'package.json'));
const { chromium } = require('playwright-core');

const [page_file, screenshot, hostile_file] = process.argv.slice(2);
const failures = [];
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures.push(what);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  const dialogs = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) requests.push(r.url()); });

  await page.goto(pathToFileURL(path.resolve(page_file)).href, { waitUntil: 'load' });
  await page.waitForSelector('#tree .node');

  check(await page.title() === 'Project tour — agentcore', 'the title is the session name');
  const meta = await page.textContent('#meta');
  check(meta.includes('tour-0001') && meta.includes('$0.3875') && meta.includes('39320'),
        'the header shows the id, the cost and the token total');

  // The leaf's branch is shown at first: the compaction, the kept steps, the last answer.
  const main = () => page.textContent('#messages');
  let text = await main();
  check(text.includes("You're welcome.") && text.includes('went through steps 1 to 17'),
        'the leaf branch is shown with its compaction');
  check(!text.includes('Maybe later.'), 'the abandoned last idea is not on the leaf branch');
  check(await page.locator('#messages .card.compacted').count() > 0, 'entries the compaction summarised are marked');

  // The hostile message is text: no element came from it and no dialog fired.
  check(text.includes('</script><img src=x onerror=alert(1)>'), 'markup in a message is shown as text');
  check(await page.locator('img[src="x"]').count() === 0, 'no element was made from message text');
  check(text.includes('<b>fn main()</b> & friends') === false, 'the other branch is not shown yet');

  // Collapsible tool calls, results and thinking; the image from its data URI.
  check(await page.locator('details.tool-call').count() > 0, 'tool calls are collapsible');
  check(await page.locator('details.thinking:not([open])').count() > 0, 'thinking is collapsed');
  const image = page.locator('img.content-image');
  check(await image.count() === 1 && (await image.getAttribute('src')).startsWith('data:image/png;base64,'),
        'the image is shown from its data URI');
  check(await image.evaluate((img) => img.complete && img.naturalWidth === 1), 'the image decodes');

  // Clicking a node of the abandoned branch shows that branch.
  await page.locator('#tree .node', { hasText: 'Sure, here is a sketch' }).click();
  text = await main();
  check(text.includes('<b>fn main()</b> & friends') && text.includes('Rewrite main.cpp in Rust.'),
        'clicking a tree node shows its branch');
  check(!text.includes("You're welcome."), 'the other branch is hidden');
  check(await page.locator('#tree .node.selected').count() === 1, 'the clicked node is selected');
  check(await page.locator('#tree .node.on-path').count() === 9, 'the path to the clicked node is marked');

  // Search filters the tree and the messages.
  await page.fill('#search', 'rust');
  const visible = await page.locator('#tree .node:not(.hidden)').count();
  check(visible === 2, `search keeps the two matching tree entries (got ${visible})`);
  check((await page.textContent('#search-status')).includes('2 matching entries'), 'search reports its matches');
  check(await page.locator('#messages .card:not(.hidden)').count() === 1, 'search filters the messages');
  await page.fill('#search', '');
  check(await page.locator('#tree .node.hidden').count() === 0, 'clearing the search shows everything again');

  // Back to the leaf's branch for the screenshot.
  await page.locator('#tree .node', { hasText: "You're welcome." }).click();
  await page.locator('#tree .node', { hasText: 'What is in this picture?' }).scrollIntoViewIfNeeded();
  await page.screenshot({ path: screenshot });
  console.log(`screenshot: ${screenshot}`);

  // Ids that are names of Object.prototype's members are ids like any other: only the labeled
  // one has a badge, and each shows its own branch.
  if (hostile_file) {
    await page.goto(pathToFileURL(path.resolve(hostile_file)).href, { waitUntil: 'load' });
    await page.waitForSelector('#tree .node');
    // Pairs, read into a Map: a plain object would meet the same trap on this side.
    const badges = new Map(await page.$$eval('#tree .node', (rows) => rows.map((row) => {
      const badge = row.querySelector('.badge');
      return [row.dataset.id, badge ? badge.textContent : null];
    })));
    for (const id of ['__proto__', 'hasOwnProperty', 'toString'])
      check(badges.has(id) && badges.get(id) === null, `no badge on the entry '${id}' (got ${badges.get(id)})`);
    check(badges.get('constructor') === 'built \x1b[1mhere\nnow',
          `the entry 'constructor' has its own label (got ${badges.get('constructor')})`);
    await page.locator('#tree .node', { hasText: 'Proto entry' }).click();
    text = await main();
    check(text.includes('Proto entry') && !text.includes('Constructor entry') && text.includes('Hello'),
          "clicking the entry '__proto__' shows its branch");
    await page.fill('#search', 'object');
    check(await page.locator('#tree .node:not(.hidden)').count() === 0, 'no entry matches what Object.prototype holds');
  }

  check(errors.length === 0, `no console errors (${errors.join(' | ')})`);
  check(dialogs.length === 0, `no dialog fired (${dialogs.join(' | ')})`);
  check(requests.length === 0, `no network requests (${requests.join(' | ')})`);
} finally {
  await browser.close();
}
if (failures.length) {
  console.error(`${failures.length} check(s) failed`);
  process.exit(1);
}
