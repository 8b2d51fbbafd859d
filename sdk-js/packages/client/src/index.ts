/**
 * @gatehouse/client: a typed fetch client of the Gatehouse HTTP API. The types in schema.d.ts
 * are generated from the gateway's OpenAPI document (GET /openapi.json); createClient wraps
 * openapi-fetch so calls resolve with typed data and refusals throw an ApiError.
 */
export { createClient } from './client';
export type { CallMethod, ClientOptions, GatehouseClient, Result } from './client';
export { ApiError, isApiError } from './errors';
export type { ErrorCode, ErrorEnvelope, FieldProblem } from './errors';
export type { components, operations, paths } from './schema';

import type { components } from './schema';

/** A schema of the document by name: `Schema<'Record'>`, `Schema<'FormDefinition'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];
