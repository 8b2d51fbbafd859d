// Browser test of the dashboard against a running gateway, in Debian's Chromium (playwright-core,
// no downloaded browser). run-against-gateway.sh starts the gateway and creates the user.
//
// Always: the app is served by the binary at /dashboard/ (index, script, stylesheet, the SPA
// fallback for a deep link), the sign-in page has inputs labelled Email and Password and a
// button named Sign in, is usable by keyboard, and a failed sign-in shows the API's message.
// With dashboard accounts (GATEHOUSE_DASH_ACCOUNTS=1): sign in as an owner of dash-ui; the
// navigation has the eight links of decisions.md 8.2; the projects page lists the org's project
// and nothing of other-org; a key is created and its value seen once (gone after dismissing and
// after a reload), then revoked (the key answers 401); a template is edited and the subject and
// HTML preview follow what is typed before it is saved (the stored one unchanged until Save);
// suppressions take an add and a remove; a message sent through the public
// API shows its delivery log reaching delivered; 26 messages page through the cursors; a
// submission with a file made through the forms embed (forms.js on a page of another origin)
// shows in the inbox with its file and in the CSV export; an image uploaded through the public files API shows
// with its thumbnail, its alt text and tags are edited, it is deleted (its URL answers 404); a
// record list shows a draft with its badge; a record is saved unpublished, published from the
// list and read through the public records API; an NDJSON
// import reports; the record list searches titles (a draft found) and sorts; the forms page
// picks a form from the definitions; the membership page lists
// the connections with the active one and no secret, and switches it (GET /config follows);
// an owner invites by link, the invitee accepts in another browser and is signed in, the owner
// changes its role and removes it (its session ends); the invitee's account page lists its
// sessions, signs out the others and changes its password; the webhooks page lists the webhooks
// without secrets and opens one's deliveries; a module that is not Wasm shows the API's message; every page opens without a
// script error (desktop and a phone-sized viewport); sign-out ends the session; an owner of
// other-org sees none of dash-ui (pages and the admin API with its session). Screenshots of
// each page land in GATEHOUSE_DASH_OUTPUT.
//
// Prints one line per case (ok / FAIL / skip), then `browser: N passed, M failed, K skipped`;
// exits 1 on any failure.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const env = (n) => {
  const v = process.env[n];
  if (!v) { console.error(`browser.test: ${n} is required`); process.exit(2); }
  return v;
};
const gw = env('GATEHOUSE_URL').replace(/\/+$/, '');
const adminToken = env('GATEHOUSE_ADMIN_TOKEN');
const out = env('GATEHOUSE_DASH_OUTPUT');
const accounts = process.env.GATEHOUSE_DASH_ACCOUNTS === '1';
const email = process.env.GATEHOUSE_DASH_EMAIL ?? '';
const password = process.env.GATEHOUSE_DASH_PASSWORD ?? '';
const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const TIMEOUT = 15_000;
const results = [];

async function check(name, fn) {
  try {
    await fn();
    results.push('ok');
    console.log(`ok   ${name}`);
  } catch (err) {
    results.push('fail');
    console.log(`FAIL ${name}: ${err?.message ?? err}`);
  }
}
function skip(name, why) {
  results.push('skip');
  console.log(`skip ${name}: ${why}`);
}
function assert(cond, msg) { if (!cond) throw new Error(msg); }

/** Calls the admin API with the operator token (set-up and cross-checks only). */
async function admin(path, init = {}) {
  return fetch(`${gw}/admin/v1${path}`, { ...init, headers: { Authorization: `Bearer ${adminToken}`, ...(init.headers ?? {}) } });
}

