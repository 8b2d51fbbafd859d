// Email: templates with a live preview from sample variables, messages filtered by status and
// tag with each one's delivery log, and the org's suppression list (add, remove).
import { useEffect, useMemo, useState } from 'react';
import { api, call, gh, qs, seg, type Page } from '../api';
import { NeedProject, type Scope } from '../scope';
import { Tabs } from '../tabs';
import { ErrorNote, ListState, Notice, Pager, Time, confirmed, useAction, useDebounced, useLoad, usePaged } from '../ui';

export function EmailPage({ scope }: { scope: Scope }) {
  return (
    <>
      <h1>Email</h1>
      <Tabs
        label="Email"
        tabs={[
          { id: 'templates', name: 'Templates', panel: () => <Templates scope={scope} /> },
          { id: 'messages', name: 'Messages', panel: () => <Messages /> },
          { id: 'suppressions', name: 'Suppressions', panel: () => <Suppressions scope={scope} /> },
        ]}
      />
    </>
  );
}

interface Template {
  slug: string;
  subject: string;
  body: string;
  text?: string;
}

interface Preview {
  subject: string;
  html: string;
  text: string;
}

/** Lists may come as the list envelope or a bare array. */
function itemsOf<T>(v: Page<T> | T[] | null): T[] {
  if (!v) return [];
  return Array.isArray(v) ? v : (v.items ?? []);
}

function Templates({ scope }: { scope: Scope }) {
  const base = scope.project ? `/projects/${seg(scope.project)}/email/templates` : null;
  const list = useLoad<Page<Template> | Template[]>(base);
  const [picked, setSlug] = useState('');
  const [newSlug, setNewSlug] = useState('');
  const templates = itemsOf(list.data);
  useEffect(() => setSlug(''), [scope.project]);
  // The first template is chosen on arrival.
  const slug = picked || templates[0]?.slug || '';
  if (!scope.project) return <NeedProject scope={scope} />;
  return (
    <div className="split">
      <section aria-labelledby="tpl-list">
        <h2 id="tpl-list">Templates</h2>
        <ErrorNote error={list.error} />
        {!list.loading && !list.error && !templates.length ? <p className="muted">No templates in this project.</p> : null}
        <ul className="plain">
          {templates.map((t) => (
            <li key={t.slug}>
              <button type="button" aria-pressed={t.slug === slug} onClick={() => setSlug(t.slug)}>
                {t.slug}
              </button>
            </li>
          ))}
        </ul>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (newSlug) setSlug(newSlug.trim());
            setNewSlug('');
          }}
        >
          <label>
            New template slug
            <input value={newSlug} onChange={(e) => setNewSlug(e.target.value)} pattern="[a-z0-9][a-z0-9_-]*" />
          </label>{' '}
          <button type="submit">New template</button>
        </form>
      </section>
      {slug ? <TemplateEditor key={`${scope.project}/${slug}`} project={scope.project} base={base!} slug={slug} isNew={!templates.some((t) => t.slug === slug)} onChanged={list.reload} onDeleted={() => (setSlug(''), list.reload())} /> : <p className="muted">Pick a template to edit it and preview it.</p>}
    </div>
  );
}

