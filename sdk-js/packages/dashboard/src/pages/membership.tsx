// Membership: the project's identity-provider connections. The admin API has no read route for
// them yet; the page says so rather than showing anything stale. Secrets are never shown.
import { type Scope } from '../scope';

export function MembershipPage({ scope }: { scope: Scope }) {
  return (
    <>
      <h1>Membership</h1>
      <p>
        Connections of project <code>{scope.project || '—'}</code> are declared in the tenants document (<code>membership.connections</code>) and applied with{' '}
        <code>gatehouse apply</code>.
      </p>
      <p className="muted">
        Listing connections and switching the active one here needs admin routes the gateway does not have yet. Identity-provider secrets are never shown by the dashboard.
      </p>
    </>
  );
}
