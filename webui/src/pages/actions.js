// Actions (lakeFS's hooks): the runs of a repository with their status, filtered by branch or commit, and one
// run with each hook's output. The parts other pages show too live in components/ActionRuns.js.
import { useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { html, Link, ErrorBox, Pager, usePages, useLoad, go } from '../ui.js'
import { RunHooks, RunsTable, Status, runsPath, when } from '../components/ActionRuns.js'

const PAGE = 30

export function Actions({ ctx, route }) {
  const branch = route.query.branch || ''
  const commit = route.query.commit || ''
  const [draft, setDraft] = useState({ branch, commit })
  const pages = usePages(`${branch}|${commit}`)
  const query = { after: pages.after, amount: PAGE }
  if (branch) query.branch = branch
  if (commit) query.commit = commit
  const runs = useLoad(() => api.get(runsPath(ctx.repo), query), [ctx.repo, branch, commit, pages.after])
  const submit = (e) => {
    e.preventDefault()
    const q = {}
    if (draft.branch.trim()) q.branch = draft.branch.trim()
    if (draft.commit.trim()) q.commit = draft.commit.trim()
    go(['repositories', ctx.repo, 'actions'], q)
  }
  return html`<div>
    <form class="toolbar inline-form" onSubmit=${submit} aria-label="Filter runs">
      <label class="ref-selector"><span>Branch</span><input aria-label="Filter by branch" list="action-branches" value=${draft.branch} onInput=${(e) => setDraft({ ...draft, branch: e.target.value })} /></label>
      <datalist id="action-branches">${ctx.branches.map((b) => html`<option value=${b.id} />`)}</datalist>
      <label class="ref-selector"><span>Commit</span><input aria-label="Filter by commit" class="mono" value=${draft.commit} onInput=${(e) => setDraft({ ...draft, commit: e.target.value })} /></label>
      <button type="submit">Filter</button>
      ${(branch || commit) && html`<${Link} to=${['repositories', ctx.repo, 'actions']}>Clear</${Link}>`}
    </form>
    <${ErrorBox} error=${runs.error} />
    ${runs.data && html`${runs.data.results.length
      ? html`<${RunsTable} repo=${ctx.repo} runs=${runs.data.results} />`
      : html`<p class="empty">No action runs${branch || commit ? ' match the filter' : ''}. Actions are YAML files under <span class="mono">_lakefs_actions/</span>.</p>`}
    <${Pager} hasPrev=${pages.hasPrev} hasMore=${runs.data.pagination.has_more} onPrev=${pages.prev} onNext=${() => pages.next(runs.data.pagination.next_offset)} />`}
  </div>`
}

export function RunDetails({ ctx, id }) {
  const run = useLoad(() => api.get(`${runsPath(ctx.repo)}/${enc(id)}`), [ctx.repo, id])
  if (run.error) return html`<${ErrorBox} error=${run.error} />`
  const r = run.data
  if (!r) return html`<p class="loading">Loading…</p>`
  return html`<div>
    <p><${Link} to=${['repositories', ctx.repo, 'actions']}>All runs</${Link}></p>
    <h2>Run <span class="mono">${r.run_id}</span> <${Status} status=${r.status} /></h2>
    <dl class="props">
      <dt>Event</dt><dd>${r.event_type}</dd>
      <dt>Branch</dt><dd>${r.branch}</dd>
      <dt>Started</dt><dd>${when(r.start_time)}</dd>
      <dt>Ended</dt><dd>${when(r.end_time)}</dd>
      <dt>Commit</dt><dd>${r.commit_id ? html`<${Link} class="mono" to=${['repositories', ctx.repo, 'commits', r.commit_id]}>${r.commit_id}</${Link}>` : 'none'}</dd>
    </dl>
    <h3>Hooks</h3>
    <${RunHooks} repo=${ctx.repo} runId=${r.run_id} />
  </div>`
}
