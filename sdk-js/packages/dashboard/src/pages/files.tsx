// Files: the org's assets (pending and private included) with thumbnails (a small variant the
// server names in thumbnailUrl), the variants made of each image, a type filter, editing of
// alt, title and tags, and deletion.
import { useState } from 'react';
import { call, config, gh, qs, seg } from '../api';
import { type Scope } from '../scope';
import { ErrorNote, ListState, Notice, Pager, Time, confirmed, useAction, useLoad, usePaged } from '../ui';

interface Asset {
  id: string;
  org: string;
  project?: string;
  filename: string;
  mimeType: string;
  size: number;
  status: string;
  public?: boolean;
  storageKey?: string;
  url?: string;
  /** A small variant for the list (the project's "thumb", else a signed 256 px crop). */
  thumbnailUrl?: string;
  title: string | null;
  alt: string | null;
  tags: string[] | null;
  width: number;
  height: number;
  createdAt: string;
}

/** The public URL of an asset on the asset host (none for pending or private assets). */
function urlOf(a: Asset): string {
  if (a.url) return a.url;
  if (a.public && a.status === 'completed' && a.storageKey && config.assetURL) return `${config.assetURL}/${a.storageKey}`;
  return '';
}

function size(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function FilesPage({ scope }: { scope: Scope }) {
  const [category, setCategory] = useState('');
  const [onlyProject, setOnlyProject] = useState(true);
  const project = onlyProject ? scope.project : '';
  const list = usePaged<Asset>(scope.org ? `/assets${qs({ org: scope.org, project, mimeCategory: category, limit: 24 })}` : null);
  return (
    <>
      <h1>Files</h1>
      <div className="row">
        <label>
          Type
          <select value={category} onChange={(e) => setCategory(e.target.value)}>
            <option value="">all types</option>
            <option value="image">images</option>
          </select>
        </label>
        <label className="check">
          <input type="checkbox" checked={onlyProject} onChange={(e) => setOnlyProject(e.target.checked)} disabled={!scope.project} />
          Only project {scope.project || '—'}
        </label>
        <button type="button" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ListState p={list} empty="No assets." />
      <ul className="grid plain-grid">
        {list.items.map((a) => (
          <li key={a.id}>
            <AssetCard asset={a} onChanged={list.reload} />
          </li>
        ))}
      </ul>
      <Pager p={list} label="Assets" />
    </>
  );
}

function AssetCard({ asset, onChanged }: { asset: Asset; onChanged: () => void }) {
  const url = urlOf(asset);
  const [edit, setEdit] = useState(false);
  const [alt, setAlt] = useState(asset.alt ?? '');
  const [title, setTitle] = useState(asset.title ?? '');
  const [tags, setTags] = useState((asset.tags ?? []).join(', '));
  const [note, setNote] = useState('');
  const act = useAction();
  const state = asset.status !== 'completed' ? asset.status : asset.public === false || (!url && asset.public === undefined) ? 'private' : '';
  const id = `asset-${asset.id}`;
  return (
    <article className="card" aria-labelledby={`${id}-name`}>
      {asset.thumbnailUrl ? (
        <img
          className="thumb"
          src={asset.thumbnailUrl}
          alt={asset.alt ?? ''}
          loading="lazy"
          // A thumbnail the server cannot make (an original only browsers decode): the original.
          onError={(e) => url && e.currentTarget.src !== url && (e.currentTarget.src = url)}
        />
      ) : (
        <div className="thumb" aria-hidden="true">
          {asset.mimeType}
        </div>
      )}
      <h2 id={`${id}-name`} className="small">
        {url ? <a href={url}>{asset.filename}</a> : asset.filename}
      </h2>
      <p className="muted small">
        {size(asset.size)}
        {asset.width ? ` · ${asset.width}×${asset.height}` : ''} · <Time at={asset.createdAt} />
        {state ? (
          <>
            {' '}
            <span className="badge warn">{state}</span>
          </>
        ) : null}
      </p>
      {!edit ? (
        <>
          <p className="small">
            <strong>Alt:</strong> {asset.alt || <span className="muted">none</span>}
            <br />
            <strong>Title:</strong> {asset.title || <span className="muted">none</span>}
            <br />
            <strong>Tags:</strong> {(asset.tags ?? []).join(', ') || <span className="muted">none</span>}
          </p>
          {asset.thumbnailUrl && asset.mimeType !== 'image/svg+xml' ? <Variants asset={asset} /> : null}
          <button type="button" onClick={() => setEdit(true)} aria-label={`Edit ${asset.filename}`}>
            Edit
          </button>{' '}
          <button
            type="button"
            className="danger"
            aria-label={`Delete ${asset.filename}`}
            onClick={() => confirmed(`Delete ${asset.filename}? Its public URL stops working.`) && act.run(() => call(gh.DELETE('/admin/v1/assets/{id}', { params: { path: { id: asset.id } } }))).then((r) => r !== undefined && onChanged())}
          >
            Delete
          </button>
        </>
      ) : (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const body = { alt, title, tags: tags.split(',').map((t) => t.trim()).filter(Boolean) };
            const r = await act.run(() => call(gh.PATCH('/admin/v1/assets/{id}', { params: { path: { id: asset.id } }, body })));
            if (r !== undefined) {
              setEdit(false);
              setNote('Saved.');
              onChanged();
            }
          }}
        >
          <label>
            Alt text
            <input value={alt} onChange={(e) => setAlt(e.target.value)} />
          </label>
          <label>
            Title
            <input value={title} onChange={(e) => setTitle(e.target.value)} />
          </label>
          <label>
            Tags (comma-separated)
            <input value={tags} onChange={(e) => setTags(e.target.value)} />
          </label>
          <p>
            <button type="submit" className="primary" disabled={act.busy}>
              Save
            </button>{' '}
            <button type="button" onClick={() => setEdit(false)}>
              Cancel
            </button>
          </p>
        </form>
      )}
      <ErrorNote error={act.error} />
      {note ? <Notice text={note} /> : null}
    </article>
  );
}

interface Variant {
  key: string;
  mimeType: string;
  size: number;
  width: number;
  height: number;
}

/** The variants made of an image (GET /assets/{id}), loaded when opened. */
function Variants({ asset }: { asset: Asset }) {
  const [open, setOpen] = useState(false);
  const v = useLoad<{ variants?: Variant[] }>(open ? `/assets/${seg(asset.id)}` : null);
  const made = v.data?.variants ?? [];
  return (
    <details className="small" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary aria-label={`Variants of ${asset.filename}`}>Variants</summary>
      {v.error ? <ErrorNote error={v.error} /> : null}
      {v.data ? (
        made.length ? (
          <ul className="plain" aria-label={`Variants made of ${asset.filename}`}>
            {made.map((x) => (
              <li key={x.key}>
                <code>{x.key}</code> · {x.mimeType.replace('image/', '')} · {x.width}×{x.height} · {size(x.size)}
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">None made yet.</p>
        )
      ) : null}
    </details>
  );
}
