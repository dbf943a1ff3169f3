// Commits: the log of a ref (pages, filter by path or prefix), and one commit: metadata, parents as links,
// the diff to its first parent, browsing its tree, revert and cherry-pick onto a branch.
import { useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { date, shortId } from '../lib/format.js'
import { html, Link, ErrorBox, Modal, Pager, usePages, useLoad, useAction, Field, Notice, go } from '../ui.js'
import { RefSelector } from '../components/RefSelector.js'
import { DiffTable } from '../components/DiffTable.js'
import { CommitRuns, HookRefusal } from '../components/ActionRuns.js'

const PAGE = 30

export function Commits({ ctx, route }) {
  const filter = route.query.filter || ''
  const [draft, setDraft] = useState(filter)
  const pages = usePages(`${ctx.ref}|${filter}`)
  const query = { after: pages.after, amount: PAGE }
  if (filter) query[filter.endsWith('/') ? 'prefixes' : 'objects'] = filter
  const log = useLoad(() => api.get(`/repositories/${enc(ctx.repo)}/refs/${enc(ctx.ref)}/commits`, query), [ctx.repo, ctx.ref, filter, pages.after])
  return html`<div>
    <div class="toolbar">
      <${RefSelector} ctx=${ctx} value=${ctx.ref} onChange=${(ref) => go(['repositories', ctx.repo, 'commits'], { ref })} />
      <form class="inline-form" onSubmit=${(e) => { e.preventDefault(); go(['repositories', ctx.repo, 'commits'], { ref: ctx.ref, filter: draft }) }}>
        <label class="ref-selector"><span>Path or prefix</span><input placeholder="data/ or data/file.csv" value=${draft} onInput=${(e) => setDraft(e.target.value)} aria-label="Filter by path or prefix (end with / for a prefix)" /></label>
        <button type="submit">Filter</button>
      </form>
    </div>
    <${ErrorBox} error=${log.error} />
    ${log.data && html`<ol class="commits">${log.data.results.map((c) => html`<li>
      <div><${Link} to=${['repositories', ctx.repo, 'commits', c.id]} class="commit-message">${c.message || '(no message)'}</${Link}>
        <div class="muted small">${c.committer || 'system'} committed ${date(c.creation_date)}${c.parents.length > 1 ? ' · merge' : ''}</div></div>
      <div class="commit-links"><${Link} class="mono" to=${['repositories', ctx.repo, 'commits', c.id]}>${shortId(c.id)}</${Link}>
        <${Link} to=${['repositories', ctx.repo, 'objects']} query=${{ ref: c.id }}>Browse</${Link}></div>
    </li>`)}</ol>
    ${log.data.results.length === 0 && html`<p class="empty">No commits${filter ? ' touch ' + filter : ''}.</p>`}
    <${Pager} hasPrev=${pages.hasPrev} hasMore=${log.data.pagination.has_more} onPrev=${pages.prev} onNext=${() => pages.next(log.data.pagination.next_offset)} />`}
  </div>`
}

function ApplyDialog({ ctx, commit, kind, onClose }) {
  const [branch, setBranch] = useState(ctx.isBranch ? ctx.ref : ctx.repository.default_branch)
  const [parent, setParent] = useState(1)
  const action = useAction()
  const merge = commit.parents.length > 1
  const submit = (e) => {
    e.preventDefault()
    action.run(async () => {
      const body = { ref: commit.id }
      if (merge) body.parent_number = Number(parent)
      await api.post(`/repositories/${enc(ctx.repo)}/branches/${enc(branch)}/${kind === 'revert' ? 'revert' : 'cherry-pick'}`, body)
      onClose(`${kind === 'revert' ? 'Reverted' : 'Cherry-picked'} ${shortId(commit.id)} on ${branch}.`)
    })
  }
  return html`<${Modal} title=${kind === 'revert' ? 'Revert commit' : 'Cherry-pick commit'} onClose=${() => onClose(null)}><form onSubmit=${submit}>
    <p>${kind === 'revert' ? 'Make a new commit that undoes' : 'Apply the changes of'} <span class="mono">${shortId(commit.id)}</span> on a branch.</p>
    <${Field} label="Branch"><select value=${branch} onChange=${(e) => setBranch(e.target.value)}>${ctx.branches.map((b) => html`<option value=${b.id}>${b.id}</option>`)}</select></${Field}>
    ${merge && html`<${Field} label="Parent number (mainline)"><input type="number" min="1" max=${commit.parents.length} value=${parent} onInput=${(e) => setParent(e.target.value)} /></${Field}>`}
    <${ErrorBox} error=${action.error} />
    <${HookRefusal} repo=${ctx.repo} error=${action.error} />
    ${action.error && action.error.body && action.error.body.conflicts && html`<ul class="mono small">${action.error.body.conflicts.map((c) => html`<li>${c.path}</li>`)}</ul>`}
    <div class="actions"><button type="button" onClick=${() => onClose(null)}>Cancel</button><button class="primary" disabled=${action.busy}>${kind === 'revert' ? 'Revert' : 'Cherry-pick'}</button></div>
  </form></${Modal}>`
}

export function CommitDetails({ ctx, id }) {
  const [applying, setApplying] = useState(null)
  const [notice, setNotice] = useState(null)
  const pages = usePages(id)
  const commit = useLoad(() => api.get(`/repositories/${enc(ctx.repo)}/commits/${enc(id)}`), [ctx.repo, id])
  const c = commit.data
  const parent = c && c.parents[0]
  const diff = useLoad(() => parent
    ? api.get(`/repositories/${enc(ctx.repo)}/refs/${enc(parent)}/diff/${enc(c.id)}`, { type: 'two_dot', after: pages.after, amount: 100 })
    : Promise.resolve(null), [c && c.id, pages.after])
  if (commit.error) return html`<${ErrorBox} error=${commit.error} />`
  if (!c) return html`<p class="loading">Loading…</p>`
  const canWrite = ctx.allowed['fs:CreateCommit']
  return html`<div>
    <div class="title-row"><h2>${c.message || '(no message)'}</h2>
      <div class="actions">
        <${Link} class="button" to=${['repositories', ctx.repo, 'objects']} query=${{ ref: c.id }}>Browse at this commit</${Link}>
        ${canWrite && html`<button onClick=${() => setApplying('revert')}>Revert</button><button onClick=${() => setApplying('cherry-pick')}>Cherry-pick</button>`}
      </div></div>
    ${notice && html`<${Notice}>${notice}</${Notice}>`}
    <dl class="props">
      <dt>ID</dt><dd class="mono">${c.id}</dd>
      <dt>Committer</dt><dd>${c.committer}</dd>
      <dt>Date</dt><dd>${date(c.creation_date)}</dd>
      <dt>Parents</dt><dd>${c.parents.length === 0 ? 'none' : c.parents.map((p) => html`<${Link} class="mono parent" to=${['repositories', ctx.repo, 'commits', p]}>${shortId(p)}</${Link}> `)}</dd>
      <dt>Metarange</dt><dd class="mono small">${c.meta_range_id}</dd>
      ${Object.entries(c.metadata || {}).map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}
    </dl>
    <${CommitRuns} ctx=${ctx} commitId=${c.id} />
    ${parent && html`<h3>Changes from the first parent</h3>`}
    <${ErrorBox} error=${diff.error} />
    ${diff.data && html`<${DiffTable} results=${diff.data.results} />
      <${Pager} hasPrev=${pages.hasPrev} hasMore=${diff.data.pagination.has_more} onPrev=${pages.prev} onNext=${() => pages.next(diff.data.pagination.next_offset)} />`}
    ${applying && html`<${ApplyDialog} ctx=${ctx} commit=${c} kind=${applying} onClose=${(msg) => { setApplying(null); msg && setNotice(msg) }} />`}
  </div>`
}
