// The org and project every page works in: chosen in the header, kept in localStorage.
import { useEffect, useState } from 'react';
import { call, gh, type Session } from './api';

/** A project as GET /admin/v1/orgs/{org}/projects lists it. */
export interface Project {
  id: string;
  org: string;
  name?: string;
}

/** The selected org and project, the org's projects, and the signed-in session. */
export interface Scope {
  session: Session;
  org: string;
  project: string;
  projects: Project[];
  projectsError: unknown;
  setOrg: (o: string) => void;
  setProject: (p: string) => void;
}

const store = {
  get: (k: string) => {
    try {
      return localStorage.getItem('gatehouse.' + k) ?? '';
    } catch {
      return '';
    }
  },
  set: (k: string, v: string) => {
    try {
      localStorage.setItem('gatehouse.' + k, v);
    } catch {
      /* private mode: the choice lasts this page */
    }
  },
};

/** Holds the scope; the org defaults to the session's first, the project to the org's first. */
export function useScope(session: Session): Scope {
  const orgs = session.orgs.map((o) => o.slug);
  const [org, setOrgState] = useState(() => {
    const saved = store.get('org');
    return orgs.includes(saved) ? saved : (orgs[0] ?? '');
  });
  const [project, setProjectState] = useState(() => store.get('project'));
  const [projects, setProjects] = useState<Project[]>([]);
  const [projectsError, setProjectsError] = useState<unknown>(null);
  useEffect(() => {
    if (!org) return;
    let live = true;
    call(gh.GET('/admin/v1/orgs/{org}/projects', { params: { path: { org } } }))
      .then((p) => {
        if (!live) return;
        setProjects(p.items);
        setProjectsError(null);
        setProjectState((cur) => (p.items.some((x) => x.id === cur) ? cur : (p.items[0]?.id ?? '')));
      })
      .catch((e) => live && (setProjects([]), setProjectsError(e)));
    return () => {
      live = false;
    };
  }, [org]);
  return {
    session,
    org,
    project,
    projects,
    projectsError,
    setOrg: (o) => {
      store.set('org', o);
      setOrgState(o);
    },
    setProject: (p) => {
      store.set('project', p);
      setProjectState(p);
    },
  };
}

/** The org and project pickers of the header. */
export function ScopeBar({ scope }: { scope: Scope }) {
  return (
    <div className="scopebar">
      <label>
        Org{' '}
        <select value={scope.org} onChange={(e) => scope.setOrg(e.target.value)}>
          {scope.session.orgs.map((o) => (
            <option key={o.slug} value={o.slug}>
              {o.slug} ({o.role})
            </option>
          ))}
        </select>
      </label>
      <label>
        Project{' '}
        <select value={scope.project} onChange={(e) => scope.setProject(e.target.value)} disabled={!scope.projects.length}>
          {!scope.projects.length ? <option value="">none</option> : null}
          {scope.projects.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name ? `${p.name} (${p.id})` : p.id}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

/** Shown by project pages when no project is selected. */
export function NeedProject({ scope }: { scope: Scope }) {
  if (scope.project) return null;
  return <p className="muted">This org has no project yet (or none is selected): pick one above.</p>;
}
