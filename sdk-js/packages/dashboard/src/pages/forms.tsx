// Forms: the project's form definitions to pick from, then the inbox of one form, newest first
// (time, IP, user agent, data, file links), CSV export and deletion. The chosen form's slug is
// kept in the URL.
import { ApiError, call, config, gh, seg, type Page } from '../api';
import { setQuery, useRoute } from '../router';
import { NeedProject, type Scope } from '../scope';
import { ErrorNote, ListState, Pager, Time, confirmed, useAction, useLoad, usePaged } from '../ui';

interface FormDef {
  slug: string;
  title?: string;
  published: boolean;
  visibility?: string;
  fields: { name: string; type: string }[];
}

interface FileRef {
  field: string;
  name: string;
  contentType: string;
  size?: number;
  url?: string;
}

interface Submission {
  id: string;
  form: string;
  createdAt: string;
  ip: string;
  userAgent: string;
  data: Record<string, unknown>;
  files: FileRef[] | null;
}

export function FormsPage({ scope }: { scope: Scope }) {
  const route = useRoute();
  const defs = useLoad<Page<FormDef>>(scope.project ? `/projects/${seg(scope.project)}/forms` : null);
  // The first form is chosen on arrival; ?form= keeps another choice.
  const form = route.query.get('form') || defs.data?.items[0]?.slug || '';
  const chosen = defs.data?.items.find((d) => d.slug === form);
  return (
    <>
      <h1>Forms</h1>
      <NeedProject scope={scope} />
      <ErrorNote error={defs.error} />
      {scope.project ? (
        <label>
          Form{' '}
          <select value={form} onChange={(e) => setQuery({ form: e.target.value || undefined })}>
            {!defs.data?.items.length ? <option value="">No form</option> : null}
            {(defs.data?.items ?? []).map((d) => (
              <option key={d.slug} value={d.slug}>
                {`${d.title ? `${d.title} (${d.slug})` : d.slug}${d.published ? '' : ' [draft]'}`}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {chosen ? (
        <p className="muted">
          {chosen.published ? 'Published' : 'Not published'}, {chosen.visibility || 'public'}; fields: {chosen.fields.map((f) => `${f.name} (${f.type})`).join(', ')}
        </p>
      ) : null}
      {scope.project && form && defs.data ? <Inbox key={`${scope.project}/${form}`} project={scope.project} form={form} /> : null}
    </>
  );
}

function Inbox({ project, form }: { project: string; form: string }) {
  const base = `/projects/${seg(project)}/forms/${seg(form)}/submissions`;
  const list = usePaged<Submission>(`${base}?limit=25`);
  const act = useAction();
  return (
    <section aria-labelledby="inbox-title">
      <h2 id="inbox-title">
        Inbox of {form} <span className="muted">({project}, newest first)</span>
      </h2>
      <div className="row">
        <button type="button" onClick={() => act.run(() => exportCSV(base, `${project}-${form}.csv`))} disabled={act.busy}>
          Export CSV
        </button>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ErrorNote error={act.error} />
      <ListState p={list} empty="No submissions yet." />
      {list.items.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Received</th>
              <th scope="col">Data</th>
              <th scope="col">Files</th>
              <th scope="col">IP</th>
              <th scope="col">User agent</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((s) => (
              <tr key={s.id}>
                <td>
                  <Time at={s.createdAt} />
                </td>
                <td>
                  <dl className="kv">
                    {Object.entries(s.data ?? {}).map(([k, v]) => (
                      <div key={k}>
                        <dt>{k}</dt>
                        <dd>{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
                      </div>
                    ))}
                  </dl>
                </td>
                <td>
                  {(s.files ?? []).map((f, i) =>
                    f.url ? (
                      <a key={i} href={f.url} download={f.name}>
                        {f.name}
                      </a>
                    ) : (
                      <span key={i}>{f.name}</span>
                    ),
                  )}
                </td>
                <td>
                  <code>{s.ip}</code>
                </td>
                <td className="ua">{s.userAgent}</td>
                <td>
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Delete submission ${s.id}`}
                    onClick={() => confirmed('Delete this submission and its files?') && act.run(() => call(gh.DELETE('/admin/v1/projects/{project}/forms/{slug}/submissions/{id}', { params: { path: { project, slug: form, id: s.id } } }))).then(list.reload)}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager p={list} label="Submissions" />
    </section>
  );
}

/** Downloads the inbox as CSV (Accept: text/csv), through the session. */
async function exportCSV(base: string, filename: string): Promise<void> {
  const res = await fetch(config.api + base, { headers: { Accept: 'text/csv' }, credentials: 'same-origin' });
  const type = res.headers.get('Content-Type') ?? '';
  if (!res.ok) {
    let msg = `${res.status} ${res.statusText}`;
    try {
      msg = (await res.json()).message ?? msg;
    } catch {
      /* keep the status */
    }
    throw new ApiError(res.status, '', msg);
  }
  if (!type.includes('text/csv')) throw new ApiError(res.status, '', 'This gateway does not answer the inbox as CSV yet.');
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
