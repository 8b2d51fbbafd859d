// A stand-in for the gateway's GET /membership/config, for developing the browser test
// without the Go server. The real test (browser.test.mjs) targets GATEHOUSE_URL.
//
//   node fake-gateway.mjs                      serve on 127.0.0.1:<random>, print the URL
//   node fake-gateway.mjs --run browser.test.mjs   serve, run the test against it, exit with its code
//
// Keys: pk_test_fake_active (active connection), pk_test_fake_none (404 NO_ACTIVE_CONNECTION);
// anything else is a 401 like the gateway's unknown-key answer.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';

export const FAKE_KEYS = { active: 'pk_test_fake_active', none: 'pk_test_fake_none' };
export const FAKE_CONFIG = {
  idpPublishableKey: 'pk_test_Y2xlcmsuZXhhbXBsZS5jb20k',
  idpInstanceDomain: 'clerk.example.com',
  appearance: { variables: { colorPrimary: '#0f766e' } },
  signUpEnabled: true,
  organizationsEnabled: false,
};

export function startFakeGateway() {
  const server = createServer((req, res) => {
    const cors = {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Headers': 'X-API-Key, Content-Type',
      'Access-Control-Allow-Methods': 'GET, OPTIONS',
    };
    const send = (status, body, extra = {}) => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...cors, ...extra });
      res.end(JSON.stringify(body));
    };
    const path = new URL(req.url, 'http://x').pathname;
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...cors, 'Access-Control-Max-Age': '600' });
      return res.end();
    }
    if (req.method !== 'GET' || path !== '/membership/config') return send(404, { error: 'NOT_FOUND' });
    const key = req.headers['x-api-key'];
    if (key === FAKE_KEYS.active) return send(200, FAKE_CONFIG);
    if (key === FAKE_KEYS.none) return send(404, { error: 'NO_ACTIVE_CONNECTION' });
    return send(401, { message: 'missing or invalid API key' }, { 'WWW-Authenticate': 'ApiKey' });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const gw = await startFakeGateway();
  const runIdx = process.argv.indexOf('--run');
  if (runIdx === -1) {
    console.log(`fake gateway on ${gw.url} (keys: ${FAKE_KEYS.active}, ${FAKE_KEYS.none})`);
  } else {
    const child = spawn(process.execPath, [process.argv[runIdx + 1]], {
      stdio: 'inherit',
      env: {
        ...process.env,
        GATEHOUSE_URL: gw.url,
        GATEHOUSE_MEMBERSHIP_KEY_ACTIVE: FAKE_KEYS.active,
        GATEHOUSE_MEMBERSHIP_KEY_NO_CONNECTION: FAKE_KEYS.none,
        GATEHOUSE_MEMBERSHIP_EXPECT_DOMAIN: FAKE_CONFIG.idpInstanceDomain,
      },
    });
    child.on('exit', async (code) => {
      await gw.close();
      process.exit(code ?? 1);
    });
  }
}
