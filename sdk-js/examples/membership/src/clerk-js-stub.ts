// A stand-in for clerk-js, the script Clerk's React SDK normally downloads from the instance.
// It is handed to the real @clerk/react through ClerkProvider's documented `Clerk` option
// (the one non-browser hosts use to bring their own instance), so the real provider, hooks
// and <Show> run against a session state the test chooses, with no network. Used by the
// example page's `?clerk=stub-signed-in|stub-signed-out|stub-pending` mode (the browser test)
// and by the package's vitest tests against the real @clerk/react.

/** The session the stub reports once loaded. `pending` is a session with unfinished tasks. */
export type StubSession = 'signed-in' | 'signed-out' | 'pending';

/** What a test can inspect of the stub after the provider used it. */
export interface ClerkJsStub {
  loaded: boolean;
  /** Calls of `load()` (the React SDK calls it once per instance). */
  loadCalls: number;
  /** Ids of the Clerk components the React SDK mounted (`SignIn`, `UserButton`, ...). */
  mounted: string[];
  [key: string]: unknown;
}

/**
 * A clerk-js stand-in whose `load()` resolves with the given session state, or never
 * resolves when `hold` is true (Clerk still loading).
 */
export function createClerkJsStub(session: StubSession, options: { hold?: boolean } = {}): ClerkJsStub {
  const user = session === 'signed-out' ? null : { id: 'user_stub', firstName: 'Ada', primaryEmailAddress: null };
  const sess =
    session === 'signed-out'
      ? null
      : { id: 'sess_stub', status: session === 'pending' ? 'pending' : 'active', user, actor: null, lastActiveToken: { jwt: { claims: { sub: 'user_stub', sid: 'sess_stub' } } } };
  const resources = {
    client: { id: 'client_stub', sessions: sess ? [sess] : [], signedInSessions: sess ? [sess] : [] },
    session: sess,
    user,
    organization: null,
  };
  const listeners = new Set<(r: typeof resources) => void>();
  const mount = (component: string) => (node: HTMLElement) => {
    stub.mounted.push(component);
    node.setAttribute('data-clerk-stub', component);
    node.textContent = `[clerk ${component}]`;
  };
  const stub: ClerkJsStub = {
    loaded: false,
    loadCalls: 0,
    mounted: [],
    client: undefined,
    session: undefined,
    user: undefined,
    organization: undefined,
    __internal_lastEmittedResources: undefined,
    async load() {
      stub.loadCalls += 1;
      if (options.hold) return new Promise<void>(() => {});
      Object.assign(stub, resources, { loaded: true, __internal_lastEmittedResources: resources });
      listeners.forEach((l) => l(resources));
    },
    addListener(listener: (r: typeof resources) => void, opts?: { skipInitialEmit?: boolean }) {
      listeners.add(listener);
      if (stub.loaded && !opts?.skipInitialEmit) listener(resources);
      return () => listeners.delete(listener);
    },
    mountSignIn: mount('SignIn'),
    mountSignUp: mount('SignUp'),
    mountUserButton: mount('UserButton'),
    unmountSignIn() {},
    unmountSignUp() {},
    unmountUserButton() {},
    __internal_updateProps() {},
  };
  return stub;
}
