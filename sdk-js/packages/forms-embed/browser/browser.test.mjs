// Browser test of @gatehouse/forms-embed against a running gateway, in Debian's Chromium
// (playwright-core, no downloaded browser).
//
// 1. Drop-in: a page on its own origin (127.0.0.1:<random>) holds
//    <div data-gatehouse-form="contact" data-key=...> and {gateway}/embed/forms.js. The test
//    checks labels and keyboard focus, submits empty (client errors, aria-invalid), fills the
//    form by keyboard and label, attaches a PNG, submits (multipart), sees the success
//    message, and finds the submission with its file through the admin inbox.
// 2. Iframe: a page holding <iframe src="{gateway}/embed/f/contact?key=...">; fill, submit
//    (JSON), success, and the inbox has it.
// A screenshot of the rendered form is saved (GATEHOUSE_BROWSER_SCREENSHOT, default
// ./screenshot.png beside this file; the iframe one as screenshot-iframe.png).
//
// Environment: GATEHOUSE_URL, GATEHOUSE_ADMIN_TOKEN, GATEHOUSE_FORMS_KEY, GATEHOUSE_FORMS_PROJECT
// (all required), CHROMIUM_PATH (default /usr/bin/chromium).
// Prints one line per case, then `browser: N passed, M failed`; exits 1 on any failure.
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const env = (n) => {
  const v = process.env[n];
  if (!v) { console.error(`browser.test: ${n} is required`); process.exit(2); }
  return v;
};
const gw = env('GATEHOUSE_URL').replace(/\/+$/, '');
const adminToken = env('GATEHOUSE_ADMIN_TOKEN');
const key = env('GATEHOUSE_FORMS_KEY');
const project = env('GATEHOUSE_FORMS_PROJECT');
const screenshot = resolve(process.env.GATEHOUSE_BROWSER_SCREENSHOT || join(here, 'screenshot.png'));
const screenshotIframe = screenshot.replace(/(\.png)?$/i, '-iframe.png');
const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const TIMEOUT = 20_000;
const results = [];

async function check(name, fn) {
  try {
    await fn();
    results.push({ name, ok: true });
    console.log(`ok   ${name}`);
  } catch (err) {
    results.push({ name, ok: false });
    console.log(`FAIL ${name}: ${err?.message ?? err}`);
  }
}
function assert(cond, msg) { if (!cond) throw new Error(msg); }

// A 1x1 PNG.
const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c63f80f00000101000518d84e0000000049454e44ae426082', 'hex');

const pages = {
  '/': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Drop-in form</title>
<link rel="stylesheet" href="${gw}/embed/forms.css"></head>
<body style="margin:24px"><h1>Contact</h1>
<div data-gatehouse-form="contact" data-key="${key}"></div>
<script src="${gw}/embed/forms.js" async></script></body></html>`,
  '/guarded': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Captcha form</title>
<link rel="stylesheet" href="${gw}/embed/forms.css"></head>
<body style="margin:24px"><div data-gatehouse-form="guarded" data-key="${key}"></div>
<script src="${gw}/embed/forms.js" async></script></body></html>`,
  '/iframe': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Iframe form</title></head>
<body style="margin:24px"><h1>Contact (iframe)</h1>
<iframe title="Contact form" src="${gw}/embed/f/contact?key=${encodeURIComponent(key)}" style="width:640px;height:620px;border:1px solid #ccc"></iframe>
</body></html>`,
};
const site = createServer((req, res) => {
  const body = pages[new URL(req.url, 'http://x').pathname];
  res.writeHead(body ? 200 : 404, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(body ?? 'not found');
});
await new Promise((r) => site.listen(0, '127.0.0.1', r));
// "localhost" gives the host page an origin other than the gateway's 127.0.0.1:port.
const origin = `http://localhost:${site.address().port}`;

async function inbox() {
  const res = await fetch(`${gw}/admin/v1/projects/${project}/forms/contact/submissions`, { headers: { Authorization: `Bearer ${adminToken}` } });
  assert(res.status === 200, `inbox answered ${res.status}`);
  return (await res.json()).items;
}

const userDataDir = mkdtempSync(join(tmpdir(), 'gatehouse-forms-browser-'));
let context;
try {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    timeout: 60_000,
    viewport: { width: 900, height: 760 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1'],
  });
} catch (err) {
  console.error(`browser.test: could not start Chromium at ${chromiumPath}: ${err.message}`);
  site.close();
  process.exit(2);
}

