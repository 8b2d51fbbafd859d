/**
 * Codes a {@link MembershipError} can carry.
 *
 * - `NO_ACTIVE_CONNECTION`: the gateway answered 404: the key's project has no active
 *   sign-in connection.
 * - `NETWORK`: the request never got an HTTP answer (offline, DNS, CORS, refused).
 * - `INVALID_KEY`: `apiKey` is missing or is not a publishable key (`pk_live_` / `pk_test_`).
 *   Nothing was sent.
 * - `SECRET_KEY`: `apiKey` is a secret key (`sk_...`). Nothing was sent; rotate that key.
 * - `INVALID_RESPONSE`: the gateway answered 2xx with a body that is not a boot config.
 * - any other upper-case code the gateway put in its `{"error": "..."}` body
 *   (`FORBIDDEN`, `RATE_LIMITED`, ...), or `HTTP_<status>` when the body had none
 *   (a 401 for an unknown or revoked key is `HTTP_401`).
 */
export type MembershipErrorCode =
  | 'NO_ACTIVE_CONNECTION'
  | 'NETWORK'
  | 'INVALID_KEY'
  | 'SECRET_KEY'
  | 'INVALID_RESPONSE'
  | (string & {});

/** The error handed to `errorFallback`: why the membership configuration could not be loaded. */
export class MembershipError extends Error {
  /** Stable, machine-readable reason; see {@link MembershipErrorCode}. */
  readonly code: MembershipErrorCode;
  /** HTTP status of the gateway's answer, when there was one. */
  readonly status: number | undefined;

  constructor(code: MembershipErrorCode, message: string, options?: { status?: number; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MembershipError';
    this.code = code;
    this.status = options?.status;
  }
}

/** Type guard for {@link MembershipError}, also across bundle copies. */
export function isMembershipError(value: unknown): value is MembershipError {
  return (
    value instanceof MembershipError ||
    (typeof value === 'object' &&
      value !== null &&
      (value as { name?: unknown }).name === 'MembershipError' &&
      typeof (value as { code?: unknown }).code === 'string')
  );
}
