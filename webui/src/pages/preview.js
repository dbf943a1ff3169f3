// Previews: text, Markdown (rendered from a tree, never as HTML, tables included), JSON, CSV/TSV as a table, images, and
// Parquet (schema and the first rows, read with range requests).
import { useEffect, useState } from 'preact/hooks'
import { previewKind } from '../lib/paths.js'
import { parseCsv } from '../lib/csv.js'
import { parseMarkdown } from '../lib/markdown.js'
import { rangeFile, cellText } from '../lib/rangefile.js'
import { bytes } from '../lib/format.js'
import { errorFrom } from '../api.js'
import { html, ErrorBox, useLoad } from '../ui.js'
import { objectUrl } from './objects.js'

const TEXT_LIMIT = 256 * 1024
const ROWS = 50

async function readHead(href, size) {
  const headers = size > TEXT_LIMIT ? { Range: `bytes=0-${TEXT_LIMIT - 1}` } : {}
  const response = await fetch(href, { headers, credentials: 'same-origin' })
  if (!response.ok) throw await errorFrom(response)
  return { text: await response.text(), truncated: size > TEXT_LIMIT }
}

function Table({ header, rows }) {
  return html`<div class="scroll"><table class="table data"><thead><tr>${header.map((c) => html`<th>${c}</th>`)}</tr></thead>
    <tbody>${rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody></table></div>`
}

function Inline({ nodes }) {
  return nodes.map((n) => {
    if (n.type === 'text') return n.text
    if (n.type === 'code') return html`<code>${n.text}</code>`
    if (n.type === 'strong') return html`<strong><${Inline} nodes=${n.children} /></strong>`
    if (n.type === 'em') return html`<em><${Inline} nodes=${n.children} /></em>`
    return html`<a href=${n.href} rel="noreferrer noopener" target="_blank"><${Inline} nodes=${n.children} /></a>`
  })
}

export function Markdown({ blocks }) {
  return blocks.map((b) => {
    if (b.type === 'heading') { const H = `h${Math.min(6, b.level + 2)}`; return html`<${H}><${Inline} nodes=${b.children} /></${H}>` }
    if (b.type === 'code') return html`<pre><code>${b.text}</code></pre>`
    if (b.type === 'rule') return html`<hr />`
    if (b.type === 'table') {
      const style = (k) => b.align[k] ? `text-align: ${b.align[k]}` : undefined
      return html`<div class="scroll"><table class="table"><thead><tr>${b.header.map((c, k) => html`<th style=${style(k)}><${Inline} nodes=${c} /></th>`)}</tr></thead>
        <tbody>${b.rows.map((r) => html`<tr>${r.map((c, k) => html`<td style=${style(k)}><${Inline} nodes=${c} /></td>`)}</tr>`)}</tbody></table></div>`
    }
    if (b.type === 'quote') return html`<blockquote><${Markdown} blocks=${b.children} /></blockquote>`
    if (b.type === 'list') {
      const items = b.items.map((it) => html`<li><${Inline} nodes=${it} /></li>`)
      return b.ordered ? html`<ol>${items}</ol>` : html`<ul>${items}</ul>`
    }
    return html`<p><${Inline} nodes=${b.children} /></p>`
  })
}

function TextPreview({ href, size, kind }) {
  const read = useLoad(() => readHead(href, size), [href])
  if (read.error) return html`<${ErrorBox} error=${read.error} />`
  if (!read.data) return html`<p class="loading">Reading…</p>`
  const { text, truncated } = read.data
  const note = truncated && html`<p class="muted small">Showing the first ${bytes(TEXT_LIMIT)} of ${bytes(size)}.</p>`
  if (kind === 'csv' || kind === 'tsv') {
    const rows = parseCsv(text, { delimiter: kind === 'tsv' ? '\t' : ',', maxRows: ROWS + 1, truncated })
    if (rows.length === 0) return html`<p class="empty">Empty file.</p>`
    return html`<div>${note}<${Table} header=${rows[0]} rows=${rows.slice(1)} /><p class="muted small">${rows.length - 1} rows shown.</p></div>`
  }
  if (kind === 'markdown') return html`<div class="markdown">${note}<${Markdown} blocks=${parseMarkdown(text)} /></div>`
  if (kind === 'json' && !truncated) {
    try { return html`<pre class="code">${JSON.stringify(JSON.parse(text), null, 2)}</pre>` } catch { /* show as text */ }
  }
  return html`<div>${note}<pre class="code">${text}</pre></div>`
}

function ImagePreview({ href, path }) {
  const [src, setSrc] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    let url = null
    fetch(href, { credentials: 'same-origin' }).then(async (r) => {
      if (!r.ok) throw await errorFrom(r)
      url = URL.createObjectURL(await r.blob())
      setSrc(url)
    }).catch(setError)
    return () => url && URL.revokeObjectURL(url)
  }, [href])
  if (error) return html`<${ErrorBox} error=${error} />`
  return src ? html`<img class="preview-image" src=${src} alt=${`Preview of ${path}`} />` : html`<p class="loading">Loading image…</p>`
}

function ParquetPreview({ href, size }) {
  const read = useLoad(async () => {
    const { parquetMetadataAsync, parquetSchema, parquetReadObjects } = await import('hyparquet')
    const file = rangeFile(href, size)
    // A small first read of the tail: hyparquet asks for more only when the footer is bigger.
    const metadata = await parquetMetadataAsync(file, { initialFetchSize: 64 * 1024 })
    const schema = parquetSchema(metadata)
    const rows = await parquetReadObjects({ file, metadata, rowStart: 0, rowEnd: ROWS })
    return { schema, rows, total: Number(metadata.num_rows), fetched: file.fetched }
  }, [href])
  if (read.error) return html`<${ErrorBox} error=${{ message: `Cannot read this Parquet file: ${read.error.message}` }} />`
  if (!read.data) return html`<p class="loading">Reading Parquet footer…</p>`
  const { schema, rows, total, fetched } = read.data
  const columns = schema.children.map((c) => c.element.name)
  return html`<div>
    <h3>Schema</h3>
    <table class="table schema"><thead><tr><th>Column</th><th>Type</th><th>Repetition</th></tr></thead><tbody>
      ${schema.children.map((c) => html`<tr><td class="mono">${c.element.name}</td>
        <td>${c.element.logical_type ? c.element.logical_type.type : c.element.converted_type || c.element.type || 'group'}</td>
        <td>${c.element.repetition_type || ''}</td></tr>`)}
    </tbody></table>
    <h3>First ${rows.length} of ${total} rows</h3>
    <${Table} header=${columns} rows=${rows.map((r) => columns.map((c) => cellText(r[c])))} />
    <p class="muted small parquet-bytes">Read ${bytes(fetched)} of ${bytes(size)} with range requests.</p>
  </div>`
}

export function Preview({ ctx, path, stat }) {
  const kind = previewKind(path, stat.content_type)
  const href = objectUrl(ctx.repo, ctx.ref, path)
  let body
  if (!kind) body = html`<p class="muted">No preview for this type (${stat.content_type}). Download it instead.</p>`
  else if (kind === 'parquet') body = html`<${ParquetPreview} href=${href} size=${stat.size_bytes} />`
  else if (kind === 'image') body = html`<${ImagePreview} href=${href} path=${path} />`
  else body = html`<${TextPreview} href=${href} size=${stat.size_bytes} kind=${kind} />`
  return html`<section class="preview" aria-label="Preview"><h3>Preview</h3>${body}</section>`
}
