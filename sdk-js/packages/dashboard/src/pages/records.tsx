// Records: a project's collections (the first chosen on arrival), every record of one as a table
// with a column per field (drafts included, with a published badge; filter, q and sort of the
// public list's syntax, kept in the URL; ids in natural order) with publish/unpublish/edit/delete,
// a record editor generated from the fields (select, number, date, a searchable relation picker;
// the API's validation errors beside their fields; raw JSON as an option) and NDJSON import with
// upload progress.
import { useEffect, useMemo, useState } from 'react';
import { api, ApiError, call, config, gh, qs, seg, type Page } from '../api';
import { upload } from '../upload';
import { setQuery, useRoute } from '../router';
import { NeedProject, type Scope } from '../scope';
import { ErrorNote, FieldError, ListState, Notice, Pager, confirmed, fieldProblem, useAction, useDebounced, useLoad, usePaged } from '../ui';

interface Field {
  name: string;
  type: string;
  private?: boolean;
  required?: boolean;
  options?: string[];
  /** The collection a relation points to. */
  collection?: string;
  label?: string;
}

interface Collection {
  name: string;
  public: boolean;
  fields: Field[];
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

/** Compares ids in natural order: post-2 before post-10. */
const natural = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' }).compare;

/** A field's column header and form label: its label when it has one, else its name. */
const labelOf = (f: Field) => f.label || f.name;

/** The titles of the records of each collection a relation field points to (id → title). */
function useRelationTitles(project: string, fields: Field[]): Record<string, Record<string, string>> {
  const targets = [...new Set(fields.filter((f) => (f.type === 'relation' || f.type === 'relations') && f.collection).map((f) => f.collection!))];
  const key = targets.join(',');
  const [titles, setTitles] = useState<Record<string, Record<string, string>>>({});
  useEffect(() => {
    let live = true;
    Promise.all(
      targets.map((t) =>
        call(gh.GET('/admin/v1/projects/{project}/collections/{collection}/records', { params: { path: { project, collection: t }, query: { limit: 100 } } }))
          .then((p) => [t, Object.fromEntries(p.items.map((r) => [r.id, String(r.title ?? r.id)]))] as const)
          .catch(() => [t, {}] as const),
      ),
    ).then((all) => live && setTitles(Object.fromEntries(all)));
    return () => {
      live = false;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [project, key]);
  return titles;
}

export function RecordsPage({ scope }: { scope: Scope }) {
  const route = useRoute();
  const filter = route.query.get('filter') ?? '';
  const q = route.query.get('q') ?? '';
  const sort = route.query.get('sort') ?? '';
  const colls = useLoad<Page<Collection>>(scope.project ? `/projects/${seg(scope.project)}/collections` : null);
  // The first collection is chosen on arrival; ?collection= keeps another choice.
  const coll = route.query.get('collection') || colls.data?.items[0]?.name || '';
  const collection = colls.data?.items.find((c) => c.name === coll) ?? null;
  const [editing, setEditing] = useState<{ rec: AdminRecord | null; n: number }>({ rec: null, n: 0 });
  const [tick, setTick] = useState(0);
  const base = scope.project && coll ? `/projects/${seg(scope.project)}/collections/${seg(coll)}/records` : '';
  const titles = useRelationTitles(scope.project, collection?.fields ?? []);
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
      {base && collection ? (
        <>
          <RecordList key={`l/${base}/${tick}`} project={scope.project} collection={coll} base={base} fields={collection.fields} titles={titles} filter={filter} q={q} sort={sort} onEdit={(rec) => setEditing((e) => ({ rec, n: e.n + 1 }))} />
          <RecordEditor
            key={`e/${base}/${editing.n}`}
            project={scope.project}
            collection={coll}
            base={base}
            fields={collection.fields}
            titles={titles}
            initial={editing.rec}
            onSaved={() => setTick((t) => t + 1)}
            onNew={() => setEditing((e) => ({ rec: null, n: e.n + 1 }))}
          />
          <Importer key={`i/${base}`} base={base} />
        </>
      ) : null}
    </>
  );
}

/** One value as a value: text, a number, chips for selects, a date, a related record's title. */
function Value({ f, v, titles }: { f: Field; v: unknown; titles: Record<string, Record<string, string>> }) {
  if (v === null || v === undefined || v === '') return <span className="muted">—</span>;
  switch (f.type) {
    case 'number':
      return <span className="num">{typeof v === 'number' ? v.toLocaleString() : String(v)}</span>;
    case 'boolean':
      return <span>{v ? 'yes' : 'no'}</span>;
    case 'select':
      return <span className="chip">{String(v)}</span>;
    case 'multiselect':
      return (
        <span className="chips-inline">
          {(Array.isArray(v) ? v : [v]).map((x) => (
            <span key={String(x)} className="chip">
              {String(x)}
            </span>
          ))}
        </span>
      );
    case 'date': {
      const s = String(v);
      const d = new Date(s.length === 10 ? `${s}T00:00:00` : s);
      return <time dateTime={s}>{isNaN(d.getTime()) ? s : s.length === 10 ? d.toLocaleDateString() : d.toLocaleString()}</time>;
    }
    case 'relation':
    case 'relations': {
      const ids = Array.isArray(v) ? v.map(String) : [String(v)];
      const t = titles[f.collection ?? ''] ?? {};
      return <span>{ids.map((id) => t[id] ?? id).join(', ')}</span>;
    }
    case 'url':
      return <a href={String(v)} rel="noreferrer noopener" target="_blank">{String(v)}</a>;
    case 'json':
      return <code className="mono clip">{JSON.stringify(v)}</code>;
    default:
      return <span>{typeof v === 'string' ? v : JSON.stringify(v)}</span>;
  }
}

/** Every record of a collection, drafts included, page by page, searched and sorted: one column per field. */
function RecordList(p: { project: string; collection: string; base: string; fields: Field[]; titles: Record<string, Record<string, string>>; filter: string; q: string; sort: string; onEdit: (r: AdminRecord) => void }) {
  const { base, onEdit, fields } = p;
  const [f, setF] = useState(p.filter);
  const [q, setQ] = useState(p.q);
  const [sort, setSort] = useState(p.sort);
  const list = usePaged<AdminRecord>(`${base}${qs({ limit: 100, filter: p.filter, q: p.q, sort: p.sort || 'id' })}`);
  // The gateway sorts ids as text (post-10 before post-2); a page shows them in natural order.
  const rows = useMemo(() => {
    const s = p.sort || 'id';
    if (s !== 'id' && s !== '-id') return list.items;
    const out = [...list.items].sort((a, b) => natural(a.id, b.id));
    return s === '-id' ? out.reverse() : out;
  }, [list.items, p.sort]);
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
          Sort <input value={sort} onChange={(e) => setSort(e.target.value)} placeholder="id, -createdAt" />
        </label>
        <button type="submit">Apply</button>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </form>
      <ErrorNote error={act.error} />
      <ListState p={list} empty="No records." />
      {rows.length ? (
        <table aria-label="Records" className="records">
          <thead>
            <tr>
              <th scope="col">Id</th>
              {fields.map((fd) => (
                <th scope="col" key={fd.name}>
                  {labelOf(fd)}
                </th>
              ))}
              <th scope="col">State</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const at = { params: { path: { project: p.project, collection: p.collection, id: r.id } } };
              return (
                <tr key={r.id}>
                  <td className="mono nowrap">{r.id}</td>
                  {fields.map((fd) => (
                    <td key={fd.name} data-field={fd.name}>
                      <Value f={fd} v={r[fd.name]} titles={p.titles} />
                    </td>
                  ))}
                  <td>{r.published ? <span className="badge ok">published</span> : <span className="badge warn">draft</span>}</td>
                  <td>
                    <div className="row nowrap">
                      {r.published ? (
                        <button type="button" disabled={act.busy} onClick={() => run(() => call(gh.POST('/admin/v1/projects/{project}/collections/{collection}/records/{id}/unpublish', at)))} aria-label={`Unpublish ${r.id}`}>
                          Unpublish
                        </button>
                      ) : (
                        <button type="button" disabled={act.busy} onClick={() => run(() => call(gh.POST('/admin/v1/projects/{project}/collections/{collection}/records/{id}/publish', at)))} aria-label={`Publish ${r.id}`}>
                          Publish
                        </button>
                      )}
                      <button type="button" onClick={() => onEdit(r)} aria-label={`Edit ${r.id}`}>
                        Edit
                      </button>
                      <button type="button" className="danger" disabled={act.busy} aria-label={`Delete ${r.id}`} onClick={() => confirmed(`Delete record ${r.id}?`) && run(() => call(gh.DELETE('/admin/v1/projects/{project}/collections/{collection}/records/{id}', at)))}>
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

/** The text an input shows for a stored value. */
function inputText(f: Field, v: unknown): string {
  if (v === null || v === undefined) return '';
  if (f.type === 'date') return String(v).slice(0, 10);
  if (f.type === 'json') return JSON.stringify(v, null, 2);
  return typeof v === 'string' ? v : String(v);
}

/** The value a write sends for what a field's input holds (undefined: left out). */
function valueOf(f: Field, v: unknown): unknown {
  switch (f.type) {
    case 'boolean':
      return !!v;
    case 'multiselect':
    case 'relations':
      return Array.isArray(v) && v.length ? v : undefined;
    case 'number':
      return v === '' || v === undefined ? undefined : Number(v);
    case 'json':
      if (v === '' || v === undefined) return undefined;
      try {
        return JSON.parse(String(v));
      } catch {
        return String(v); // the gateway answers what is wrong with it
      }
    default:
      return v === '' || v === undefined ? undefined : v;
  }
}

/** The form's state of a record: one entry per field, in the inputs' terms. */
function formOf(fields: Field[], r: AdminRecord | null): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = r?.[f.name];
    if (f.type === 'boolean') out[f.name] = !!v;
    else if (f.type === 'multiselect' || f.type === 'relations') out[f.name] = Array.isArray(v) ? v.map(String) : [];
    else out[f.name] = inputText(f, v);
  }
  return out;
}

/** Creates or edits a record with a form generated from the collection's fields (raw JSON as an option). */
function RecordEditor(p: { project: string; collection: string; base: string; fields: Field[]; titles: Record<string, Record<string, string>>; initial: AdminRecord | null; onSaved: () => void; onNew: () => void }) {
  const { base, fields, initial } = p;
  const [id, setId] = useState(initial?.id ?? '');
  const [published, setPublished] = useState(initial?.published ?? true);
  const [form, setForm] = useState<Record<string, unknown>>(() => formOf(fields, initial));
  const [raw, setRaw] = useState(false);
  const [json, setJSON] = useState('');
  const [result, setResult] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const act = useAction();
  const err = act.error;
  const data = (): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const f of fields) {
      const v = valueOf(f, form[f.name]);
      if (v !== undefined) out[f.name] = v;
    }
    return out;
  };
  const set = (name: string, v: unknown) => setForm((x) => ({ ...x, [name]: v }));
  return (
    <section className="card" aria-labelledby="rec-edit">
      <h2 id="rec-edit">{initial ? `Edit record ${initial.id}` : 'Create a record'}</h2>
      <form
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          setNote('');
          let body: { id?: string; published: boolean; data: Record<string, unknown> };
          if (raw) {
            try {
              body = { id: id || undefined, published, data: JSON.parse(json) };
            } catch {
              act.setError(new Error('Data is not valid JSON.'));
              return;
            }
          } else body = { id: id || undefined, published, data: data() };
          const path = { project: p.project, collection: p.collection };
          const r = await act.run(() =>
            id
              ? call(gh.PUT('/admin/v1/projects/{project}/collections/{collection}/records/{id}', { params: { path: { ...path, id } }, body }))
              : call(gh.POST('/admin/v1/projects/{project}/collections/{collection}/records', { params: { path }, body })),
          );
          if (r !== undefined) {
            setResult(r);
            const rid = (r as { id?: string })?.id;
            if (rid) setId(rid);
            setNote('Record saved.');
            p.onSaved();
          }
        }}
      >
        <div className="row">
          <div className="field">
            <label>
              Record id
              <input value={id} onChange={(e) => setId(e.target.value)} placeholder="generated when empty" disabled={!!initial} aria-invalid={!!fieldProblem(err, 'id')} aria-describedby="rec-id-err" />
            </label>
            <FieldError id="rec-id-err" error={err} field="id" />
          </div>
          <label className="check">
            <input type="checkbox" checked={published} onChange={(e) => setPublished(e.target.checked)} />
            Published
          </label>
          <label className="check">
            <input
              type="checkbox"
              checked={raw}
              onChange={(e) => {
                if (e.target.checked) setJSON(JSON.stringify(data(), null, 2));
                else {
                  try {
                    const parsed = JSON.parse(json) as Record<string, unknown>;
                    setForm(formOf(fields, { id, published, ...parsed }));
                  } catch {
                    /* keep the form as it was */
                  }
                }
                setRaw(e.target.checked);
              }}
            />
            Edit as raw JSON
          </label>
        </div>
        {raw ? (
          <>
            <label htmlFor="rec-data">Data (JSON)</label>
            <textarea id="rec-data" className="mono" rows={8} value={json} onChange={(e) => setJSON(e.target.value)} />
          </>
        ) : (
          <div className="fields">
            {fields.map((f) => (
              <FieldInput key={f.name} project={p.project} f={f} value={form[f.name]} titles={p.titles} error={err} onChange={(v) => set(f.name, v)} />
            ))}
          </div>
        )}
        <div className="row">
          <button type="submit" className="primary" disabled={act.busy}>
            Save record
          </button>
          {initial ? (
            <button type="button" onClick={p.onNew}>
              New record
            </button>
          ) : null}
        </div>
      </form>
      {err && (raw || !(err instanceof ApiError && err.details?.some((d) => d.field === 'id' || fields.some((f) => d.field === `data.${f.name}`)))) ? <ErrorNote error={err} /> : null}
      {err instanceof ApiError && err.details?.length && !raw ? <p className="error small">{err.message}: see the fields marked above.</p> : null}
      {note ? <Notice text={note} /> : null}
      {result ? (
        <details>
          <summary>Saved record (JSON)</summary>
          <pre aria-label="Saved record">{JSON.stringify(result, null, 2)}</pre>
        </details>
      ) : null}
    </section>
  );
}

