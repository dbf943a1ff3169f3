// Repositories: list with search (by prefix) and pages, create (namespace prefilled), delete with confirmation.
import { useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { date } from '../lib/format.js'
import { html, Link, ErrorBox, Modal, Confirm, Pager, usePages, useLoad, useAction, Field, Icon, go } from '../ui.js'

const PAGE = 50

function CreateRepository({ onClose }) {
  const storage = useLoad(() => api.get('/config/storage'), [])
  const [name, setName] = useState('')
  const [namespace, setNamespace] = useState(null)
  const [branch, setBranch] = useState('main')
  const [samples, setSamples] = useState(false)
  const action = useAction()
  const prefix = storage.data ? storage.data.default_namespace_prefix || '' : ''
  // The prefix comes without a trailing '/', as lakeFS reports it; one that has it must not give '//'.
  const ns = namespace === null ? (prefix ? `${prefix.replace(/\/+$/, '')}/${name}` : name) : namespace
  const submit = (e) => {
    e.preventDefault()
    action.run(async () => {
      await api.post('/repositories', { name, storage_namespace: ns, default_branch: branch, sample_data: samples })
      onClose()
      go(['repositories', name, 'objects'])
    })
  }
  return html`<${Modal} title="Create repository" onClose=${onClose}>
    <form onSubmit=${submit}>
      <${Field} label="Repository ID" hint="Lower-case letters, digits and dashes, 3 to 63 characters">
        <input name="name" required pattern="[a-z0-9][a-z0-9-]{2,62}" value=${name} onInput=${(e) => setName(e.target.value)} /></${Field}>
      <${Field} label="Storage namespace" hint=${prefix ? `Prefilled from the server's default prefix ${prefix}` : ''}>
        <input name="storage_namespace" required value=${ns} onInput=${(e) => setNamespace(e.target.value)} /></${Field}>
      <${Field} label="Default branch"><input name="default_branch" required value=${branch} onInput=${(e) => setBranch(e.target.value)} /></${Field}>
      <label class="check"><input type="checkbox" checked=${samples} onChange=${(e) => setSamples(e.target.checked)} /> Add sample data</label>
      <${ErrorBox} error=${action.error || storage.error} />
      <div class="actions"><button type="button" onClick=${onClose}>Cancel</button>
        <button class="primary" type="submit" disabled=${action.busy}>Create repository</button></div>
    </form>
  </${Modal}>`
}

export function Repositories({ session }) {
  const [search, setSearch] = useState('')
  const pages = usePages(search)
  const [creating, setCreating] = useState(false)
  const [deleting, setDeleting] = useState(null)
  const list = useLoad(() => api.get('/repositories', { prefix: search, after: pages.after, amount: PAGE }), [search, pages.after])
  const canCreate = session.allowed['fs:CreateRepository']
  return html`<main class="page">
    <div class="title-row"><h1>Repositories</h1>
      ${canCreate && html`<button class="primary" onClick=${() => setCreating(true)}>Create repository</button>`}</div>
    <input class="search" type="search" placeholder="Find a repository by its name's start" aria-label="Search repositories"
      value=${search} onInput=${(e) => setSearch(e.target.value)} />
    <${ErrorBox} error=${list.error} />
    ${list.data && (list.data.results.length === 0
      ? html`<p class="empty">${search ? 'No repository matches.' : 'No repositories yet.'}</p>`
      : html`<ul class="cards">${list.data.results.map((r) => html`<li class="card">
          <div><${Link} to=${['repositories', r.id, 'objects']} class="card-title"><${Icon} name="repo" /> ${r.id}</${Link}>
          <div class="muted small">${r.storage_namespace} · default branch <b>${r.default_branch}</b> · created ${date(r.creation_date)}</div></div>
          ${session.allowed['fs:DeleteRepository'] && html`<button class="danger small" aria-label=${`Delete repository ${r.id}`} onClick=${() => setDeleting(r.id)}>Delete</button>`}
        </li>`)}</ul>`)}
    ${list.data && html`<${Pager} hasPrev=${pages.hasPrev} hasMore=${list.data.pagination.has_more}
      onPrev=${pages.prev} onNext=${() => pages.next(list.data.pagination.next_offset)} />`}
    ${creating && html`<${CreateRepository} onClose=${() => { setCreating(false); list.reload() }} />`}
    ${deleting && html`<${Confirm} title="Delete repository"
      message=${`Delete repository ${deleting}? Its branches, tags and commits go; objects in the storage namespace stay.`}
      onConfirm=${() => api.del(`/repositories/${enc(deleting)}`)} onClose=${() => { setDeleting(null); list.reload() }} />`}
  </main>`
}
