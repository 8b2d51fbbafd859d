// API keys of the org: list by name and prefix, create (the value is shown once, with a copy
// button), revoke. Values are never listed: the gateway keeps only their hashes.
import { useState } from 'react';
import { call, gh, seg } from '../api';
import { type Scope } from '../scope';
import { CopyButton, ErrorNote, ListState, Pager, confirmed, useAction, usePaged } from '../ui';

interface Key {
  name: string;
  org: string;
  project?: string;
  kind: string;
  test?: boolean;
  products: string[];
  revoked?: boolean;
}

interface Generated {
  org: string;
  project?: string;
  name: string;
  value: string;
}

const PRODUCTS = ['email', 'files', 'forms', 'membership', 'records'];

/** The value's prefix, from the key's kind (pk_live_, sk_live_, pk_test_ ...). */
export function prefixOf(k: Pick<Key, 'kind' | 'test'>): string {
  const p = k.kind === 'secret' ? 'sk' : 'pk';
  return `${p}_${k.test || k.kind === 'test' ? 'test' : 'live'}_`;
}

export function KeysPage({ scope }: { scope: Scope }) {
  const list = usePaged<Key>(scope.org ? `/orgs/${seg(scope.org)}/keys` : null);
  const [created, setCreated] = useState<Generated | null>(null);
  const revoke = useAction();
  return (
    <>
      <h1>Keys</h1>
      <CreateKey scope={scope} onCreated={(g) => (setCreated(g), list.reload())} />
      {created ? (
        <section className="once" aria-labelledby="once-title">
          <h2 id="once-title">New key {created.name}</h2>
          <p>Copy the value now: it is shown only this once.</p>
          <p>
            <label htmlFor="once-value">Key value</label>
            <input id="once-value" readOnly value={created.value} className="mono" onFocus={(e) => e.target.select()} autoFocus />
            <CopyButton text={created.value} label="Copy key value" />
          </p>
          <button type="button" onClick={() => setCreated(null)}>
            I have copied it
          </button>
        </section>
      ) : null}
      <h2>Keys of {scope.org}</h2>
      <ErrorNote error={revoke.error} />
      <ListState p={list} empty="No keys yet." />
      {list.items.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Project</th>
              <th scope="col">Products</th>
              <th scope="col">State</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((k) => (
              <tr key={`${k.project ?? '-'}/${k.name}`}>
                <td>{k.name}</td>
                <td>
                  <code>{prefixOf(k)}…</code>
                </td>
                <td>{k.project || <span className="muted">org-wide</span>}</td>
                <td>{k.products.join(', ')}</td>
                <td>{k.revoked ? <span className="badge bad">revoked</span> : <span className="badge ok">active</span>}</td>
                <td>
                  {!k.revoked ? (
                    <button
                      type="button"
                      className="danger"
                      disabled={revoke.busy}
                      aria-label={`Revoke key ${k.name}`}
                      onClick={() =>
                        confirmed(`Revoke key ${k.name}? It stops working at once.`) &&
                        revoke
                          .run(() =>
                            call(
                              k.project
                                ? gh.DELETE('/admin/v1/orgs/{org}/projects/{project}/keys/{name}', { params: { path: { org: k.org, project: k.project, name: k.name } } })
                                : gh.DELETE('/admin/v1/orgs/{org}/keys/{name}', { params: { path: { org: k.org, name: k.name } } }),
                            ),
                          )
                          .then(list.reload)
                      }
                    >
                      Revoke
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager p={list} label="Keys" />
    </>
  );
}

function CreateKey({ scope, onCreated }: { scope: Scope; onCreated: (g: Generated) => void }) {
  const [name, setName] = useState('');
  const [project, setProject] = useState(scope.project);
  const [kind, setKind] = useState<'secret' | 'publishable' | 'test'>('secret');
  const [products, setProducts] = useState<string[]>(['email']);
  const act = useAction();
  return (
    <form
      className="card"
      aria-labelledby="create-key-title"
      onSubmit={async (e) => {
        e.preventDefault();
        const g = await act.run(() =>
          call(gh.POST('/admin/v1/keys', { body: { org: scope.org, project: project || undefined, name: name || undefined, kind, products } })),
        );
        if (g) {
          setName('');
          onCreated(g);
        }
      }}
    >
      <h2 id="create-key-title">Create a key</h2>
      <div className="row">
        <label>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} placeholder="generated when empty" />
        </label>
        <label>
          Key project
          <select value={project} onChange={(e) => setProject(e.target.value)}>
            <option value="">org-wide</option>
            {scope.projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Kind
          <select value={kind} onChange={(e) => setKind(e.target.value as typeof kind)}>
            <option value="secret">secret (sk_live_)</option>
            <option value="publishable">publishable (pk_live_)</option>
            <option value="test">test</option>
          </select>
        </label>
      </div>
      <fieldset>
        <legend>Products</legend>
        {PRODUCTS.map((p) => (
          <label key={p} className="check">
            <input
              type="checkbox"
              checked={products.includes(p)}
              onChange={(e) => setProducts((cur) => (e.target.checked ? [...cur, p] : cur.filter((x) => x !== p)))}
            />
            {p}
          </label>
        ))}
      </fieldset>
      <button type="submit" className="primary" disabled={act.busy}>
        Create key
      </button>
      <ErrorNote error={act.error} />
    </form>
  );
}
