// src/schema.d.ts must be exactly what openapi-typescript makes of edge/openapi/openapi.yaml
// today: a document change without `npm run generate` fails here (and in make test).
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs module shared with scripts/generate.mjs, without declarations.
import { generateSchema, schemaPath } from '../../scripts/schema.mjs';

it('src/schema.d.ts is a fresh generation of the OpenAPI document', async () => {
  const fresh: string = await generateSchema();
  const committed = readFileSync(schemaPath as string, 'utf8');
  expect(committed === fresh, 'src/schema.d.ts is stale: run `npm run generate` in sdk-js/packages/client and commit it').toBe(true);
});
