// Builds dist/: index.mjs (ESM), index.cjs (CommonJS), and type declarations (tsc).
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const external = [...Object.keys(pkg.peerDependencies ?? {}), 'react/jsx-runtime'];

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

const common = {
  entryPoints: [join(root, 'src/index.ts')],
  bundle: true,
  external,
  jsx: 'automatic',
  target: 'es2020',
  sourcemap: true,
  logLevel: 'warning',
  // Published builds only: the library has no development-only branches to strip.
};
await build({ ...common, format: 'esm', platform: 'neutral', outfile: join(dist, 'index.mjs') });
await build({ ...common, format: 'cjs', platform: 'browser', outfile: join(dist, 'index.cjs') });

const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
const reexport = "export * from './types/index.js';\n";
writeFileSync(join(dist, 'index.d.ts'), reexport);
writeFileSync(join(dist, 'index.d.cts'), reexport);
console.log('@gatehouse/membership: built dist/index.mjs, dist/index.cjs, dist/index.d.ts');
