// Builds dist/: index.mjs (ESM, for browsers through a bundler and Node 20+) and the type
// declarations (tsc). openapi-fetch stays an import (a dependency), so an app that uses it
// too ships one copy.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

await build({
  entryPoints: [join(root, 'src/index.ts')],
  bundle: true,
  external: Object.keys(pkg.dependencies ?? {}),
  format: 'esm',
  platform: 'neutral',
  target: 'es2020',
  sourcemap: true,
  logLevel: 'warning',
  outfile: join(dist, 'index.mjs'),
});

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
// tsc does not copy a hand-placed .d.ts: the generated schema goes beside its importers.
copyFileSync(join(root, 'src/schema.d.ts'), join(dist, 'types/schema.d.ts'));
writeFileSync(join(dist, 'index.d.ts'), "export * from './types/index.js';\n");
console.log('@gatehouse/client: built dist/index.mjs, dist/index.d.ts');
