// Browser test of @gatehouse/membership against a running gateway.
//
// Serves the built example (dist/, from `npm run build`) on 127.0.0.1:<random>, opens it in
// Debian's Chromium (playwright-core, no downloaded browser) and checks what the package
// controls: the /config request, the loading -> error / ready states, that the page stays
// "ready" when Clerk's own script cannot be loaded (every non-local request is blocked), and
// the package's SignedIn / SignedOut over the real @clerk/react (Core 3 <Show>) with a local
// clerk-js stand-in (the page's ?clerk=stub-... mode) in the signed-in and signed-out states.
//
// Environment:
//   GATEHOUSE_URL                           gateway root, e.g. http://127.0.0.1:8787 (required)
//   GATEHOUSE_MEMBERSHIP_URL                membership base (default $GATEHOUSE_URL/membership)
//   GATEHOUSE_MEMBERSHIP_KEY_ACTIVE         pk_ key of a project with an active connection (required)
//   GATEHOUSE_MEMBERSHIP_KEY_NO_CONNECTION  pk_ key of a project without one (required)
//   GATEHOUSE_MEMBERSHIP_EXPECT_DOMAIN      if set, the instance domain the page must show
//   GATEHOUSE_BROWSER_SCREENSHOT            screenshot of the ready page (default ./screenshot.png
//                                           beside this file; the error page goes to *-no-connection.png)
//   CHROMIUM_PATH                           default /usr/bin/chromium
//
// Prints one line per case and then `browser: N passed, M failed`; exits 1 on any failure.
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, 'dist');
const STATE_TIMEOUT_MS = 20_000;
const results = [];

function summaryAndExit(extraFailures = 0) {
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed + extraFailures;
  console.log(`browser: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

function need(name) {
  const v = process.env[name];
  if (!v) {
    console.error(`browser.test: environment variable ${name} is required`);
    return null;
  }
  return v;
}

const gatewayUrl = need('GATEHOUSE_URL')?.replace(/\/+$/, '');
const keyActive = need('GATEHOUSE_MEMBERSHIP_KEY_ACTIVE');
const keyNone = need('GATEHOUSE_MEMBERSHIP_KEY_NO_CONNECTION');
if (!gatewayUrl || !keyActive || !keyNone) summaryAndExit(2);
if (!existsSync(join(dist, 'index.html'))) {
  console.error(`browser.test: ${dist}/index.html is missing: run \`npm run build\` in sdk-js first`);
  summaryAndExit(2);
}
const membershipUrl = (process.env.GATEHOUSE_MEMBERSHIP_URL || `${gatewayUrl}/membership`).replace(/\/+$/, '');
const expectDomain = process.env.GATEHOUSE_MEMBERSHIP_EXPECT_DOMAIN || '';
const screenshot = resolve(process.env.GATEHOUSE_BROWSER_SCREENSHOT || join(here, 'screenshot.png'));
const screenshotNoConnection = screenshot.replace(/(\.png)?$/i, '-no-connection.png');
const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const gatewayHost = new URL(membershipUrl).hostname;

// ---- static server for dist/ on 127.0.0.1:<random> ----
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.map': 'application/json' };
const staticServer = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const file = normalize(join(dist, path === '/' ? 'index.html' : path));
  if (!file.startsWith(dist + sep) || !existsSync(file) || !statSync(file).isFile()) {
    res.writeHead(404, { 'Content-Type': 'text/plain' });
    return res.end('not found');
  }
  res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store' });
  res.end(readFileSync(file));
});
await new Promise((r) => staticServer.listen(0, '127.0.0.1', r));
const pageOrigin = `http://127.0.0.1:${staticServer.address().port}`;

