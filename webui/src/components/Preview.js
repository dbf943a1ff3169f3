// Previews: text, Markdown (rendered from a tree, never as HTML), JSON, CSV/TSV as a table, images, and
// Parquet (schema and the first rows, read with range requests). Each reads the object's bytes with fetch()
// and renders elements from them: the UI never navigates to an object's URL, so no object is ever a page.
import { useEffect, useMemo, useState } from 'preact/hooks'
import { previewKind, extension } from '../lib/paths.js'
import { parseCsv } from '../lib/csv.js'
import { rangeFile, cellText } from '../lib/rangefile.js'
import { bytes } from '../lib/format.js'
import { errorFrom, objectUrl } from '../api.js'
import { html, ErrorBox, useLoad } from '../ui.js'

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

// The mdast tree as elements: text is always a text node, links go where linkTarget allows, images are links
// (nothing is loaded from a document's URLs), raw HTML shows as the text it is.
function md(node, env) {
  const kids = (e = env) => (node.children || []).map((c) => md(c, e))
  switch (node.type) {
    case 'root': return kids()
    case 'text': return node.value
    case 'paragraph': return env.tight ? kids() : html`<p>${kids()}</p>`
    case 'heading': { const H = `h${Math.min(6, node.depth + 2)}`; return html`<${H}>${kids()}</${H}>` }
    case 'thematicBreak': return html`<hr />`
    case 'blockquote': return html`<blockquote>${kids({ ...env, tight: false })}</blockquote>`
    case 'list': {
      const items = kids({ ...env, tight: !node.spread })
      return node.ordered ? html`<ol start=${node.start ?? undefined}>${items}</ol>` : html`<ul>${items}</ul>`
    }
    case 'listItem': return html`<li class=${node.checked == null ? undefined : 'task'}>${node.checked != null &&
      html`<input type="checkbox" disabled checked=${node.checked} aria-label=${node.checked ? 'done' : 'not done'} /> `}${kids({ ...env, tight: env.tight && !node.spread })}</li>`
    case 'code': return html`<pre class="md-code"><code class=${node.lang ? `lang-${node.lang}` : undefined}>${node.value}</code></pre>`
    case 'inlineCode': return html`<code>${node.value}</code>`
    case 'emphasis': return html`<em>${kids()}</em>`
    case 'strong': return html`<strong>${kids()}</strong>`
    case 'delete': return html`<del>${kids()}</del>`
    case 'break': return html`<br />`
    case 'html': return node.value
    case 'table': return html`<div class="scroll"><table class="table">
      <thead>${md(node.children[0], { ...env, align: node.align, head: true })}</thead>
      <tbody>${node.children.slice(1).map((row) => md(row, { ...env, align: node.align, head: false }))}</tbody></table></div>`
    case 'tableRow': return html`<tr>${node.children.map((cell, i) => env.head
      ? html`<th align=${env.align[i] || undefined}>${md(cell, env)}</th>`
      : html`<td align=${env.align[i] || undefined}>${md(cell, env)}</td>`)}</tr>`
    case 'tableCell': return kids()
    case 'link': return linked(node.url, kids(), env)
    case 'linkReference': return linked(env.defs[node.identifier], kids(), env)
    case 'image': return linked(node.url, `[image: ${node.alt || node.url}]`, env)
    case 'imageReference': return linked(env.defs[node.identifier], `[image: ${node.alt || node.label}]`, env)
    case 'footnoteReference': return html`<sup>[${node.label}]</sup>`
    case 'footnoteDefinition': return html`<div class="footnote"><sup>[${node.label}]</sup> ${kids({ ...env, tight: true })}</div>`
    case 'definition': return null
    default: return node.children ? kids() : (node.value ?? null)
  }
}

function linked(url, children, env) {
  const target = env.lib.linkTarget(url, env.doc, env.origin)
  if (!target) return children
  if (target.external) return html`<a href=${target.href} rel="noreferrer noopener" target="_blank">${children}</a>`
  return html`<a href=${target.href}>${children}</a>`
}