const pageErrors = [];
await check('drop-in script renders the form with labels', async () => {
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(`${origin}/`, { waitUntil: 'load' });
  await page.waitForSelector('[data-gatehouse-state="ready"]', { timeout: TIMEOUT });
  for (const label of ['Email', 'Message', 'Topic', 'Send me the newsletter', 'Photo']) {
    assert(await page.getByLabel(label, { exact: false }).count() >= 1, `no control labelled ${label}`);
  }
  await page.screenshot({ path: screenshot, fullPage: true });

  // Client validation: submit empty, errors shown and announced, focus on the first bad field.
  await page.getByRole('button', { name: 'Send' }).click();
  const err = page.locator('#' + (await page.getByLabel('Email').getAttribute('aria-describedby')).split(' ').pop());
  assert((await err.textContent()).includes('required'), `email error is "${await err.textContent()}"`);
  assert(await err.getAttribute('aria-live') === 'polite', 'errors are not in an aria-live region');
  assert(await page.getByLabel('Email').getAttribute('aria-invalid') === 'true', 'email not marked aria-invalid');
  assert(await page.evaluate(() => document.activeElement?.getAttribute('name')) === 'email', 'focus did not move to the first invalid field');

  // Keyboard: type into the focused field, Tab to the next.
  await page.keyboard.type('browser@example.com');
  await page.keyboard.press('Tab');
  assert(await page.evaluate(() => document.activeElement?.getAttribute('name')) === 'message', 'Tab did not reach the message field');
  await page.keyboard.type('Hello from Chromium');
  await page.getByLabel('Topic').selectOption('support');
  await page.getByLabel('Send me the newsletter').check();
  await page.getByLabel('Photo').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: png });
  const [req] = await Promise.all([
    page.waitForRequest((r) => r.url().endsWith('/forms/forms/contact/submit') && r.method() === 'POST', { timeout: TIMEOUT }),
    page.getByRole('button', { name: 'Send' }).click(),
  ]);
  assert((req.headers()['content-type'] ?? '').startsWith('multipart/form-data'), `submitted as ${req.headers()['content-type']}`);
  await page.waitForSelector('[data-gatehouse-state="success"]', { timeout: TIMEOUT });
  const msg = await page.locator('.gh-success').textContent();
  assert(msg.includes('Thanks! We will get back to you.'), `success message "${msg}"`);
  await page.screenshot({ path: screenshot.replace(/(\.png)?$/i, '-success.png'), fullPage: true });
  await page.close();
});

await check('the drop-in submission is in the admin inbox with its file', async () => {
  const items = await inbox();
  const s = items.find((i) => i.data.email === 'browser@example.com');
  assert(s, `no submission from browser@example.com in ${JSON.stringify(items)}`);
  assert(s.data.topic === 'support' && s.data.newsletter === true, `data ${JSON.stringify(s.data)}`);
  assert(s.files.length === 1 && s.files[0].contentType === 'image/png' && s.files[0].size === png.length, `files ${JSON.stringify(s.files)}`);
  assert(/HeadlessChrome|Chrome/.test(s.userAgent) && s.ip, `userAgent ${s.userAgent}, ip ${s.ip}`);
  const f = await fetch(s.files[0].url, { headers: { Authorization: `Bearer ${adminToken}` } });
  const bytes = Buffer.from(await f.arrayBuffer());
  assert(f.status === 200 && bytes.equals(png), `file link answered ${f.status} with ${bytes.length} bytes`);
});

