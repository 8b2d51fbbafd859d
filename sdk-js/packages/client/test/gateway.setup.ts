// Starts a real gateway for the `gateway` project: `gatehouse serve` on a free loopback port
// with its own config (an admin token, nothing else), a throw-away data folder and the
// repository's configs/demo.tenants.yaml; waits for /readyz; stops it after the run.
// The binary is $GATEHOUSE_BIN (make test-client passes bin/gatehouse), else one `go build`
// makes it into the temp folder.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const adminToken = 'client-suite-admin-token';

declare module 'vitest' {
  export interface ProvidedContext {
    gatewayUrl: string;
    adminToken: string;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

async function waitReady(url: string, child: ChildProcess, log: string): Promise<void> {
  let exited = false;
  child.once('exit', () => (exited = true));
  for (let i = 0; i < 300; i++) {
    if (exited) throw new Error(`gatehouse exited before ready:\n${readFileSync(log, 'utf8')}`);
    try {
      const res = await fetch(`${url}/readyz`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gatehouse not ready at ${url}:\n${readFileSync(log, 'utf8')}`);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-client-'));
  let bin = process.env.GATEHOUSE_BIN;
  if (!bin) {
    bin = join(dir, 'gatehouse');
    execFileSync('go', ['build', '-o', bin, './edge/cmd/gatehouse'], { cwd: repo, stdio: 'inherit' });
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  writeFileSync(join(dir, 'gatehouse.yaml'), JSON.stringify({ admin_token: adminToken, public_url: url }));
  const log = join(dir, 'gatehouse.log');
  const out = openSync(log, 'a');
  const child = spawn(
    bin,
    ['serve', '--config', join(dir, 'gatehouse.yaml'), '--listen', `127.0.0.1:${port}`, '--data', join(dir, 'data'),
      '--tenants', join(repo, 'configs', 'demo.tenants.yaml')],
    { stdio: ['ignore', out, out] },
  );
  await waitReady(url, child, log);
  project.provide('gatewayUrl', url);
  project.provide('adminToken', adminToken);

  return async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
}
