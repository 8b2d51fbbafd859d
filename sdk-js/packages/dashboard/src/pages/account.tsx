// The signed-in user's own account: change the password (the other sessions end), and the list
// of one's sessions with sign-out of one or of every other. Also the page an invite link opens
// (no session yet): choose a password and be signed in.
import { useEffect, useState } from 'react';
import { call, gh, type Page, type Session } from '../api';
import { type Scope } from '../scope';
import { ErrorNote, Notice, Time, useAction, useLoad } from '../ui';

interface SessionInfo {
  id: string;
  createdAt?: string;
  expiresAt: string;
  ip?: string;
  userAgent?: string;
  current: boolean;
}

export function AccountPage({ scope }: { scope: Scope }) {
  const s = scope.session;
  if (!s.email) {
    return (
      <>
        <h1>Your account</h1>
        <p className="muted">You are using the admin token, which is not a dashboard account: it has no password or sessions.</p>
      </>
    );
  }
  return (
    <>
      <h1>Your account</h1>
      <p>
        Signed in as <strong>{s.email}</strong>
        {s.operator ? ', operator' : s.orgs[0] ? `, ${s.orgs[0].role} of ${s.orgs[0].slug}` : ''}.
      </p>
      <Sessions />
    </>
  );
}

function Sessions() {
  const list = useLoad<Page<SessionInfo>>('/session/sessions');
  const act = useAction();
  const [note, setNote] = useState('');
  const items = list.data?.items ?? [];
  const others = items.filter((i) => !i.current).length;
  return (
    <>
      <PasswordForm onChanged={list.reload} />
      <h2>Your sessions</h2>
      <ErrorNote error={list.error} />
      <ErrorNote error={act.error} />
      {note ? <Notice text={note} /> : null}
      <table aria-label="Sessions">
        <thead>
          <tr>
            <th scope="col">Signed in</th>
            <th scope="col">From</th>
            <th scope="col">Browser</th>
            <th scope="col">Expires</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {items.map((i) => (
            <tr key={i.id}>
              <td>
                <Time at={i.createdAt} />
              </td>
              <td className="mono">{i.ip ?? ''}</td>
              <td>{i.userAgent ?? ''}</td>
              <td>
                <Time at={i.expiresAt} />
              </td>
              <td>
                {i.current ? (
                  <strong>This session</strong>
                ) : (
                  <button
                    type="button"
                    disabled={act.busy}
                    aria-label={`Sign out the session ${i.id.slice(0, 8)}`}
                    onClick={() =>
                      act.run(() => call(gh.DELETE('/admin/v1/session/sessions/{id}', { params: { path: { id: i.id } } }))).then((r) => {
                        if (r === undefined) return;
                        setNote('That session is signed out.');
                        list.reload();
                      })
                    }
                  >
                    Sign out
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <button
        type="button"
        disabled={act.busy || !others}
        onClick={() =>
          act.run(() => call(gh.DELETE('/admin/v1/session/sessions'))).then((r) => {
            if (!r) return;
            setNote(`${r.ended} other session(s) signed out.`);
            list.reload();
          })
        }
      >
        Sign out all other sessions
      </button>
    </>
  );
}

function PasswordForm({ onChanged }: { onChanged: () => void }) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [note, setNote] = useState('');
  const act = useAction();
  return (
    <form
      className="card"
      aria-labelledby="pw-title"
      onSubmit={async (e) => {
        e.preventDefault();
        setNote('');
        if (next !== again) {
          act.setError(new Error('The new password and its repetition differ.'));
          return;
        }
        const r = await act.run(() => call(gh.PUT('/admin/v1/session/password', { body: { currentPassword: current, newPassword: next } })));
        if (r !== undefined) {
          setCurrent('');
          setNext('');
          setAgain('');
          setNote('Password changed. Your other sessions are signed out.');
          onChanged();
        }
      }}
    >
      <h2 id="pw-title">Change your password</h2>
      <p>
        <label>
          Current password
          <input type="password" autoComplete="current-password" required value={current} onChange={(e) => setCurrent(e.target.value)} />
        </label>
      </p>
      <p>
        <label>
          New password
          <input type="password" autoComplete="new-password" required minLength={8} value={next} onChange={(e) => setNext(e.target.value)} />
        </label>
      </p>
      <p>
        <label>
          Repeat the new password
          <input type="password" autoComplete="new-password" required value={again} onChange={(e) => setAgain(e.target.value)} />
        </label>
      </p>
      <button type="submit" className="primary" disabled={act.busy}>
        Change password
      </button>
      <ErrorNote error={act.error} />
      {note ? <Notice text={note} /> : null}
    </form>
  );
}

/** The token of an invite link (#token=...). */
function inviteToken(): string {
  return new URLSearchParams(window.location.hash.replace(/^#/, '')).get('token') ?? '';
}

/** The page of an invite link: choose a password, get an account and a session. */
export function AcceptInvite({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [token] = useState(inviteToken);
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const act = useAction();
  useEffect(() => {
    document.title = 'Accept an invite · Gatehouse';
  }, []);
  return (
    <main className="signin">
      <h1>Gatehouse</h1>
      <form
        aria-labelledby="accept-title"
        onSubmit={async (e) => {
          e.preventDefault();
          if (password !== again) {
            act.setError(new Error('The password and its repetition differ.'));
            return;
          }
          const s = await act.run(() => call<Session>(gh.POST('/admin/v1/invites/accept', { body: { token, password } }), true));
          if (s) onSignedIn(s);
        }}
      >
        <h2 id="accept-title">Accept your invite</h2>
        {!token ? <ErrorNote error={new Error('This link has no invite token: open the whole link you were sent.')} /> : null}
        <label htmlFor="accept-password">Choose a password</label>
        <input id="accept-password" type="password" autoComplete="new-password" required minLength={8} value={password} onChange={(e) => setPassword(e.target.value)} autoFocus />
        <label htmlFor="accept-again">Repeat the password</label>
        <input id="accept-again" type="password" autoComplete="new-password" required value={again} onChange={(e) => setAgain(e.target.value)} />
        <button type="submit" className="primary" disabled={act.busy || !token}>
          Create my account
        </button>
        <ErrorNote error={act.error} />
      </form>
    </main>
  );
}
