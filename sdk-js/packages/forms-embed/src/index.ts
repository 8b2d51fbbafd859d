// @gatehouse/forms-embed: renders a Gatehouse form from its definition, validates on the
// client, shows the captcha widget when the form has one, submits (multipart when files are
// attached) and shows success or the error of each field.
//
// Drop-in: <div data-gatehouse-form="contact" data-key="pk_live_..."></div>
//          <script src="{embed_host}/forms.js" async></script>
// The API base is the element's data-api, else window.GatehouseFormsBase (the embed host
// sets it), else derived from the script's own URL ({public_url}/embed/forms.js -> {public_url}/forms).
// Requests go through @gatehouse/client, typed from the gateway's OpenAPI document.
import { ApiError, createClient, type GatehouseClient } from '@gatehouse/client';
import type { Definition, Field, Problem, Value } from './types';
import { validate } from './validate';

export type { Definition, Field, Problem, Value } from './types';
export { validate } from './validate';

declare global {
  interface Window {
    GatehouseFormsBase?: string;
    GatehouseForms?: { mount: typeof mount; validate: typeof validate; scan: typeof scan };
  }
}

const CAPTCHA_SCRIPTS: Record<string, { src: string; cls: string }> = {
  turnstile: { src: 'https://challenges.cloudflare.com/turnstile/v0/api.js', cls: 'cf-turnstile' },
  hcaptcha: { src: 'https://js.hcaptcha.com/1/api.js', cls: 'h-captcha' },
  recaptcha: { src: 'https://www.google.com/recaptcha/api.js', cls: 'g-recaptcha' },
};
const CAPTCHA_NAMES = ['captcha-response', 'cf-turnstile-response', 'h-captcha-response', 'g-recaptcha-response'];

const scriptSrc = (document.currentScript as HTMLScriptElement | null)?.src ?? '';
let counter = 0;

/** Options of mount. */
export interface MountOptions {
  slug: string;
  key: string;
  /** The forms base URL ({forms_base_url}); see the file comment for the default. */
  api?: string;
}

function apiBase(explicit?: string): string {
  if (explicit) return explicit.replace(/\/+$/, '');
  if (window.GatehouseFormsBase) return window.GatehouseFormsBase.replace(/\/+$/, '');
  if (scriptSrc) {
    const u = new URL(scriptSrc);
    const path = u.pathname.replace(/\/embed\/forms\.js$/, '').replace(/\/forms\.js$/, '');
    return `${u.origin}${path}/forms`;
  }
  return `${location.origin}/forms`;
}

/** The typed client of the gateway whose forms base URL is api ({public_url}/forms). */
function client(api: string, key: string): GatehouseClient {
  return createClient({ baseUrl: api.replace(/\/forms$/, ''), apiKey: key });
}

/** The envelope's message of a refusal, when it has one. */
function envelopeMessage(e: ApiError): string | undefined {
  const b = e.body as { message?: unknown } | undefined;
  return typeof b?.message === 'string' && b.message ? b.message : undefined;
}

function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, text?: string): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

interface Rendered {
  form: HTMLFormElement;
  errors: Map<string, HTMLElement>;
  controls: Map<string, HTMLElement>;
  status: HTMLElement;
  submit: HTMLButtonElement;
}

