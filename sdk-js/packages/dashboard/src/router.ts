// A small History API router: the dashboard's pages are paths under {base}/ and the gateway
// answers index.html for each of them, so a reload or a shared link lands on the same page.
import { useEffect, useState } from 'react';
import { config } from './api';

/** The current route: the path below the dashboard's base and the query parameters. */
export interface Route {
  path: string;
  query: URLSearchParams;
}

function current(): Route {
  let p = window.location.pathname;
  if (p.startsWith(config.base)) p = p.slice(config.base.length);
  if (!p.startsWith('/')) p = '/' + p;
  return { path: p, query: new URLSearchParams(window.location.search) };
}

const listeners = new Set<() => void>();

/** Goes to a dashboard path ("/keys?org=acme"), adding a history entry. */
export function navigate(to: string, replace = false): void {
  const url = config.base + to;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  listeners.forEach((l) => l());
  if (!replace) window.scrollTo(0, 0);
}

/** Replaces one query parameter of the current route (filters, selected project). */
export function setQuery(changes: Record<string, string | undefined>): void {
  const r = current();
  for (const [k, v] of Object.entries(changes)) {
    if (v) r.query.set(k, v);
    else r.query.delete(k);
  }
  const s = r.query.toString();
  navigate(r.path + (s ? `?${s}` : ''), true);
}

/** Re-renders on navigation (links, back/forward). */
export function useRoute(): Route {
  const [route, set] = useState(current);
  useEffect(() => {
    const l = () => set(current());
    listeners.add(l);
    window.addEventListener('popstate', l);
    return () => {
      listeners.delete(l);
      window.removeEventListener('popstate', l);
    };
  }, []);
  return route;
}

/** The href of a dashboard path. */
export const href = (to: string) => config.base + to;