function TemplateEditor(p: { project: string; base: string; slug: string; isNew: boolean; onChanged: () => void; onDeleted: () => void }) {
  const path = `${p.base}/${seg(p.slug)}`;
  const loaded = useLoad<Template>(p.isNew ? null : path);
  const [subject, setSubject] = useState('');
  const [body, setBody] = useState('');
  const [text, setText] = useState('');
  const [vars, setVars] = useState('{}');
  const draft = useMemo(() => ({ subject, body, text }), [subject, body, text]);
  const [note, setNote] = useState('');
  const save = useAction();
  useEffect(() => {
    if (loaded.data) {
      setSubject(loaded.data.subject);
      setBody(loaded.data.body);
      setText(loaded.data.text ?? '');
      setVars(JSON.stringify(sampleVars(loaded.data.subject + ' ' + loaded.data.body)));
    }
  }, [loaded.data]);
  return (
    <section aria-labelledby="tpl-edit">
      <h2 id="tpl-edit">Template {p.slug}</h2>
      <ErrorNote error={loaded.error} />
      {/* A stored template's fields are filled when it has loaded: typing before that would be
          overwritten by the load, so the editor waits for it. */}
      {!p.isNew && !loaded.data ? (
        loaded.error ? null : <p className="muted">Loading the template…</p>
      ) : (
        <>
          <form
            onSubmit={async (e) => {
              e.preventDefault();
              setNote('');
              const ok = await save.run(() => call(gh.PUT('/admin/v1/projects/{project}/email/templates/{slug}', { params: { path: { project: p.project, slug: p.slug } }, body: { subject, body, text: text || undefined } })));
              if (ok !== undefined) {
                setNote('Template saved.');
                p.onChanged();
              }
            }}
          >
            <p>
              <label htmlFor="tpl-subject">Subject</label>
              <input id="tpl-subject" className="wide" value={subject} onChange={(e) => setSubject(e.target.value)} />
            </p>
            <p>
              <label htmlFor="tpl-body">Body (HTML, {'{{variables}}'})</label>
              <textarea id="tpl-body" className="mono" value={body} onChange={(e) => setBody(e.target.value)} rows={10} />
            </p>
            <p>
              <label htmlFor="tpl-text">Text body (optional: derived from the HTML when empty)</label>
              <textarea id="tpl-text" className="mono" value={text} onChange={(e) => setText(e.target.value)} rows={4} />
            </p>
            <button type="submit" className="primary" disabled={save.busy}>
              Save template
            </button>{' '}
            {!p.isNew ? (
              <button
                type="button"
                className="danger"
                onClick={() => confirmed(`Delete template ${p.slug}?`) && save.run(() => call(gh.DELETE('/admin/v1/projects/{project}/email/templates/{slug}', { params: { path: { project: p.project, slug: p.slug } } }))).then((r) => r !== undefined && p.onDeleted())}
              >
                Delete template
              </button>
            ) : null}
            <ErrorNote error={save.error} />
            {note ? <Notice text={note} /> : null}
          </form>
          <p>
            <label htmlFor="tpl-vars">Sample variables (JSON)</label>
            <textarea id="tpl-vars" className="mono" rows={3} value={vars} onChange={(e) => setVars(e.target.value)} />
          </p>
          <TemplatePreview path={path} vars={vars} draft={draft} />
        </>
      )}
    </section>
  );
}

/** The variables a template names, each with a sample value. */
export function sampleVars(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/\{\{\s*([A-Za-z_][\w.]*)\s*\}\}/g)) out[m[1]!] = m[1]!;
  return out;
}

/** The editor's text as typed: what the preview renders (the stored template is not read). */
interface Draft {
  subject: string;
  body: string;
  text: string;
}

function TemplatePreview({ path, vars, draft }: { path: string; vars: string; draft: Draft }) {
  const v = useDebounced(vars, 300);
  const d = useDebounced(draft, 300);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<unknown>(null);
  const empty = !d.subject.trim() || !d.body.trim();
  useEffect(() => {
    if (empty) return;
    let variables: unknown;
    try {
      variables = JSON.parse(v);
    } catch {
      setError(new Error('The sample variables are not valid JSON.'));
      return;
    }
    let live = true;
    const template = { subject: d.subject, body: d.body, text: d.text || undefined };
    api<Preview>(`${path}/preview`, { method: 'POST', body: { variables, template } })
      .then((r) => live && (setPreview(r), setError(null)))
      .catch((e) => live && setError(e));
    return () => {
      live = false;
    };
  }, [path, v, d, empty]);
  return (
    <section className="preview" aria-labelledby="tpl-preview" aria-live="polite">
      <h3 id="tpl-preview">Preview (as typed, before saving)</h3>
      {empty ? <p className="muted">Type a subject and a body to preview them.</p> : null}
      <ErrorNote error={error} />
      {preview ? (
        <>
          <p>
            Subject: <strong data-testid="preview-subject">{preview.subject}</strong>
          </p>
          <iframe title="HTML preview" sandbox="" srcDoc={preview.html} />
          <details>
            <summary>Text part</summary>
            <pre>{preview.text}</pre>
          </details>
        </>
      ) : null}
    </section>
  );
}

interface LogEntry {
  at: string;
  event: string;
  status: string;
  code?: number;
  detail?: string;
}

interface Message {
  id: string;
  org: string;
  project: string;
  status: string;
  to: { email: string; name?: string };
  subject: string;
  tags: string[];
  createdAt: string;
  attempts: number;
  log?: LogEntry[];
}

const STATUSES = ['queued', 'sent', 'delivered', 'bounced', 'spam', 'suppressed', 'failed'];