function renderField(f: Field, uid: string, r: Rendered): HTMLElement {
  const id = `gh-${uid}-${f.name}`;
  const errId = `${id}-error`;
  const helpId = `${id}-help`;
  const describedBy = [f.helpText ? helpId : '', errId].filter(Boolean).join(' ');
  const label = f.label || f.name;
  const err = h('p', { class: 'gh-error', id: errId, 'aria-live': 'polite' });
  r.errors.set(f.name, err);
  const mark = (el: HTMLElement) => {
    if (f.required) el.append(h('span', { class: 'gh-required', 'aria-hidden': 'true' }, '*'));
  };
  if (f.type === 'hidden') {
    const input = h('input', { type: 'hidden', name: f.name, value: f.placeholder ?? '' });
    r.controls.set(f.name, input);
    return input;
  }
  const group = f.type === 'radio' || f.type === 'multiselect';
  const wrap = group ? h('fieldset', { class: 'gh-field', 'aria-describedby': describedBy }) : h('div', { class: 'gh-field' });
  if (group) {
    const legend = h('legend', {}, label);
    mark(legend);
    wrap.append(legend);
    (f.options ?? []).forEach((opt, i) => {
      const oid = `${id}-${i}`;
      const input = h('input', { type: f.type === 'radio' ? 'radio' : 'checkbox', id: oid, name: f.name, value: opt });
      if (i === 0) r.controls.set(f.name, input);
      const l = h('label', { class: 'gh-choice', for: oid });
      l.append(input, document.createTextNode(opt));
      wrap.append(l);
    });
  } else if (f.type === 'checkbox') {
    const input = h('input', { type: 'checkbox', id, name: f.name, value: 'true', 'aria-describedby': describedBy });
    if (f.required) input.setAttribute('aria-required', 'true');
    r.controls.set(f.name, input);
    const l = h('label', { class: 'gh-choice', for: id });
    l.append(input, document.createTextNode(label));
    mark(l);
    wrap.append(l);
  } else {
    const l = h('label', { for: id }, label);
    mark(l);
    let control: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;
    if (f.type === 'textarea') {
      control = h('textarea', { id, name: f.name });
    } else if (f.type === 'select') {
      control = h('select', { id, name: f.name });
      control.append(h('option', { value: '' }, f.placeholder ?? 'Choose…'));
      for (const opt of f.options ?? []) control.append(h('option', { value: opt }, opt));
    } else {
      const type = ['email', 'url', 'tel', 'date', 'number', 'file'].includes(f.type) ? f.type : 'text';
      control = h('input', { id, name: f.name, type });
      if (type === 'file') {
        if (f.accept?.length) control.setAttribute('accept', f.accept.join(','));
        if (f.multiple) control.setAttribute('multiple', '');
      }
      if (type === 'number') {
        if (f.min !== undefined) control.setAttribute('min', String(f.min));
        if (f.max !== undefined) control.setAttribute('max', String(f.max));
        control.setAttribute('step', 'any');
      }
      if (type === 'email') control.setAttribute('autocomplete', 'email');
    }
    if (f.placeholder && f.type !== 'select') control.setAttribute('placeholder', f.placeholder);
    if (f.maxLength) control.setAttribute('maxlength', String(f.maxLength));
    if (f.required) control.setAttribute('aria-required', 'true');
    control.setAttribute('aria-describedby', describedBy);
    r.controls.set(f.name, control);
    wrap.append(l, control);
  }
  if (f.helpText) wrap.append(h('p', { class: 'gh-help', id: helpId }, f.helpText));
  wrap.append(err);
  return wrap;
}

function readValues(def: Definition, form: HTMLFormElement): Record<string, Value> {
  const fd = new FormData(form);
  const out: Record<string, Value> = {};
  for (const f of def.fields) {
    if (f.type === 'file') {
      out[f.name] = fd.getAll(f.name).filter((x): x is File => x instanceof File && x.name !== '');
    } else if (f.type === 'multiselect') {
      out[f.name] = fd.getAll(f.name).map(String);
    } else if (f.type === 'checkbox') {
      out[f.name] = fd.get(f.name) !== null;
    } else {
      const v = fd.get(f.name);
      out[f.name] = v === null ? undefined : String(v);
    }
  }
  return out;
}

function captchaToken(form: HTMLFormElement): string {
  const fd = new FormData(form);
  for (const n of CAPTCHA_NAMES) {
    const v = fd.get(n);
    if (typeof v === 'string' && v) return v;
  }
  return '';
}

function showProblems(r: Rendered, problems: Problem[]): void {
  for (const [name, el] of r.errors) {
    el.textContent = '';
    r.controls.get(name)?.removeAttribute('aria-invalid');
  }
  const general: string[] = [];
  for (const p of problems) {
    const el = r.errors.get(p.field);
    if (!el) { general.push(`${p.field} ${p.problem}`); continue; }
    if (!el.textContent) el.textContent = p.problem.charAt(0).toUpperCase() + p.problem.slice(1) + '.';
    r.controls.get(p.field)?.setAttribute('aria-invalid', 'true');
  }
  setStatus(r, general.join('. '), true);
  const first = problems.find((p) => r.controls.has(p.field));
  if (first) (r.controls.get(first.field) as HTMLElement).focus();
}

