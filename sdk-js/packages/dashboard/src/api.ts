// The admin API client: every request goes through @gatehouse/client (openapi-fetch over the
// types generated from the gateway's OpenAPI document). Every rule is the server's; this only
// carries the session's CSRF token and turns refusals into ApiError with the server's message.
import { ApiError as ClientError, createClient, type GatehouseClient } from '@gatehouse/client';

function meta(name: string, fallback: string): string {
  if (typeof document === 'undefined') return fallback;
  const el = document.querySelector<HTMLMetaElement>(`meta[name="${name}"]`);
  const v = el?.content ?? '';
  return v.includes('{{') ? fallback : v;
}

/** Where the app lives and what it calls, from the meta tags the gateway writes into index.html. */
export const config = {
  base: meta('gatehouse-base', '/dashboard'),
  api: meta('gatehouse-api', '/admin/v1'),
  assetURL: meta('gatehouse-asset-url', ''),
};

/** An admin API error: the HTTP status, the code of the envelope and its message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: { field?: string; problem?: string }[],
  ) {
    super(message);
  }
}

/** The signed-in user (GET /admin/v1/session). */
export interface Session {
  email: string;
  operator: boolean;
  orgs: { slug: string; role: string }[];
  csrfToken: string;
}

/** The list envelope of every paginated admin route. */
export interface Page<T> {
  items: T[];
  pagination: { nextCursor?: string | null };
}

let csrf = '';
let onUnauthorized: () => void = () => {};

/** Sets the CSRF token sent with state-changing requests, and what happens on a 401. */
export function setSession(token: string, unauthorized: () => void): void {
  csrf = token;
  onUnauthorized = unauthorized;
}

/** The session's CSRF token (for requests made without api(), such as upload progress). */
export const currentCSRF = (): string => csrf;

export interface RequestOptions {
  method?: string;
  body?: unknown;
  /** Set on sign-in: a 401 is a wrong password, not an expired session. */
  quiet401?: boolean;
}

const adminPrefix = '/admin/v1';

/**
 * gh is the typed client of the gateway: paths are the document's (`/admin/v1/...`), relative
 * to the page's origin unless the gateway names another base in its meta tag. The session
 * cookie goes along (same origin); state-changing requests carry the CSRF token.
 */
export const gh: GatehouseClient = createClient({
  baseUrl: config.api.endsWith(adminPrefix) ? config.api.slice(0, -adminPrefix.length) : config.api,
  credentials: 'same-origin',
});
gh.use({
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD' && csrf) request.headers.set('X-CSRF-Token', csrf);
    return request;
  },
});

/**
 * call awaits one call of gh and resolves to its data (null for a 204). A refusal becomes an
 * ApiError carrying the envelope's message; a 401 ends the session unless quiet401 (sign-in,
 * where it means a wrong password); a network failure is ApiError 0 NETWORK.
 */
export async function call<T>(p: Promise<{ data: T; response: Response }>, quiet401 = false): Promise<T> {
  try {
    const { data, response } = await p;
    return (response.status === 204 ? null : data) as T;
  } catch (e) {
    if (!(e instanceof ClientError)) throw new ApiError(0, 'NETWORK', 'The gateway did not answer (network error).');
    if (e.status === 401 && !quiet401) onUnauthorized();
    const body = e.body as { message?: unknown } | undefined;
    const message = typeof body?.message === 'string' && body.message ? body.message : `${e.status} ${e.response.statusText}`;
    throw new ApiError(e.status, e.code ?? '', message, e.details);
  }
}

type Untyped = (path: string, init?: { body?: unknown }) => Promise<{ data: unknown; response: Response }>;

/**
 * api calls an admin route by a path built at run time (relative to /admin/v1, query included),
 * through the same client but without the document's per-path types: the list and detail
 * loaders (usePaged, useLoad) and the pages not yet moved to typed calls of gh.
 */
export function api<T>(path: string, o: RequestOptions = {}): Promise<T> {
  const method = (o.method ?? 'GET') as 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  const send = gh[method] as unknown as Untyped;
  return call(send(adminPrefix + path, o.body === undefined ? undefined : { body: o.body }), o.quiet401) as Promise<T>;
}

/** Builds a query string from the defined, non-empty values. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
}

/** Encodes one path segment. */
export const seg = encodeURIComponent;
