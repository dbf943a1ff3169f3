// Pull requests (lakeFS's pulls API): the list with its status filter, one pull request with its changes, and
// merging or closing it. A pull request is opened from Compare & merge (components/OpenPullRequest.js).
import { useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { html, Link, ErrorBox, Pager, usePages, useLoad, useAction, Field, Modal, Notice } from '../ui.js'
import { DiffTable } from '../components/DiffTable.js'
import { HookRefusal } from '../components/ActionRuns.js'

const FILTERS = [['open', 'Open'], ['closed', 'Closed'], ['all', 'All']]

function when(text) {
  return text ? text.replace('T', ' ').replace(/\.\d+/, '').replace('Z', ' UTC') : ''
}

function Status({ status }) {
  return html`<span class=${'badge pr-' + status}>${status}</span>`
}

export function Pulls({ ctx, route }) {
  if (route.parts[3]) return html`<${PullDetails} ctx=${ctx} id=${route.parts[3]} />`
  const status = route.query.status || 'open'
  const pages = usePages(status)
  const list = useLoad(() => api.get(`/repositories/${enc(ctx.repo)}/pulls`, { status, after: pages.after, amount: 50 }),
    [ctx.repo, status, pages.after])
  return html`<div>
    <div class="toolbar">
      <nav class="filters" aria-label="Status">
        ${FILTERS.map(([id, label]) => html`<${Link} to=${['repositories', ctx.repo, 'pulls']} query=${{ status: id }}
          aria-current=${status === id ? 'page' : undefined}>${label}</${Link}>`)}
      </nav>
      <${Link} class="button" to=${['repositories', ctx.repo, 'compare']}>New pull request</${Link}>
    </div>
    <${ErrorBox} error=${list.error} />
    ${list.data && (list.data.results.length === 0
      ? html`<p class="empty">No ${status === 'all' ? '' : status + ' '}pull requests. Open one from Compare & merge.</p>`
      : html`<table class="table" aria-label="Pull requests"><thead><tr><th>Title</th><th>Status</th><th>Branches</th><th>Author</th><th>Opened</th></tr></thead><tbody>
        ${list.data.results.map((p) => html`<tr>
          <td><${Link} to=${['repositories', ctx.repo, 'pulls', p.id]}>${p.title || '(no title)'}</${Link}></td>
          <td><${Status} status=${p.status} /></td>
          <td class="mono">${p.source_branch} → ${p.destination_branch}</td>
          <td>${p.author}</td><td>${when(p.creation_date)}</td></tr>`)}
      </tbody></table>`)}
    ${list.data && html`<${Pager} hasPrev=${pages.hasPrev} hasMore=${list.data.pagination.has_more} onPrev=${pages.prev} onNext=${() => pages.next(list.data.pagination.next_offset)} />`}
  </div>`
}

function EditPull({ ctx, pr, onClose, onSaved }) {
  const [title, setTitle] = useState(pr.title)
  const [description, setDescription] = useState(pr.description)
  const action = useAction()
  const save = () => action.run(async () => {
    await api.patch(`/repositories/${enc(ctx.repo)}/pulls/${enc(pr.id)}`, { title, description })
    onSaved(); onClose()
  })
  return html`<${Modal} title="Edit pull request" onClose=${onClose}>
    <${Field} label="Title"><input value=${title} onInput=${(e) => setTitle(e.target.value)} /></${Field}>
    <${Field} label="Description"><textarea rows="5" value=${description} onInput=${(e) => setDescription(e.target.value)} /></${Field}>
    <${ErrorBox} error=${action.error} />
    <div class="actions"><button onClick=${onClose}>Cancel</button><button class="primary" disabled=${action.busy} onClick=${save}>Save</button></div>
  </${Modal}>`
}

function PullDetails({ ctx, id }) {
  const path = `/repositories/${enc(ctx.repo)}/pulls/${enc(id)}`
  const pr = useLoad(() => api.get(path), [path])
  const pages = usePages(id)
  const open = pr.data && pr.data.status === 'open'
  const diff = useLoad(() => open
    ? api.get(`/repositories/${enc(ctx.repo)}/refs/${enc(pr.data.destination_branch)}/diff/${enc(pr.data.source_branch)}`, { type: 'three_dot', after: pages.after, amount: 100 })
    : Promise.resolve(null), [open, pr.data && pr.data.source_branch, pages.after])
  const [strategy, setStrategy] = useState('')
  const [editing, setEditing] = useState(false)
  const [conflicts, setConflicts] = useState(null)
  const action = useAction()
  const mayWrite = ctx.allowed['pr:WritePullRequest']
  const merge = () => action.run(async () => {
    const answer = await api.put(`${path}/merge`, strategy ? { strategy } : {}, undefined, { allow: [202, 409] })
    if (answer._status === 409) { setConflicts(answer.conflicts || []); throw new api.ApiError(409, answer.message, answer) }
    setConflicts(null); pr.reload(); ctx.reloadRefs()
  })
  const setStatus = (status) => action.run(async () => { await api.patch(path, { status }); pr.reload() })
  if (pr.error) return html`<${ErrorBox} error=${pr.error} />`
  if (!pr.data) return html`<p class="loading">Loading…</p>`
  const p = pr.data
  return html`<article class="pull" aria-label="Pull request">
    <p><${Link} to=${['repositories', ctx.repo, 'pulls']}>← All pull requests</${Link}></p>
    <h2>${p.title || '(no title)'} <${Status} status=${p.status} /></h2>
    <p class="muted"><b>${p.author}</b> ${p.status === 'open' ? 'wants to merge' : 'asked to merge'} <span class="mono">${p.source_branch}</span> into <span class="mono">${p.destination_branch}</span>
      ${' · '}opened ${when(p.creation_date)}${p.closed_date ? html` · ${p.status} ${when(p.closed_date)}` : ''}</p>
    ${p.description && html`<div class="description">${p.description}</div>`}
    ${p.merged_commit_id && html`<${Notice}>Merged as <${Link} class="mono" to=${['repositories', ctx.repo, 'commits', p.merged_commit_id]}>${p.merged_commit_id.slice(0, 12)}</${Link}>.</${Notice}>`}
    ${mayWrite && html`<div class="actions left">
      <button onClick=${() => setEditing(true)}>Edit</button>
      ${open && ctx.allowed['fs:CreateCommit'] && html`<select aria-label="Strategy" value=${strategy} onChange=${(e) => setStrategy(e.target.value)}>
          <option value="">No strategy (stop on conflicts)</option><option value="source-wins">Source wins</option><option value="dest-wins">Destination wins</option></select>
        <button class="primary" disabled=${action.busy} onClick=${merge}>Merge pull request</button>`}
      ${open && html`<button disabled=${action.busy} onClick=${() => setStatus('closed')}>Close pull request</button>`}
      ${p.status === 'closed' && html`<button disabled=${action.busy} onClick=${() => setStatus('open')}>Reopen</button>`}
    </div>`}
    <${ErrorBox} error=${action.error} />
    <${HookRefusal} repo=${ctx.repo} error=${action.error} />
    ${conflicts && html`<div class="conflicts"><h3>${conflicts.length} conflicting path${conflicts.length === 1 ? '' : 's'}: pick a strategy and merge again</h3>
      <table class="table"><thead><tr><th>Path</th><th>Source</th><th>Destination</th></tr></thead><tbody>
      ${conflicts.map((c) => html`<tr class="conflict-row"><td class="mono">${c.path}</td><td>source ${c.source}</td><td>destination ${c.destination}</td></tr>`)}</tbody></table></div>`}
    ${open && html`<h3>Changes</h3><${ErrorBox} error=${diff.error} />
      ${diff.data && html`<${DiffTable} results=${diff.data.results} />
        <${Pager} hasPrev=${pages.hasPrev} hasMore=${diff.data.pagination.has_more} onPrev=${pages.prev} onNext=${() => pages.next(diff.data.pagination.next_offset)} />`}`}
    ${editing && html`<${EditPull} ctx=${ctx} pr=${p} onClose=${() => setEditing(false)} onSaved=${pr.reload} />`}
  </article>`
}
