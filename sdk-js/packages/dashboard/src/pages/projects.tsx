// Projects of the selected org (GET /admin/v1/orgs/{org}/projects): pick the one the other pages work in.
import { type Scope } from '../scope';
import { ErrorNote } from '../ui';

export function ProjectsPage({ scope }: { scope: Scope }) {
  return (
    <>
      <h1>Projects of {scope.org || 'no org'}</h1>
      <ErrorNote error={scope.projectsError} />
      {!scope.projects.length && !scope.projectsError ? <p className="muted">No projects in this org. Projects come from the tenants document (gatehouse apply).</p> : null}
      <table>
        <caption className="sr-only">Projects</caption>
        <thead>
          <tr>
            <th scope="col">Project id</th>
            <th scope="col">Name</th>
            <th scope="col">Selected</th>
          </tr>
        </thead>
        <tbody>
          {scope.projects.map((p) => (
            <tr key={p.id}>
              <td>
                <code>{p.id}</code>
              </td>
              <td>{p.name ?? ''}</td>
              <td>
                {p.id === scope.project ? (
                  <strong>Selected</strong>
                ) : (
                  <button type="button" onClick={() => scope.setProject(p.id)} aria-label={`Select project ${p.id}`}>
                    Select
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
