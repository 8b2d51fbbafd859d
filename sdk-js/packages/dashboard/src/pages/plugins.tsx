// Plugins of the project: status, hooks, last error, calls and errors by kind, and each one's
// log (the newest lines the guest printed).
import { useState } from 'react';
import { config, qs, seg } from '../api';
import { upload } from '../upload';
import { NeedProject, type Scope } from '../scope';
import { ErrorNote, ListState, Notice, Time, useLoad, usePaged } from '../ui';

interface Plugin {
  name: string;
  hooks: string[];
  status: string;
  lastError?: string;
  lastErrorAt?: string;
  calls: number;
  errors: Record<string, number> | null;
}

interface LogLine {
  time: string;
  text: string;
}

export function PluginsPage({ scope }: { scope: Scope }) {
  const list = usePaged<Plugin>(scope.project ? `/projects/${seg(scope.project)}/plugins` : null);
  const [open, setOpen] = useState('');
  return (
    <>
      <h1>Plugins</h1>
      <NeedProject scope={scope} />
      <p>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </p>
      {scope.project ? <ListState p={list} empty="No plugins in this project (they are declared in the tenants document)." /> : null}
      {list.items.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Hooks</th>
              <th scope="col">Status</th>
              <th scope="col">Calls</th>
              <th scope="col">Errors by kind</th>
              <th scope="col">Last error</th>
              <th scope="col">Log</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((p) => (
              <tr key={p.name}>
                <td>{p.name}</td>
                <td>{p.hooks.join(', ')}</td>
                <td>
                  <span className={`badge ${p.status === 'running' ? 'ok' : 'bad'}`}>{p.status}</span>
                </td>
                <td>{p.calls}</td>
                <td>
                  {Object.entries(p.errors ?? {})
                    .map(([k, v]) => `${k}: ${v}`)
                    .join(', ') || '0'}
                </td>
                <td>
                  {p.lastError ? (
                    <>
                      {p.lastError}
                      <br />
                      <Time at={p.lastErrorAt} />
                    </>
                  ) : (
                    <span className="muted">none</span>
                  )}
                </td>
                <td>
                  <button type="button" aria-expanded={open === p.name} aria-label={`Log of ${p.name}`} onClick={() => setOpen(open === p.name ? '' : p.name)}>
                    {open === p.name ? 'Hide log' : 'Show log'}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {open && scope.project ? <PluginLog project={scope.project} name={open} /> : null}
      {scope.project ? <UploadModule project={scope.project} onDone={list.reload} /> : null}
    </>
  );
}

function PluginLog({ project, name }: { project: string; name: string }) {
  const log = useLoad<{ items: LogLine[] }>(`/projects/${seg(project)}/plugins/${seg(name)}/logs?limit=200`);
  return (
    <section className="card" aria-labelledby="plugin-log">
      <h2 id="plugin-log">Log of {name} (newest first)</h2>
      <button type="button" onClick={log.reload}>
        Refresh log
      </button>
      <ErrorNote error={log.error} />
      {log.data && !log.data.items.length ? <p className="muted">The log is empty.</p> : null}
      {log.data?.items.length ? (
        <pre>
          {log.data.items.map((l) => `${l.time}  ${l.text}`).join('\n')}
        </pre>
      ) : null}
    </section>
  );
}

/** Uploads a Wasm module (POST /admin/v1/plugins?project=&name=): plugins using that module swap to it. */
function UploadModule({ project, onDone }: { project: string; onDone: () => void }) {
  const [name, setName] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [note, setNote] = useState('');
  return (
    <form
      className="card"
      aria-labelledby="plugin-upload"
      onSubmit={(e) => {
        e.preventDefault();
        if (!file || !name) return;
        setError(null);
        setNote('');
        setProgress(0);
        upload(`${config.api}/plugins${qs({ project, name })}`, file, 'application/wasm', setProgress)
          .then(() => (setNote(`Module ${name} uploaded.`), onDone()))
          .catch(setError)
          .finally(() => setProgress(null));
      }}
    >
      <h2 id="plugin-upload">Upload a module</h2>
      <div className="row">
        <label>
          Module name
          <input value={name} onChange={(e) => setName(e.target.value)} required />
        </label>
        <label>
          Wasm module
          <input type="file" accept=".wasm,application/wasm" onChange={(e) => setFile(e.target.files?.[0] ?? null)} required />
        </label>
        <button type="submit" disabled={!file || !name || progress !== null}>
          Upload module
        </button>
      </div>
      {progress !== null ? (
        <label>
          Upload progress <progress max={100} value={progress} /> {progress}%
        </label>
      ) : null}
      <ErrorNote error={error} />
      {note ? <Notice text={note} /> : null}
    </form>
  );
}
