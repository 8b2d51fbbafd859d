// Records: a project's collections, every record of one (drafts included, with a published
// badge; filter, q and sort of the public list's syntax, kept in the URL) with
// publish/unpublish/edit/delete, a record editor
// (create or replace) and NDJSON import with upload progress.
import { useState } from 'react';
import { api, config, qs, seg, type Page } from '../api';
import { upload } from '../upload';
import { setQuery, useRoute } from '../router';
import { NeedProject, type Scope } from '../scope';
import { ErrorNote, ListState, Notice, Pager, confirmed, useAction, useLoad, usePaged } from '../ui';

interface Collection {
  name: string;
  public: boolean;
  fields: { name: string; type: string; private?: boolean }[];
}

/** A record in the admin view: its data fields at the top level, with "published". */
type AdminRecord = { id: string; published: boolean; createdAt?: string; updatedAt?: string } & Record<string, unknown>;

const meta = new Set(['id', 'published', 'createdAt', 'updatedAt']);

/** The data of an admin record (what a write sends back). */
function dataOf(r: AdminRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) if (!meta.has(k)) out[k] = v;
  return out;
}

export function RecordsPage({ scope }: { scope: Scope }) {
  const route = useRoute();
  const filter = route.query.get('filter') ?? '';
  const q = route.query.get('q') ?? '';
  const sort = route.query.get('sort') ?? '';
  const colls = useLoad<Page<Collection>>(scope.project ? `/projects/${seg(scope.project)}/collections` : null);
  // The first collection is chosen on arrival; ?collection= keeps another choice.
  const coll = route.query.get('collection') || colls.data?.items[0]?.name || '';
  const [editing, setEditing] = useState<{ rec: AdminRecord | null; n: number }>({ rec: null, n: 0 });
  const [tick, setTick] = useState(0);
  const base = scope.project && coll ? `/projects/${seg(scope.project)}/collections/${seg(coll)}/records` : '';
  return (
    <>
      <h1>Records</h1>
      <NeedProject scope={scope} />
      <ErrorNote error={colls.error} />
      {scope.project ? (
        <label>
          Collection{' '}
          <select value={coll} onChange={(e) => setQuery({ collection: e.target.value || undefined, filter: undefined, q: undefined, sort: undefined })}>
            {!colls.data?.items.length ? <option value="">No collection</option> : null}
            {(colls.data?.items ?? []).map((c) => (
              <option key={c.name} value={c.name}>
                {`${c.name} (${c.fields.length} fields${c.public ? ', public' : ''})`}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {base ? (
        <>
          <RecordList key={`l/${base}/${tick}`} base={base} filter={filter} q={q} sort={sort} onEdit={(rec) => setEditing((e) => ({ rec, n: e.n + 1 }))} />
          <RecordEditor key={`e/${base}/${editing.n}`} base={base} initial={editing.rec} onSaved={() => setTick((t) => t + 1)} />
          <Importer key={`i/${base}`} base={base} />
        </>
      ) : null}
    </>
  );
}

/** Every record of a collection, drafts included, page by page, searched and sorted. */
function RecordList(p: { base: string; filter: string; q: string; sort: string; onEdit: (r: AdminRecord) => void }) {
  const { base, onEdit } = p;
  const [f, setF] = useState(p.filter);
  const [q, setQ] = useState(p.q);
  const [sort, setSort] = useState(p.sort);
  const list = usePaged<AdminRecord>(`${base}${qs({ limit: 25, filter: p.filter, q: p.q, sort: p.sort })}`);
  const act = useAction();
  const run = (fn: () => Promise<unknown>) => act.run(fn).then((r) => r !== undefined && list.reload());
  return (
    <section aria-labelledby="rec-list">
      <h2 id="rec-list">Records (published and drafts)</h2>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ filter: f.trim() || undefined, q: q.trim() || undefined, sort: sort.trim() || undefined });
        }}
      >
        <label>
          Search titles <input type="search" value={q} onChange={(e) => setQ(e.target.value)} />
        </label>
        <label>
          Filter <input value={f} onChange={(e) => setF(e.target.value)} placeholder="views:gte:10" />
        </label>
        <label>
          Sort <input value={sort} onChange={(e) => setSort(e.target.value)} placeholder="-createdAt" />
        </label>
        <button type="submit">Apply</button>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </form>
      <ErrorNote error={act.error} />
      <ListState p={list} empty="No records." />
      {list.items.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">State</th>
              <th scope="col">Data</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((r) => {
              const at = `${base}/${seg(r.id)}`;
              return (
                <tr key={r.id}>
                  <td className="mono">{r.id}</td>
                  <td>{r.published ? <span className="badge ok">published</span> : <span className="badge warn">draft</span>}</td>
                  <td>
                    <code className="mono">{JSON.stringify(dataOf(r))}</code>
                  </td>
                  <td>
                    <div className="row">
                      {r.published ? (
                        <button type="button" disabled={act.busy} onClick={() => run(() => api(`${at}/unpublish`, { method: 'POST' }))} aria-label={`Unpublish ${r.id}`}>
                          Unpublish
                        </button>
                      ) : (
                        <button type="button" disabled={act.busy} onClick={() => run(() => api(`${at}/publish`, { method: 'POST' }))} aria-label={`Publish ${r.id}`}>
                          Publish
                        </button>
                      )}
                      <button type="button" onClick={() => onEdit(r)} aria-label={`Edit ${r.id}`}>
                        Edit
                      </button>
                      <button type="button" className="danger" disabled={act.busy} aria-label={`Delete ${r.id}`} onClick={() => confirmed(`Delete record ${r.id}?`) && run(() => api(at, { method: 'DELETE' }))}>
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
      <Pager p={list} label="Records" />
    </section>
  );
}

function RecordEditor({ base, initial, onSaved }: { base: string; initial: AdminRecord | null; onSaved: () => void }) {
  const [id, setId] = useState(initial?.id ?? '');
  const [published, setPublished] = useState(initial?.published ?? true);
  const [data, setData] = useState(initial ? JSON.stringify(dataOf(initial), null, 2) : '{\n  "title": ""\n}');
  const [result, setResult] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const act = useAction();
  return (
    <section className="card" aria-labelledby="rec-edit">
      <h2 id="rec-edit">{initial ? `Edit record ${initial.id}` : 'Create or replace a record'}</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setNote('');
          let parsed: unknown;
          try {
            parsed = JSON.parse(data);
          } catch {
            act.setError(new Error('Data is not valid JSON.'));
            return;
          }
          const body = { id: id || undefined, published, data: parsed };
          const r = await act.run(() => (id ? api(`${base}/${seg(id)}`, { method: 'PUT', body }) : api(base, { method: 'POST', body })));
          if (r !== undefined) {
            setResult(r);
            const rid = (r as { id?: string })?.id;
            if (rid) setId(rid);
            setNote('Record saved.');
            onSaved();
          }
        }}
      >
        <div className="row">
          <label>
            Record id
            <input value={id} onChange={(e) => setId(e.target.value)} placeholder="generated when empty" />
          </label>
          <label className="check">
            <input type="checkbox" checked={published} onChange={(e) => setPublished(e.target.checked)} />
            Published
          </label>
        </div>
        <label htmlFor="rec-data">Data (JSON)</label>
        <textarea id="rec-data" className="mono" rows={8} value={data} onChange={(e) => setData(e.target.value)} />
        <div className="row">
          <button type="submit" className="primary" disabled={act.busy}>
            Save record
          </button>
        </div>
      </form>
      <ErrorNote error={act.error} />
      {note ? <Notice text={note} /> : null}
      {result ? <pre aria-label="Saved record">{JSON.stringify(result, null, 2)}</pre> : null}
    </section>
  );
}

/** Imports an NDJSON file through records:import, showing the upload's progress. */
function Importer({ base }: { base: string }) {
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [report, setReport] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  return (
    <section className="card" aria-labelledby="rec-import">
      <h2 id="rec-import">Import NDJSON</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!file) return;
          setError(null);
          setReport(null);
          setProgress(0);
          upload(`${config.api}${base}:import`, file, 'application/x-ndjson', setProgress)
            .then(setReport)
            .catch(setError)
            .finally(() => setProgress(null));
        }}
      >
        <label>
          NDJSON file (one record a line)
          <input type="file" accept=".ndjson,.jsonl,application/x-ndjson,application/json,text/plain" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
        </label>{' '}
        <button type="submit" disabled={!file || progress !== null}>
          Import
        </button>
      </form>
      {progress !== null ? (
        <p>
          <label>
            Upload progress <progress max={100} value={progress} /> {progress}%
          </label>
        </p>
      ) : null}
      <ErrorNote error={error} />
      {report ? <pre aria-label="Import report">{JSON.stringify(report, null, 2)}</pre> : null}
    </section>
  );
}
