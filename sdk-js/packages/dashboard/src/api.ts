// The admin API client: every rule is the server's; this only carries the session's CSRF token
// and turns error envelopes into ApiError with the server's message.

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
  /** A raw body (NDJSON, YAML) sent with its own Content-Type. */
  raw?: { data: BodyInit; type: string };
  accept?: string;
  /** Set on sign-in: a 401 is a wrong password, not an expired session. */
  quiet401?: boolean;
}

/** Calls the admin API at path (relative to /admin/v1); resolves to the decoded JSON, or null for 204. */
export async function api<T>(path: string, o: RequestOptions = {}): Promise<T> {
  const method = o.method ?? 'GET';
  const headers: Record<string, string> = { Accept: o.accept ?? 'application/json' };
  let body: BodyInit | undefined;
  if (o.raw) {
    headers['Content-Type'] = o.raw.type;
    body = o.raw.data;
  } else if (o.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(o.body);
  }
  if (method !== 'GET' && method !== 'HEAD' && csrf) headers['X-CSRF-Token'] = csrf;
  let res: Response;
  try {
    res = await fetch(config.api + path, { method, headers, body, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'NETWORK', 'The gateway did not answer (network error).');
  }
  if (res.status === 401 && !o.quiet401) onUnauthorized();
  if (!res.ok) throw await toError(res);
  if (res.status === 204) return null as T;
  const type = res.headers.get('Content-Type') ?? '';
  return (type.includes('json') ? await res.json() : await res.text()) as T;
}

async function toError(res: Response): Promise<ApiError> {
  let code = '';
  let message = `${res.status} ${res.statusText}`;
  let details: ApiError['details'];
  try {
    const b = await res.json();
    if (b && typeof b === 'object') {
      code = typeof b.error === 'string' ? b.error : '';
      if (typeof b.message === 'string' && b.message) message = b.message;
      if (Array.isArray(b.details)) details = b.details;
    }
  } catch {
    /* not JSON: keep the status line */
  }
  return new ApiError(res.status, code, message, details);
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