/** One generated input: its label, the control its type calls for, and the API's problem with it. */
function FieldInput(p: { project: string; f: Field; value: unknown; titles: Record<string, Record<string, string>>; error: unknown; onChange: (v: unknown) => void }) {
  const { f, value, error, onChange } = p;
  const id = `rec-f-${f.name}`;
  const errID = `${id}-err`;
  const problem = fieldProblem(error, `data.${f.name}`);
  const common = { id, 'aria-invalid': !!problem, 'aria-describedby': errID };
  const label = (
    <>
      {labelOf(f)}
      {f.required ? <span aria-hidden="true"> *</span> : null}{' '}
      <span className="muted small" aria-hidden="true">
        {f.type}
      </span>
    </>
  );
  let control;
  switch (f.type) {
    case 'number':
      control = <input type="number" step="any" {...common} value={String(value ?? '')} onChange={(e) => onChange(e.target.value)} />;
      break;
    case 'date':
      control = <input type="date" {...common} value={String(value ?? '')} onChange={(e) => onChange(e.target.value)} />;
      break;
    case 'boolean':
      return (
        <div className="field">
          <label className="check">
            <input type="checkbox" {...common} checked={!!value} onChange={(e) => onChange(e.target.checked)} />
            {labelOf(f)}
          </label>
          <FieldError id={errID} error={error} field={`data.${f.name}`} />
        </div>
      );
    case 'select':
      control = (
        <select {...common} value={String(value ?? '')} onChange={(e) => onChange(e.target.value)}>
          <option value="">—</option>
          {(f.options ?? []).map((o) => (
            <option key={o}>{o}</option>
          ))}
        </select>
      );
      break;
    case 'multiselect':
      control = (
        <select multiple {...common} value={(value as string[]) ?? []} onChange={(e) => onChange([...e.target.selectedOptions].map((o) => o.value))}>
          {(f.options ?? []).map((o) => (
            <option key={o}>{o}</option>
          ))}
        </select>
      );
      break;
    case 'relation':
    case 'relations':
      return (
        <div className="field">
          <RelationPicker project={p.project} f={f} value={value} titles={p.titles[f.collection ?? ''] ?? {}} problem={problem} errID={errID} onChange={onChange} />
          <FieldError id={errID} error={error} field={`data.${f.name}`} />
        </div>
      );
    case 'json':
      control = <textarea className="mono" rows={4} {...common} value={String(value ?? '')} onChange={(e) => onChange(e.target.value)} />;
      break;
    default:
      control = <input type={f.type === 'email' ? 'email' : f.type === 'url' ? 'url' : 'text'} {...common} value={String(value ?? '')} onChange={(e) => onChange(e.target.value)} />;
  }
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {control}
      <FieldError id={errID} error={error} field={`data.${f.name}`} />
    </div>
  );
}

