// Members of the selected org (owners and operators manage them, decisions.md 8.2): the users
// with their roles (changed here, never one's own), removal, invitations by link (shown once,
// with a copy button) and the pending invites with revoke.
import { useState } from 'react';
import { call, config, gh, seg, type Page } from '../api';
import { type Scope } from '../scope';
import { CopyButton, ErrorNote, Notice, Time, confirmed, useAction, useLoad } from '../ui';

interface User {
  email: string;
  operator: boolean;
  org?: string;
  role?: string;
  createdAt: string;
}

interface Invite {
  email: string;
  org: string;
  role: string;
  invitedBy?: string;
  createdAt: string;
  expiresAt: string;
}

/** The link an invitee opens: the token rides in the fragment, so no server log sees it. */
export function inviteLink(origin: string, base: string, token: string): string {
  return `${origin}${base}/invite#token=${encodeURIComponent(token)}`;
}

export function MembersPage({ scope }: { scope: Scope }) {
  const org = scope.org;
  const role = scope.session.orgs.find((o) => o.slug === org)?.role;
  const owner = scope.session.operator || role === 'owner';
  return (
    <>
      <h1>Members of {org || 'no org'}</h1>
      {!owner ? (
        <p className="muted">Only the owners of {org} manage its members. You are a {role ?? 'member'}.</p>
      ) : org ? (
        <Manage key={org} org={org} self={scope.session.email} />
      ) : null}
    </>
  );
}

function Manage({ org, self }: { org: string; self: string }) {
  const users = useLoad<Page<User>>(`/users?org=${seg(org)}`);
  const invites = useLoad<Page<Invite>>(`/orgs/${seg(org)}/invites`);
  const act = useAction();
  const [note, setNote] = useState('');
  const done = (text: string) => (r: unknown) => {
    if (r === undefined) return;
    setNote(text);
    users.reload();
    invites.reload();
  };
  return (
    <>
      <ErrorNote error={act.error} />
      {note ? <Notice text={note} /> : null}
      <InviteForm org={org} onInvited={() => invites.reload()} />
      <h2>Users</h2>
      <ErrorNote error={users.error} />
      <table aria-label="Users">
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Role</th>
            <th scope="col">Since</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(users.data?.items ?? []).map((u) => (
            <tr key={u.email}>
              <td>{u.email}</td>
              <td>
                {u.email === self ? (
                  `${u.role} (you)`
                ) : (
                  <select
                    aria-label={`Role of ${u.email}`}
                    value={u.role}
                    disabled={act.busy}
                    onChange={(e) => {
                      const r = e.target.value as 'owner' | 'member';
                      act.run(() => call(gh.PATCH('/admin/v1/users/{email}', { params: { path: { email: u.email } }, body: { role: r } }))).then(done(`${u.email} is now ${r}.`));
                    }}
                  >
                    <option value="member">member</option>
                    <option value="owner">owner</option>
                  </select>
                )}
              </td>
              <td>
                <Time at={u.createdAt} />
              </td>
              <td>
                {u.email === self ? null : (
                  <button
                    type="button"
                    className="danger"
                    disabled={act.busy}
                    aria-label={`Remove ${u.email}`}
                    onClick={() => confirmed(`Remove ${u.email} from ${org}? Their sessions end at once.`) && act.run(() => call(gh.DELETE('/admin/v1/users/{email}', { params: { path: { email: u.email } } }))).then(done(`${u.email} is removed.`))}
                  >
                    Remove
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Pending invites</h2>
      <ErrorNote error={invites.error} />
      {invites.data && !invites.data.items.length ? <p className="muted">No pending invites.</p> : null}
      {invites.data?.items.length ? (
        <table aria-label="Pending invites">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Invited by</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {invites.data.items.map((i) => (
              <tr key={i.email}>
                <td>{i.email}</td>
                <td>{i.role}</td>
                <td>{i.invitedBy || 'the admin token'}</td>
                <td>
                  <Time at={i.expiresAt} />
                </td>
                <td>
                  <button
                    type="button"
                    className="danger"
                    disabled={act.busy}
                    aria-label={`Revoke the invite of ${i.email}`}
                    onClick={() => act.run(() => call(gh.DELETE('/admin/v1/orgs/{org}/invites/{email}', { params: { path: { org, email: i.email } } }))).then(done(`The invite of ${i.email} is revoked.`))}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

function InviteForm({ org, onInvited }: { org: string; onInvited: () => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<'owner' | 'member'>('member');
  const [link, setLink] = useState<{ email: string; url: string } | null>(null);
  const act = useAction();
  return (
    <>
      <form
        className="card"
        aria-labelledby="invite-title"
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await act.run(() => call(gh.POST('/admin/v1/orgs/{org}/invites', { params: { path: { org } }, body: { email, role } })));
          if (r) {
            setLink({ email: r.email, url: inviteLink(window.location.origin, config.base, r.token) });
            setEmail('');
            onInvited();
          }
        }}
      >
        <h2 id="invite-title">Invite someone to {org}</h2>
        <div className="row">
          <label>
            Email address to invite
            <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <label>
            Role
            <select value={role} onChange={(e) => setRole(e.target.value as typeof role)}>
              <option value="member">member</option>
              <option value="owner">owner</option>
            </select>
          </label>
          <button type="submit" className="primary" disabled={act.busy}>
            Invite
          </button>
        </div>
        <ErrorNote error={act.error} />
      </form>
      {link ? (
        <section className="once" aria-labelledby="link-title">
          <h2 id="link-title">Invite link for {link.email}</h2>
          <p>Send this link to {link.email}: it is shown only this once, works once, and expires in 7 days.</p>
          <p>
            <label htmlFor="invite-link">Invite link</label>
            <input id="invite-link" readOnly value={link.url} className="mono wide" onFocus={(e) => e.target.select()} autoFocus />
            <CopyButton text={link.url} label="Copy invite link" />
          </p>
          <button type="button" onClick={() => setLink(null)}>
            I have sent it
          </button>
        </section>
      ) : null}
    </>
  );
}
