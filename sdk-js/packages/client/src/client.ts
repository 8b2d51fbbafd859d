import createFetchClient, { type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { HttpMethod, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import { ApiError } from './errors';
import type { components, paths } from './schema';

type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

/** Options of createClient. */
export interface ClientOptions {
  /** The gateway's public URL (config `public_url`), such as `https://api.example.com`; no trailing path. */
  baseUrl: string;
  /** An API key (`pk_live_`, `pk_test_` or `sk_live_`), sent as `X-API-Key` on every product route. */
  apiKey?: string;
  /** The admin token, sent as `Authorization: Bearer <token>` on `/admin/v1` routes only. */
  adminToken?: string;
  /** Headers added to every request (a request's own headers win). */
  headers?: Record<string, string>;
  /** A fetch to use instead of `globalThis.fetch` (tests, proxies, a Node agent). */
  fetch?: typeof globalThis.fetch;
  /** fetch's credentials mode; `include` sends the dashboard's session cookie across origins. */
  credentials?: RequestCredentials;
}

/** What every successful call resolves to: the typed body of the 2xx answer and the response. */
export interface Result<T> {
  /**
   * The parsed body of the answer's 2xx status. `undefined` for answers without a body
   * (`204`, and a `304` to a request that sent `If-None-Match` itself).
   */
  data: T;
  /** The response (status, headers such as `ETag`); its body is consumed. */
  response: Response;
}

type InitParam<Init> = RequiredKeysOf<Init> extends never
  ? [(Init & { [key: string]: unknown })?]
  : [Init & { [key: string]: unknown }];

type DataOf<R> = R extends { data: infer D; error?: never } ? D : never;

/** One HTTP method of the client: a path of the document, then its typed params and body. */
export type CallMethod<M extends HttpMethod> = <
  Path extends PathsWithMethod<paths, M>,
  Init extends MaybeOptionalInit<paths[Path], M>,
>(
  url: Path,
  ...init: InitParam<Init>
) => Promise<Result<DataOf<FetchResponse<NonNullable<paths[Path][M]>, Init, `${string}/${string}`>>>>;

/**
 * GatehouseClient calls any operation of the gateway's OpenAPI document by its path template,
 * typed end to end (path and query params, request body, answer). Every call resolves with
 * `{data, response}` for a status below 400 and rejects with an ApiError for 400 and more.
 */
export interface GatehouseClient {
  GET: CallMethod<'get'>;
  POST: CallMethod<'post'>;
  PUT: CallMethod<'put'>;
  PATCH: CallMethod<'patch'>;
  DELETE: CallMethod<'delete'>;
  /**
   * uploadTo PUTs a file's bytes to the `uploadUrl` of a presigned slot (`POST
   * /files/upload/presigned`). The URL carries its own signature: no key is sent, and its
   * query is passed on untouched. `contentType` must be the slot's `mimeType`.
   */
  uploadTo(uploadUrl: string, body: Blob | ArrayBuffer | Uint8Array, contentType: string): Promise<Result<Schema<'AssetStatus'>>>;
  /** Adds openapi-fetch middleware (onRequest/onResponse/onError), such as a CSRF header. */
  use(...middleware: Middleware[]): void;
}

const adminPrefix = '/admin/v1';

/**
 * createClient returns a typed client of one gateway. It starts nothing: each call is one
 * fetch. The API key goes to product routes and the admin token to `/admin/v1` routes, so
 * one client may carry both.
 */
export function createClient(options: ClientOptions): GatehouseClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const raw = createFetchClient<paths>({
    baseUrl,
    headers: options.headers,
    credentials: options.credentials,
    // Resolved at call time, so a test or polyfill that replaces globalThis.fetch later is used.
    fetch: (req: Request) => (options.fetch ?? globalThis.fetch)(req),
  });
  raw.use({
    onRequest({ request, schemaPath }) {
      const admin = schemaPath === adminPrefix || schemaPath.startsWith(`${adminPrefix}/`);
      if (admin && options.adminToken && !request.headers.has('Authorization')) {
        request.headers.set('Authorization', `Bearer ${options.adminToken}`);
      }
      if (!admin && options.apiKey && !request.headers.has('X-API-Key')) {
        request.headers.set('X-API-Key', options.apiKey);
      }
      return request;
    },
  });

  const call =
    (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE') =>
    async (url: string, init?: Record<string, unknown>) => {
      const send = raw[method] as (u: string, i?: Record<string, unknown>) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
      const out = await send(url, init);
      if (out.response.status >= 400) {
        throw new ApiError(out.response, out.error);
      }
      return { data: out.data, response: out.response };
    };

  return {
    GET: call('GET') as CallMethod<'get'>,
    POST: call('POST') as CallMethod<'post'>,
    PUT: call('PUT') as CallMethod<'put'>,
    PATCH: call('PATCH') as CallMethod<'patch'>,
    DELETE: call('DELETE') as CallMethod<'delete'>,
    async uploadTo(uploadUrl, body, contentType) {
      const response = await (options.fetch ?? globalThis.fetch)(uploadUrl, {
        method: 'PUT',
        body: body as BodyInit,
        headers: { 'Content-Type': contentType },
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        // not JSON: ApiError keeps the text
      }
      if (response.status >= 400) {
        throw new ApiError(response, parsed);
      }
      return { data: parsed as Schema<'AssetStatus'>, response };
    },
    use: (...mw) => raw.use(...mw),
  };
}
