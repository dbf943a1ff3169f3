// Shared building blocks: the html tag, icons (drawn here, no icon font), dialogs, errors, pagers, progress.
import { h } from 'preact'
import { useEffect, useRef, useState, useCallback } from 'preact/hooks'
import htm from 'htm'
import { hashFor } from './lib/paths.js'

export const html = htm.bind(h)

const ICONS = {
  folder: 'M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v9a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z',
  file: 'M6 3h8l4 4v14H6zM14 3v4h4',
  repo: 'M5 4h12a2 2 0 0 1 2 2v14H7a2 2 0 0 1-2-2zM5 18a2 2 0 0 1 2-2h12',
  branch: 'M7 4v12M7 16a2 2 0 1 0 0 4 2 2 0 0 0 0-4zM17 8a2 2 0 1 0 0-4 2 2 0 0 0 0 4zM17 8c0 5-10 3-10 8',
  commit: 'M12 9a3 3 0 1 0 0 6 3 3 0 0 0 0-6zM3 12h6M15 12h6',
  up: 'M12 19V5M5 12l7-7 7 7',
  x: 'M6 6l12 12M18 6L6 18',
}

export function Icon({ name, label }) {
  return html`<svg class="icon" viewBox="0 0 24 24" width="16" height="16" aria-hidden=${label ? undefined : 'true'}
    role=${label ? 'img' : undefined} aria-label=${label}><path d=${ICONS[name]} fill="none" stroke="currentColor"
    stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round"/></svg>`
}

export function Link({ to, query, children, ...rest }) {
  return html`<a href=${hashFor(to, query)} ...${rest}>${children}</a>`
}

export function go(parts, query) { location.hash = hashFor(parts, query) }

export function ErrorBox({ error, onClose }) {
  if (!error) return null
  return html`<div class="error" role="alert">
    <strong>${error.status ? `Error ${error.status}` : 'Error'}</strong> <span class="error-message">${error.message}</span>
    ${onClose && html`<button class="link" onClick=${onClose} aria-label="Dismiss error"><${Icon} name="x" /></button>`}
  </div>`
}

export function Notice({ children }) {
  return html`<div class="notice" role="status">${children}</div>`
}

// Runs an async loader, re-running when deps change; returns {data, error, loading, reload}.
export function useLoad(fn, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true })
  const seq = useRef(0)
  const reload = useCallback(() => {
    const mine = ++seq.current
    setState((s) => ({ ...s, loading: true }))
    Promise.resolve().then(fn).then(
      (data) => { if (mine === seq.current) setState({ data, error: null, loading: false }) },
      (error) => { if (mine === seq.current) setState({ data: null, error, loading: false }) },
    )
  }, deps)
  useEffect(reload, deps)
  return { ...state, reload }
}

// Wraps an action: busy flag + error, so every button reports its failure in place.
export function useAction() {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(null)
  const run = async (fn) => {
    setBusy(true); setError(null)
    try { return await fn() } catch (e) { setError(e); return undefined } finally { setBusy(false) }
  }
  return { busy, error, setError, run }
}

export function Modal({ title, onClose, children, wide }) {
  const ref = useRef(null)
  useEffect(() => {
    const previous = document.activeElement
    const first = ref.current && ref.current.querySelector('input, textarea, select, button:not(.close)')
    if (first) first.focus()
    // Escape closes; Tab stays inside the dialog (WAI-ARIA dialog pattern).
    const onKey = (e) => {
      if (e.key === 'Escape') onClose()
      if (e.key !== 'Tab' || !ref.current) return
      const items = ref.current.querySelectorAll('a[href], button:not([disabled]), input, select, textarea')
      if (items.length === 0) return
      const first = items[0]
      const last = items[items.length - 1]
      if (e.shiftKey && document.activeElement === first) { e.preventDefault(); last.focus() }
      else if (!e.shiftKey && document.activeElement === last) { e.preventDefault(); first.focus() }
    }
    document.addEventListener('keydown', onKey)
    return () => { document.removeEventListener('keydown', onKey); previous && previous.focus && previous.focus() }
  }, [])
  return html`<div class="backdrop" onClick=${(e) => e.target === e.currentTarget && onClose()}>
    <div class=${'modal' + (wide ? ' wide' : '')} role="dialog" aria-modal="true" aria-label=${title} ref=${ref}>
      <header><h2>${title}</h2><button class="close link" onClick=${onClose} aria-label="Close"><${Icon} name="x" /></button></header>
      ${children}
    </div>
  </div>`
}

export function Confirm({ title, message, confirmLabel = 'Delete', onConfirm, onClose }) {
  const action = useAction()
  return html`<${Modal} title=${title} onClose=${onClose}>
    <p>${message}</p>
    <${ErrorBox} error=${action.error} />
    <div class="actions">
      <button onClick=${onClose}>Cancel</button>
      <button class="danger" disabled=${action.busy}
        onClick=${() => action.run(async () => { await onConfirm(); onClose() })}>${confirmLabel}</button>
    </div>
  </${Modal}>`
}

export function Pager({ hasPrev, hasMore, onPrev, onNext }) {
  if (!hasPrev && !hasMore) return null
  // A new page starts at its top: the pager sits under the list, so the old scroll position left the reader at
  // the bottom of the next page.
  const turn = (to) => () => { to(); window.scrollTo({ top: 0 }) }
  return html`<nav class="pager" aria-label="Pages">
    <button disabled=${!hasPrev} onClick=${turn(onPrev)}>Previous</button>
    <button disabled=${!hasMore} onClick=${turn(onNext)}>Next</button>
  </nav>`
}

// Cursor pagination as lakeFS lists do it (after = next_offset), with a stack to go back.
export function usePages(resetKey) {
  const [stack, setStack] = useState([''])
  useEffect(() => setStack(['']), [resetKey])
  const after = stack[stack.length - 1]
  return {
    after,
    hasPrev: stack.length > 1,
    next: (offset) => setStack([...stack, offset]),
    prev: () => setStack(stack.slice(0, -1)),
    reset: () => setStack(['']),
  }
}

export function Progress({ value, label }) {
  return html`<div class="progress" role="progressbar" aria-label=${label} aria-valuemin="0" aria-valuemax="100"
    aria-valuenow=${value}><div style=${{ width: value + '%' }}></div></div>`
}

export function Field({ label, children, hint }) {
  return html`<label class="field"><span>${label}</span>${children}${hint && html`<small>${hint}</small>`}</label>`
}

export function KeyValueRows({ rows, setRows, label = 'Metadata' }) {
  const update = (i, k, v) => setRows(rows.map((r, j) => (j === i ? { ...r, [k]: v } : r)))
  return html`<fieldset class="kv"><legend>${label}</legend>
    ${rows.map((r, i) => html`<div class="kv-row">
      <input aria-label=${`${label} key ${i + 1}`} placeholder="key" value=${r.key} onInput=${(e) => update(i, 'key', e.target.value)} />
      <input aria-label=${`${label} value ${i + 1}`} placeholder="value" value=${r.value} onInput=${(e) => update(i, 'value', e.target.value)} />
      <button class="link" aria-label=${`Remove ${label} row ${i + 1}`} onClick=${() => setRows(rows.filter((_, j) => j !== i))}><${Icon} name="x" /></button>
    </div>`)}
    <button type="button" onClick=${() => setRows([...rows, { key: '', value: '' }])}>Add key/value</button>
  </fieldset>`
}

export function DiffType({ type }) {
  return html`<span class=${'badge ' + type}>${type}</span>`
}
