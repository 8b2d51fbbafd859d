// A local stand-in for Cloudflare Turnstile's siteverify (JSON in, JSON out), for the browser
// test: token "good" with secret "browser-secret" passes. Prints its port on stdout.
import { createServer } from 'node:http';

const srv = createServer((req, res) => {
  let raw = '';
  req.on('data', (c) => { raw += c; });
  req.on('end', () => {
    let body = {};
    try { body = JSON.parse(raw); } catch { /* not JSON */ }
    const ok = body.secret === 'browser-secret' && body.response === 'good';
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(ok
      ? { success: true, 'error-codes': [], challenge_ts: new Date().toISOString(), hostname: 'localhost' }
      : { success: false, 'error-codes': ['invalid-input-response'] }));
  });
});
srv.listen(0, '127.0.0.1', () => console.log(srv.address().port));
