import { type Scope } from '../scope';

export function FormsPage({ scope }: { scope: Scope }) {
  return (
    <>
      <h1>Forms</h1>
      <p className="muted">This page is not built yet ({scope.org}).</p>
    </>
  );
}
