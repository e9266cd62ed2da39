// Opens the exported viewer in headless Chromium (playwright-core) and checks what a reader
// relies on. Usage: node browser_test.mjs PAGE.html SCREENSHOT.png HOSTILE.html
// The search checks need, in the environment: AGENTCORE_CLI (the tool), SEARCH_REPOSITORY (the
// fixtures' search-repository), FOLDING_PAGE (its session folding-0011 exported), WORK (a
// scratch folder) and HOSTILE_QUERY_PAGE (the tour exported with a query that holds markup).
import { execFileSync, spawnSync } from 'node:child_process';
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

  // Search keeps the matching entries in the tree and marks the terms in the messages.
  await page.fill('#search', 'rust');
  const visible = await page.locator('#tree .node:not(.hidden)').count();
  check(visible === 2, `search keeps the two matching tree entries (got ${visible})`);
  check((await page.textContent('#search-status')) === '2 matching entries', 'search reports its matches');
  check(JSON.stringify(await page.$$eval('#messages mark.hit-mark', (m) => m.map((x) => x.textContent))) === '["Rust"]',
        'the term is marked in the shown message');
  // Markup in a message is marked as text: the mark splits a text node, no element comes of it.
  await page.fill('#search', 'onerror');
  check(await page.locator('#tree .node:not(.hidden)').count() === 1, 'a word inside markup is found');
  await page.press('#search', 'Enter');
  text = await main();
  check(text.includes('</script><img src=x onerror=alert(1)>') && await page.locator('img[src="x"]').count() === 0,
        'a hit inside markup is marked as text');
  check(await page.textContent('#messages mark.hit-mark.current') === 'onerror', 'the hit in markup is the current mark');
  await page.fill('#search', '');
  check(await page.locator('#tree .node.hidden').count() === 0, 'clearing the search shows everything again');
  check(await page.locator('#messages mark').count() === 0, 'clearing the search removes the marks');

  // Back to the leaf's branch for the screenshot, a search at its first hit.
  await page.locator('#tree .node', { hasText: "You're welcome." }).click();
  await page.fill('#search', 'main');
  await page.press('#search', 'Enter');
  check(await page.textContent('#search-status') === '1 of 5 matching entries', 'the screenshot shows the first of five hits');
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

  await searchChecks(page);

  // A query that holds markup, given on the command line, is text in the box.
  await page.goto(pathToFileURL(path.resolve(process.env.HOSTILE_QUERY_PAGE)).href, { waitUntil: 'load' });
  await page.waitForSelector('#tree .node', { state: 'attached' });
  check(await page.inputValue('#search') === '</script><img src=x onerror=alert(1)>',
        'a query with markup from the command line is the text of the search box');
  check((await page.textContent('#search-status')).endsWith('matching entry'), 'the query with markup finds its entry');
  check(await page.locator('img[src="x"]').count() === 0, 'no element was made from the query');
  // Typed queries with markup, and an invalid one whose message quotes it, stay text.
  await page.fill('#search', '"<img src=x onerror=alert(6)>');
  check((await page.textContent('#search-status')).startsWith('invalid query: the phrase starting at character 0 has no closing'),
        'an invalid query is reported');
  await page.fill('#search', '<b>fn main()</b> -<i>');
  check(await page.locator('#messages b, #messages i, img[src="x"]').count() === 0, 'a typed query with markup makes no element');

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

