// Objects: the ref selector, a prefix browser with breadcrumbs and pages of 100, uploads of files and folders,
// an Import dialog (zero-copy import from S3), and per object download, copy, delete and a stat panel with its
// preview.
import { useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc, breadcrumbs, baseName, uploadPath, parentPrefix } from '../lib/paths.js'
import { bytes, date, percent } from '../lib/format.js'
import { html, ErrorBox, Modal, Confirm, Pager, usePages, useLoad, useAction, Field, Icon, Progress, go } from '../ui.js'
import { RefSelector } from '../components/RefSelector.js'
import { FolderReadme, Preview } from '../components/Preview.js'
import { ImportDialog } from '../components/ImportDialog.js'
import { uploadFile, presignSupported } from '../uploads.js'

const PAGE = 100

// Downloads go straight to the store (a 302 to a presigned GET) when it allows it, never through the API's
// response size limit; previews read through the API with ranges.
function useDirectDownloads() {
  const direct = useLoad(presignSupported, [])
  return !!direct.data
}

function Uploads({ ctx, prefix, onDone }) {
  const [jobs, setJobs] = useState([])
  const start = async (files) => {
    const list = Array.from(files).map((f) => ({ file: f, path: uploadPath(prefix, f), loaded: 0, state: 'waiting', error: null }))
    setJobs(list)
    const update = (i, patch) => { Object.assign(list[i], patch); setJobs([...list]) }
    // Three at a time: enough to fill the pipe, few enough to keep the browser responsive.
    let next = 0
    const worker = async () => {
      while (next < list.length) {
        const i = next++
        update(i, { state: 'uploading' })
        try {
          const how = await uploadFile(ctx.repo, ctx.ref, list[i].path, list[i].file, (loaded) => update(i, { loaded }))
          update(i, { state: how === 'presigned' ? 'done (direct to S3)' : 'done', loaded: list[i].file.size })
        } catch (e) { update(i, { state: 'failed', error: e }) }
      }
    }
    await Promise.all([worker(), worker(), worker()])
    onDone()
  }
  const total = jobs.reduce((s, j) => s + j.file.size, 0)
  const loaded = jobs.reduce((s, j) => s + j.loaded, 0)
  return html`<div class="uploads">
    <label class="button">Upload files<input type="file" multiple class="visually-hidden" aria-label="Upload files"
      onChange=${(e) => start(e.target.files)} /></label>
    <label class="button">Upload folder<input type="file" webkitdirectory multiple class="visually-hidden" aria-label="Upload folder"
      onChange=${(e) => start(e.target.files)} /></label>
    ${jobs.length > 0 && html`<div class="upload-panel" aria-live="polite">
      <div class="upload-row"><b>All files</b> <${Progress} value=${percent(loaded, total)} label="Overall upload progress" /> <span>${bytes(loaded)} / ${bytes(total)}</span></div>
      ${jobs.map((j) => html`<div class="upload-row"><span class="mono ellipsis">${j.path}</span>
        <${Progress} value=${percent(j.loaded, j.file.size)} label=${`Upload progress of ${j.path}`} />
        <span class=${j.state === 'failed' ? 'bad' : ''}>${j.state}${j.error ? `: ${j.error.message}` : ''}</span></div>`)}
    </div>`}
  </div>`
}

function CopyDialog({ ctx, path, onClose }) {
  const [dest, setDest] = useState(path)
  const action = useAction()
  const submit = (e) => {
    e.preventDefault()
    action.run(async () => {
      await api.post(`/repositories/${enc(ctx.repo)}/branches/${enc(ctx.ref)}/objects/copy`, { src_path: path, src_ref: ctx.ref }, { dest_path: dest })
      onClose(true)
    })
  }
  return html`<${Modal} title=${`Copy ${path}`} onClose=${() => onClose(false)}><form onSubmit=${submit}>
    <${Field} label="Destination path"><input required value=${dest} onInput=${(e) => setDest(e.target.value)} /></${Field}>
    <${ErrorBox} error=${action.error} />
    <div class="actions"><button type="button" onClick=${() => onClose(false)}>Cancel</button><button class="primary" disabled=${action.busy}>Copy</button></div>
  </form></${Modal}>`
}

