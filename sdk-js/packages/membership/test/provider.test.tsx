import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as clerk from '@clerk/react';
import {
  MembershipError,
  MembershipProvider,
  RedirectToSignIn,
  SignedIn,
  SignedOut,
  SignIn,
  SignUp,
  UserButton,
  useMember,
  useMembershipConfig,
  type MembershipConfig,
} from '../src/index.js';
import { clerkCalls, resetClerkDouble, userState } from './clerk-double.js';

vi.mock('@clerk/react', () => import('./clerk-double.js'));

const CONFIG: MembershipConfig = {
  idpPublishableKey: 'pk_test_Y2xlcmsuZXhhbXBsZS5jb20k',
  idpInstanceDomain: 'clerk.example.com',
  appearance: { variables: { colorPrimary: '#0f766e' } },
  signUpEnabled: true,
  organizationsEnabled: false,
};

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

/** A fetch whose answer the test releases by hand. */
function deferredFetch() {
  let resolve!: (r: Response) => void;
  let reject!: (e: unknown) => void;
  const fetchMock = vi.fn(
    (_url: string, _init?: RequestInit) =>
      new Promise<Response>((res, rej) => {
        resolve = res;
        reject = rej;
      }),
  );
  return { fetchMock, resolve: (r: Response) => resolve(r), reject: (e: unknown) => reject(e) };
}

const errorFallback = (e: MembershipError) => (
  <p data-testid="state">
    error:{e.code}:{String(e.status ?? '')}
  </p>
);

function State() {
  return <p data-testid="state">ready</p>;
}

