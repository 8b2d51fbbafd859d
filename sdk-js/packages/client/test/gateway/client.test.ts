// The client against a real gateway (test/gateway.setup.ts) with configs/demo.tenants.yaml:
// every product, a success and a refusal each, and the typed ApiError (status, code).
import { createHash } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import { ApiError, createClient, isApiError, type Schema } from '../../src/index';

const baseUrl = inject('gatewayUrl');
const adminToken = inject('adminToken');

const web = createClient({ baseUrl, apiKey: 'pk_live_demo_web' });
const server = createClient({ baseUrl, apiKey: 'sk_live_demo_server' });
const anonymous = createClient({ baseUrl });
const admin = createClient({ baseUrl, adminToken });

/** rejection awaits p and returns the ApiError it rejected with (fails when it resolved). */
async function rejection(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected the call to reject with an ApiError');
}

const posts = { project: 'demo', collection: 'posts' } as const;

describe('records', () => {
  it('lists published records with a filter, a sort and a limit', async () => {
    const { data, response } = await web.GET('/records/projects/{project}/collections/{collection}/records', {
      params: { path: posts, query: { filter: ['category:eq:reviews', 'views:gte:40'], sort: '-views', limit: 2 } },
    });
    expect(response.status).toBe(200);
    const items: Schema<'Record'>[] = data.items ?? [];
    expect(items.map((r) => r.id)).toEqual(['post-9', 'post-4']);
    expect(items[0]?.title).toBe('A review of embedded databases');
    expect(data.pagination.nextCursor).toBeNull();
  });

  it('pages with the cursor', async () => {
    const first = await web.GET('/records/projects/{project}/collections/{collection}/records', {
      params: { path: posts, query: { limit: 5 } },
    });
    const cursor = first.data.pagination.nextCursor;
    expect(cursor).toBeTypeOf('string');
    const second = await web.GET('/records/projects/{project}/collections/{collection}/records', {
      params: { path: posts, query: { limit: 5, cursor: cursor ?? undefined } },
    });
    expect(second.data.items?.length).toBe(5);
    expect(second.data.items?.[0]?.id).not.toBe(first.data.items?.[0]?.id);
  });

  it('reads one record with its relation populated', async () => {
    const { data } = await web.GET('/records/projects/{project}/collections/{collection}/records/{id}', {
      params: { path: { ...posts, id: 'post-1' }, query: { populate: 'author' } },
    });
    expect(data.id).toBe('post-1');
    expect((data.author as { title?: string }).title).toBe('Ada Lovelace');
    expect(data).not.toHaveProperty('internalNote');
  });

  it('answers 404 RECORD_NOT_FOUND for an unpublished record', async () => {
    const err = await rejection(
      web.GET('/records/projects/{project}/collections/{collection}/records/{id}', {
        params: { path: { ...posts, id: 'post-18' } },
      }),
    );
    expect(err.status).toBe(404);
    expect(err.code).toBe('RECORD_NOT_FOUND');
    expect(isApiError(err, 'RECORD_NOT_FOUND')).toBe(true);
  });

  it('answers 400 INVALID_FILTER for a malformed filter', async () => {
    const err = await rejection(
      web.GET('/records/projects/{project}/collections/{collection}/records', {
        params: { path: posts, query: { filter: ['views:between:1'] } },
      }),
    );
    expect([err.status, err.code]).toEqual([400, 'INVALID_FILTER']);
  });

  it('answers 401 without a code when no key is sent', async () => {
    const err = await rejection(
      anonymous.GET('/records/projects/{project}/collections/{collection}/records', { params: { path: posts } }),
    );
    expect(err.status).toBe(401);
    expect(err.code).toBeUndefined();
    expect(err.message).toMatch(/^401/);
  });

  it('aggregates', async () => {
    const { data } = await web.GET('/records/projects/{project}/collections/{collection}/aggregate', {
      params: { path: posts, query: { groupBy: 'category' } },
    });
    expect(data.groups).toMatchObject({ reviews: 3 });
  });
});