function setStatus(r: Rendered, text: string, error: boolean): void {
  r.status.textContent = text;
  r.status.className = error && text ? 'gh-status gh-status-error' : 'gh-status';
}

const MESSAGES: Record<string, string> = {
  CAPTCHA_REQUIRED: 'Please complete the challenge.',
  CAPTCHA_FAILED: 'The challenge was not accepted. Please try again.',
  CAPTCHA_NOT_CONFIGURED: 'This form cannot accept submissions right now.',
  FORM_NOT_FOUND: 'This form does not exist.',
  FORM_PRIVATE: 'This form is private.',
};

type WidgetApi = { render?: (el: HTMLElement, o: { sitekey: string }) => unknown; reset?: () => void };

function captchaApi(provider: string): WidgetApi | undefined {
  const w = window as unknown as Record<string, WidgetApi | undefined>;
  return provider === 'turnstile' ? w.turnstile : provider === 'hcaptcha' ? w.hcaptcha : w.grecaptcha;
}

// Loads the provider's script, which renders every widget element it finds (implicit
// rendering); when the script is already there (a second form), renders this one explicitly.
function loadCaptcha(provider: string, el: HTMLElement, siteKey: string): void {
  const c = CAPTCHA_SCRIPTS[provider];
  if (!c) return;
  const api = captchaApi(provider);
  if (api?.render) {
    try { api.render(el, { sitekey: siteKey }); } catch { /* rendered by the script already */ }
    return;
  }
  if (document.querySelector(`script[src^="${c.src}"]`)) return;
  document.head.append(h('script', { src: c.src, async: '', defer: '' }));
}

function resetCaptcha(provider: string): void {
  try { captchaApi(provider)?.reset?.(); } catch { /* widget not ready */ }
}

function notifyHeight(): void {
  if (window.parent !== window) {
    window.parent.postMessage({ type: 'gatehouse-form:height', height: document.documentElement.scrollHeight }, '*');
  }
}

/** Renders the form into el and wires its submission. Resolves once the form is shown. */
export async function mount(el: HTMLElement, opts: MountOptions): Promise<void> {
  const api = apiBase(opts.api);
  const uid = String(++counter);
  el.setAttribute('data-gatehouse-state', 'loading');
  const gh = client(api, opts.key);
  let def: Definition;
  try {
    def = (await gh.GET('/forms/forms/{slug}', { params: { path: { slug: opts.slug } } })).data;
  } catch (e) {
    const msg =
      e instanceof ApiError
        ? (MESSAGES[e.code ?? ''] ?? envelopeMessage(e) ?? `The form could not be loaded (${e.status}).`)
        : e instanceof Error
          ? e.message
          : String(e);
    el.replaceChildren(h('p', { class: 'gh-status gh-status-error', role: 'alert' }, msg));
    el.setAttribute('data-gatehouse-state', 'error');
    return;
  }
  const form = h('form', { class: 'gh-form', novalidate: '', 'aria-labelledby': `gh-${uid}-title` });
  const r: Rendered = {
    form,
    errors: new Map(),
    controls: new Map(),
    status: h('p', { class: 'gh-status', role: 'status', 'aria-live': 'polite' }),
    submit: h('button', { type: 'submit', class: 'gh-submit' }, String(def.settings?.submitLabel ?? 'Send')),
  };
  form.append(h('h2', { id: `gh-${uid}-title` }, def.title || def.slug));
  for (const f of def.fields) form.append(renderField(f, uid, r));
  const provider = def.captcha?.provider ?? '';
  let pendingCaptcha: (() => void) | undefined;
  if (def.captcha && CAPTCHA_SCRIPTS[provider] && def.captcha.siteKey) {
    const widget = h('div', { class: `gh-captcha ${CAPTCHA_SCRIPTS[provider]!.cls}`, 'data-sitekey': def.captcha.siteKey });
    form.append(widget);
    pendingCaptcha = () => loadCaptcha(provider, widget, def.captcha!.siteKey!);
  }
  form.append(r.submit, r.status);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    void submit(def, r, gh, opts, provider, el);
  });
  el.replaceChildren(form);
  pendingCaptcha?.();
  el.setAttribute('data-gatehouse-state', 'ready');
  notifyHeight();
}

