import { describe, expect, it } from 'vitest';
import { validate } from '../src/validate';
import type { Field } from '../src/types';

const fields: Field[] = [
  { name: 'email', type: 'email', label: 'Email', required: true },
  { name: 'message', type: 'textarea', label: 'Message', required: true, maxLength: 10 },
  { name: 'age', type: 'number', label: 'Age', required: false, min: 18 },
  { name: 'color', type: 'select', label: 'Color', required: false, options: ['red', 'blue'] },
  { name: 'agree', type: 'checkbox', label: 'Agree', required: true },
  { name: 'photo', type: 'file', label: 'Photo', required: false, accept: ['image/png', 'image/jpeg'] },
];

describe('validate', () => {
  it('accepts a valid submission', () => {
    expect(validate(fields, { email: 'a@b.co', message: 'hi', age: '20', color: 'red', agree: true, photo: [] })).toEqual([]);
  });
  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['missing required', { message: 'hi', agree: true }, 'email', 'is required'],
    ['bad email', { email: 'nope', message: 'hi', agree: true }, 'email', 'must be an email address'],
    ['too long', { email: 'a@b.co', message: 'x'.repeat(11), agree: true }, 'message', 'is longer than 10 characters'],
    ['number too small', { email: 'a@b.co', message: 'hi', age: '3', agree: true }, 'age', 'must be at least 18'],
    ['not a number', { email: 'a@b.co', message: 'hi', age: 'x', agree: true }, 'age', 'must be a number'],
    ['bad option', { email: 'a@b.co', message: 'hi', color: 'green', agree: true }, 'color', 'must be one of the options'],
    ['unchecked', { email: 'a@b.co', message: 'hi', agree: false }, 'agree', 'must be checked'],
  ];
  for (const [name, values, field, problem] of cases) {
    it(name, () => {
      expect(validate(fields, values as never)).toEqual([{ field, problem }]);
    });
  }
  it('refuses a file type the field does not accept', () => {
    const file = new File(['x'], 'a.txt', { type: 'text/plain' });
    expect(validate(fields, { email: 'a@b.co', message: 'hi', agree: true, photo: [file] })).toEqual([
      { field: 'photo', problem: 'file type text/plain is not accepted' },
    ]);
  });
});
