// Membership: the project's identity-provider connections (GET .../connections), with the
// active one marked and switched (PUT .../connections/{name}/active). Secrets never reach the
// browser: the gateway tells only whether a connection has one. The tenants document owns
// active:, so its next apply writes its own choice back; the page says so.
import { useState } from 'react';
import { call, gh, seg, type Page } from '../api';
import { NeedProject, type Scope } from '../scope';
import { ErrorNote, Notice, confirmed, useAction, useLoad } from '../ui';

interface Connection {
  name: string;
  active: boolean;
  idpPublishableKey: string;
  idpInstanceDomain: string;
  hasIdpSecretKey: boolean;
  signUpEnabled: boolean;
  organizationsEnabled: boolean;
}

export function MembershipPage({ scope }: { scope: Scope }) {
  const base = scope.project ? `/projects/${seg(scope.project)}/connections` : null;
  const list = useLoad<Page<Connection>>(base);
  const items = list.data?.items ?? [];
  const act = useAction();
  const [note, setNote] = useState('');
  const setActive = async (c: Connection, active: boolean) => {
    if (!active && !confirmed(`Deactivate ${c.name}? Sign-in stops working for this project until a connection is active again.`)) return;
    setNote('');
    const r = await act.run(() => call(gh.PUT('/admin/v1/projects/{project}/connections/{name}/active', { params: { path: { project: scope.project, name: c.name } }, body: { active } })));
    if (r !== undefined) {
      setNote(active ? `${c.name} is now the active connection.` : `${c.name} is deactivated: no connection is active.`);
      list.reload();
    }
  };
  return (
    <>
      <h1>Membership</h1>
      <NeedProject scope={scope} />
      <ErrorNote error={list.error} />
      <ErrorNote error={act.error} />
      {note ? <Notice text={note} /> : null}
      {scope.project && list.data && !items.length ? <p className="muted">No connections in this project.</p> : null}
      {items.length ? (
        <table aria-label="Connections">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">State</th>
              <th scope="col">Instance domain</th>
              <th scope="col">Publishable key</th>
              <th scope="col">Secret key</th>
              <th scope="col">Sign-up</th>
              <th scope="col">Organizations</th>
              <th scope="col">Switch</th>
            </tr>
          </thead>
          <tbody>
            {items.map((c) => (
              <tr key={c.name}>
                <td>{c.name}</td>
                <td>{c.active ? <span className="badge ok">active</span> : <span className="badge">inactive</span>}</td>
                <td className="mono">{c.idpInstanceDomain}</td>
                <td className="mono">{c.idpPublishableKey}</td>
                <td>{c.hasIdpSecretKey ? 'set (never shown)' : 'none'}</td>
                <td>{c.signUpEnabled ? 'on' : 'off'}</td>
                <td>{c.organizationsEnabled ? 'on' : 'off'}</td>
                <td>
                  {c.active ? (
                    <button type="button" className="danger" disabled={act.busy} onClick={() => setActive(c, false)} aria-label={`Deactivate ${c.name}`}>
                      Deactivate
                    </button>
                  ) : (
                    <button type="button" disabled={act.busy} onClick={() => setActive(c, true)} aria-label={`Make ${c.name} active`}>
                      Make active
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <p className="muted">
        Connections are declared in the tenants document (<code>membership.connections</code>, at most one <code>active: true</code>). A switch here takes effect at once; the next{' '}
        <code>gatehouse apply</code> of the document writes the document&apos;s <code>active:</code> back, so make a lasting change there.
      </p>
    </>
  );
}