async function submit(def: Definition, r: Rendered, gh: GatehouseClient, opts: MountOptions, provider: string, el: HTMLElement): Promise<void> {
  const values = readValues(def, r.form);
  const problems = validate(def.fields, values);
  if (problems.length > 0) {
    showProblems(r, problems);
    notifyHeight();
    return;
  }
  showProblems(r, []);
  const token = captchaToken(r.form);
  if (def.captcha && !token) {
    setStatus(r, MESSAGES.CAPTCHA_REQUIRED!, true);
    return;
  }
  const hasFiles = def.fields.some((f) => f.type === 'file' && (values[f.name] as File[]).length > 0);
  // multipart (FormData, which openapi-fetch sends as is) when files are attached, else JSON.
  let body: FormData | { data: Record<string, unknown>; 'captcha-response'?: string };
  if (hasFiles) {
    const fd = new FormData();
    for (const f of def.fields) {
      const v = values[f.name];
      if (v === undefined || v === '') continue;
      if (Array.isArray(v)) for (const x of v) fd.append(f.name, x);
      else fd.append(f.name, typeof v === 'boolean' ? String(v) : v);
    }
    if (token) fd.append('captcha-response', token);
    body = fd;
  } else {
    const data: Record<string, unknown> = {};
    for (const f of def.fields) {
      const v = values[f.name];
      if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0 && f.type !== 'multiselect')) continue;
      data[f.name] = f.type === 'number' ? Number(v) : v;
    }
    body = token ? { data, 'captcha-response': token } : { data };
  }
  r.submit.disabled = true;
  setStatus(r, 'Sending…', false);
  el.setAttribute('data-gatehouse-state', 'submitting');
  try {
    const { data: out } = await gh.POST('/forms/forms/{slug}/submit', {
      params: { path: { slug: opts.slug } },
      // The document lists JSON, urlencoded and multipart bodies; FormData is the multipart one.
      body: body as { data: Record<string, unknown> },
    });
    const redirect = def.settings?.redirectUrl;
    if (typeof redirect === 'string' && /^https?:\/\//.test(redirect)) {
      (window.top ?? window).location.href = redirect;
      return;
    }
    const msg = typeof def.settings?.successMessage === 'string' ? def.settings.successMessage : 'Thanks! Your submission was received.';
    const ok = h('div', { class: 'gh-success', role: 'status', 'aria-live': 'polite', tabindex: '-1' }, msg);
    ok.dataset.submissionId = out.id ?? '';
    r.form.replaceChildren(ok);
    ok.focus();
    el.setAttribute('data-gatehouse-state', 'success');
  } catch (e) {
    el.setAttribute('data-gatehouse-state', 'error');
    if (!(e instanceof ApiError)) {
      setStatus(r, 'The network failed. Please try again.', true);
    } else if (e.code === 'VALIDATION_FAILED' && e.details.length > 0) {
      showProblems(r, e.details as Problem[]);
    } else if (e.status === 429) {
      const after = e.response.headers.get('Retry-After');
      setStatus(r, `Too many submissions. Please try again${after ? ` in ${after} s` : ' shortly'}.`, true);
    } else if (e.status === 413) {
      setStatus(r, 'The submission is too large.', true);
    } else {
      setStatus(r, MESSAGES[e.code ?? ''] ?? envelopeMessage(e) ?? `The submission failed (${e.status}).`, true);
    }
    if (e instanceof ApiError && e.code?.startsWith('CAPTCHA')) resetCaptcha(provider);
  } finally {
    r.submit.disabled = false;
    notifyHeight();
  }
}

/** Mounts every [data-gatehouse-form] element of root not mounted yet. */
export function scan(root: ParentNode = document): void {
  root.querySelectorAll<HTMLElement>('[data-gatehouse-form]').forEach((el) => {
    if (el.hasAttribute('data-gatehouse-state')) return;
    const slug = el.dataset.gatehouseForm ?? '';
    const key = el.dataset.key ?? '';
    if (!slug || !key) {
      el.replaceChildren(h('p', { role: 'alert' }, 'data-gatehouse-form and data-key are required.'));
      return;
    }
    void mount(el, { slug, key, api: el.dataset.api });
  });
}

window.GatehouseForms = { mount, validate, scan };
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => scan());
else scan();