describe('forms', () => {
  it('reads a definition and stores a submission', async () => {
    const def = await web.GET('/forms/forms/{slug}', { params: { path: { slug: 'contact' } } });
    expect(def.data.title).toBe('Contact us');
    expect(def.data.fields.map((f) => f.name)).toEqual(['email', 'message', 'photo']);

    const { data, response } = await web.POST('/forms/forms/{slug}/submit', {
      params: { path: { slug: 'contact' } },
      body: { data: { email: 'reader@example.com', message: 'Hello from @gatehouse/client' } },
    });
    expect(response.status).toBe(201);
    expect(data.status).toBe('received');
    expect(data.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('answers 422 VALIDATION_FAILED with per-field details', async () => {
    const err = await rejection(
      web.POST('/forms/forms/{slug}/submit', {
        params: { path: { slug: 'contact' } },
        body: { data: { email: 'not-an-address' } },
      }),
    );
    expect(err.status).toBe(400);
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.details.map((d) => d.field).sort()).toEqual(['email', 'message']);
  });

  it('answers 404 FORM_NOT_FOUND for an unknown form', async () => {
    const err = await rejection(web.GET('/forms/forms/{slug}', { params: { path: { slug: 'nope' } } }));
    expect([err.status, err.code]).toEqual([404, 'FORM_NOT_FOUND']);
  });
});

describe('email', () => {
  it('queues a templated message with a secret key', async () => {
    const { data, response } = await server.POST('/email/notifications/send', {
      body: { to: { email: 'reader@example.com', name: 'Reader' }, templateId: 'welcome', variables: { name: 'Reader', product: 'Gatehouse' } },
    });
    expect(response.status).toBe(202);
    expect(data.status).toBe('queued');
    expect(data.id).toBeTruthy();
  });

  it('refuses a publishable key with 403', async () => {
    const err = await rejection(
      web.POST('/email/notifications/send', {
        body: { to: { email: 'reader@example.com' }, subject: 'Hi', bodyText: 'Hi' },
      }),
    );
    expect([err.status, err.code]).toEqual([403, 'SECRET_KEY_REQUIRED']);
  });
});

describe('files', () => {
  // A 1×1 PNG.
  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
    'base64',
  );

  it('presigns a slot, uploads the bytes, completes and reads the asset', async () => {
    const slot = await server.POST('/files/upload/presigned', {
      body: { filename: 'dot.png', mimeType: 'image/png', size: png.length },
    });
    expect(slot.data.assetId).toMatch(/^ast_/);
    expect(new URL(slot.data.uploadUrl).origin).toBe(baseUrl);

    // The slot's URL is opaque (its signature is in its query): uploadTo PUTs to it as is.
    const put = await anonymous.uploadTo(slot.data.uploadUrl, png, 'image/png');
    expect(put.data.status).toBe('pending');

    const tampered = await rejection(anonymous.uploadTo(`${slot.data.uploadUrl}x`, png, 'image/png'));
    expect([tampered.status, tampered.code]).toEqual([403, 'UPLOAD_URL_INVALID']);

    const done = await server.POST('/files/upload/complete', {
      body: { assetId: slot.data.assetId, fileHash: createHash('sha256').update(png).digest('hex') },
    });
    expect(done.data.status).toBe('completed');

    const asset = await web.GET('/files/assets/{id}', { params: { path: { id: slot.data.assetId } } });
    expect(asset.data.filename).toBe('dot.png');
  });

  it('answers 404 ASSET_NOT_FOUND for an unknown asset', async () => {
    const err = await rejection(web.GET('/files/assets/{id}', { params: { path: { id: 'ast_01jz0000000000000000000000' } } }));
    expect([err.status, err.code]).toEqual([404, 'ASSET_NOT_FOUND']);
  });

  it('refuses an unsupported type', async () => {
    const err = await rejection(
      server.POST('/files/upload/presigned', {
        // The document's enum would reject this at compile time; a caller in plain JS can still send it.
        body: { filename: 'a.pdf', mimeType: 'application/pdf' as 'image/png', size: 10 },
      }),
    );
    expect([err.status, err.code]).toEqual([400, 'UNSUPPORTED_MEDIA_TYPE']);
  });
});

describe('membership', () => {
  it('answers the active connection', async () => {
    const { data, response } = await web.GET('/membership/config');
    expect(data.idpInstanceDomain).toBe('clerk.example.com');
    expect(data.signUpEnabled).toBe(true);
    expect(data).not.toHaveProperty('idpSecretKey');
    expect(response.headers.get('ETag')).toBeTruthy();
  });

  it('resolves a 304 without data when If-None-Match is current', async () => {
    const first = await web.GET('/membership/config');
    const etag = first.response.headers.get('ETag') ?? '';
    const again = await web.GET('/membership/config', { params: { header: { 'If-None-Match': etag } } });
    expect(again.response.status).toBe(304);
    expect(again.data).toBeUndefined();
  });

  it('answers 404 NO_ACTIVE_CONNECTION for a project without one', async () => {
    const docs = createClient({ baseUrl, apiKey: 'pk_live_docs_web' });
    const err = await rejection(docs.GET('/membership/config'));
    expect([err.status, err.code]).toEqual([404, 'NO_ACTIVE_CONNECTION']);
  });
});

describe('admin', () => {
  it('lists an org\'s projects with the admin token', async () => {
    const { data } = await admin.GET('/admin/v1/orgs/{org}/projects', { params: { path: { org: 'acme' } } });
    expect(JSON.stringify(data)).toContain('demo');
  });

  it('writes a record the public client then reads, and refuses a bad one with details', async () => {
    const { data, response } = await admin.POST('/admin/v1/projects/{project}/collections/{collection}/records', {
      params: { path: posts },
      body: { id: 'client-post', data: { title: 'Written by @gatehouse/client', category: 'news', views: 1 } },
    });
    expect(response.status).toBe(201);
    expect([data.id, data.published]).toEqual(['client-post', true]);
    const read = await web.GET('/records/projects/{project}/collections/{collection}/records/{id}', {
      params: { path: { ...posts, id: 'client-post' } },
    });
    expect(read.data.title).toBe('Written by @gatehouse/client');

    const err = await rejection(
      admin.POST('/admin/v1/projects/{project}/collections/{collection}/records', {
        params: { path: posts },
        body: { data: { category: 'not-an-option' } },
      }),
    );
    expect([err.status, err.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(err.details.map((d) => d.field)).toContain('data.category');
  });

  it('answers 404 COLLECTION_NOT_FOUND on an unknown collection', async () => {
    const err = await rejection(
      admin.GET('/admin/v1/projects/{project}/collections/{collection}/records', {
        params: { path: { project: 'demo', collection: 'nope' } },
      }),
    );
    expect([err.status, err.code]).toEqual([404, 'COLLECTION_NOT_FOUND']);
  });

  it('answers 401 without the token', async () => {
    const err = await rejection(anonymous.GET('/admin/v1/orgs/{org}/projects', { params: { path: { org: 'acme' } } }));
    expect(err.status).toBe(401);
  });

  it('sends the API key only to product routes and the token only to admin routes', async () => {
    const both = createClient({ baseUrl, apiKey: 'pk_live_demo_web', adminToken });
    await both.GET('/admin/v1/orgs/{org}/projects', { params: { path: { org: 'acme' } } });
    const { data } = await both.GET('/forms/forms/{slug}', { params: { path: { slug: 'contact' } } });
    expect(data.slug).toBe('contact');
  });
});

describe('operations', () => {
  it('serves the document the types were generated from', async () => {
    const { data } = await anonymous.GET('/openapi.json');
    expect((data as { openapi?: string }).openapi).toBe('3.1.0');
  });
});
