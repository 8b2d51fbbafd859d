import { type Scope } from '../scope';

export function PluginsPage({ scope }: { scope: Scope }) {
  return (
    <>
      <h1>Plugins</h1>
      <p className="muted">This page is not built yet ({scope.org}).</p>
    </>
  );
}