// ---- Chromium from Debian, fresh profile, no network but loopback and the gateway ----
const userDataDir = mkdtempSync(join(tmpdir(), 'gatehouse-membership-browser-'));
const localHosts = new Set(['127.0.0.1', 'localhost', '[::1]', '::1', gatewayHost]);
let context;
try {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath,
    headless: true,
    timeout: 60_000,
    viewport: { width: 900, height: 640 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE ${gatewayHost}`,
    ],
  });
} catch (err) {
  console.error(`browser.test: could not start Chromium at ${chromiumPath}: ${err.message}`);
  staticServer.close();
  rmSync(userDataDir, { recursive: true, force: true });
  summaryAndExit(2);
}

const blocked = [];
await context.route('**/*', (route) => {
  const url = new URL(route.request().url());
  if ((url.protocol === 'http:' || url.protocol === 'https:') && !localHosts.has(url.hostname)) {
    blocked.push(url.origin + url.pathname);
    return route.abort('blockedbyclient');
  }
  return route.continue();
});
// Record every value the state element takes, from the first paint on.
await context.addInitScript(() => {
  window.__membershipStates = [];
  const record = () => {
    const el = document.querySelector('[data-testid="membership-state"]');
    const v = el ? el.textContent : null;
    const list = window.__membershipStates;
    if (v !== null && list[list.length - 1] !== v) list.push(v);
  };
  new MutationObserver(record).observe(document, { subtree: true, childList: true, characterData: true });
});

async function openExample(key, extraQuery = '') {
  const page = await context.newPage();
  const configGets = [];
  const pageErrors = [];
  page.on('request', (req) => {
    if (req.method() === 'GET' && req.url() === `${membershipUrl}/config`) configGets.push(req.headers()['x-api-key']);
  });
  page.on('pageerror', (err) => pageErrors.push(String(err?.message ?? err)));
  const url = `${pageOrigin}/?key=${encodeURIComponent(key)}&baseUrl=${encodeURIComponent(membershipUrl)}${extraQuery}`;
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(
    () => {
      const el = document.querySelector('[data-testid="membership-state"]');
      return el && el.textContent !== 'loading';
    },
    null,
    { timeout: STATE_TIMEOUT_MS },
  );
  const state = await page.textContent('[data-testid="membership-state"]');
  const states = await page.evaluate(() => window.__membershipStates);
  return { page, state, states, configGets, pageErrors };
}

async function runCase(name, fn) {
  const problems = [];
  const check = (cond, msg) => {
    if (!cond) problems.push(msg);
  };
  try {
    await fn(check);
  } catch (err) {
    problems.push(`threw: ${err?.message ?? err}`);
  }
  results.push({ name, ok: problems.length === 0 });
  console.log(`${problems.length === 0 ? 'PASS' : 'FAIL'} ${name}${problems.length ? `\n  - ${problems.join('\n  - ')}` : ''}`);
}

await runCase('project without an active connection shows error:NO_ACTIVE_CONNECTION', async (check) => {
  const { page, state, states, configGets } = await openExample(keyNone);
  check(state === 'error:NO_ACTIVE_CONNECTION', `state is ${JSON.stringify(state)}, want "error:NO_ACTIVE_CONNECTION" (states seen: ${JSON.stringify(states)})`);
  check(states[0] === 'loading', `first state is ${JSON.stringify(states[0])}, want "loading"`);
  check(configGets.length === 1, `GET ${membershipUrl}/config sent ${configGets.length} times, want 1`);
  check(configGets[0] === keyNone, 'the /config request did not carry the key in X-API-Key');
  mkdirSync(dirname(screenshotNoConnection), { recursive: true });
  await page.screenshot({ path: screenshotNoConnection, fullPage: true });
  await page.close();
});

await runCase('project with an active connection reaches ready and boots Clerk', async (check) => {
  const { page, state, states, configGets, pageErrors } = await openExample(keyActive);
  check(state === 'ready', `state is ${JSON.stringify(state)}, want "ready" (states seen: ${JSON.stringify(states)})`);
  check(states[0] === 'loading', `first state is ${JSON.stringify(states[0])}, want "loading"`);
  const domain = state === 'ready' ? await page.textContent('[data-testid="membership-domain"]') : '';
  check(Boolean(domain), 'the page shows no instance domain from useMembershipConfig()');
  if (expectDomain) check(domain === expectDomain, `instance domain is ${JSON.stringify(domain)}, want ${JSON.stringify(expectDomain)}`);
  // Clerk's provider now tries to load clerk-js from the instance; offline that fails.
  // Our part must survive it: still ready, no refetch.
  const deadline = Date.now() + 5_000;
  while (!blocked.some((u) => u.includes('clerk')) && Date.now() < deadline) await page.waitForTimeout(100);
  await page.waitForTimeout(500);
  const after = await page.textContent('[data-testid="membership-state"]').catch(() => null);
  check(after === 'ready', `state after Clerk's boot attempt is ${JSON.stringify(after)}, want "ready"`);
  check(configGets.length === 1, `GET ${membershipUrl}/config sent ${configGets.length} times, want 1`);
  check(configGets[0] === keyActive, 'the /config request did not carry the key in X-API-Key');
  const ours = pageErrors.filter((m) => /gatehouse|membership/i.test(m));
  check(ours.length === 0, `uncaught errors from our package: ${ours.join(' | ')}`);
  // Clerk never loaded: neither SignedIn nor SignedOut may show anything.
  check((await page.$('[data-testid="signed-in"]')) === null, 'SignedIn rendered although Clerk never loaded');
  check((await page.$('[data-testid="signed-out"]')) === null, 'SignedOut rendered although Clerk never loaded');
  mkdirSync(dirname(screenshot), { recursive: true });
  await page.screenshot({ path: screenshot, fullPage: true });
  await page.close();
});

