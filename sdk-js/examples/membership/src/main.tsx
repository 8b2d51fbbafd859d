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

// ?key=pk_test_...&baseUrl=http://127.0.0.1:8787/membership
const params = new URLSearchParams(window.location.search);
const apiKey = params.get('key') ?? '';
const baseUrl = params.get('baseUrl') || undefined;

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
        <dd>{member ? member.id : '(none)'}</dd>
      </dl>
      <SignedOut>
        <SignIn routing="hash" />
      </SignedOut>
      <SignedIn>
        <UserButton />
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
