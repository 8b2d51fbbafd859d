import type { Field, Problem, Value } from './types';

/** Largest file the gateway accepts (5 MB). */
export const MAX_FILE_BYTES = 5 * 1024 * 1024;

const emailRe = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function isEmpty(v: Value): boolean {
  return v === undefined || v === '' || v === false || (Array.isArray(v) && v.length === 0);
}

function accepts(accept: string[], file: File): boolean {
  const type = (file.type || '').toLowerCase();
  const name = file.name.toLowerCase();
  return accept.some((a) => {
    a = a.trim().toLowerCase();
    if (a === type) return true;
    if (a.endsWith('/*')) return type.startsWith(a.slice(0, -1));
    return a.startsWith('.') && name.endsWith(a);
  });
}

/** Checks values against the fields as the gateway does; returns the problems, in field order. */
export function validate(fields: Field[], values: Record<string, Value>): Problem[] {
  const out: Problem[] = [];
  for (const f of fields) {
    const v = values[f.name];
    const add = (problem: string) => out.push({ field: f.name, problem });
    if (isEmpty(v)) {
      if (f.required) add(f.type === 'checkbox' ? 'must be checked' : 'is required');
      continue;
    }
    if (f.type === 'file') {
      const files = v as File[];
      if (files.length > 1 && !f.multiple) add('takes one file');
      const limit = Math.min(MAX_FILE_BYTES, f.maxSizeMB ? f.maxSizeMB * 1024 * 1024 : Infinity);
      for (const file of files) {
        if (file.size > limit) { add(`file is larger than ${Math.round(limit / 1024 / 1024 * 10) / 10} MB`); break; }
        if (f.accept && f.accept.length > 0 && !accepts(f.accept, file)) { add(`file type ${file.type || 'unknown'} is not accepted`); break; }
      }
      continue;
    }
    if (f.type === 'checkbox') continue;
    if (f.type === 'multiselect') {
      const bad = (v as string[]).find((x) => !(f.options ?? []).includes(x));
      if (bad !== undefined) add(`"${bad}" is not one of the options`);
      continue;
    }
    const s = String(v);
    if (f.type === 'number') {
      const n = Number(s);
      if (s.trim() === '' || !Number.isFinite(n)) { add('must be a number'); continue; }
      if (f.min !== undefined && n < f.min) { add(`must be at least ${f.min}`); continue; }
      if (f.max !== undefined && n > f.max) { add(`must be at most ${f.max}`); continue; }
      continue;
    }
    const len = [...s].length;
    if (f.maxLength && len > f.maxLength) { add(`is longer than ${f.maxLength} characters`); continue; }
    if (f.minLength && len < f.minLength) { add(`is shorter than ${f.minLength} characters`); continue; }
    if (f.pattern) {
      let re: RegExp | null = null;
      try { re = new RegExp(`^(?:${f.pattern})$`); } catch { re = null; }
      if (re && !re.test(s)) { add('does not match the pattern'); continue; }
    }
    if (f.type === 'email' && !emailRe.test(s)) add('must be an email address');
    else if (f.type === 'url' && !/^https?:\/\/[^\s/]+/i.test(s)) add('must be an http or https URL');
    else if (f.type === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(s)) add('must be a date (YYYY-MM-DD)');
    else if ((f.type === 'select' || f.type === 'radio') && !(f.options ?? []).includes(s)) add('must be one of the options');
  }
  return out;
}
