// SignedIn / SignedOut / useMember against the REAL @clerk/react (no vi.mock): clerk-js is
// replaced by the stub the browser test uses, handed over through ClerkProvider's `Clerk` option.
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createClerkJsStub, type StubSession } from '../../../examples/membership/src/clerk-js-stub.js';
import { MembershipProvider, SignedIn, SignedOut, SignIn, useMember, type MembershipConfig } from '../src/index.js';

const CONFIG: MembershipConfig = {
  idpPublishableKey: 'pk_test_Y2xlcmsuZXhhbXBsZS5jb20k',
  idpInstanceDomain: 'clerk.example.com',
  appearance: null,
  signUpEnabled: true,
  organizationsEnabled: false,
};

function Member() {
  const { member, isLoaded, isSignedIn } = useMember();
  return <p data-testid="member">{isLoaded ? `${isSignedIn ? 'in' : 'out'}:${member?.id ?? '-'}` : 'booting'}</p>;
}

function renderWith(session: StubSession, opts: { hold?: boolean; treatPendingAsSignedOut?: boolean } = {}) {
  vi.stubGlobal('fetch', vi.fn(async () => new Response(JSON.stringify(CONFIG), { status: 200 })));
  const stub = createClerkJsStub(session, { hold: opts.hold });
  render(
    <MembershipProvider apiKey="pk_test_x" clerkProps={{ Clerk: stub }}>
      <Member />
      <SignedIn treatPendingAsSignedOut={opts.treatPendingAsSignedOut}>
        <p data-testid="signed-in">in</p>
      </SignedIn>
      <SignedOut treatPendingAsSignedOut={opts.treatPendingAsSignedOut}>
        <p data-testid="signed-out">out</p>
        <SignIn routing="hash" />
      </SignedOut>
    </MembershipProvider>,
  );
  return stub;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('SignedIn / SignedOut on the real @clerk/react', () => {
  it('signed in: SignedIn renders its children, SignedOut nothing; useMember has the user', async () => {
    const stub = renderWith('signed-in');
    expect(await screen.findByTestId('signed-in')).toBeTruthy();
    expect(screen.queryByTestId('signed-out')).toBeNull();
    expect(screen.getByTestId('member').textContent).toBe('in:user_stub');
    expect(stub.loadCalls).toBe(1);
    expect(stub.mounted).not.toContain('SignIn');
  });

  it('signed out: SignedOut renders its children (Clerk mounts SignIn in it), SignedIn nothing', async () => {
    const stub = renderWith('signed-out');
    expect(await screen.findByTestId('signed-out')).toBeTruthy();
    expect(screen.queryByTestId('signed-in')).toBeNull();
    expect(screen.getByTestId('member').textContent).toBe('out:-');
    await vi.waitFor(() => expect(stub.mounted).toContain('SignIn'));
  });

  it('while clerk-js loads, neither renders', async () => {
    const stub = renderWith('signed-in', { hold: true });
    await vi.waitFor(() => expect(stub.loadCalls).toBe(1));
    expect(screen.getByTestId('member').textContent).toBe('booting');
    expect(screen.queryByTestId('signed-in')).toBeNull();
    expect(screen.queryByTestId('signed-out')).toBeNull();
  });

  it('a pending session counts as signed out by default, and as signed in with treatPendingAsSignedOut={false}', async () => {
    renderWith('pending');
    expect(await screen.findByTestId('signed-out')).toBeTruthy();
    expect(screen.queryByTestId('signed-in')).toBeNull();
    cleanup();
    renderWith('pending', { treatPendingAsSignedOut: false });
    expect(await screen.findByTestId('signed-in')).toBeTruthy();
    expect(screen.queryByTestId('signed-out')).toBeNull();
  });
});