// The search box against `agentcore search` and through a page it points at.
async function searchChecks(page) {
  let text;
  const cli = process.env.AGENTCORE_CLI;
  const repository = process.env.SEARCH_REPOSITORY;
  await page.goto(pathToFileURL(path.resolve(process.env.FOLDING_PAGE)).href, { waitUntil: 'load' });
  await page.waitForSelector('#tree .node');
  const data = await page.evaluate(() => JSON.parse(document.getElementById('session-data').textContent));
  const targets = new Map(data.entries.filter((e) => e.type === 'label').map((e) => [e.id, e.target_id]));
  const status = () => page.textContent('#search-status');
  const marks = () => page.$$eval('#messages mark.hit-mark', (m) => m.map((x) => x.textContent));
  const current = () => page.getAttribute('#messages .card.current-hit', 'data-id');

  // The page finds the entries the library finds, query by query (a label on the entry it labels).
  async function typeQuery(query, { substring = false, thinking = false } = {}) {
    await page.setChecked('#search-substring', substring);
    await page.setChecked('#search-thinking', thinking);
    await page.fill('#search', query);
  }
  const queries = [
    ['cafe'], ['CAFÉ'], ['creme brulee'], ['"creme brulee"'], ['"brulee creme"'], ['koln'], ['strasse'],
    ['aeroskobing'], ['oeuvre complete'], ['lodz'], ['istanbul'], ['αθηνα'], ['ЕЛКА'], ['ijssel'], ['京'],
    ['東京'], ['login-bug'], ['"login bug"'], ['log*'], ['"login b"*'], ['login -fixed'], ['getuserbyid'],
    ['auth/login.cpp'], ['zanzibar'], ['checkpoint'], ['flamingos'], ['flamingos', { thinking: true }],
    ['UserBy', { substring: true }], ['ogin.cp', { substring: true }], ['"in köln"', { substring: true }],
    ['cafe -"ogin pa"', { substring: true }],
  ];
  for (const [query, options = {}] of queries) {
    const args = ['search', query, repository, '--json', '--limit', '1000'];
    if (options.substring) args.push('--substring');
    if (options.thinking) args.push('--thinking');
    const run = spawnSync(cli, args, { encoding: 'utf8' });
    const hits = run.status === 0 ? JSON.parse(run.stdout).hits : [];
    const want = [...new Set(hits.map((h) => targets.get(h.entry_id) || h.entry_id))].sort();
    await typeQuery(query, options);
    const got = (await page.$$eval('#tree .node.search-hit', (rows) => rows.map((r) => r.dataset.id))).sort();
    check(run.status <= 1 && JSON.stringify(got) === JSON.stringify(want),
          `'${query}'${options.substring ? ' (substring)' : ''}${options.thinking ? ' (thinking)' : ''}: ` +
          `the page finds what agentcore search finds (${got.length} against ${want.length})`);
  }

  // Marks, the count, and next/previous across branches.
  await typeQuery('cafe');
  check(await status() === '4 matching entries', `four entries hold 'cafe' (${await status()})`);
  check(JSON.stringify(await marks()) === JSON.stringify(['Café', 'café', 'CAFÉ']),
        `the terms are marked in the leaf's branch, as written (${JSON.stringify(await marks())})`);
  const order = await page.$$eval('#tree .node.search-hit', (rows) => rows.map((r) => r.dataset.id));
  await page.click('#search-next');
  check(await status() === '1 of 4 matching entries' && await current() === order[0], 'next goes to the first hit');
  await page.press('#search', 'Enter');
  check(await status() === '2 of 4 matching entries' && await current() === order[1], 'Enter goes to the next hit');
  text = await page.textContent('#messages');
  check(text.includes('ΑΘΉΝΑ') && !text.includes('Back to the café'), 'a hit on another branch shows its branch');
  check(await page.textContent('#messages mark.hit-mark.current') === 'cafe\u0301',
        'a letter with a combining accent is marked with its accent');
  check(await page.getAttribute('#tree .node.current-hit', 'data-id') === order[1], 'the hit is marked in the tree');
  await page.press('#search', 'Shift+Enter');
  await page.press('#search', 'Shift+Enter');
  check(await status() === '4 of 4 matching entries' && await current() === order[3], 'previous wraps to the last hit');
  text = await page.textContent('#messages');
  check(text.includes('Back to the café'), 'going back to a hit on the first branch shows that branch again');

  // A hit in a collapsed tool result is opened.
  await typeQuery('getuserbyid');
  await page.click('#search-next');
  await page.click('#search-next');
  check(await page.locator('#messages .card.current-hit details[open] mark.hit-mark').count() > 0,
        'the collapsed part of a hit that holds a mark is opened');
  check(await page.locator('#messages .card.current-hit mark.hit-mark.current').isVisible(), 'the current mark is visible');

  // Thinking is searched when asked, and its block is opened.
  await typeQuery('flamingos', { thinking: true });
  await page.press('#search', 'Enter');
  check(await page.locator('#messages .card.current-hit details.thinking[open] mark.hit-mark').count() === 1,
        'a hit in the thinking is marked and its block opened');

  // No hit: said so, nothing marked, navigation off.
  await typeQuery('zanzibar');
  check(await status() === 'no matching entries', 'a query without hits says so');
  check(await page.locator('#messages mark').count() === 0 && await page.locator('#tree .node:not(.hidden)').count() === 0,
        'nothing is marked and no entry is kept when nothing matches');
  check(await page.isDisabled('#search-next') && await page.isDisabled('#search-prev'), 'next and previous are off without hits');
  await page.press('#search', 'Enter');
  check(await status() === 'no matching entries', 'Enter without hits does nothing');

  // An invalid query: the library's reason.
  await typeQuery('ab', { substring: true });
  check(await status() === "invalid query: the substring term 'ab' is shorter than 3 characters", 'an invalid query says why');
  check(await page.locator('#tree .node.hidden').count() === 0, 'an invalid query hides nothing');

  // Escape clears the box, the marks and the count.
  await typeQuery('cafe');
  await page.press('#search', 'Escape');
  check(await page.inputValue('#search') === '' && await status() === '' && await page.locator('#messages mark').count() === 0 &&
        await page.locator('#tree .node.hidden, #tree .node.search-hit').count() === 0, 'Escape clears the search');

  // From `agentcore search` to the hit: the command it prints writes a page opened at the hit.
  const run = spawnSync(cli, ['search', 'login bug', repository, '--json'], { encoding: 'utf8' });
  const hit = JSON.parse(run.stdout).hits.find((h) => h.snippet.startsWith('Is the login bug fixed'));
  check(hit && hit.view.includes(' --search ') && hit.view.endsWith(' -o hit.html'), 'agentcore search prints the command of the page');
  execFileSync('sh', ['-c', hit.view.replace(/^agentcore /, '"$0" '), cli], { cwd: process.env.WORK });
  await page.goto(pathToFileURL(path.join(process.env.WORK, 'hit.html')).href, { waitUntil: 'load' });
  await page.waitForSelector('#tree .node', { state: 'attached' });
  check(await page.inputValue('#search') === 'login bug', 'the page opens with the query in the box');
  check(await current() === hit.entry_id, 'the page opens at the hit');
  check(JSON.stringify(await page.$$eval('#messages .card.current-hit mark.hit-mark', (m) => m.map((x) => x.textContent))) ===
        '["login","bug"]', 'the hit has its terms marked');
  const count = JSON.parse(run.stdout).hits.length;
  check(/^\d+ of \d+ matching entries$/.test(await status()) && (await status()).endsWith(`of ${count} matching entries`),
        `the page counts the hits agentcore search found (${await status()}, ${count})`);

  // Without --entry the page opens at the first hit; at an entry that is not a hit it stays there.
  const greek = data.entries.find((e) => e.message && String(e.message.content).startsWith('ΑΘΉΝΑ')).id;
  const exported = (name, ...args) => {
    execFileSync(cli, ['export', repository, 'folding-0011', '--search', 'αθηνα', ...args, '-o', path.join(process.env.WORK, name)]);
    return pathToFileURL(path.join(process.env.WORK, name)).href;
  };
  await page.goto(exported('first.html'), { waitUntil: 'load' });
  await page.waitForSelector('#tree .node', { state: 'attached' });
  check(await current() === greek && await status() === '1 of 1 matching entry', 'without --entry the page opens at the first hit');
  await page.goto(exported('stay.html', '--entry', data.leaf), { waitUntil: 'load' });
  await page.waitForSelector('#tree .node', { state: 'attached' });
  check(await status() === '1 matching entry' && await page.locator('#messages .card.current-hit').count() === 0 &&
        (await page.textContent('#messages')).includes("The login page of the CAFÉ's site."),
        'at an entry that is not a hit the page stays at its branch');
}