export function StatPanel({ ctx, path, onClose }) {
  const direct = useDirectDownloads()
  // Twice: lakeFS puts the presigned URL in physical_address when asked for one, and both are worth showing.
  const stat = useLoad(async () => {
    const at = `/repositories/${enc(ctx.repo)}/refs/${enc(ctx.ref)}/objects/stat`
    const [plain, signed] = await Promise.all([api.get(at, { path }), api.get(at, { path, presign: 'true' }).catch(() => null)])
    return { ...plain, presigned: signed && signed.physical_address_expiry ? signed : null }
  }, [ctx.repo, ctx.ref, path])
  const s = stat.data
  return html`<section class="stat" aria-label=${`Object ${path}`}>
    <header><h2 class="mono">${baseName(path)}</h2><button class="link" onClick=${onClose} aria-label="Close object panel"><${Icon} name="x" /></button></header>
    <${ErrorBox} error=${stat.error} />
    ${s && html`<dl class="props">
      <dt>Path</dt><dd class="mono">${s.path}</dd>
      <dt>Size</dt><dd>${bytes(s.size_bytes)} (${s.size_bytes} bytes)</dd>
      <dt>Modified</dt><dd>${date(s.mtime)}</dd>
      <dt>Checksum</dt><dd class="mono">${s.checksum}</dd>
      <dt>Content type</dt><dd>${s.content_type}</dd>
      <dt>Physical address</dt><dd class="mono small">${s.physical_address}</dd>
      ${Object.entries(s.metadata || {}).map(([k, v]) => html`<dt>meta: ${k}</dt><dd>${v}</dd>`)}
      ${s.presigned && html`<dt>Presigned link</dt><dd><a href=${s.presigned.physical_address} rel="noreferrer" target="_blank">Open (expires ${date(s.presigned.physical_address_expiry)})</a></dd>`}
    </dl>
    <div class="actions left"><a class="button" href=${api.objectUrl(ctx.repo, ctx.ref, path, direct)} download=${baseName(path)}>Download</a></div>
    <${Preview} ctx=${ctx} path=${path} stat=${s} />`}
  </section>`
}

