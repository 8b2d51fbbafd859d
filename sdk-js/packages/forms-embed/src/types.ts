/** One field of a form definition, as GET {forms_base_url}/forms/{slug} returns it. */
export interface Field {
  name: string;
  type: string;
  label: string;
  required: boolean;
  placeholder?: string;
  helpText?: string;
  minLength?: number;
  maxLength?: number;
  min?: number;
  max?: number;
  pattern?: string;
  options?: string[];
  accept?: string[];
  multiple?: boolean;
  maxSizeMB?: number;
}

/** A form definition. */
export interface Definition {
  slug: string;
  title: string;
  fields: Field[];
  settings: { successMessage?: string; redirectUrl?: string | null; submitLabel?: string; [k: string]: unknown };
  captcha?: { provider: string; siteKey?: string };
}

/** A value the form holds for one field. */
export type Value = string | boolean | string[] | File[] | undefined;

/** One problem with one field (the gateway's VALIDATION_FAILED details use the same shape). */
export interface Problem {
  field: string;
  problem: string;
}
