// A diff as a table (change, path, size), shared by a commit's page and compare & merge.
import { bytes } from '../lib/format.js'
import { html, DiffType } from '../ui.js'

// Lists one page of diff results; the caller pages.
export function DiffTable({ results }) {
  if (results.length === 0) return html`<p class="empty">No differences.</p>`
  return html`<table class="table"><thead><tr><th>Change</th><th>Path</th><th class="num">Size</th></tr></thead><tbody>
    ${results.map((d) => html`<tr><td><${DiffType} type=${d.type} /></td><td class="mono">${d.path}</td><td class="num">${d.size_bytes !== undefined ? bytes(d.size_bytes) : ''}</td></tr>`)}
  </tbody></table>`
}