beforeEach(() => {
  resetClerkDouble();
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('MembershipProvider', () => {
  it('renders loadingFallback while /config is being fetched', async () => {
    const d = deferredFetch();
    vi.stubGlobal('fetch', d.fetchMock);
    render(
      <MembershipProvider apiKey="pk_test_demo_member" loadingFallback={<p data-testid="state">loading</p>} errorFallback={errorFallback}>
        <State />
      </MembershipProvider>,
    );
    expect(screen.getByTestId('state').textContent).toBe('loading');
    expect(clerkCalls.providerProps).toHaveLength(0);
    await act(async () => d.resolve(json(200, CONFIG)));
    expect(screen.getByTestId('state').textContent).toBe('ready');
  });

  it('fetches ${baseUrl}/config with the key in X-API-Key, and boots ClerkProvider with exactly the fetched key and domain', async () => {
    const fetchMock = vi.fn(async (_url: string, _init?: RequestInit) => json(200, CONFIG));
    vi.stubGlobal('fetch', fetchMock);
    render(
      <MembershipProvider apiKey="pk_live_demo_web" baseUrl="https://gw.example.test/membership/" errorFallback={errorFallback}>
        <State />
      </MembershipProvider>,
    );
    expect(await screen.findByText('ready')).toBeTruthy();
    expect(fetchMock).toHaveBeenCalledTimes(1);
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('https://gw.example.test/membership/config');
    expect((init.headers as Record<string, string>)['X-API-Key']).toBe('pk_live_demo_web');
    expect(init.signal).toBeInstanceOf(AbortSignal);

    const props = clerkCalls.providerProps.at(-1)!;
    expect(props.publishableKey).toBe(CONFIG.idpPublishableKey);
    expect(props.domain).toBe(CONFIG.idpInstanceDomain);
    expect(props.appearance).toEqual(CONFIG.appearance);
    expect(props.isSatellite).toBeUndefined();
    expect(props.proxyUrl).toBeUndefined();
    expect(JSON.stringify(props)).not.toContain('pk_live_demo_web');
  });

  it('uses http://localhost:8787/membership when no baseUrl is given', async () => {
    const fetchMock = vi.fn(async (_url: string, _init?: RequestInit) => json(200, CONFIG));
    vi.stubGlobal('fetch', fetchMock);
    render(
      <MembershipProvider apiKey="pk_test_x">
        <State />
      </MembershipProvider>,
    );
    await screen.findByText('ready');
    expect(fetchMock.mock.calls[0]![0]).toBe('http://localhost:8787/membership/config');
  });

  it('renders errorFallback with NO_ACTIVE_CONNECTION on a 404', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => json(404, { error: 'NO_ACTIVE_CONNECTION' })));
    render(
      <MembershipProvider apiKey="pk_test_none" loadingFallback={<p data-testid="state">loading</p>} errorFallback={errorFallback}>
        <State />
      </MembershipProvider>,
    );
    expect((await screen.findByText(/^error:/)).textContent).toBe('error:NO_ACTIVE_CONNECTION:404');
    expect(clerkCalls.providerProps).toHaveLength(0);
  });

  it('hands errorFallback a MembershipError', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => json(404, { error: 'NO_ACTIVE_CONNECTION' })));
    const seen: unknown[] = [];
    render(
      <MembershipProvider apiKey="pk_test_none" errorFallback={(e) => (seen.push(e), <p>failed</p>)}>
        <State />
      </MembershipProvider>,
    );
    await screen.findByText('failed');
    const err = seen.at(-1) as MembershipError;
    expect(err).toBeInstanceOf(MembershipError);
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe('NO_ACTIVE_CONNECTION');
    expect(err.status).toBe(404);
  });

  it('renders errorFallback with NETWORK when fetch fails', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))));
    render(
      <MembershipProvider apiKey="pk_test_x" errorFallback={errorFallback}>
        <State />
      </MembershipProvider>,
    );
    expect((await screen.findByText(/^error:/)).textContent).toBe('error:NETWORK:');
  });

  it('uses the gateway error code, or HTTP_<status> when the body has none', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => json(401, { message: 'invalid API key' })));
    const { unmount } = render(
      <MembershipProvider apiKey="pk_test_revoked" errorFallback={errorFallback}>
        <State />
      </MembershipProvider>,
    );
    expect((await screen.findByText(/^error:/)).textContent).toBe('error:HTTP_401:401');
    unmount();

    vi.stubGlobal('fetch', vi.fn(async () => json(403, { error: 'FORBIDDEN' })));
    render(
      <MembershipProvider apiKey="pk_test_forms_only" errorFallback={errorFallback}>
        <State />
      </MembershipProvider>,
    );
    expect((await screen.findByText(/^error:/)).textContent).toBe('error:FORBIDDEN:403');
  });

  it('refuses a 200 body that is not a boot configuration', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => json(200, { idpPublishableKey: 'sk_test_leak', idpInstanceDomain: 'x' })));
    render(
      <MembershipProvider apiKey="pk_test_x" errorFallback={errorFallback}>
        <State />
      </MembershipProvider>,
    );
    expect((await screen.findByText(/^error:/)).textContent).toBe('error:INVALID_RESPONSE:200');
    expect(clerkCalls.providerProps).toHaveLength(0);
  });

  it('does not refetch on re-render, but does when apiKey changes', async () => {
    const fetchMock = vi.fn(async (_url: string, _init?: RequestInit) => json(200, CONFIG));
    vi.stubGlobal('fetch', fetchMock);
    const { rerender } = render(
      <MembershipProvider apiKey="pk_test_a" errorFallback={(e) => errorFallback(e)}>
        <State />
      </MembershipProvider>,
    );
    await screen.findByText('ready');
    for (let i = 0; i < 3; i++) {
      rerender(
        <MembershipProvider apiKey="pk_test_a" errorFallback={(e) => errorFallback(e)} loadingFallback={<p>l{i}</p>}>
          <State />
          <span>render {i}</span>
        </MembershipProvider>,
      );
    }
    await screen.findByText('render 2');
    expect(fetchMock).toHaveBeenCalledTimes(1);

    rerender(
      <MembershipProvider apiKey="pk_test_b" errorFallback={errorFallback}>
        <State />
      </MembershipProvider>,
    );
    await screen.findByText('ready');
    expect(fetchMock).toHaveBeenCalledTimes(2);
    const init = fetchMock.mock.calls[1]![1] as unknown as RequestInit;
    expect((init.headers as Record<string, string>)['X-API-Key']).toBe('pk_test_b');
  });

  it('aborts the request on unmount and ignores a late answer', async () => {
    const d = deferredFetch();
    vi.stubGlobal('fetch', d.fetchMock);
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const { unmount } = render(
      <MembershipProvider apiKey="pk_test_x" loadingFallback={<p>loading</p>}>
        <State />
      </MembershipProvider>,
    );
    const signal = (d.fetchMock.mock.calls[0]![1] as RequestInit).signal!;
    expect(signal.aborted).toBe(false);
    unmount();
    expect(signal.aborted).toBe(true);
    await act(async () => d.reject(new DOMException('The operation was aborted.', 'AbortError')));
    expect(errors).not.toHaveBeenCalled();
    expect(clerkCalls.providerProps).toHaveLength(0);
  });

  it('refuses a secret key loudly and never sends it', async () => {
    const fetchMock = vi.fn(async (_url: string, _init?: RequestInit) => json(200, CONFIG));
    vi.stubGlobal('fetch', fetchMock);
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    render(
      <MembershipProvider apiKey="sk_live_demo_server" errorFallback={errorFallback}>
        <State />
      </MembershipProvider>,
    );
    expect(screen.getByTestId('state').textContent).toBe('error:SECRET_KEY:');
    await act(async () => {});
    expect(fetchMock).not.toHaveBeenCalled();
    expect(errors).toHaveBeenCalled();
    expect(String(errors.mock.calls[0]![0])).toMatch(/SECRET key/);
    expect(clerkCalls.providerProps).toHaveLength(0);
  });

  it('refuses a key that is not publishable', async () => {
    const fetchMock = vi.fn(async (_url: string, _init?: RequestInit) => json(200, CONFIG));
    vi.stubGlobal('fetch', fetchMock);
    vi.spyOn(console, 'error').mockImplementation(() => {});
    render(
      <MembershipProvider apiKey="demo_key" errorFallback={errorFallback}>
        <State />
      </MembershipProvider>,
    );
    expect(screen.getByTestId('state').textContent).toBe('error:INVALID_KEY:');
    await act(async () => {});
    expect(fetchMock).not.toHaveBeenCalled();
  });
});