function Messages() {
  const [status, setStatus] = useState('');
  const [tag, setTag] = useState('');
  const t = useDebounced(tag, 300);
  const list = usePaged<Message>(`/email/messages${qs({ status, tag: t, limit: 25 })}`);
  const [open, setOpen] = useState('');
  return (
    <>
      <div className="row">
        <label>
          Status
          <select value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          Tag
          <input value={tag} onChange={(e) => setTag(e.target.value)} />
        </label>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ListState p={list} empty="No messages match." />
      {list.items.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">To</th>
              <th scope="col">Subject</th>
              <th scope="col">Status</th>
              <th scope="col">Tags</th>
              <th scope="col">Log</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((m) => (
              <tr key={m.id} className={m.id === open ? 'selected' : undefined}>
                <td>
                  <Time at={m.createdAt} />
                </td>
                <td>{m.to?.email}</td>
                <td>{m.subject}</td>
                <td>
                  <StatusBadge s={m.status} />
                </td>
                <td>{m.tags?.join(', ')}</td>
                <td>
                  <button type="button" aria-expanded={m.id === open} onClick={() => setOpen(m.id === open ? '' : m.id)} aria-label={`Delivery log of ${m.id}`}>
                    {m.id === open ? 'Hide log' : 'Show log'}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager p={list} label="Messages" />
      {open ? <MessageLog id={open} /> : null}
    </>
  );
}

export function StatusBadge({ s }: { s: string }) {
  const cls = s === 'delivered' || s === 'sent' ? 'ok' : s === 'queued' ? 'warn' : 'bad';
  return <span className={`badge ${cls}`}>{s}</span>;
}

/** Statuses after which a message's log does not change by itself (a late bounce aside). */
const FINAL = ['delivered', 'bounced', 'spam', 'suppressed', 'failed'];

function MessageLog({ id }: { id: string }) {
  const m = useLoad<Message>(`/email/messages/${seg(id)}`);
  const status = m.data?.status ?? '';
  const reload = m.reload;
  useEffect(() => {
    // Watch a message in flight: refresh its log until it reaches a final status.
    if (!status || FINAL.includes(status) || m.error) return;
    const t = setTimeout(reload, 1500);
    return () => clearTimeout(t);
  }, [status, m.data, m.error, reload]);
  return (
    <section className="card" aria-labelledby="msg-log">
      <h2 id="msg-log">Delivery log of {id}</h2>
      <ErrorNote error={m.error} />
      {m.data ? (
        <>
          <p>
            Status <StatusBadge s={m.data.status} />, {m.data.attempts} attempt(s).{' '}
            <button type="button" onClick={m.reload}>
              Refresh log
            </button>
          </p>
          <table>
            <thead>
              <tr>
                <th scope="col">At</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Code</th>
                <th scope="col">Detail</th>
              </tr>
            </thead>
            <tbody>
              {(m.data.log ?? []).map((l, i) => (
                <tr key={i}>
                  <td>
                    <Time at={l.at} />
                  </td>
                  <td>{l.event}</td>
                  <td>{l.status}</td>
                  <td>{l.code ?? ''}</td>
                  <td>{l.detail ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      ) : null}
    </section>
  );
}

interface Suppression {
  email: string;
  source: string;
  reason?: string;
  at: string;
}

function Suppressions({ scope }: { scope: Scope }) {
  const base = `/orgs/${seg(scope.org)}/suppressions`;
  const list = usePaged<Suppression>(scope.org ? base : null);
  const [email, setEmail] = useState('');
  const [reason, setReason] = useState('');
  const act = useAction();
  return (
    <>
      <form
        className="card"
        aria-labelledby="sup-add"
        onSubmit={async (e) => {
          e.preventDefault();
          const r = await act.run(() => call(gh.POST('/admin/v1/orgs/{org}/suppressions', { params: { path: { org: scope.org } }, body: { email, reason: reason || undefined } })));
          if (r !== undefined) {
            setEmail('');
            setReason('');
            list.reload();
          }
        }}
      >
        <h2 id="sup-add">Suppress an address in {scope.org}</h2>
        <div className="row">
          <label>
            Email address
            <input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <label>
            Reason
            <input value={reason} onChange={(e) => setReason(e.target.value)} />
          </label>
          <button type="submit" className="primary" disabled={act.busy}>
            Add to suppressions
          </button>
        </div>
        <ErrorNote error={act.error} />
      </form>
      <ListState p={list} empty="No suppressed addresses." />
      {list.items.length ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Source</th>
              <th scope="col">Reason</th>
              <th scope="col">Since</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((s) => (
              <tr key={s.email}>
                <td>{s.email}</td>
                <td>{s.source}</td>
                <td>{s.reason ?? ''}</td>
                <td>
                  <Time at={s.at} />
                </td>
                <td>
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Remove ${s.email}`}
                    onClick={() => act.run(() => call(gh.DELETE('/admin/v1/orgs/{org}/suppressions/{email}', { params: { path: { org: scope.org, email: s.email } } }))).then(list.reload)}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <Pager p={list} label="Suppressions" />
    </>
  );
}
