// Builds dist/forms.js (one IIFE, minified) and dist/forms.css, and copies both into
// edge/embedhost/assets/, where the Go build embeds them (the Go build never runs npm).
// The output is deterministic: `make test` rebuilds and fails when the committed copy differs.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const assets = join(root, '../../../edge/embedhost/assets');

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
mkdirSync(assets, { recursive: true });

const common = { bundle: true, minify: true, legalComments: 'none', logLevel: 'warning', charset: 'utf8' };
await build({
  ...common,
  entryPoints: [join(root, 'src/index.ts')],
  format: 'iife',
  target: 'es2018',
  platform: 'browser',
  outfile: join(dist, 'forms.js'),
});
await build({ ...common, entryPoints: [join(root, 'src/forms.css')], outfile: join(dist, 'forms.css') });
for (const f of ['forms.js', 'forms.css']) copyFileSync(join(dist, f), join(assets, f));
console.log('@gatehouse/forms-embed: built dist/forms.js, dist/forms.css -> edge/embedhost/assets/');