// doc: {repo, ref, path} of the document, so that its relative links open the objects they name in the UI.
// The parser loads with the first Markdown preview (as hyparquet does with the first Parquet one), not with
// the UI.
function Markdown({ text, doc }) {
  const lib = useLoad(() => import('../lib/markdown.js'), [])
  const tree = useMemo(() => lib.data && lib.data.parseMarkdown(text), [lib.data, text])
  if (lib.error) return html`<${ErrorBox} error=${lib.error} />`
  if (!tree) return html`<p class="loading">Reading…</p>`
  return md(tree, { lib: lib.data, defs: lib.data.definitions(tree), doc, origin: location.origin, tight: false })
}

function TextPreview({ href, size, kind, doc }) {
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
  if (kind === 'markdown') return html`<div class="markdown">${note}<${Markdown} text=${text} doc=${doc} /></div>`
  if (kind === 'json' && !truncated) {
    try { return html`<pre class="code">${JSON.stringify(JSON.parse(text), null, 2)}</pre>` } catch { /* show as text */ }
  }
  return html`<div>${note}<pre class="code">${text}</pre></div>`
}

// Raster types an <img> may show from a blob: URL. The blob's type is chosen here, never taken from the
// response: a blob: URL opened in a tab is a document of the UI's own origin, so it must never be HTML or SVG.
const RASTER = { png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' }

// An SVG is shown from a data: URL instead: as an <img> it runs nothing, and opened in a tab it is a document
// of an opaque origin (Chromium does not even navigate to one), never of the UI's.
function svgDataUrl(blob) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader()
    reader.onload = () => resolve(reader.result)
    reader.onerror = () => reject(reader.error)
    reader.readAsDataURL(new Blob([blob], { type: 'image/svg+xml' }))
  })
}

function ImagePreview({ href, path, contentType }) {
  const [src, setSrc] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    let url = null
    fetch(href, { credentials: 'same-origin' }).then(async (r) => {
      if (!r.ok) throw await errorFrom(r)
      const data = await r.blob()
      const ext = extension(path)
      if (ext === 'svg' || (!RASTER[ext] && (contentType || '').toLowerCase().startsWith('image/svg'))) {
        setSrc(await svgDataUrl(data))
        return
      }
      url = URL.createObjectURL(new Blob([data], { type: RASTER[ext] || 'application/octet-stream' }))
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
    return { schema, rows, total: Number(metadata.num_rows), fetched: file.fetched, transferred: file.transferred, requests: file.requests }
  }, [href])
  if (read.error) return html`<${ErrorBox} error=${{ message: `Cannot read this Parquet file: ${read.error.message}` }} />`
  if (!read.data) return html`<p class="loading">Reading Parquet footer…</p>`
  const { schema, rows, total, fetched, transferred, requests } = read.data
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
    <p class="muted small parquet-bytes">Read ${bytes(fetched)} of ${bytes(size)} in ${requests} range request${requests === 1 ? '' : 's'}${transferred > fetched ? ` (${bytes(transferred)} transferred: some bytes were read twice)` : ''}.</p>
  </div>`
}

// A folder's README.md, rendered under its listing as lakeFS's UI does.
export function FolderReadme({ ctx, path, size }) {
  const href = objectUrl(ctx.repo, ctx.ref, path)
  return html`<section class="folder-readme preview" aria-label="README">
    <h3>${path.split('/').pop()}</h3>
    <${TextPreview} href=${href} size=${size} kind="markdown" doc=${{ repo: ctx.repo, ref: ctx.ref, path }} />
  </section>`
}

export function Preview({ ctx, path, stat }) {
  const kind = previewKind(path, stat.content_type)
  const href = objectUrl(ctx.repo, ctx.ref, path)
  let body
  if (!kind) body = html`<p class="muted">No preview for this type (${stat.content_type}). Download it instead.</p>`
  else if (kind === 'parquet') body = html`<${ParquetPreview} href=${href} size=${stat.size_bytes} />`
  else if (kind === 'image') body = html`<${ImagePreview} href=${href} path=${path} contentType=${stat.content_type} />`
  else body = html`<${TextPreview} href=${href} size=${stat.size_bytes} kind=${kind} doc=${{ repo: ctx.repo, ref: ctx.ref, path }} />`
  return html`<section class="preview" aria-label="Preview"><h3>Preview</h3>${body}</section>`
}
