import { type Scope } from '../scope';

export function FilesPage({ scope }: { scope: Scope }) {
  return (
    <>
      <h1>Files</h1>
      <p className="muted">This page is not built yet ({scope.org}).</p>
    </>
  );
}
