// Overview: how the selected project is doing (the page after sign-in): records per
// collection, submissions, emails by status, assets and their bytes, plugin calls and errors,
// and a chart of the last 14 days of submissions and emails (GET .../overview).
import { seg } from '../api';
import { NeedProject, type Scope } from '../scope';
import { ErrorNote, Link, useLoad } from '../ui';
import { bytes } from './plugins';

/** GET /admin/v1/projects/{project}/overview. */
interface Overview {
  project: string;
  days: string[];
  records?: { collections: { name: string; records: number }[] };
  forms?: { submissions: number; submissionsByDay: Record<string, number> };
  email?: { messages: number; byStatus: Record<string, number>; messagesByDay: Record<string, number> };
  files?: { assets: number; bytes: number; pending: number };
  plugins?: { calls: number; errors: number; errorsByKind: Record<string, number> };
}

export function OverviewPage({ scope }: { scope: Scope }) {
  const ov = useLoad<Overview>(scope.project ? `/projects/${seg(scope.project)}/overview` : null);
  const d = ov.data;
  return (
    <>
      <h1>Overview{scope.project ? ` of ${scope.project}` : ''}</h1>
      <NeedProject scope={scope} />
      <ErrorNote error={ov.error} />
      {d ? (
        <>
          <ul className="figures" aria-label="Figures">
            <Figure label="Records" value={sumOf((d.records?.collections ?? []).map((c) => c.records))} to="/records" />
            <Figure label="Submissions" value={d.forms?.submissions ?? 0} to="/forms" />
            <Figure label="Emails" value={d.email?.messages ?? 0} to="/email?tab=messages" />
            <Figure label="Assets" value={d.files?.assets ?? 0} note={bytes(d.files?.bytes ?? 0)} to="/files" />
            <Figure label="Plugin calls" value={d.plugins?.calls ?? 0} note={`${d.plugins?.errors ?? 0} errors`} to="/plugins" bad={(d.plugins?.errors ?? 0) > 0} />
          </ul>
          <section aria-labelledby="ov-chart">
            <h2 id="ov-chart">Last 14 days</h2>
            <DayChart days={d.days} series={[
              { name: 'Submissions', cls: 's1', by: d.forms?.submissionsByDay ?? {} },
              { name: 'Emails', cls: 's2', by: d.email?.messagesByDay ?? {} },
            ]} />
          </section>
          <div className="split2">
            <section aria-labelledby="ov-records">
              <h2 id="ov-records">Records per collection</h2>
              {d.records?.collections.length ? (
                <table aria-label="Records per collection">
                  <tbody>
                    {d.records.collections.map((c) => (
                      <tr key={c.name}>
                        <th scope="row">{c.name}</th>
                        <td className="num">{c.records.toLocaleString()}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : (
                <p className="muted">No collections.</p>
              )}
            </section>
            <section aria-labelledby="ov-email">
              <h2 id="ov-email">Emails by status</h2>
              {Object.keys(d.email?.byStatus ?? {}).length ? (
                <table aria-label="Emails by status">
                  <tbody>
                    {Object.entries(d.email!.byStatus).map(([s, n]) => (
                      <tr key={s}>
                        <th scope="row">{s}</th>
                        <td className="num">{n.toLocaleString()}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              ) : (
                <p className="muted">No emails sent yet.</p>
              )}
            </section>
          </div>
        </>
      ) : ov.loading ? (
        <p className="muted">Loading…</p>
      ) : null}
    </>
  );
}

const sumOf = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function Figure(p: { label: string; value: number; note?: string; to: string; bad?: boolean }) {
  return (
    <li className="figure">
      <Link to={p.to}>
        <span className="figure-value">{p.value.toLocaleString()}</span>
        <span className="figure-label">{p.label}</span>
        {p.note ? <span className={p.bad ? 'figure-note bad' : 'figure-note'}>{p.note}</span> : null}
      </Link>
    </li>
  );
}

/** A hand-made SVG bar chart: one group of bars a day, one bar a series, with a legend. */
function DayChart({ days, series }: { days: string[]; series: { name: string; cls: string; by: Record<string, number> }[] }) {
  const W = 700;
  const H = 220;
  const pad = { l: 34, r: 8, t: 10, b: 28 };
  const max = Math.max(1, ...series.flatMap((s) => days.map((d) => s.by[d] ?? 0)));
  const top = niceTop(max);
  const gw = (W - pad.l - pad.r) / days.length;
  const bw = Math.max(2, (gw - 6) / series.length);
  const y = (v: number) => pad.t + (H - pad.t - pad.b) * (1 - v / top);
  const summary = series.map((s) => `${s.name}: ${sumOf(days.map((d) => s.by[d] ?? 0))}`).join(', ');
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`Submissions and emails by day, last 14 days (${summary})`} data-testid="overview-chart">
        {[0, 0.5, 1].map((f) => (
          <g key={f}>
            <line x1={pad.l} x2={W - pad.r} y1={y(top * f)} y2={y(top * f)} className="grid" />
            <text x={pad.l - 4} y={y(top * f) + 4} textAnchor="end" className="axis">
              {Number((top * f).toFixed(1))}
            </text>
          </g>
        ))}
        {days.map((d, i) => (
          <g key={d}>
            {series.map((s, j) => {
              const v = s.by[d] ?? 0;
              return v ? (
                <rect key={s.name} x={pad.l + i * gw + 3 + j * bw} y={y(v)} width={bw - 1} height={y(0) - y(v)} className={`bar ${s.cls}`} data-day={d} data-series={s.name}>
                  <title>{`${d}: ${v} ${s.name.toLowerCase()}`}</title>
                </rect>
              ) : null;
            })}
            {i % 2 === days.length % 2 ? (
              <text x={pad.l + i * gw + gw / 2} y={H - 8} textAnchor="middle" className="axis">
                {d.slice(5)}
              </text>
            ) : null}
          </g>
        ))}
      </svg>
      <figcaption className="legend">
        {series.map((s) => (
          <span key={s.name}>
            <span className={`swatch ${s.cls}`} aria-hidden="true" /> {s.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

/** A round axis top at or above v (1, 2, 5 × 10^n). */
function niceTop(v: number): number {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