/**
 * A relation's picker: the chosen record(s) by title, and a search over the target
 * collection's titles (the admin list's q) whose results are chosen with a click.
 */
function RelationPicker(p: { project: string; f: Field; value: unknown; titles: Record<string, string>; problem: string; errID: string; onChange: (v: unknown) => void }) {
  const { f } = p;
  const many = f.type === 'relations';
  const chosen: string[] = many ? ((p.value as string[]) ?? []) : p.value ? [String(p.value)] : [];
  const [term, setTerm] = useState('');
  const q = useDebounced(term, 250);
  const [found, setFound] = useState<{ id: string; title: string }[]>([]);
  const [known, setKnown] = useState<Record<string, string>>({});
  useEffect(() => {
    if (!f.collection) return;
    let live = true;
    call(gh.GET('/admin/v1/projects/{project}/collections/{collection}/records', { params: { path: { project: p.project, collection: f.collection }, query: { q: q.trim() || undefined, limit: 8 } } }))
      .then((pg) => live && setFound(pg.items.map((r) => ({ id: r.id ?? '', title: String(r.title ?? r.id) }))))
      .catch(() => live && setFound([]));
    return () => {
      live = false;
    };
  }, [p.project, f.collection, q]);
  const title = (id: string) => known[id] ?? p.titles[id] ?? id;
  const pick = (r: { id: string; title: string }) => {
    setKnown((k) => ({ ...k, [r.id]: r.title }));
    p.onChange(many ? (chosen.includes(r.id) ? chosen : [...chosen, r.id]) : r.id);
  };
  const listID = `rec-f-${f.name}-results`;
  return (
    <fieldset className="relation" aria-describedby={p.errID} aria-invalid={!!p.problem}>
      <legend>
        {labelOf(f)}{' '}
        <span className="muted small" aria-hidden="true">
          {f.type} → {f.collection}
        </span>
      </legend>
      <div className="chips-inline" aria-live="polite">
        {chosen.length ? (
          chosen.map((id) => (
            <span key={id} className="chip">
              {title(id)}{' '}
              <button type="button" className="linkish" aria-label={`Remove ${title(id)} from ${f.name}`} onClick={() => p.onChange(many ? chosen.filter((x) => x !== id) : '')}>
                ×
              </button>
            </span>
          ))
        ) : (
          <span className="muted">none chosen</span>
        )}
      </div>
      <label>
        Search {f.collection} for {labelOf(f)}
        <input type="search" value={term} onChange={(e) => setTerm(e.target.value)} aria-controls={listID} placeholder="type a title" />
      </label>
      <ul id={listID} className="results" aria-label={`${f.collection} matching`}>
        {found.map((r) => (
          <li key={r.id}>
            <button type="button" aria-pressed={chosen.includes(r.id)} onClick={() => pick(r)} aria-label={`Choose ${r.title} for ${f.name}`}>
              {r.title} <span className="muted mono small">{r.id}</span>
            </button>
          </li>
        ))}
        {!found.length ? <li className="muted">No match.</li> : null}
      </ul>
    </fieldset>
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
