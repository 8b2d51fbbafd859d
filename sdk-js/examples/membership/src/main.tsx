import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import {
  MembershipProvider,
  SignedIn,
  SignedOut,
  SignIn,
  UserButton,
  useMember,
  useMembershipConfig,
  type MembershipError,
} from '@gatehouse/membership';
import { createClerkJsStub, type StubSession } from './clerk-js-stub.js';

// ?key=pk_test_...&baseUrl=http://127.0.0.1:8787/membership
// Test only: &clerk=stub-signed-in|stub-signed-out|stub-pending boots the real @clerk/react
// with a local clerk-js stand-in (no download) in that session state.
const params = new URLSearchParams(window.location.search);
const apiKey = params.get('key') ?? '';
const baseUrl = params.get('baseUrl') || undefined;
const stubSession = /^stub-(signed-in|signed-out|pending)$/.exec(params.get('clerk') ?? '')?.[1] as StubSession | undefined;
const clerkProps = stubSession ? { Clerk: createClerkJsStub(stubSession) } : undefined;

function State({ value, detail }: { value: string; detail?: string }) {
  const kind = value.split(':')[0];
  return (
    <p>
      Membership:{' '}
      <span className="state" data-kind={kind} data-testid="membership-state">
        {value}
      </span>
      {detail ? <span className="hint" data-testid="membership-detail"> {detail}</span> : null}
    </p>
  );
}

function ErrorView({ error }: { error: MembershipError }) {
  return (
    <>
      <State value={`error:${error.code}`} />
      <p className="hint" data-testid="membership-error-message">
        {error.message}
      </p>
    </>
  );
}

function Booted() {
  const config = useMembershipConfig();
  const { member, isLoaded } = useMember();
  return (
    <>
      <State value="ready" />
      <dl>
        <dt>Instance domain</dt>
        <dd data-testid="membership-domain">{config.idpInstanceDomain}</dd>
        <dt>Sign-up</dt>
        <dd data-testid="membership-signup">{config.signUpEnabled ? 'enabled' : 'disabled'}</dd>
        <dt>Organizations</dt>
        <dd>{config.organizationsEnabled ? 'enabled' : 'disabled'}</dd>
        <dt>Identity provider</dt>
        <dd data-testid="membership-idp">{isLoaded ? 'loaded' : 'booting'}</dd>
        <dt>Member</dt>
        <dd data-testid="membership-member">{member ? member.id : '(none)'}</dd>
      </dl>
      <SignedOut>
        <section data-testid="signed-out">
          <SignIn routing="hash" />
        </section>
      </SignedOut>
      <SignedIn>
        <section data-testid="signed-in">
          <UserButton />
        </section>
      </SignedIn>
    </>
  );
}

function App() {
  return (
    <>
      <h1>Gatehouse membership example</h1>
      <p className="hint">
        Key and gateway come from the query string: <code>?key=pk_test_...&amp;baseUrl=http://127.0.0.1:8787/membership</code>
      </p>
      <MembershipProvider
        apiKey={apiKey}
        baseUrl={baseUrl}
        clerkProps={clerkProps}
        loadingFallback={<State value="loading" />}
        errorFallback={(error) => <ErrorView error={error} />}
      >
        <Booted />
      </MembershipProvider>
    </>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
