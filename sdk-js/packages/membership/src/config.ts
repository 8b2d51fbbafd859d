import { MembershipError } from './errors.js';

/** Where the gateway's membership product lives when no `baseUrl` is given. */
export const DEFAULT_BASE_URL = 'http://localhost:8787/membership';

/**
 * The boot configuration of the project's active sign-in connection, exactly as
 * `GET {membership_base_url}/config` returns it. It never holds a secret.
 */
export interface MembershipConfig {
  /** Publishable key of the identity provider (Clerk) application. */
  idpPublishableKey: string;
  /** Identity provider instance domain, e.g. `clerk.example.com`. */
  idpInstanceDomain: string;
  /** Clerk `appearance` object, or null. */
  appearance: Record<string, unknown> | null;
  /** Whether sign-up is offered. */
  signUpEnabled: boolean;
  /** Whether the identity provider's organizations feature is enabled. */
  organizationsEnabled: boolean;
}

/** The outcome of checking an `apiKey` prop before anything is sent. */
export type KeyCheck = { ok: true } | { ok: false; error: MembershipError };

/**
 * Accepts only publishable keys (`pk_live_...`, `pk_test_...`). A secret key is refused
 * with code `SECRET_KEY`: it must never leave a server, so it is never sent either.
 */
export function checkApiKey(apiKey: unknown): KeyCheck {
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    return {
      ok: false,
      error: new MembershipError('INVALID_KEY', '@gatehouse/membership: apiKey is required (a pk_live_ or pk_test_ publishable key).'),
    };
  }
  if (/^sk_/i.test(apiKey.trim())) {
    return {
      ok: false,
      error: new MembershipError(
        'SECRET_KEY',
        '@gatehouse/membership: apiKey is a SECRET key (sk_...). Secret keys must never be shipped to a browser; ' +
          'it was not sent. Use the project\'s publishable key (pk_live_/pk_test_) and rotate this secret key now.',
      ),
    };
  }
  if (!apiKey.startsWith('pk_live_') && !apiKey.startsWith('pk_test_')) {
    return {
      ok: false,
      error: new MembershipError('INVALID_KEY', '@gatehouse/membership: apiKey must be a publishable key starting with pk_live_ or pk_test_.'),
    };
  }
  return { ok: true };
}

/** `${baseUrl}/config`, with trailing slashes of `baseUrl` dropped. */
export function configUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/config`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks a /config body and keeps exactly the five documented fields. */
export function parseConfig(body: unknown, status?: number): MembershipConfig {
  const bad = (what: string) =>
    new MembershipError('INVALID_RESPONSE', `@gatehouse/membership: the gateway's /config answer is not a boot configuration (${what}).`, {
      status,
    });
  if (!isPlainObject(body)) throw bad('not a JSON object');
  const { idpPublishableKey, idpInstanceDomain, appearance, signUpEnabled, organizationsEnabled } = body;
  if (typeof idpPublishableKey !== 'string' || !/^pk_(live|test)_/.test(idpPublishableKey)) {
    throw bad('idpPublishableKey is not a publishable key');
  }
  if (typeof idpInstanceDomain !== 'string' || idpInstanceDomain === '') throw bad('idpInstanceDomain is missing');
  if (appearance !== null && appearance !== undefined && !isPlainObject(appearance)) throw bad('appearance is not an object');
  if (typeof signUpEnabled !== 'boolean') throw bad('signUpEnabled is not a boolean');
  if (typeof organizationsEnabled !== 'boolean') throw bad('organizationsEnabled is not a boolean');
  return {
    idpPublishableKey,
    idpInstanceDomain,
    appearance: (appearance as Record<string, unknown> | null | undefined) ?? null,
    signUpEnabled,
    organizationsEnabled,
  };
}

/**
 * Fetches the boot configuration. Rejects with a {@link MembershipError}; an abort through
 * `signal` rejects with the platform's `AbortError` untouched.
 */
export async function fetchMembershipConfig(
  apiKey: string,
  baseUrl: string = DEFAULT_BASE_URL,
  signal?: AbortSignal,
): Promise<MembershipConfig> {
  const key = checkApiKey(apiKey);
  if (!key.ok) throw key.error;

  let res: Response;
  try {
    res = await fetch(configUrl(baseUrl), {
      method: 'GET',
      headers: { 'X-API-Key': apiKey, Accept: 'application/json' },
      credentials: 'omit',
      signal,
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    throw new MembershipError('NETWORK', `@gatehouse/membership: could not reach ${configUrl(baseUrl)}.`, { cause: err });
  }

  let body: unknown = undefined;
  try {
    body = await res.json();
  } catch (err) {
    if (signal?.aborted) throw err;
    body = undefined;
  }

  if (!res.ok) {
    const serverCode = isPlainObject(body) && typeof body.error === 'string' && /^[A-Z][A-Z0-9_]*$/.test(body.error) ? body.error : undefined;
    const serverMessage = isPlainObject(body) && typeof body.message === 'string' ? body.message : undefined;
    const code = serverCode ?? `HTTP_${res.status}`;
    const message =
      code === 'NO_ACTIVE_CONNECTION'
        ? '@gatehouse/membership: this project has no active sign-in connection.'
        : `@gatehouse/membership: the gateway answered ${res.status}${serverMessage ? `: ${serverMessage}` : ''}.`;
    throw new MembershipError(code, message, { status: res.status });
  }
  return parseConfig(body, res.status);
}
