// Plugins of the project: the uploaded modules (size, upload time, hooks, status) attached to
// and detached from hooks, the registered plugins with status, calls and errors by kind and
// each one's log (the newest lines the guest printed), and a module upload.
import { useState } from 'react';
import { call, config, gh, qs, seg, type Page } from '../api';
import { upload } from '../upload';
import { NeedProject, type Scope } from '../scope';
import { ErrorNote, ListState, Notice, Time, useAction, useLoad, usePaged } from '../ui';

/** The hook points a module can be attached to. */
const HOOKS = ['forms.submit', 'records.read', 'email.send', 'captcha.verify'] as const;

/** One hook point. */
type Hook = (typeof HOOKS)[number];

/** An uploaded module (GET .../plugin-modules). */
interface Module {
  name: string;
  size: number;
  sha256?: string;
  uploadedAt?: string;
  plugins: string[];
  hooks: string[];
}

/** Formats a byte count (1.2 KB). */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 * 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 / 1024 / 1024).toFixed(1)} GB`;
}

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
  const modules = useLoad<Page<Module>>(scope.project ? `/projects/${seg(scope.project)}/plugin-modules` : null);
  const [open, setOpen] = useState('');
  const reload = () => {
    list.reload();
    modules.reload();
  };
  return (
    <>
      <h1>Plugins</h1>
      <NeedProject scope={scope} />
      <p>
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </p>
      {scope.project ? <Modules project={scope.project} modules={modules.data?.items ?? null} error={modules.error} plugins={list.items} onChanged={reload} /> : null}
      <h2>Registered plugins</h2>
      {scope.project ? <ListState p={list} empty="No plugins registered in this project: attach an uploaded module to a hook, or declare one in the tenants document." /> : null}
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
      {scope.project ? <UploadModule project={scope.project} onDone={reload} /> : null}
    </>
  );
}

/** The uploaded modules, each with its hooks (detach buttons) and a hook picker to attach it. */
function Modules(p: { project: string; modules: Module[] | null; error: unknown; plugins: Plugin[]; onChanged: () => void }) {
  const act = useAction();
  const [note, setNote] = useState('');
  const [pick, setPick] = useState<Record<string, string>>({});
  const base = `/projects/${seg(p.project)}/plugins`;
  const statusOf = (m: Module) => {
    const regs = p.plugins.filter((x) => m.plugins.includes(x.name));
    if (!m.plugins.length) return 'not attached';
    return regs.find((x) => x.status !== 'running')?.status ?? (regs.length ? 'running' : 'pending');
  };
  return (
    <section aria-labelledby="modules-title">
      <h2 id="modules-title">Uploaded modules</h2>
      <ErrorNote error={p.error} />
      <ErrorNote error={act.error} />
      {note ? <Notice text={note} /> : null}
      {p.modules && !p.modules.length ? <p className="muted">No module uploaded to this project yet: upload one below.</p> : null}
      {p.modules?.length ? (
        <table aria-label="Uploaded modules">
          <thead>
            <tr>
              <th scope="col">Module</th>
              <th scope="col">Size</th>
              <th scope="col">Uploaded</th>
              <th scope="col">Hooks</th>
              <th scope="col">Status</th>
              <th scope="col">Attach</th>
            </tr>
          </thead>
          <tbody>
            {p.modules.map((m) => {
              const st = statusOf(m);
              // The registration a hook is attached through: the one named as the module, else the first running it.
              const reg = m.plugins.includes(m.name) ? m.name : (m.plugins[0] ?? m.name);
              const free = HOOKS.filter((h) => !m.hooks.includes(h));
              const hook = (pick[m.name] || free[0] || '') as Hook;
              return (
                <tr key={m.name}>
                  <td>
                    {m.name}
                    {m.sha256 ? <div className="small muted mono" title={m.sha256}>sha256 {m.sha256.slice(0, 12)}…</div> : null}
                  </td>
                  <td>{bytes(m.size)}</td>
                  <td>
                    <Time at={m.uploadedAt} />
                  </td>
                  <td>
                    {m.hooks.length ? (
                      <ul className="chips">
                        {m.hooks.map((h) => (
                          <li key={h}>
                            <span className="chip">{h}</span>
                            <button
                              type="button"
                              className="danger"
                              disabled={act.busy}
                              aria-label={`Detach ${m.name} from ${h}`}
                              onClick={() =>
                                act.run(() => call(gh.DELETE('/admin/v1/projects/{project}/plugins/{name}/hooks/{hook}', { params: { path: { project: p.project, name: reg, hook: h } } }))).then((r) => {
                                  if (r === undefined) return;
                                  setNote(`${m.name} detached from ${h}.`);
                                  p.onChanged();
                                })
                              }
                            >
                              Detach
                            </button>
                          </li>
                        ))}
                      </ul>
                    ) : (
                      <span className="muted">none</span>
                    )}
                  </td>
                  <td>
                    <span className={`badge ${st === 'running' ? 'ok' : st === 'not attached' || st === 'pending' ? 'warn' : 'bad'}`}>{st}</span>
                  </td>
                  <td>
                    {free.length ? (
                      <form
                        className="row"
                        onSubmit={(e) => {
                          e.preventDefault();
                          act.run(() => call(gh.POST('/admin/v1/projects/{project}/plugins/{name}/hooks', { params: { path: { project: p.project, name: reg } }, body: { hook, module: m.name } }))).then((r) => {
                            if (r === undefined) return;
                            setNote(`${m.name} attached to ${hook}.`);
                            p.onChanged();
                          });
                        }}
                      >
                        <select aria-label={`Hook for ${m.name}`} value={hook} onChange={(e) => setPick((x) => ({ ...x, [m.name]: e.target.value }))}>
                          {free.map((h) => (
                            <option key={h}>{h}</option>
                          ))}
                        </select>
                        <button type="submit" disabled={act.busy} aria-label={`Attach ${m.name}`}>
                          Attach
                        </button>
                      </form>
                    ) : (
                      <span className="muted">every hook</span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
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
