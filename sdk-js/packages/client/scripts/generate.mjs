// Regenerates src/schema.d.ts from the gateway's OpenAPI document (edge/openapi/openapi.yaml)
// with openapi-typescript, the pinned devDependency. `node scripts/generate.mjs --check`
// writes nothing and exits 1 when the committed file differs from a fresh generation, so the
// types cannot drift from the document (test/schema-fresh.test.ts runs the same comparison).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSchema, schemaPath } from './schema.mjs';

const fresh = await generateSchema();
if (process.argv.includes('--check')) {
  const committed = readFileSync(schemaPath, 'utf8');
  if (committed !== fresh) {
    console.error('src/schema.d.ts is stale: run `npm run generate` in sdk-js/packages/client and commit it');
    process.exit(1);
  }
  console.log('src/schema.d.ts matches edge/openapi/openapi.yaml');
} else {
  writeFileSync(schemaPath, fresh);
  console.log(`wrote ${join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'schema.d.ts')}`);
}