describe('hooks', () => {
  function Probe() {
    const { member, isLoaded, isSignedIn } = useMember();
    const config = useMembershipConfig();
    return (
      <p data-testid="probe">
        {JSON.stringify({ member, isLoaded, isSignedIn, domain: config.idpInstanceDomain, orgs: config.organizationsEnabled })}
      </p>
    );
  }

  it('useMember reports Clerk not loaded yet, useMembershipConfig the resolved config', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => json(200, CONFIG)));
    render(
      <MembershipProvider apiKey="pk_test_x">
        <Probe />
      </MembershipProvider>,
    );
    const probe = await screen.findByTestId('probe');
    expect(JSON.parse(probe.textContent!)).toEqual({
      member: null,
      isLoaded: false,
      isSignedIn: false,
      domain: 'clerk.example.com',
      orgs: false,
    });
  });

  it('useMember returns the signed-in user from Clerk', async () => {
    userState.value = { isLoaded: true, isSignedIn: true, user: { id: 'user_1', firstName: 'Ada' } };
    vi.stubGlobal('fetch', vi.fn(async () => json(200, CONFIG)));
    render(
      <MembershipProvider apiKey="pk_test_x">
        <Probe />
      </MembershipProvider>,
    );
    const probe = await screen.findByTestId('probe');
    expect(JSON.parse(probe.textContent!)).toMatchObject({
      member: { id: 'user_1', firstName: 'Ada' },
      isLoaded: true,
      isSignedIn: true,
    });
  });

  it('useMembershipConfig throws outside a provider', () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    function Bare() {
      useMembershipConfig();
      return null;
    }
    expect(() => render(<Bare />)).toThrow(/inside <MembershipProvider>/);
  });
});

