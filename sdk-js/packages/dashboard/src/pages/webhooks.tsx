// Webhooks: the project's webhooks (name, URL, events; never a secret) to pick from, then the
// deliveries of the chosen one, newest first, with a test send. The choice is kept in the URL.
import { useState } from 'react';
import { api, seg, type Page } from '../api';
import { setQuery, useRoute } from '../router';
import { NeedProject, type Scope } from '../scope';
import { ErrorNote, ListState, Notice, Pager, Time, useAction, useLoad, usePaged } from '../ui';

interface Delivery {
  id: string;
  webhook: string;
  type: string;
  createdAt: string;
  attempts: number;
  status: string;
  body: unknown;
}

interface Webhook {
  name: string;
  url: string;
  events: string[];
}

export function WebhooksPage({ scope }: { scope: Scope }) {
  const route = useRoute();
  const hooks = useLoad<Page<Webhook>>(scope.project ? `/projects/${seg(scope.project)}/webhooks` : null);
  const items = hooks.data?.items ?? [];
  // The first webhook is chosen on arrival; ?webhook= keeps another choice.
  const asked = route.query.get('webhook') ?? '';
  const hook = items.some((h) => h.name === asked) ? asked : (items[0]?.name ?? '');
  return (
    <>
      <h1>Webhooks</h1>
      <NeedProject scope={scope} />
      <ErrorNote error={hooks.error} />
      {scope.project && hooks.data && !items.length ? <p className="muted">No webhooks in this project (the tenants document's <code>webhooks:</code>).</p> : null}
      {items.length ? (
        <table aria-label="Webhooks">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">Deliveries</th>
            </tr>
          </thead>
          <tbody>
            {items.map((h) => (
              <tr key={h.name} aria-current={h.name === hook ? 'true' : undefined}>
                <td>{h.name}</td>
                <td className="mono">{h.url}</td>
                <td>{h.events.join(', ')}</td>
                <td>
                  <button type="button" onClick={() => setQuery({ webhook: h.name })} aria-label={`Deliveries of ${h.name}`}>
                    Show deliveries
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {scope.project && hook ? <Deliveries key={`${scope.project}/${hook}`} project={scope.project} name={hook} /> : null}
    </>
  );
}

function Deliveries({ project, name }: { project: string; name: string }) {
  const base = `/projects/${seg(project)}/webhooks/${seg(name)}`;
  const list = usePaged<Delivery>(`${base}/deliveries?limit=25`);
  const act = useAction();
  const [note, setNote] = useState('');
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries of {name}</h2>
      <div className="row">
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
        <button type="button" disabled={act.busy} onClick={() => act.run(() => api(`${base}/test`, { method: 'POST' })).then((r) => r !== undefined && (setNote('Test event queued.'), list.reload()))}>
          Send a test event
        </button>
      </div>
      <ErrorNote error={act.error} />
      {note ? <Notice text={note} /> : null}
      <ListState p={list} empty="No deliveries yet." />
      {list.items.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Type</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Body</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((d) => (
              <tr key={d.id}>
                <td>
                  <Time at={d.createdAt} />
                </td>
                <td>{d.type}</td>
                <td>
                  <span className={`badge ${d.status === 'succeeded' ? 'ok' : d.status === 'pending' ? 'warn' : 'bad'}`}>{d.status}</span>
                </td>
                <td>{d.attempts}</td>
                <td>
                  <details>
                    <summary>Show body</summary>
                    <pre>{JSON.stringify(d.body, null, 2)}</pre>
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager p={list} label="Deliveries" />
    </section>
  );
}
