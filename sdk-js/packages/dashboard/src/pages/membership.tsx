// Membership: the project's identity-provider connections (GET .../connections), with the
// active one marked. Secrets never reach the browser: the gateway tells only whether a
// connection has one. Which connection is active is set in the tenants document.
import { seg, type Page } from '../api';
import { NeedProject, type Scope } from '../scope';
import { ErrorNote, useLoad } from '../ui';

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
  const list = useLoad<Page<Connection>>(scope.project ? `/projects/${seg(scope.project)}/connections` : null);
  const items = list.data?.items ?? [];
  return (
    <>
      <h1>Membership</h1>
      <NeedProject scope={scope} />
      <ErrorNote error={list.error} />
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
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <p className="muted">
        Connections are declared in the tenants document (<code>membership.connections</code>, one <code>active: true</code>) and applied with <code>gatehouse apply</code>.
      </p>
    </>
  );
}