describe('components', () => {
  it('re-exports Clerk\'s own SignIn, UserButton and RedirectToSignIn', () => {
    expect(SignIn).toBe(clerk.SignIn);
    expect(UserButton).toBe(clerk.UserButton);
    expect(RedirectToSignIn).toBe(clerk.RedirectToSignIn);
  });

  it('SignedIn/SignedOut are our own components over Clerk Core 3\'s <Show when=...>, passing treatPendingAsSignedOut', async () => {
    expect('SignedIn' in clerk).toBe(false);
    expect('SignedOut' in clerk).toBe(false);
    userState.value = { isLoaded: true, isSignedIn: true, user: { id: 'user_1' } };
    vi.stubGlobal('fetch', vi.fn(async () => json(200, CONFIG)));
    render(
      <MembershipProvider apiKey="pk_test_x">
        <State />
        <SignedIn treatPendingAsSignedOut={false}>
          <p>in</p>
        </SignedIn>
        <SignedOut>
          <p>out</p>
        </SignedOut>
      </MembershipProvider>,
    );
    expect(await screen.findByText('in')).toBeTruthy();
    expect(screen.queryByText('out')).toBeNull();
    expect(clerkCalls.showProps).toContainEqual({ when: 'signed-in', treatPendingAsSignedOut: false });
    expect(clerkCalls.showProps).toContainEqual({ when: 'signed-out', treatPendingAsSignedOut: undefined });
  });

  it('SignedIn/SignedOut follow Clerk inside the provider', async () => {
    userState.value = { isLoaded: true, isSignedIn: false, user: null };
    vi.stubGlobal('fetch', vi.fn(async () => json(200, CONFIG)));
    render(
      <MembershipProvider apiKey="pk_test_x">
        <SignedIn>
          <p>in</p>
        </SignedIn>
        <SignedOut>
          <SignIn />
        </SignedOut>
      </MembershipProvider>,
    );
    expect(await screen.findByTestId('clerk-sign-in')).toBeTruthy();
    expect(screen.queryByText('in')).toBeNull();
  });

  it('SignUp is Clerk\'s SignUp when sign-up is enabled', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => json(200, CONFIG)));
    render(
      <MembershipProvider apiKey="pk_test_x" clerkProps={{ signUpUrl: '/sign-up' }}>
        <SignUp routing="hash" />
      </MembershipProvider>,
    );
    const el = await screen.findByTestId('clerk-sign-up');
    expect(el.getAttribute('data-routing')).toBe('hash');
    expect(clerkCalls.providerProps.at(-1)!.signUpUrl).toBe('/sign-up');
  });

  it('SignUp renders nothing and warns when sign-up is disabled; Clerk gets no signUpUrl', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => json(200, { ...CONFIG, signUpEnabled: false, appearance: null })));
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    render(
      <MembershipProvider apiKey="pk_test_x" clerkProps={{ signUpUrl: '/sign-up', signInUrl: '/sign-in' }}>
        <State />
        <SignUp />
      </MembershipProvider>,
    );
    await screen.findByText('ready');
    expect(screen.queryByTestId('clerk-sign-up')).toBeNull();
    // The warning comes from an effect, which may run after 'ready' is on screen.
    await vi.waitFor(() => expect(warn).toHaveBeenCalledWith(expect.stringMatching(/sign-up is disabled/)));
    const props = clerkCalls.providerProps.at(-1)!;
    expect(props.signUpUrl).toBeUndefined();
    expect(props.signInUrl).toBe('/sign-in');
    expect(props.appearance).toEqual({ elements: { footerAction__signUp: { display: 'none' } } });
  });
});

describe('clerkBootProps', () => {
  it('keeps the operator appearance, hides the sign-up link when sign-up is off, and never lets clerkProps override the boot key', async () => {
    const { clerkBootProps } = await import('../src/index.js');
    const props = clerkBootProps(
      { ...CONFIG, signUpEnabled: false, appearance: { variables: { colorPrimary: '#000' }, elements: { card: { padding: 0 } } } },
      { publishableKey: 'pk_test_other', domain: 'evil.test', isSatellite: true, proxyUrl: '/x', afterSignOutUrl: '/' },
    );
    expect(props).toEqual({
      publishableKey: CONFIG.idpPublishableKey,
      domain: CONFIG.idpInstanceDomain,
      afterSignOutUrl: '/',
      appearance: {
        variables: { colorPrimary: '#000' },
        elements: { footerAction__signUp: { display: 'none' }, card: { padding: 0 } },
      },
    });
  });
});
