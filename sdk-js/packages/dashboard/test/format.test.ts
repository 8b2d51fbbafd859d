import { describe, expect, it } from 'vitest';
import { qs } from '../src/api';
import { prefixOf } from '../src/pages/keys';
import { sampleVars } from '../src/pages/email';
import { inviteLink } from '../src/pages/members';

describe('qs', () => {
  it('keeps defined, non-empty values, encoded', () => {
    expect(qs({ status: 'delivered', tag: '', cursor: undefined, limit: 25, q: 'a b&c' })).toBe('?status=delivered&limit=25&q=a+b%26c');
    expect(qs({ a: '', b: null })).toBe('');
  });
});

describe('prefixOf', () => {
  it.each([
    [{ kind: 'secret' }, 'sk_live_'],
    [{ kind: 'publishable' }, 'pk_live_'],
    [{ kind: 'publishable', test: true }, 'pk_test_'],
    [{ kind: 'secret', test: true }, 'sk_test_'],
  ])('prefixOf(%o) = %s', (k, want) => expect(prefixOf(k)).toBe(want));
});

describe('sampleVars', () => {
  it('names each {{variable}} once', () => {
    expect(sampleVars('Welcome, {{name}} {{ name }} to {{product}}')).toEqual({ name: 'name', product: 'product' });
    expect(sampleVars('no variables')).toEqual({});
  });
});

describe('inviteLink', () => {
  it('puts the token in the fragment, encoded, under the dashboard base', () => {
    expect(inviteLink('https://gw.example', '/gh/dashboard', 'a+b/c')).toBe('https://gw.example/gh/dashboard/invite#token=a%2Bb%2Fc');
  });
});