// The real @clerk/react, booted with a local clerk-js stand-in: SignedIn / SignedOut must
// follow the session, and Clerk must mount its SignIn / UserButton inside them.
for (const [session, shown, hidden, mountedComponent, member] of [
  ['signed-out', 'signed-out', 'signed-in', 'SignIn', '(none)'],
  ['signed-in', 'signed-in', 'signed-out', 'UserButton', 'user_stub'],
]) {
  await runCase(`${session} (real @clerk/react, stub clerk-js): <${shown === 'signed-in' ? 'SignedIn' : 'SignedOut'}> shows Clerk's ${mountedComponent}, the other nothing`, async (check) => {
    const { page, state, configGets, pageErrors } = await openExample(keyActive, `&clerk=stub-${session}`);
    check(state === 'ready', `state is ${JSON.stringify(state)}, want "ready"`);
    const shownEl = await page.waitForSelector(`[data-testid="${shown}"]`, { timeout: STATE_TIMEOUT_MS }).catch(() => null);
    check(shownEl !== null, `[data-testid="${shown}"] never appeared`);
    const mounted = await page
      .waitForSelector(`[data-testid="${shown}"] [data-clerk-stub="${mountedComponent}"]`, { timeout: STATE_TIMEOUT_MS })
      .catch(() => null);
    check(mounted !== null, `Clerk did not mount ${mountedComponent} inside [data-testid="${shown}"]`);
    check((await page.$(`[data-testid="${hidden}"]`)) === null, `[data-testid="${hidden}"] is rendered for a ${session} session`);
    check((await page.textContent('[data-testid="membership-idp"]')) === 'loaded', 'useMember() never saw Clerk loaded');
    const memberId = await page.textContent('[data-testid="membership-member"]');
    check(memberId === member, `useMember().member is ${JSON.stringify(memberId)}, want ${JSON.stringify(member)}`);
    check(configGets.length === 1, `GET ${membershipUrl}/config sent ${configGets.length} times, want 1`);
    check(pageErrors.length === 0, `uncaught page errors: ${pageErrors.join(' | ')}`);
    await page.close();
  });
}

const clerkBlocked = [...new Set(blocked)];
if (clerkBlocked.length) console.log(`blocked ${clerkBlocked.length} non-local request(s), e.g. ${clerkBlocked[0]}`);
console.log(`screenshots: ${screenshot}, ${screenshotNoConnection}`);
await context.close();
staticServer.close();
rmSync(userDataDir, { recursive: true, force: true });
summaryAndExit();
