// Shared pieces of every page: links, error notes, paginated lists, copy buttons, fields.
import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { api, ApiError, type Page } from './api';
import { href, navigate } from './router';

/** A link inside the dashboard: a real href (open in a new tab works), client-side on a plain click. */
export function Link(p: { to: string; children: ReactNode; current?: boolean; className?: string }) {
  return (
    <a
      href={href(p.to)}
      className={p.className}
      aria-current={p.current ? 'page' : undefined}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(p.to);
      }}
    >
      {p.children}
    </a>
  );
}

/** The API's message for a failed call (role=alert, so screen readers announce it). */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  const msg = e ? e.message : error instanceof Error ? error.message : String(error);
  return (
    <div className="error" role="alert">
      {e?.code ? <strong>{e.code}: </strong> : null}
      {msg}
      {e?.details?.length ? (
        <ul>
          {e.details.map((d, i) => (
            <li key={i}>
              {d.field ? <code>{d.field}</code> : null} {d.problem}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A status line announced politely (saved, deleted, ...). */
export function Notice({ text }: { text: string }) {
  return (
    <p className="notice" role="status" aria-live="polite">
      {text}
    </p>
  );
}

/** State of a paginated admin list walked with the gateway's cursors. */
export interface Paged<T> {
  items: T[];
  loading: boolean;
  error: unknown;
  hasNext: boolean;
  hasPrev: boolean;
  next: () => void;
  prev: () => void;
  reload: () => void;
  pageNo: number;
}

/**
 * Loads path page by page (?cursor=...): the cursors of the pages seen are kept so Previous
 * goes back. path null loads nothing (nothing selected yet).
 */
export function usePaged<T>(path: string | null): Paged<T> {
  // The cursors belong to one path: another path (a new filter) starts again at its first page.
  const [walk, setWalk] = useState<{ path: string | null; cursors: string[] }>({ path, cursors: [''] });
  const cursors = walk.path === path ? walk.cursors : [''];
  const setCursors = (f: (c: string[]) => string[]) => setWalk((w) => ({ path, cursors: f(w.path === path ? w.cursors : ['']) }));
  const [data, setData] = useState<Page<T> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  const [tick, setTick] = useState(0);
  const cursor = cursors[cursors.length - 1] ?? '';
  useEffect(() => {
    if (path === null) {
      setData(null);
      return;
    }
    let live = true;
    setLoading(true);
    setError(null);
    const sep = path.includes('?') ? '&' : '?';
    api<Page<T>>(cursor ? `${path}${sep}cursor=${encodeURIComponent(cursor)}` : path)
      .then((d) => live && setData(d))
      .catch((e) => {
        if (!live) return;
        setError(e);
        setData(null);
      })
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [path, cursor, tick]);
  const nextCursor = data?.pagination?.nextCursor ?? '';
  return {
    items: data?.items ?? [],
    loading,
    error,
    hasNext: !!nextCursor,
    hasPrev: cursors.length > 1,
    next: () => nextCursor && setCursors((c) => [...c, nextCursor]),
    prev: () => setCursors((c) => (c.length > 1 ? c.slice(0, -1) : c)),
    reload: () => setTick((t) => t + 1),
    pageNo: cursors.length,
  };
}

/** Previous / next buttons of a paginated list. */
export function Pager({ p, label }: { p: Paged<unknown>; label: string }) {
  if (!p.hasNext && !p.hasPrev) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" onClick={p.prev} disabled={!p.hasPrev}>
        Previous page
      </button>
      <span>Page {p.pageNo}</span>
      <button type="button" onClick={p.next} disabled={!p.hasNext}>
        Next page
      </button>
    </nav>
  );
}

/** What a list shows while loading, on failure, and when empty. */
export function ListState({ p, empty }: { p: Paged<unknown>; empty: string }) {
  if (p.error) return <ErrorNote error={p.error} />;
  if (p.loading && !p.items.length) return <p className="muted">Loading…</p>;
  if (!p.items.length) return <p className="muted">{empty}</p>;
  return null;
}

/** Copies text to the clipboard, and says so. */
export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState('');
  return (
    <>
      <button
        type="button"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(text);
            setDone('Copied');
          } catch {
            setDone('Copy failed: select the value and copy it');
          }
        }}
      >
        {label}
      </button>
      <span role="status" className="muted">
        {done}
      </span>
    </>
  );
}

/** Runs an async action with a busy flag and its error. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async <R,>(fn: () => Promise<R>): Promise<R | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, setError };
}

/** Loads one value (not paginated). */
export function useLoad<T>(path: string | null): { data: T | null; error: unknown; loading: boolean; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (path === null) return;
    let live = true;
    setLoading(true);
    setError(null);
    api<T>(path)
      .then((d) => live && setData(d))
      .catch((e) => live && (setError(e), setData(null)))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [path, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data, error, loading, reload };
}

/** Delays a value (live preview while typing). */
export function useDebounced<T>(value: T, ms: number): T {
  const [v, set] = useState(value);
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const t = setTimeout(() => set(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

/** Asks before a destructive action. */
export function confirmed(what: string): boolean {
  return window.confirm(what);
}

/** Formats an RFC 3339 time in the browser's locale (the raw value in the title). */
export function Time({ at }: { at?: string }) {
  if (!at) return <span className="muted">—</span>;
  const d = new Date(at);
  return <time dateTime={at}>{isNaN(d.getTime()) ? at : d.toLocaleString()}</time>;
}

/** The API's problem with one field (a VALIDATION_FAILED detail), or "". */
export function fieldProblem(error: unknown, field: string): string {
  if (!(error instanceof ApiError) || !error.details) return '';
  return error.details
    .filter((d) => d.field === field || d.field?.startsWith(field + '[') || d.field?.startsWith(field + '.'))
    .map((d) => d.problem ?? '')
    .join('; ');
}

/** A field's problem, shown beside it (the input names it with aria-describedby={id}). */
export function FieldError({ id, error, field }: { id: string; error: unknown; field: string }) {
  const msg = fieldProblem(error, field);
  if (!msg) return null;
  return (
    <span id={id} className="field-error" role="alert">
      {msg}
    </span>
  );
}