const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu'] });
const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
context.setDefaultTimeout(TIMEOUT);
const page = await context.newPage();
page.on('dialog', (d) => d.accept());
const pageErrors = [];
page.on('pageerror', (e) => pageErrors.push(String(e)));
// Console errors (a failed request shows as one: the 401 of a session check, a 404 favicon).
// Checks that provoke an error on purpose (a wrong password, a validation error) clear them.
const consoleErrors = [];
page.on('console', (m) => m.type() === 'error' && consoleErrors.push(`${m.text()} (${m.location()?.url ?? ''})`));
/** The page's sideways overflow in CSS pixels (0 when nothing scrolls sideways). */
const sideways = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
/** Clicks a link of the main navigation, through the menu when the viewport collapses it. */
async function go(name) {
  const menu = page.getByRole('button', { name: 'Menu' });
  if (await menu.isVisible()) {
    if ((await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
  }
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
}
// A Wasm module the plugin host runs: exports memory, gatehouse_abi_v1 and a forms.submit hook
// that allows every submission (written byte by byte: the WAT example needs wat2wasm).
const allowWasm = Buffer.from('0061736d010000000105016000017f03030200000503010001073103066d656d6f727902001067617465686f7573655f6162695f7631000011686f6f6b5f666f726d735f7375626d697400010a0b02040041000b040041000b', 'hex');
const shot = (name) => page.screenshot({ path: join(out, `${name}.png`), fullPage: true });
// A 1x1 PNG.
const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f80f00000101000518d84e0000000049454e44ae426082', 'hex');

await check('served: /dashboard/ from the binary, gzip, and a deep link falls back to index.html', async () => {
  for (const [path, type] of [['/dashboard/', 'text/html'], ['/dashboard/app.js', 'javascript'], ['/dashboard/app.css', 'text/css'], ['/dashboard/email', 'text/html']]) {
    const r = await fetch(gw + path, { headers: { 'Accept-Encoding': 'gzip' } });
    assert(r.status === 200, `GET ${path} = ${r.status}`);
    assert((r.headers.get('content-type') ?? '').includes(type), `GET ${path} content-type ${r.headers.get('content-type')}`);
  }
});

await check('a fresh page: no console error (no session check before a sign-in, a favicon served)', async () => {
  await page.goto(`${gw}/dashboard/`);
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  await page.waitForLoadState('networkidle');
  assert(!consoleErrors.length, `console errors on a fresh page: ${consoleErrors.join('; ')}`);
  const icon = await fetch(`${gw}/dashboard/favicon.svg`);
  assert(icon.status === 200 && (icon.headers.get('content-type') ?? '').includes('svg'), `favicon = ${icon.status}`);
});

await check('sign-in page: inputs labelled Email and Password, button Sign in, keyboard only', async () => {
  await page.goto(`${gw}/dashboard/`);
  await page.getByLabel('Email').waitFor();
  await page.getByLabel('Password').waitFor();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  const focused = await page.evaluate(() => document.activeElement?.id);
  assert(focused === 'signin-email', `focus starts on ${focused}, want the Email input`);
  await shot('signin');
});

await check('failed sign-in shows the API message', async () => {
  await page.getByLabel('Email').fill('nobody@dash-ui.test');
  await page.keyboard.press('Tab');
  await page.keyboard.type('wrong password');
  await page.keyboard.press('Enter');
  const alert = page.getByRole('alert');
  await alert.waitFor();
  const text = await alert.innerText();
  assert(text.trim().length > 0, 'empty error');
  console.log(`     (message shown: ${JSON.stringify(text.trim())})`);
  await shot('signin-failed');
});

const NAV = ['Overview', 'Projects', 'Keys', 'Email', 'Forms', 'Files', 'Records', 'Membership', 'Plugins', 'Webhooks'];
const invitePassword = 'the invitee chose this';
let invitee = null;

if (!accounts) {
  for (const n of ['sign in', 'navigation', 'projects', 'keys', 'email', 'forms', 'pages']) skip(n, 'this binary has no dashboard accounts (gatehouse users)');
} else {
  // Seed data for the overview: two submissions and one email today.
  for (let i = 0; i < 2; i++) {
    await fetch(`${gw}/forms/forms/contact/submit`, { method: 'POST', headers: { 'X-API-Key': 'pk_live_dash_ui_web', 'Content-Type': 'application/json' }, body: JSON.stringify({ email: `seed${i}@dash-ui.test`, message: 'seeded for the overview' }) });
  }
  await fetch(`${gw}/email/notifications/send`, { method: 'POST', headers: { 'X-API-Key': 'sk_live_dash_ui_server', 'Content-Type': 'application/json' }, body: JSON.stringify({ to: { email: 'seed@dash-ui.test' }, subject: 'Seeded', bodyText: 'for the overview' }) });

  await check('sign in as an owner: the navigation has the eight links, and Overview opens first', async () => {
    consoleErrors.length = 0; // the failed sign-in's 401 above was on purpose
    await page.goto(`${gw}/dashboard/`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const nav = page.getByRole('navigation', { name: 'Main' });
    for (const n of NAV) await nav.getByRole('link', { name: n, exact: true }).waitFor();
    await page.getByRole('heading', { name: 'Overview of dash-site' }).waitFor();
  });

  await check('overview: figures and the 14-day chart drawn from seeded data', async () => {
    const chart = page.getByTestId('overview-chart');
    await chart.waitFor();
    const ov = await (await admin('/projects/dash-site/overview')).json();
    const today = ov.days[ov.days.length - 1];
    const subs = ov.forms.submissionsByDay[today] ?? 0;
    assert(subs >= 2 && ov.days.length === 14, `overview: ${JSON.stringify(ov)}`);
    // One bar a series a day with data: today's submissions bar says its count.
    const bar = chart.locator(`rect[data-day="${today}"][data-series="Submissions"]`);
    await bar.waitFor();
    assert((await bar.locator('title').textContent()).startsWith(`${today}: ${subs} `), 'the bar does not carry the count');
    assert(await chart.locator(`rect[data-day="${today}"][data-series="Emails"]`).count() === 1, 'no emails bar for today');
    const figures = page.getByRole('list', { name: 'Figures' });
    await figures.getByText('Submissions').waitFor();
    await page.getByRole('table', { name: 'Records per collection' }).getByRole('row', { name: /posts/ }).waitFor();
    await shot('overview');
  });

  await check('projects: the Projects link opens the org projects', async () => {
    await go('Projects');
    await page.getByRole('heading', { name: /Projects of dash-ui/ }).waitFor();
  });

  await check('projects: the org project, nothing of another org', async () => {
    await page.getByRole('cell', { name: 'dash-site', exact: true }).waitFor();
    const body = await page.content();
    assert(!body.includes('other-site') && !body.includes('other-org'), 'another org shows');
    await shot('projects');
  });

  await check('keys: create a key, see its value once, revoke it', async () => {
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByRole('heading', { name: 'Keys', exact: true }).waitFor();
    await page.getByLabel('Name').fill('ci-dashboard');
    await page.getByRole('button', { name: 'Create key' }).click();
    const value = page.getByLabel('Key value');
    await value.waitFor();
    const v = await value.inputValue();
    assert(/^sk_live_/.test(v), `key value ${v}`);
    await page.getByRole('button', { name: 'Copy key value' }).waitFor();
    await shot('keys-created');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('cell', { name: 'ci-dashboard', exact: true }).waitFor();
    assert(!(await page.content()).includes(v), 'the value is still on the page after dismissing');
    await page.reload();
    await page.getByRole('cell', { name: 'ci-dashboard', exact: true }).waitFor();
    assert(!(await page.content()).includes(v), 'the value shows again after a reload');
    assert(!(await page.content()).includes('secret-other'), 'a key of another org shows');
    await page.getByRole('button', { name: 'Revoke key ci-dashboard' }).click();
    await page.getByRole('row', { name: /ci-dashboard.*revoked/ }).waitFor();
    const res = await fetch(`${gw}/email/notifications/send`, { method: 'POST', headers: { 'X-API-Key': v, 'Content-Type': 'application/json' }, body: '{}' });
    assert(res.status === 401, `the revoked key still answers ${res.status}`);
    await shot('keys');
  });

  const templates = await admin('/projects/dash-site/email/templates');
  if (templates.status === 404 || templates.status === 405) {
    skip('email: edit a template and see the preview change', `GET /admin/v1/projects/{p}/email/templates answers ${templates.status} (not in this binary)`);
  } else {
    await check('email: edit a template and see the preview change', async () => {
      await page.getByRole('link', { name: 'Email', exact: true }).click();
      await page.getByRole('tab', { name: 'Templates' }).click();
      await page.getByRole('button', { name: 'welcome' }).click();
      await page.getByLabel('Sample variables (JSON)').fill('{"name":"Ada","product":"Gatehouse"}');
      const subject = page.getByTestId('preview-subject');
      await page.waitForFunction(() => document.querySelector('[data-testid="preview-subject"]')?.textContent === 'Welcome, Ada');
      await page.getByLabel('Subject').fill('Hello {{name}}, from the dashboard');
      // The preview follows the text as typed, before Save; the stored template is unchanged.
      await page.waitForFunction(() => document.querySelector('[data-testid="preview-subject"]')?.textContent === 'Hello Ada, from the dashboard');
      const before = await (await admin('/projects/dash-site/email/templates/welcome')).json();
      assert(before.subject === 'Welcome, {{name}}', `the preview saved the template: ${JSON.stringify(before)}`);
      await page.getByLabel('Body (HTML, {{variables}})').fill('<p>Draft for {{name}}: {{product}}</p>');
      await page.frameLocator('iframe[title="HTML preview"]').getByText('Draft for Ada: Gatehouse').waitFor();
      await shot('email-template-unsaved-preview');
      await page.getByLabel('Body (HTML, {{variables}})').fill('<p>Hi {{name}}, welcome to {{product}}.</p>');
      await page.getByRole('button', { name: 'Save template' }).click();
      await page.getByText('Template saved.').waitFor();
      const after = await (await admin('/projects/dash-site/email/templates/welcome')).json();
      assert(after.subject === 'Hello {{name}}, from the dashboard', `saved subject ${after.subject}`);
      assert((await subject.innerText()) === 'Hello Ada, from the dashboard', 'preview did not follow');
      const html = page.frameLocator('iframe[title="HTML preview"]').getByText('Hi Ada, welcome to Gatehouse.');
      await html.waitFor();
      await shot('email-templates');
    });
  }

  await check('email: suppressions add and remove', async () => {
    await page.getByRole('link', { name: 'Email', exact: true }).click();
    await page.getByRole('tab', { name: 'Suppressions' }).click();
    await page.getByRole('cell', { name: 'blocked@example.com', exact: true }).waitFor();
    await page.getByLabel('Email address').fill('bounced@dash-ui.test');
    await page.getByRole('button', { name: 'Add to suppressions' }).click();
    await page.getByRole('cell', { name: 'bounced@dash-ui.test', exact: true }).waitFor();
    await shot('email-suppressions');
    await page.getByRole('button', { name: 'Remove bounced@dash-ui.test' }).click();
    await page.getByRole('cell', { name: 'bounced@dash-ui.test', exact: true }).waitFor({ state: 'detached' });
  });

  await check('email: a message sent through the public API shows its delivery log reaching delivered', async () => {
    const sent = await fetch(`${gw}/email/notifications/send`, {
      method: 'POST',
      headers: { 'X-API-Key': 'sk_live_dash_ui_server', 'Content-Type': 'application/json' },
      body: JSON.stringify({ to: { email: 'reader@example.com' }, subject: 'Dashboard delivery log', bodyText: 'hello', tags: ['dash-test'] }),
    });
    const sentBody = await sent.text();
    assert(sent.status === 202, `send = ${sent.status} ${sentBody}`);
    const { id } = JSON.parse(sentBody);
    await page.getByRole('link', { name: 'Email', exact: true }).click();
    await page.getByRole('tab', { name: 'Messages' }).click();
    await page.getByLabel('Tag').fill('dash-test');
    await page.getByRole('cell', { name: 'Dashboard delivery log', exact: true }).waitFor();
    await page.getByRole('button', { name: `Delivery log of ${id}` }).click();
    // The open log refreshes itself until the message reaches a final status.
    await page.getByRole('region', { name: `Delivery log of ${id}` }).getByRole('cell', { name: 'delivered', exact: true }).first().waitFor();
    await shot('email-messages');
  });

  await check('email: messages page through the gateway cursors (26 messages, 25 a page)', async () => {
    for (let i = 0; i < 26; i++) {
      const r = await fetch(`${gw}/email/notifications/send`, {
        method: 'POST',
        headers: { 'X-API-Key': 'sk_live_dash_ui_server', 'Content-Type': 'application/json' },
        body: JSON.stringify({ to: { email: `page${i}@example.com` }, subject: `Paged ${i}`, bodyText: 'x', tags: ['dash-page'] }),
      });
      assert(r.status === 202, `send ${i} = ${r.status}`);
    }
    await page.getByLabel('Tag').fill('dash-page');
    await page.getByRole('cell', { name: 'Paged 25', exact: true }).waitFor(); // newest first
    assert((await page.getByRole('cell', { name: /^Paged \d+$/ }).count()) === 25, 'first page is not 25 messages');
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('cell', { name: 'Paged 0', exact: true }).waitFor();
    assert((await page.getByRole('cell', { name: /^Paged \d+$/ }).count()) === 1, 'second page is not the one oldest message');
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByRole('cell', { name: 'Paged 25', exact: true }).waitFor();
  });

  await check('forms: a submission with a file through the forms embed shows in the inbox with its file, and in the CSV', async () => {
    // The drop-in embed (forms.js from the gateway's embed host) on a page of another origin.
    const site = createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Contact</title>
<link rel="stylesheet" href="${gw}/embed/forms.css"></head><body><h1>Contact</h1>
<div data-gatehouse-form="contact" data-key="pk_live_dash_ui_web"></div>
<script src="${gw}/embed/forms.js" async></script></body></html>`);
    });
    await new Promise((r) => site.listen(0, '127.0.0.1', r));
    try {
      const embed = await context.newPage();
      await embed.goto(`http://localhost:${site.address().port}/`);
      await embed.waitForSelector('[data-gatehouse-state="ready"]');
      await embed.getByLabel('Email').fill('visitor@dash-ui.test');
      await embed.getByLabel('Message').fill('Seen in the dashboard inbox');
      await embed.getByLabel('Photo').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: png });
      await embed.getByRole('button', { name: 'Send' }).click();
      await embed.waitForSelector('[data-gatehouse-state="success"]');
      await embed.screenshot({ path: join(out, 'forms-embed-sent.png'), fullPage: true });
      await embed.close();
    } finally {
      site.close();
    }
    await page.getByRole('link', { name: 'Forms', exact: true }).click();
    // The form is picked from the project's definitions (GET .../forms), not typed.
    const picker = page.getByLabel('Form', { exact: false }).and(page.getByRole('combobox'));
    await picker.locator('option', { hasText: 'Contact us (contact)' }).waitFor({ state: 'attached' });
    await picker.selectOption('contact');
    await page.getByText('Seen in the dashboard inbox').waitFor();
    await page.getByText('visitor@dash-ui.test').first().waitFor();
    const link = page.getByRole('link', { name: 'photo.png' });
    await link.waitFor();
    const file = await page.request.get(new URL(await link.getAttribute('href'), gw).href);
    assert(file.status() === 200 && Buffer.from(await file.body()).equals(png), `the inbox file link answered ${file.status()}`);
    await shot('forms');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = await readFile(await download.path(), 'utf8');
    const cols = csv.split('\r\n')[0].split(',');
    assert(cols.includes('id') && cols.includes('photo') && csv.includes('Seen in the dashboard inbox'), `CSV: ${csv.slice(0, 300)}`);
    // The photo column holds the file's link (found by its form: the user agent column has commas).
    const fileURL = (csv.match(/https?:\/\/[^\s",]+\/files\/\d+/) ?? [])[0];
    assert(fileURL, `no file link in the CSV: ${csv.slice(0, 400)}`);
    const viaCSV = await page.request.get(new URL(fileURL, gw).href);
    assert(viaCSV.status() === 200 && Buffer.from(await viaCSV.body()).equals(png), `the CSV file link ${fileURL} answered ${viaCSV.status()}`);
  });

  await check('files: an image uploaded through the public API shows with its thumbnail (a signed variant), its variants listed; alt text edited; deleted', async () => {
    // A 4x3 PNG (the 1x1 one above has a bad zlib checksum: browsers show it, the variant
    // builder answers 422 VARIANT_UNREADABLE), uploaded as the files docs do: presign (secret
    // key), PUT the bytes, complete.
    const photo = Buffer.from('89504e470d0a1a0a0000000d4948445200000004000000030806000000b4f4aec6000000124944415478da63b82327f71f1933101400007d591915d1dc76af0000000049454e44ae426082', 'hex');
    const key = { 'X-API-Key': 'sk_live_dash_ui_server', 'Content-Type': 'application/json' };
    const slotRes = await fetch(`${gw}/files/upload/presigned`, { method: 'POST', headers: key, body: JSON.stringify({ filename: 'dot.png', mimeType: 'image/png', size: photo.length }) });
    const slotText = await slotRes.text();
    assert(slotRes.ok, `presign = ${slotRes.status} ${slotText}`);
    const slot = JSON.parse(slotText);
    const put = await fetch(slot.uploadUrl, { method: 'PUT', headers: { 'Content-Type': 'image/png' }, body: photo });
    assert(put.ok, `upload = ${put.status}`);
    const done = await fetch(`${gw}/files/upload/complete`, { method: 'POST', headers: key, body: JSON.stringify({ assetId: slot.assetId }) });
    assert(done.ok, `complete = ${done.status}`);
    await page.getByRole('link', { name: 'Files', exact: true }).click();
    const card = page.getByRole('article', { name: 'dot.png' });
    await card.waitFor();
    const img = card.locator('img.thumb');
    await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await img.elementHandle());
    // The thumbnail is a variant, not the original: the project names no "thumb", so a signed
    // 256 px ad-hoc crop in a format the browser takes (Chromium: AVIF), made on that request.
    const thumbURL = await img.getAttribute('src');
    assert(/\/dash-ui\/w256_h256_cover_auto_q70_s[0-9a-f]{32}\//.test(thumbURL), `thumbnail src ${thumbURL}`);
    const originalURL = await card.getByRole('link', { name: 'dot.png' }).getAttribute('href');
    assert(originalURL.includes('/originals/'), `the file name links the original: ${originalURL}`);
    await card.getByLabel('Variants of dot.png').click();
    const made = card.getByRole('list', { name: 'Variants made of dot.png' });
    await made.getByRole('listitem').filter({ hasText: 'avif' }).waitFor();
    assert((await made.getByRole('listitem').count()) === 1, `variants listed: ${await made.textContent()}`);
    await card.getByRole('button', { name: 'Edit dot.png' }).click();
    await card.getByLabel('Alt text').fill('A single red dot');
    await card.getByLabel('Tags (comma-separated)').fill('dot, test');
    await card.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('article', { name: 'dot.png' }).getByText('A single red dot').waitFor();
    const stored = await (await admin(`/assets/${slot.assetId}`)).json();
    assert(stored.alt === 'A single red dot' && stored.tags?.join(',') === 'dot,test', `stored asset: ${JSON.stringify(stored)}`);
    await shot('files');
    await page.getByRole('article', { name: 'dot.png' }).getByRole('button', { name: 'Delete dot.png' }).click();
    await page.getByRole('article', { name: 'dot.png' }).waitFor({ state: 'detached' });
    for (const u of [originalURL, thumbURL]) {
      const gone = await fetch(u);
      assert(gone.status === 404, `the deleted asset's URL ${u} answers ${gone.status}`);
    }
  });

  await check('records: a column per field, values as values, ids in natural order', async () => {
    await page.getByRole('link', { name: 'Records', exact: true }).click();
    await page.getByLabel('Collection').selectOption('posts');
    const table = page.getByRole('table', { name: 'Records' });
    await table.getByRole('row', { name: /post-draft/ }).getByText('draft', { exact: true }).waitFor();
    const heads = await table.locator('thead th').allInnerTexts();
    for (const h of ['title', 'category', 'views', 'publishedOn', 'author']) assert(heads.includes(h), `headers ${heads}`);
    const row1 = table.getByRole('row', { name: /post-1\b/ }).first();
    await row1.locator('td[data-field="category"] .chip').getByText('news', { exact: true }).waitFor();
    await row1.locator('td[data-field="author"]').getByText('Ada Lovelace').waitFor();
    assert((await row1.locator('td[data-field="views"]').innerText()).trim() === '12', 'views is not 12');
    assert(await row1.locator('td[data-field="publishedOn"] time[datetime="2026-11-02"]').count() === 1, 'the date is not a date');
    const ids = await table.locator('tbody tr td:first-child').allInnerTexts();
    assert(ids.indexOf('post-2') >= 0 && ids.indexOf('post-2') < ids.indexOf('post-10'), `ids in order ${ids}`);
    await shot('records');
  });

  await check('records: typed create (a select, a number, a date, a relation), published from the list, read publicly', async () => {
    const url = `${gw}/records/projects/dash-site/collections/posts/records/post-dash`;
    const read = () => fetch(url, { headers: { 'X-API-Key': 'pk_live_dash_ui_web' } });
    await page.getByLabel('Record id').fill('post-dash');
    await page.getByRole('checkbox', { name: 'Published' }).uncheck();
    await page.getByRole('textbox', { name: 'title', exact: true }).fill('Written in the dashboard');
    await page.getByRole('combobox', { name: 'category', exact: true }).selectOption('guide');
    await page.getByRole('spinbutton', { name: 'views', exact: true }).fill('42');
    await page.locator('#rec-f-publishedOn').fill('2026-11-20');
    await page.getByLabel('Search authors for author').fill('Grace');
    await page.getByRole('button', { name: 'Choose Grace Hopper for author' }).click();
    await shot('records-editor');
    await page.getByRole('button', { name: 'Save record' }).click();
    await page.getByText('Record saved.').waitFor();
    assert((await read()).status === 404, 'an unpublished record reads publicly');
    const row = page.getByRole('row', { name: /post-dash/ });
    await row.getByText('draft', { exact: true }).waitFor();
    await row.getByRole('button', { name: 'Publish post-dash' }).click();
    await row.getByText('published', { exact: true }).waitFor();
    const r = await read();
    const body = await r.text();
    assert(r.status === 200 && body.includes('Written in the dashboard'), `public read = ${r.status} ${body}`);
    const rec = JSON.parse(body);
    assert(rec.category === 'guide' && rec.views === 42 && String(rec.publishedOn).startsWith('2026-11-20') && (rec.author === 'grace' || rec.author?.id === 'grace'), `typed values: ${body}`);
    await row.locator('td[data-field="author"]').getByText('Grace Hopper').waitFor();
  });

  await check('records: a validation error shows beside its field; raw JSON is an option', async () => {
    const row = page.getByRole('row', { name: /post-dash/ });
    await row.getByRole('button', { name: 'Edit post-dash' }).click();
    await page.getByRole('heading', { name: 'Edit record post-dash' }).waitFor();
    await page.getByRole('textbox', { name: 'title', exact: true }).fill('');
    await page.getByRole('button', { name: 'Save record' }).click();
    const err = page.locator('#rec-f-title-err');
    await err.getByText('is required').waitFor();
    assert((await page.getByRole('textbox', { name: 'title', exact: true }).getAttribute('aria-invalid')) === 'true', 'the field is not marked invalid');
    await shot('records-validation');
    consoleErrors.length = 0; // the 400 was on purpose
    await page.getByRole('checkbox', { name: 'Edit as raw JSON' }).check();
    assert((await page.getByLabel('Data (JSON)').inputValue()).includes('"views": 42'), 'the raw JSON does not hold the form');
    await page.getByRole('checkbox', { name: 'Edit as raw JSON' }).uncheck();
  });

  await check('records: an NDJSON import shows its report', async () => {
    await page.getByLabel('NDJSON file (one record a line)').setInputFiles({
      name: 'posts.ndjson',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from('{"id":"post-imp-1","data":{"title":"Imported one"}}\n{"id":"post-imp-2","published":false,"data":{"title":"Imported draft"}}\n'),
    });
    await page.getByRole('button', { name: 'Import', exact: true }).click();
    const report = page.getByLabel('Import report');
    await report.waitFor();
    const r = await fetch(`${gw}/records/projects/dash-site/collections/posts/records/post-imp-1`, { headers: { 'X-API-Key': 'pk_live_dash_ui_web' } });
    assert(r.status === 200, `imported record reads ${r.status}; report ${await report.innerText()}`);
  });

  await check('records: the list searches titles (a draft found by q) and sorts', async () => {
    await page.getByLabel('Search titles').fill('public');
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    const rows = page.getByRole('table').last().getByRole('row');
    await page.getByRole('row', { name: /post-draft/ }).getByText('draft', { exact: true }).waitFor();
    await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 1);
    await page.getByLabel('Search titles').fill('');
    await page.getByLabel('Sort').fill('-id');
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.waitForFunction(() => document.querySelector('table tbody tr td')?.textContent === 'post-imp-2');
    await shot('records-sorted');
    await page.getByLabel('Sort').fill('id');
    await page.getByRole('button', { name: 'Apply', exact: true }).click();
    await page.waitForFunction(() => document.querySelector('table tbody tr td')?.textContent === 'post-1');
    assert((await rows.count()) > 1, 'sorted list is empty');
  });

  await check('plugins: uploading a module that is not Wasm shows the API message', async () => {
    await page.getByRole('link', { name: 'Plugins', exact: true }).click();
    await page.getByLabel('Module name').fill('not-wasm');
    await page.getByLabel('Wasm module').setInputFiles({ name: 'x.wasm', mimeType: 'application/wasm', buffer: Buffer.from('definitely not a wasm module') });
    await page.getByRole('button', { name: 'Upload module' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    console.log(`     (message shown: ${JSON.stringify((await alert.innerText()).trim())})`);
    await shot('plugins-upload-refused');
    consoleErrors.length = 0; // the 400 was on purpose
  });

  await check('plugins: a module uploaded is listed, attached to a hook, and its call counted', async () => {
    await page.getByLabel('Module name').fill('allow');
    await page.getByLabel('Wasm module').setInputFiles({ name: 'allow.wasm', mimeType: 'application/wasm', buffer: allowWasm });
    await page.getByRole('button', { name: 'Upload module' }).click();
    await page.getByText('Module allow uploaded.').waitFor();
    const modules = page.getByRole('table', { name: 'Uploaded modules' });
    const row = modules.getByRole('row', { name: /allow/ });
    await row.getByText('not attached').waitFor();
    await row.getByText(`${allowWasm.length} B`).waitFor();
    await row.getByRole('combobox', { name: 'Hook for allow' }).selectOption('forms.submit');
    await row.getByRole('button', { name: 'Attach allow' }).click();
    await row.locator('.chip').getByText('forms.submit').waitFor();
    await row.getByText('running', { exact: true }).waitFor();
    const sub = await fetch(`${gw}/forms/forms/contact/submit`, { method: 'POST', headers: { 'X-API-Key': 'pk_live_dash_ui_web', 'Content-Type': 'application/json' }, body: JSON.stringify({ email: 'plugin@dash-ui.test', message: 'through the plugin' }) });
    assert(sub.ok, `submission through the plugin = ${sub.status}`);
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await page.waitForFunction(() => [...document.querySelectorAll('tr')].some((tr) => /^allow\s+forms\.submit\s+running\s+1\b/.test(tr.innerText.trim())));
    await shot('plugins');
    await row.getByRole('button', { name: 'Detach allow from forms.submit' }).click();
    await row.getByText('not attached').waitFor();
  });

  await check('membership: the connections are listed with the active one, never the secret', async () => {
    await page.getByRole('link', { name: 'Membership', exact: true }).click();
    const row = page.getByRole('table', { name: 'Connections' }).getByRole('row', { name: /main/ });
    await row.getByText('active', { exact: true }).waitFor();
    await row.getByText('clerk.example.com').waitFor();
    const html = await page.content();
    assert(!html.includes('sk_test_dash_never_shown'), 'the identity provider secret reached the page');
    await shot('membership');
    const config = async () => (await fetch(`${gw}/membership/config`, { headers: { 'X-API-Key': 'pk_live_dash_ui_web' } })).text();
    assert((await config()).includes('clerk.example.com'), 'config before the switch');
    const table = page.getByRole('table', { name: 'Connections' });
    await page.getByRole('button', { name: 'Make backup active' }).click();
    await table.getByRole('row', { name: /backup/ }).getByText('active', { exact: true }).waitFor();
    await table.getByRole('row', { name: /main/ }).getByText('inactive', { exact: true }).waitFor();
    assert((await config()).includes('backup.example.com'), 'GET /config did not follow the switch');
    await shot('membership-switched');
    await page.getByRole('button', { name: 'Make main active' }).click();
    await table.getByRole('row', { name: /main/ }).getByText('active', { exact: true }).waitFor();
    assert((await config()).includes('clerk.example.com'), 'GET /config did not follow the switch back');
  });

  await check('members: an owner invites by link; the invitee accepts in another browser, is signed in; role changed; removed', async () => {
    await page.getByRole('link', { name: 'Members', exact: true }).click();
    await page.getByRole('heading', { name: 'Members of dash-ui' }).waitFor();
    await page.getByRole('table', { name: 'Users' }).getByRole('cell', { name: email, exact: true }).waitFor();
    await page.getByLabel('Email address to invite').fill('invitee@dash-ui.test');
    await page.getByRole('button', { name: 'Invite', exact: true }).click();
    const linkInput = page.getByLabel('Invite link', { exact: true });
    await linkInput.waitFor();
    const link = await linkInput.inputValue();
    assert(link.startsWith(`${gw}/dashboard/invite#token=`), `invite link ${link}`);
    await page.getByRole('button', { name: 'Copy invite link' }).waitFor();
    await page.getByRole('table', { name: 'Pending invites' }).getByRole('cell', { name: 'invitee@dash-ui.test', exact: true }).waitFor();
    await shot('members-invited');
    await page.getByRole('button', { name: 'I have sent it' }).click();
    assert(!(await page.content()).includes(link.split('#token=')[1]), 'the invite token is still on the page');
    // The invitee, in a browser of its own.
    const other = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    other.setDefaultTimeout(TIMEOUT);
    const inv = await other.newPage();
    await inv.goto(link);
    await inv.getByLabel('Choose a password').fill(invitePassword);
    await inv.getByLabel('Repeat the password').fill(invitePassword);
    await inv.screenshot({ path: join(out, 'invite-accept.png'), fullPage: true });
    await inv.getByRole('button', { name: 'Create my account' }).click();
    await inv.getByRole('heading', { name: /Overview of dash-site/ }).waitFor();
    await inv.getByText('invitee@dash-ui.test').first().waitFor();
    invitee = { context: other, page: inv };
    // Back to the owner: the invitee is a member; make it an owner, then a member again.
    await page.reload();
    const row = page.getByRole('table', { name: 'Users' }).getByRole('row', { name: /invitee@dash-ui.test/ });
    await row.waitFor();
    assert(!(await page.getByRole('table', { name: 'Pending invites' }).count()), 'the accepted invite is still pending');
    await page.getByLabel('Role of invitee@dash-ui.test').selectOption('owner');
    await page.getByText('invitee@dash-ui.test is now owner.').waitFor();
    const users = await (await admin('/users?org=dash-ui')).json();
    assert(users.items.some((u) => u.email === 'invitee@dash-ui.test' && u.role === 'owner'), `users: ${JSON.stringify(users)}`);
    await page.getByLabel('Role of invitee@dash-ui.test').selectOption('member');
    await page.getByText('invitee@dash-ui.test is now member.').waitFor();
    await shot('members');
  });

  await check("account: the invitee's sessions listed, the others signed out; password changed", async () => {
    assert(invitee, 'no invitee (the members check failed)');
    const inv = invitee.page;
    // A second session of the invitee, from elsewhere.
    const elsewhere = await fetch(`${gw}/admin/v1/session`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'User-Agent': 'curl/8' }, body: JSON.stringify({ email: 'invitee@dash-ui.test', password: invitePassword }) });
    assert(elsewhere.status === 200, `second sign-in ${elsewhere.status}`);
    const elsewhereCookie = elsewhere.headers.get('set-cookie').split(';')[0];
    await inv.getByRole('link', { name: 'Account', exact: true }).click();
    const sessions = inv.getByRole('table', { name: 'Sessions' });
    await sessions.getByText('This session').waitFor();
    await sessions.getByRole('cell', { name: 'curl/8' }).waitFor();
    await inv.screenshot({ path: join(out, 'account-sessions.png'), fullPage: true });
    await inv.getByRole('button', { name: 'Sign out all other sessions' }).click();
    await inv.getByText('1 other session(s) signed out.').waitFor();
    await sessions.getByRole('cell', { name: 'curl/8' }).waitFor({ state: 'detached' });
    const gone = await fetch(`${gw}/admin/v1/session`, { headers: { Cookie: elsewhereCookie } });
    assert(gone.status === 401, `the signed-out session answers ${gone.status}`);
    await inv.getByLabel('Current password').fill('not my password');
    await inv.getByLabel('New password', { exact: true }).fill('a brand new password');
    await inv.getByLabel('Repeat the new password').fill('a brand new password');
    await inv.getByRole('button', { name: 'Change password' }).click();
    await inv.getByRole('alert').getByText('is not your password').waitFor();
    await inv.getByLabel('Current password').fill(invitePassword);
    await inv.getByRole('button', { name: 'Change password' }).click();
    await inv.getByText('Password changed. Your other sessions are signed out.').waitFor();
    const signIn = await fetch(`${gw}/admin/v1/session`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: 'invitee@dash-ui.test', password: 'a brand new password' }) });
    assert(signIn.status === 200, `sign-in with the new password = ${signIn.status}`);
    await inv.screenshot({ path: join(out, 'account.png'), fullPage: true });
  });

  await check('members: the owner removes the invitee, whose session ends at once', async () => {
    assert(invitee, 'no invitee (the members check failed)');
    await page.getByRole('link', { name: 'Members', exact: true }).click();
    await page.getByRole('button', { name: 'Remove invitee@dash-ui.test' }).click();
    await page.getByText('invitee@dash-ui.test is removed.').waitFor();
    await invitee.page.reload();
    await invitee.page.getByRole('button', { name: 'Sign in' }).waitFor();
    await invitee.context.close();
  });

  await check('webhooks: the webhooks are listed without their secret; one is picked for its deliveries', async () => {
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    const row = page.getByRole('table', { name: 'Webhooks' }).getByRole('row', { name: /main/ });
    await row.getByText('https://hooks.dash-ui.test/in').waitFor();
    assert(!(await page.content()).includes('whsec_'), 'a webhook secret reached the page');
    await row.getByRole('button', { name: 'Deliveries of main' }).click();
    await page.getByRole('heading', { name: 'Deliveries of main' }).waitFor();
  });

  await check('webhooks: one is added (secret shown once), refused field by field, edited, tested and removed', async () => {
    await page.getByLabel('Name', { exact: true }).fill('ci-hook');
    await page.getByLabel('URL', { exact: true }).fill('ftp://hooks.dash-ui.test/ci');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.locator('#wh-url-err').getByText('http(s) URL').waitFor();
    consoleErrors.length = 0; // the 400 was on purpose
    await page.getByLabel('URL', { exact: true }).fill('https://hooks.dash-ui.test/ci');
    await page.getByRole('checkbox', { name: 'email.bounced' }).check();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const secret = page.getByLabel('Signing secret', { exact: true });
    await secret.waitFor();
    assert((await secret.inputValue()).startsWith('whsec_'), 'no generated secret shown');
    await shot('webhooks-created');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const table = page.getByRole('table', { name: 'Webhooks' });
    const row = table.getByRole('row', { name: /ci-hook/ });
    await row.getByText('form.submitted, email.bounced').waitFor();
    await row.getByRole('button', { name: 'Edit ci-hook' }).click();
    await page.getByRole('heading', { name: 'Edit webhook ci-hook' }).waitFor();
    await page.getByLabel('URL', { exact: true }).fill('https://hooks.dash-ui.test/ci-v2');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await row.getByText('https://hooks.dash-ui.test/ci-v2').waitFor();
    const listed = await (await admin('/projects/dash-site/webhooks')).json();
    assert(listed.items.some((h) => h.name === 'ci-hook' && h.url === 'https://hooks.dash-ui.test/ci-v2'), `webhooks: ${JSON.stringify(listed)}`);
    await row.getByRole('button', { name: 'Deliveries of ci-hook' }).click();
    await page.getByRole('heading', { name: 'Deliveries of ci-hook' }).waitFor();
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByText(/^Test event (delivered|sent)/).waitFor();
    await page.getByRole('table').last().getByRole('cell', { name: 'ping', exact: true }).waitFor();
    await shot('webhooks');
    await row.getByRole('button', { name: 'Remove ci-hook' }).click();
    await page.getByText('Webhook ci-hook removed.').waitFor();
    await row.waitFor({ state: 'detached' });
    const after = await (await admin('/projects/dash-site/webhooks')).json();
    assert(!after.items.some((h) => h.name === 'ci-hook'), 'the removed webhook is still listed');
  });

  for (const [w, h] of [[1280, 860], [390, 844]]) {
    await check(`every page at ${w} px: no sideways scroll, no console or script error (screenshots)`, async () => {
      await page.setViewportSize({ width: w, height: h });
      consoleErrors.length = 0;
      const wide = [];
      for (const n of [...NAV, 'Members', 'Account']) {
        await go(n);
        await page.getByRole('heading', { level: 1 }).first().waitFor();
        await page.waitForLoadState('networkidle');
        const o = await sideways();
        if (o > 0) wide.push(`${n}: ${o} px`);
        await page.screenshot({ path: join(out, `page-${n.toLowerCase()}-${w}.png`) });
      }
      if (w < 760) {
        await page.getByRole('button', { name: 'Menu' }).click();
        await page.screenshot({ path: join(out, `menu-${w}.png`) });
        await page.getByRole('button', { name: 'Menu' }).click();
      }
      await page.setViewportSize({ width: 1280, height: 860 });
      assert(!wide.length, `pages scrolling sideways: ${wide.join(', ')}`);
      assert(!consoleErrors.length, `console errors: ${consoleErrors.join('; ')}`);
      assert(!pageErrors.length, `page errors: ${pageErrors.join('; ')}`);
    });
  }

  await check('sign out: the session ends', async () => {
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
  });

  await check('a member of another org sees none of it', async () => {
    await page.getByLabel('Email').fill('other@other-org.test');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /Overview of other-site/ }).waitFor();
    await page.getByRole('link', { name: 'Projects', exact: true }).click();
    await page.getByRole('heading', { name: /Projects of other-org/ }).waitFor();
    await page.getByRole('cell', { name: 'other-site', exact: true }).waitFor();
    assert(!(await page.content()).includes('dash-site'), 'dash-site shows to another org');
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByRole('cell', { name: 'secret-other', exact: true }).waitFor();
    assert(!(await page.content()).includes('ci-dashboard'), 'a key of dash-ui shows to another org');
    // The session itself, asking for dash-ui's data by name: 404, nothing of it.
    for (const path of ['/projects/dash-site/forms/contact/submissions', '/orgs/dash-ui/keys', '/projects/dash-site/email/templates', '/assets?org=dash-ui']) {
      const r = await page.request.get(`${gw}/admin/v1${path}`);
      const body = await r.text();
      assert(r.status() === 404 && !body.includes('visitor@dash-ui.test') && !body.includes('welcome'), `GET ${path} = ${r.status()} ${body.slice(0, 120)}`);
    }
    await page.goto(`${gw}/dashboard/forms?form=contact`);
    await page.getByRole('heading', { name: /Inbox of contact/ }).waitFor();
    assert(!(await page.content()).includes('Seen in the dashboard inbox'), 'the other org inbox shows');
    await shot('other-org-forms');
  });
}

await browser.close();
const failed = results.filter((r) => r === 'fail').length;
console.log(`browser: ${results.filter((r) => r === 'ok').length} passed, ${failed} failed, ${results.filter((r) => r === 'skip').length} skipped (screenshots in ${out})`);
process.exit(failed ? 1 : 0);
