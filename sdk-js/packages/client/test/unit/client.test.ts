// The client without a gateway: headers per route family, ApiError from each kind of
// refusal, and the types the document gives to calls (checked by tsc in `npm test`).
import { describe, expect, expectTypeOf, it } from 'vitest';
import { ApiError, createClient, isApiError, type Schema } from '../../src/index';

type Seen = { url: string; method: string; headers: Headers; body: string };

/** fake answers every request with status and body, and records what it saw. */
function fake(status: number, body: unknown, contentType = 'application/json') {
  const seen: Seen[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push({ url: req.url, method: req.method, headers: req.headers, body: await req.text() });
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return new Response(status === 204 ? null : text, { status, headers: { 'Content-Type': contentType } });
  };
  return { fetch: fetch as typeof globalThis.fetch, seen };
}

describe('createClient', () => {
  it('sends the API key on product routes and the bearer token on admin routes only', async () => {
    const f = fake(200, { items: [], pagination: { nextCursor: null } });
    const c = createClient({ baseUrl: 'https://gw.test/', apiKey: 'pk_live_x', adminToken: 'tok', fetch: f.fetch });
    await c.GET('/records/projects/{project}/collections/{collection}/records', {
      params: { path: { project: 'p', collection: 'posts' }, query: { filter: ['a:eq:1', 'b:gt:2'], limit: 10 } },
    });
    await c.GET('/admin/v1/orgs/{org}/projects', { params: { path: { org: 'acme' } } });
    const [product, adminCall] = f.seen;
    expect(product?.url).toBe('https://gw.test/records/projects/p/collections/posts/records?filter=a%3Aeq%3A1&filter=b%3Agt%3A2&limit=10');
    expect(product?.headers.get('X-API-Key')).toBe('pk_live_x');
    expect(product?.headers.get('Authorization')).toBeNull();
    expect(adminCall?.url).toBe('https://gw.test/admin/v1/orgs/acme/projects');
    expect(adminCall?.headers.get('Authorization')).toBe('Bearer tok');
    expect(adminCall?.headers.get('X-API-Key')).toBeNull();
  });

  it('sends JSON bodies', async () => {
    const f = fake(202, { id: 'em_1', status: 'queued' });
    const c = createClient({ baseUrl: 'https://gw.test', apiKey: 'sk_live_x', fetch: f.fetch });
    const { data, response } = await c.POST('/email/notifications/send', { body: { to: { email: 'a@b.test' }, templateId: 'welcome' } });
    expect(response.status).toBe(202);
    expect(data).toEqual({ id: 'em_1', status: 'queued' });
    expect(f.seen[0]?.headers.get('Content-Type')).toBe('application/json');
    expect(JSON.parse(f.seen[0]?.body ?? '')).toEqual({ to: { email: 'a@b.test' }, templateId: 'welcome' });
  });

  it('resolves a 204 with no data', async () => {
    const f = fake(204, '');
    const c = createClient({ baseUrl: 'https://gw.test', adminToken: 'tok', fetch: f.fetch });
    const { data, response } = await c.DELETE('/admin/v1/orgs/{org}/keys/{name}', { params: { path: { org: 'acme', name: 'web' } } });
    expect(response.status).toBe(204);
    expect(data).toBeUndefined();
  });
});

describe('ApiError', () => {
  const cases = [
    {
      name: 'an envelope with details',
      status: 400,
      body: { error: 'VALIDATION_FAILED', message: 'the body is invalid', details: [{ field: 'email', problem: 'required' }] },
      want: { code: 'VALIDATION_FAILED', message: '400 VALIDATION_FAILED: the body is invalid', details: [{ field: 'email', problem: 'required' }] },
    },
    {
      name: 'a 401 without a code',
      status: 401,
      body: { message: 'missing API key' },
      want: { code: undefined, message: '401: missing API key', details: [] },
    },
    {
      name: 'a body that is not JSON',
      status: 502,
      body: 'Bad Gateway',
      want: { code: undefined, message: '502: Bad Gateway', details: [] },
    },
  ];
  for (const tc of cases) {
    it(`is thrown for ${tc.name}`, async () => {
      const f = fake(tc.status, tc.body, typeof tc.body === 'string' ? 'text/plain' : 'application/json');
      const c = createClient({ baseUrl: 'https://gw.test', apiKey: 'pk_live_x', fetch: f.fetch });
      const err = await c.GET('/membership/config').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ApiError);
      expect(isApiError(err)).toBe(true);
      const e = err as ApiError;
      expect(e.name).toBe('ApiError');
      expect(e.status).toBe(tc.status);
      expect(e.code).toBe(tc.want.code);
      expect(e.message).toBe(tc.want.message);
      expect(e.details).toEqual(tc.want.details);
      expect(e.response.status).toBe(tc.status);
      if (tc.want.code) expect(isApiError(err, tc.want.code)).toBe(true);
      expect(isApiError(err, 'NOT_A_CODE')).toBe(false);
    });
  }

  it('leaves network failures as fetch rejects them', async () => {
    const boom = new TypeError('fetch failed');
    const c = createClient({ baseUrl: 'https://gw.test', fetch: async () => Promise.reject(boom) });
    await expect(c.GET('/healthz')).rejects.toBe(boom);
  });
});

describe('types', () => {
  it('types answers and parameters from the document', () => {
    const c = createClient({ baseUrl: 'https://gw.test' });
    type ListData = Awaited<ReturnType<typeof listPosts>>['data'];
    const listPosts = () =>
      c.GET('/records/projects/{project}/collections/{collection}/records', { params: { path: { project: 'p', collection: 'c' } } });
    expectTypeOf<ListData>().toExtend<Schema<'RecordList'>>();
    expectTypeOf<Schema<'RecordList'>>().toExtend<ListData>();
    type Form = Awaited<ReturnType<typeof form>>['data'];
    const form = () => c.GET('/forms/forms/{slug}', { params: { path: { slug: 's' } } });
    expectTypeOf<Form>().toEqualTypeOf<Schema<'FormDefinition'>>();
    expectTypeOf<Form['settings']>().toEqualTypeOf<Record<string, unknown> | null>();

    // Compile-time refusals (never called): an unknown path, a missing path parameter, a wrong body.
    const refused = () => {
      // @ts-expect-error: no such route in the document
      void c.GET('/records/nope');
      // @ts-expect-error: the path parameters are required
      void c.GET('/forms/forms/{slug}');
      // @ts-expect-error: `to` is required by SendRequest
      void c.POST('/email/notifications/send', { body: { templateId: 'welcome' } });
    };
    expect(refused).toBeTypeOf('function');
  });
});
