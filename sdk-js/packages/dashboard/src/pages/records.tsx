import { type Scope } from '../scope';

export function RecordsPage({ scope }: { scope: Scope }) {
  return (
    <>
      <h1>Records</h1>
      <p className="muted">This page is not built yet ({scope.org}).</p>
    </>
  );
}
