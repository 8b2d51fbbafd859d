// Tabs (WAI-ARIA tabs pattern: arrow keys move between tabs) kept in the URL's ?tab=.
import { useRef, type ReactNode } from 'react';
import { setQuery, useRoute } from './router';

export function Tabs({ tabs, label }: { tabs: { id: string; name: string; panel: () => ReactNode }[]; label: string }) {
  const route = useRoute();
  const current = tabs.find((t) => t.id === route.query.get('tab')) ?? tabs[0]!;
  const refs = useRef<(HTMLButtonElement | null)[]>([]);
  const select = (i: number) => {
    const t = tabs[(i + tabs.length) % tabs.length]!;
    setQuery({ tab: t.id });
    refs.current[(i + tabs.length) % tabs.length]?.focus();
  };
  return (
    <>
      <div role="tablist" aria-label={label} className="tabs">
        {tabs.map((t, i) => (
          <button
            key={t.id}
            ref={(el) => {
              refs.current[i] = el;
            }}
            role="tab"
            type="button"
            id={`tab-${t.id}`}
            aria-selected={t === current}
            aria-controls={`panel-${t.id}`}
            tabIndex={t === current ? 0 : -1}
            onClick={() => setQuery({ tab: t.id })}
            onKeyDown={(e) => {
              if (e.key === 'ArrowRight') select(i + 1);
              else if (e.key === 'ArrowLeft') select(i - 1);
              else return;
              e.preventDefault();
            }}
          >
            {t.name}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${current.id}`} aria-labelledby={`tab-${current.id}`}>
        {current.panel()}
      </div>
    </>
  );
}
