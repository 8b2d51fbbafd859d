// Records: write a collection's records through the admin API (create or replace, publish,
// unpublish, delete) and import NDJSON with upload progress. The admin API has no read route
// for records yet (drafts included), so this page does not list them.
import { useState } from 'react';
import { api, config, seg } from '../api';
import { upload } from '../upload';
import { setQuery, useRoute } from '../router';
import { NeedProject, type Scope } from '../scope';
import { ErrorNote, Notice, confirmed, useAction } from '../ui';

export function RecordsPage({ scope }: { scope: Scope }) {
  const route = useRoute();
  const coll = route.query.get('collection') ?? '';
  const [name, setName] = useState(coll);
  return (
    <>
      <h1>Records</h1>
      <NeedProject scope={scope} />
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ collection: name.trim() || undefined });
        }}
      >
        <label>
          Collection
          <input value={name} onChange={(e) => setName(e.target.value)} required />
        </label>
        <button type="submit" className="primary">
          Open collection
        </button>
      </form>
      <p className="muted">Listing and filtering records (drafts included) needs an admin read route the gateway does not have yet; writes work.</p>
      {scope.project && coll ? (
        <>
          <RecordEditor key={`e/${scope.project}/${coll}`} base={`/projects/${seg(scope.project)}/collections/${seg(coll)}/records`} />
          <Importer key={`i/${scope.project}/${coll}`} base={`/projects/${seg(scope.project)}/collections/${seg(coll)}/records`} />
        </>
      ) : null}
    </>
  );
}

function RecordEditor({ base }: { base: string }) {
  const [id, setId] = useState('');
  const [published, setPublished] = useState(true);
  const [data, setData] = useState('{\n  "title": ""\n}');
  const [result, setResult] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const act = useAction();
  const byId = (what: string, fn: () => Promise<unknown>) => {
    if (!id) {
      act.setError(new Error('Give the record id first.'));
      return;
    }
    setNote('');
    act.run(fn).then((r) => r !== undefined && setNote(`${what}: ${id}`));
  };
  return (
    <section className="card" aria-labelledby="rec-edit">
      <h2 id="rec-edit">Create or replace a record</h2>
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
          <button type="button" disabled={act.busy} onClick={() => byId('Published', () => api(`${base}/${seg(id)}/publish`, { method: 'POST' }))}>
            Publish
          </button>
          <button type="button" disabled={act.busy} onClick={() => byId('Unpublished', () => api(`${base}/${seg(id)}/unpublish`, { method: 'POST' }))}>
            Unpublish
          </button>
          <button type="button" className="danger" disabled={act.busy} onClick={() => confirmed(`Delete record ${id}?`) && byId('Deleted', () => api(`${base}/${seg(id)}`, { method: 'DELETE' }))}>
            Delete record
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
