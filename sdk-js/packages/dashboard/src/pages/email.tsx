import { type Scope } from '../scope';

export function EmailPage({ scope }: { scope: Scope }) {
  return (
    <>
      <h1>Email</h1>
      <p className="muted">This page is not built yet ({scope.org}).</p>
    </>
  );
}
