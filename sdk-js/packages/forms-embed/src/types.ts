import type { Schema } from '@gatehouse/client';

/** One field of a form definition, as GET {forms_base_url}/forms/{slug} returns it (the document's FormField). */
export type Field = Schema<'FormField'>;

/** A form definition (the document's FormDefinition); settings may be null. */
export type Definition = Schema<'FormDefinition'>;

/** A value the form holds for one field. */
export type Value = string | boolean | string[] | File[] | undefined;

/** One problem with one field (the gateway's VALIDATION_FAILED details use the same shape). */
export interface Problem {
  field: string;
  problem: string;
}
