// Webhooks: the deliveries of one of the project's webhooks (named as in the tenants document;
// the admin API has no list of webhook names), newest first, with a test send.
import { useState } from 'react';
import { api, seg } from '../api';
import { setQuery, useRoute } from '../router';
import { NeedProject, type Scope } from '../scope';
import { ErrorNote, ListState, Notice, Pager, Time, useAction, usePaged } from '../ui';

interface Delivery {
  id: string;
  webhook: string;
  type: string;
  createdAt: string;
  attempts: number;
  status: string;
  body: unknown;
}

export function WebhooksPage({ scope }: { scope: Scope }) {
  const route = useRoute();
  const hook = route.query.get('webhook') ?? '';
  const [name, setName] = useState(hook);
  return (
    <>
      <h1>Webhooks</h1>
      <NeedProject scope={scope} />
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ webhook: name.trim() || undefined });
        }}
      >
        <label>
          Webhook name
          <input value={name} onChange={(e) => setName(e.target.value)} required />
        </label>
        <button type="submit" className="primary">
          Show deliveries
        </button>
      </form>
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
