// The dashboard app: sign-in, then a shell with the org and project pickers and one page per
// product, each a client of the admin API (decisions.md 8.2).
import { StrictMode, useCallback, useEffect, useState, type ReactElement } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError, call, gh, setSession, type Session } from './api';
import { navigate, useRoute } from './router';
import { ErrorNote, Link } from './ui';
import { Scope, ScopeBar, useScope } from './scope';
import { OverviewPage } from './pages/overview';
import { ProjectsPage } from './pages/projects';
import { KeysPage } from './pages/keys';
import { EmailPage } from './pages/email';
import { FormsPage } from './pages/forms';
import { FilesPage } from './pages/files';
import { RecordsPage } from './pages/records';
import { MembershipPage } from './pages/membership';
import { PluginsPage } from './pages/plugins';
import { WebhooksPage } from './pages/webhooks';
import { MembersPage } from './pages/members';
import { AccountPage, AcceptInvite } from './pages/account';

/** The pages in navigation order: path, link name, component. */
const pages: { path: string; name: string; Page: (p: { scope: Scope }) => ReactElement }[] = [
  { path: '/', name: 'Overview', Page: OverviewPage },
  { path: '/projects', name: 'Projects', Page: ProjectsPage },
  { path: '/keys', name: 'Keys', Page: KeysPage },
  { path: '/email', name: 'Email', Page: EmailPage },
  { path: '/forms', name: 'Forms', Page: FormsPage },
  { path: '/files', name: 'Files', Page: FilesPage },
  { path: '/records', name: 'Records', Page: RecordsPage },
  { path: '/membership', name: 'Membership', Page: MembershipPage },
  { path: '/plugins', name: 'Plugins', Page: PluginsPage },
  { path: '/webhooks', name: 'Webhooks', Page: WebhooksPage },
  { path: '/members', name: 'Members', Page: MembersPage },
  { path: '/account', name: 'Account', Page: AccountPage },
];

/**
 * Whether this browser signed in before (a flag in localStorage, set on sign-in and cleared on
 * sign-out or a 401). The session cookie is HttpOnly, so without the flag the app shows the
 * sign-in page at once instead of asking GET /session for a 401 (a console error on a fresh page).
 */
const signedInFlag = {
  get: () => {
    try {
      return localStorage.getItem('gatehouse.signedIn') === '1';
    } catch {
      return true; // storage refused: ask the gateway
    }
  },
  set: (on: boolean) => {
    try {
      if (on) localStorage.setItem('gatehouse.signedIn', '1');
      else localStorage.removeItem('gatehouse.signedIn');
    } catch {
      /* private mode */
    }
  },
};

function App() {
  const route = useRoute();
  const [session, setSessionState] = useState<Session | null>(null);
  const setS = useCallback((s: Session | null) => {
    signedInFlag.set(!!s);
    setSessionState(s);
  }, []);
  const [checked, setChecked] = useState(false);
  const [bootError, setBootError] = useState<unknown>(null);
  const signedOut = useCallback(() => setS(null), [setS]);
  useEffect(() => {
    if (!signedInFlag.get()) {
      setChecked(true);
      return;
    }
    call<Session>(gh.GET('/admin/v1/session'), true)
      .then((s) => {
        setSession(s.csrfToken, signedOut);
        setS(s);
      })
      .catch((e) => {
        if (e instanceof ApiError && (e.status === 401 || e.status === 404)) signedInFlag.set(false);
        else setBootError(e);
      })
      .finally(() => setChecked(true));
  }, [signedOut, setS]);
  if (!checked) return <p className="boot">Loading the dashboard…</p>;
  if (route.path === '/invite')
    return (
      <AcceptInvite
        onSignedIn={(s) => {
          setSession(s.csrfToken, signedOut);
          setS(s);
          navigate('/', true);
        }}
      />
    );
  if (!session)
    return (
      <SignIn
        error={bootError}
        onSignedIn={(s) => {
          setSession(s.csrfToken, signedOut);
          setS(s);
        }}
      />
    );
  return <Shell session={session} onSignOut={signedOut} />;
}

function SignIn({ onSignedIn, error }: { onSignedIn: (s: Session) => void; error: unknown }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<unknown>(error);
  useEffect(() => {
    document.title = 'Sign in · Gatehouse';
  }, []);
  return (
    <main className="signin">
      <h1>Gatehouse</h1>
      <form
        aria-labelledby="signin-title"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setErr(null);
          try {
            const s = await call<Session>(gh.POST('/admin/v1/session', { body: { email, password } }), true);
            onSignedIn(s);
          } catch (x) {
            setErr(x);
          } finally {
            setBusy(false);
          }
        }}
      >
        <h2 id="signin-title">Sign in to the dashboard</h2>
        <label htmlFor="signin-email">Email</label>
        <input id="signin-email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
        <label htmlFor="signin-password">Password</label>
        <input id="signin-password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        <button type="submit" className="primary" disabled={busy}>
          Sign in
        </button>
        <ErrorNote error={err} />
      </form>
    </main>
  );
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const route = useRoute();
  const scope = useScope(session);
  const page = pages.find((p) => p.path === route.path) ?? null;
  // The navigation is a menu on narrow screens (CSS shows the toggle below 760 px); it closes
  // when a page is chosen.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    document.title = `${page?.name ?? 'Not found'} · Gatehouse`;
    setMenuOpen(false);
  }, [page]);
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span className="brand">Gatehouse</span>
        <button type="button" className="menu-toggle" aria-expanded={menuOpen} aria-controls="mainnav" onClick={() => setMenuOpen((o) => !o)}>
          Menu
        </button>
        <ScopeBar scope={scope} />
        <span className="who">
          <span className="who-name">
            {session.email || 'operator'}
            {session.operator ? ' (operator)' : ''}
          </span>
          <button
            type="button"
            onClick={async () => {
              await call(gh.DELETE('/admin/v1/session')).catch(() => undefined);
              onSignOut();
              navigate('/', true);
            }}
          >
            Sign out
          </button>
        </span>
      </header>
      <nav aria-label="Main" id="mainnav" className={menuOpen ? 'mainnav open' : 'mainnav'}>
        <ul>
          {pages.map((p) => (
            <li key={p.path}>
              <Link to={p.path} current={p === page}>
                {p.name}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {page ? <page.Page scope={scope} /> : <NotFound />}
      </main>
    </div>
  );
}

function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <ErrorNote error={new Error('No dashboard page at this address.')} />
    </>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