export function Objects({ ctx, route }) {
  const direct = useDirectDownloads()
  const prefix = route.query.prefix || ''
  const selected = route.query.path || ''
  const pages = usePages(`${ctx.ref}|${prefix}`)
  const [copying, setCopying] = useState(null)
  const [deleting, setDeleting] = useState(null)
  const [importing, setImporting] = useState(false)
  // The Import button only where the server serves imports (GET /config's import_support).
  const config = useLoad(() => api.get('/config/storage'), [])
  const list = useLoad(() => api.get(`/repositories/${enc(ctx.repo)}/refs/${enc(ctx.ref)}/objects/ls`,
    { prefix, delimiter: '/', after: pages.after, amount: PAGE }), [ctx.repo, ctx.ref, prefix, pages.after])
  const nav = (q) => go(['repositories', ctx.repo, 'objects'], { ref: ctx.ref, ...q })
  // The folder's README.md on every page of its listing (not only the page that lists it), as lakeFS shows it;
  // not while it is the selected object, whose panel already renders it.
  const readmeStat = useLoad(() => api.get(`/repositories/${enc(ctx.repo)}/refs/${enc(ctx.ref)}/objects/stat`,
    { path: prefix + 'README.md' }, { allow: [404] }), [ctx.repo, ctx.ref, prefix])
  const readme = readmeStat.data && readmeStat.data._status === 200 ? readmeStat.data : null
  const canWrite = ctx.isBranch && ctx.allowed['fs:WriteObject']
  const canDelete = ctx.isBranch && ctx.allowed['fs:DeleteObject']
  return html`<div class=${'objects' + (selected ? ' with-panel' : '')}>
    <div class="toolbar">
      <${RefSelector} ctx=${ctx} value=${ctx.ref} onChange=${(ref) => go(['repositories', ctx.repo, 'objects'], { ref, prefix })} />
      ${canWrite && html`<${Uploads} ctx=${ctx} prefix=${prefix} onDone=${list.reload} />`}
      ${canWrite && config.data && config.data.import_support && html`<button onClick=${() => setImporting(true)}>Import</button>`}
    </div>
    ${!ctx.isBranch && html`<p class="muted small">Browsing ${ctx.ref} read-only: only branches take changes.</p>`}
    <nav class="crumbs" aria-label="Path">
      <a href="#" onClick=${(e) => { e.preventDefault(); nav({}) }}>${ctx.repo}</a>
      ${breadcrumbs(prefix).map((c) => html` / <a href="#" onClick=${(e) => { e.preventDefault(); nav({ prefix: c.prefix }) }}>${c.name}</a>`)}
    </nav>
    <div class="split">
      <div class="listing">
        <${ErrorBox} error=${list.error} />
        ${list.data && html`<table class="table"><thead><tr><th>Name</th><th class="num">Size</th><th class="hide-narrow">Modified</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
        <tbody>
          ${prefix && html`<tr><td colspan="4"><a href="#" onClick=${(e) => { e.preventDefault(); nav({ prefix: parentPrefix(prefix) }) }}><${Icon} name="up" /> ..</a></td></tr>`}
          ${list.data.results.map((o) => o.path_type === 'common_prefix'
            ? html`<tr><td colspan="4"><a href="#" onClick=${(e) => { e.preventDefault(); nav({ prefix: o.path }) }}><${Icon} name="folder" /> ${baseName(o.path)}/</a></td></tr>`
            : html`<tr class=${o.path === selected ? 'selected' : ''}>
                <td><a href="#" class="name" onClick=${(e) => { e.preventDefault(); nav({ prefix, path: o.path }) }}><${Icon} name="file" /> ${baseName(o.path)}</a></td>
                <td class="num">${bytes(o.size_bytes)}</td><td class="hide-narrow small">${date(o.mtime)}</td>
                <td class="row-actions">
                  <a href=${api.objectUrl(ctx.repo, ctx.ref, o.path, direct)} download=${baseName(o.path)} aria-label=${`Download ${o.path}`}>Download</a>
                  ${canWrite && html`<button class="link" onClick=${() => setCopying(o.path)} aria-label=${`Copy ${o.path}`}>Copy</button>`}
                  ${canDelete && html`<button class="link bad" onClick=${() => setDeleting(o.path)} aria-label=${`Delete ${o.path}`}>Delete</button>`}
                </td></tr>`)}
          ${list.data.results.length === 0 && html`<tr><td colspan="4" class="empty">Nothing here${prefix ? ' under ' + prefix : ''}.</td></tr>`}
        </tbody></table>
        <${Pager} hasPrev=${pages.hasPrev} hasMore=${list.data.pagination.has_more} onPrev=${pages.prev} onNext=${() => pages.next(list.data.pagination.next_offset)} />`}
        ${readme && readme.path !== selected && html`<${FolderReadme} key=${readme.path + readme.checksum} ctx=${ctx} path=${readme.path} size=${readme.size_bytes} />`}
      </div>
      ${selected && html`<${StatPanel} key=${selected} ctx=${ctx} path=${selected} onClose=${() => nav({ prefix })} />`}
    </div>
    ${copying && html`<${CopyDialog} ctx=${ctx} path=${copying} onClose=${(done) => { setCopying(null); done && list.reload() }} />`}
    ${importing && html`<${ImportDialog} ctx=${ctx} prefix=${prefix} onImported=${list.reload}
      onClose=${() => setImporting(false)} />`}
    ${deleting && html`<${Confirm} title="Delete object" message=${`Delete ${deleting} from branch ${ctx.ref}? The change is staged until you commit.`}
      onConfirm=${() => api.del(`/repositories/${enc(ctx.repo)}/branches/${enc(ctx.ref)}/objects`, { path: deleting })}
      onClose=${() => { setDeleting(null); list.reload() }} />`}
  </div>`
}
