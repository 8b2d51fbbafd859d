// The published build (dist/index.mjs through the package name, as an app imports it) on
// Node's global fetch against the real gateway.
import { expect, inject, it } from 'vitest';
import { createClient, isApiError } from '@gatehouse/client';

it('the built package calls the gateway and throws its ApiError', async () => {
  const c = createClient({ baseUrl: inject('gatewayUrl'), apiKey: 'pk_live_demo_web' });
  const { data } = await c.GET('/records/projects/{project}/collections/{collection}', {
    params: { path: { project: 'demo', collection: 'authors' } },
  });
  expect(data.fields.map((f) => f.name)).toEqual(['title']);
  const err = await c
    .GET('/records/projects/{project}/collections/{collection}', { params: { path: { project: 'demo', collection: 'nope' } } })
    .catch((e: unknown) => e);
  expect(isApiError(err, 'COLLECTION_NOT_FOUND')).toBe(true);
});
