import type { components } from './schema';

/** One per-field problem of a `VALIDATION_FAILED` (the envelope's `details`). */
export type FieldProblem = components['schemas']['FieldProblem'];

/** The error envelope every refusal of the gateway answers. */
export type ErrorEnvelope = components['schemas']['Error'];

type CodeOf<R> = R extends { content: { 'application/json': { error: infer C } } } ? C : never;

/**
 * Every error code the document lists in its shared error responses (`BadRequest`,
 * `Forbidden`, `NotFound`, ...). `string & {}` keeps codes a newer gateway adds assignable
 * while editors still complete the known ones.
 */
export type ErrorCode =
  | { [K in keyof components['responses']]: CodeOf<components['responses'][K]> }[keyof components['responses']]
  | (string & {});

/**
 * ApiError is what every call of the client throws when the gateway answers a status of 400 or
 * more: the HTTP `status`, the envelope's `code` (its `"error"`; `undefined` on 401 and 413,
 * which carry none), its `message` and `details`, and the raw `response` (its body already
 * read). Failures below HTTP (network, DNS, CORS, abort) reject with fetch's own error instead.
 */
export class ApiError extends Error {
  /** The HTTP status (400 or more). */
  readonly status: number;
  /** The envelope's `error` code, such as `NOT_FOUND`; `undefined` when the answer has none (401, 413, a non-JSON body). */
  readonly code: ErrorCode | undefined;
  /** Per-field problems of a `VALIDATION_FAILED`; empty otherwise. */
  readonly details: FieldProblem[];
  /** The parsed body as the gateway sent it (the envelope, or text when it was not JSON). */
  readonly body: unknown;
  /** The response (its body is consumed). */
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const env = isEnvelope(body) ? body : undefined;
    const code = env?.error;
    const text = env?.message || (typeof body === 'string' && body.trim() ? body.trim() : '') || response.statusText;
    super(text ? `${response.status}${code ? ` ${code}` : ''}: ${text}` : `HTTP ${response.status}`);
    this.name = 'ApiError';
    this.status = response.status;
    this.code = code || undefined;
    this.details = Array.isArray(env?.details) ? env.details : [];
    this.body = body;
    this.response = response;
  }
}

/** isApiError tells an ApiError (optionally one with this `code`) from any other thrown value. */
export function isApiError(err: unknown, code?: ErrorCode): err is ApiError {
  return err instanceof ApiError && (code === undefined || err.code === code);
}

function isEnvelope(body: unknown): body is ErrorEnvelope {
  return typeof body === 'object' && body !== null && !Array.isArray(body);
}
