import { type Scope } from '../scope';

export function WebhooksPage({ scope }: { scope: Scope }) {
  return (
    <>
      <h1>Webhooks</h1>
      <p className="muted">This page is not built yet ({scope.org}).</p>
    </>
  );
}
