// A ref picker (branches and tags in a list, any commit id or ref expression typed in), shared by the pages
// that show a ref: objects, changes, commits and compare.
import { useEffect, useRef, useState } from 'preact/hooks'
import { html } from '../ui.js'

export function RefSelector({ ctx, value, onChange, label = 'Ref', id }) {
  const listId = `refs-${id || label.replace(/\W/g, '')}`
  // A draft of its own, so what is being typed survives the page re-rendering around it.
  const [draft, setDraft] = useState(value)
  // Follows the value when it changes (another ref chosen elsewhere), but not on mount: effects run after the
  // first paint, and a reset then would wipe what was typed in between.
  const shown = useRef(value)
  useEffect(() => { if (shown.current !== value) { shown.current = value; setDraft(value) } }, [value])
  // Reads the input itself, not the draft: an Enter right after typing can come before the draft's re-render.
  const commit = (e) => { const v = e.target.value.trim(); if (v && v !== value) onChange(v) }
  return html`<label class="ref-selector"><span>${label}</span>
    <input list=${listId} value=${draft} aria-label=${label} placeholder="branch, tag, commit or expression (main~1)"
      onInput=${(e) => setDraft(e.target.value)} onChange=${commit} onKeyDown=${(e) => e.key === 'Enter' && commit(e)} />
    <datalist id=${listId}>
      ${ctx.branches.map((b) => html`<option value=${b.id}>branch</option>`)}
      ${ctx.tags.map((t) => html`<option value=${t.id}>tag</option>`)}
    </datalist></label>`
}
