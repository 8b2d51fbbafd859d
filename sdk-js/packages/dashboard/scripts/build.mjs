// Builds the dashboard: one minified ES module bundle (React included), one stylesheet and the
// index.html template, into dist/ and edge/dashboard/assets/, where the Go build embeds them
// (the Go build never runs npm). Prints the first load's size, raw and gzip-compressed, and
// fails when the compressed first load is over the 300 KB budget (decisions.md 8.2).
// The output is deterministic: `make test` rebuilds and fails when the committed copy differs.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const assets = join(root, '../../../edge/dashboard/assets');
const BUDGET = 300 * 1024;

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
mkdirSync(assets, { recursive: true });

const common = { bundle: true, minify: true, legalComments: 'none', logLevel: 'warning', charset: 'utf8' };
await build({
  ...common,
  entryPoints: [join(root, 'src/main.tsx')],
  format: 'iife',
  target: 'es2020',
  platform: 'browser',
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  outfile: join(dist, 'app.js'),
});
await build({ ...common, entryPoints: [join(root, 'src/app.css')], outfile: join(dist, 'app.css') });
copyFileSync(join(root, 'src/index.html'), join(dist, 'index.html'));
copyFileSync(join(root, 'src/favicon.svg'), join(dist, 'favicon.svg'));

let raw = 0;
let gz = 0;
for (const f of ['index.html', 'app.js', 'app.css']) {
  const b = readFileSync(join(dist, f));
  const z = gzipSync(b, { level: 9 }).length;
  raw += b.length;
  gz += z;
  console.log(`  ${f.padEnd(11)} ${String(b.length).padStart(8)} B  gzip ${String(z).padStart(7)} B`);
  copyFileSync(join(dist, f), join(assets, f));
}
copyFileSync(join(dist, 'favicon.svg'), join(assets, 'favicon.svg')); // fetched by the browser, not part of the first load
console.log(`@gatehouse/dashboard: first load ${raw} B, ${(gz / 1024).toFixed(1)} KB gzip (budget ${BUDGET / 1024} KB) -> edge/dashboard/assets/`);
if (gz > BUDGET) {
  console.error(`@gatehouse/dashboard: first load ${gz} B gzip is over the ${BUDGET} B budget`);
  process.exit(1);
}
