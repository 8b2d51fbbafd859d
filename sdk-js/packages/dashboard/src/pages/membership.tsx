import { type Scope } from '../scope';

export function MembershipPage({ scope }: { scope: Scope }) {
  return (
    <>
      <h1>Membership</h1>
      <p className="muted">This page is not built yet ({scope.org}).</p>
    </>
  );
}