await check('iframe page renders and submits', async () => {
  const page = await context.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(`${origin}/iframe`, { waitUntil: 'load' });
  const frame = page.frameLocator('iframe[title="Contact form"]');
  await frame.locator('[data-gatehouse-state="ready"]').waitFor({ timeout: TIMEOUT });
  await page.screenshot({ path: screenshotIframe, fullPage: true });
  await frame.getByLabel('Email').fill('iframe@example.com');
  await frame.getByLabel('Message').fill('Hello from the iframe');
  await frame.getByRole('button', { name: 'Send' }).click();
  await frame.locator('[data-gatehouse-state="success"]').waitFor({ timeout: TIMEOUT });
  const items = await inbox();
  assert(items.some((i) => i.data.email === 'iframe@example.com' && i.files.length === 0), 'iframe submission not in the inbox');
  assert(items[0].data.email === 'iframe@example.com', 'inbox is not newest first');
  await page.close();
});

await check('server validation errors show per field', async () => {
  const page = await context.newPage();
  await page.goto(`${origin}/`, { waitUntil: 'load' });
  await page.waitForSelector('[data-gatehouse-state="ready"]', { timeout: TIMEOUT });
  await page.getByLabel('Email').fill('x@example.com');
  await page.getByLabel('Message').fill('ok');
  await page.route('**/forms/forms/contact/submit', (route) => route.fulfill({
    status: 400, contentType: 'application/json',
    body: JSON.stringify({ error: 'VALIDATION_FAILED', message: 'email: is not allowed', details: [{ field: 'email', problem: 'is not allowed' }] }),
  }));
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForFunction(() => document.querySelector('[name=email]')?.getAttribute('aria-invalid') === 'true', null, { timeout: TIMEOUT });
  const text = await page.locator('.gh-error').first().textContent();
  assert(text.includes('Is not allowed'), `field error "${text}"`);
  await page.close();
});

await check('captcha form shows the widget and sends the provider token', async () => {
  const page = await context.newPage();
  const widgetScripts = [];
  page.on('request', (r) => { if (r.url().startsWith('https://challenges.cloudflare.com/')) widgetScripts.push(r.url()); });
  await page.goto(`${origin}/guarded`, { waitUntil: 'load' });
  await page.waitForSelector('[data-gatehouse-state="ready"]', { timeout: TIMEOUT });
  assert(await page.locator('.cf-turnstile[data-sitekey="browser-site-key"]').count() === 1, 'no Turnstile widget element with the site key');
  assert(widgetScripts.length > 0, 'the Turnstile script was not requested');
  await page.getByLabel('Name').fill('Grace');
  await page.getByRole('button', { name: 'Send' }).click();
  const status = await page.locator('.gh-status').textContent();
  assert(status.includes('complete the challenge'), `status without a token: "${status}"`);
  // What the widget does once solved: a hidden cf-turnstile-response input in the form.
  await page.evaluate(() => {
    const i = document.createElement('input');
    i.type = 'hidden'; i.name = 'cf-turnstile-response'; i.value = 'good';
    document.querySelector('.cf-turnstile').append(i);
  });
  await page.getByRole('button', { name: 'Send' }).click();
  await page.waitForSelector('[data-gatehouse-state="success"]', { timeout: TIMEOUT });
  await page.close();
});

await check('no page errors', async () => {
  assert(pageErrors.length === 0, pageErrors.join('; '));
});

await context.close();
site.close();
rmSync(userDataDir, { recursive: true, force: true });
const passed = results.filter((r) => r.ok).length;
console.log(`browser: ${passed} passed, ${results.length - passed} failed (screenshot: ${screenshot})`);
process.exit(passed === results.length ? 0 : 1);
