// Actions (lakeFS's hooks): the runs of a repository with their status, filtered by branch or commit; one run
// with each hook's output; the runs of one commit (on its page); and what a refused operation shows: the
// failing hooks of the run the 412 names, with their output.
import { useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { shortId } from '../lib/format.js'
import { html, Link, ErrorBox, Pager, usePages, useLoad, go } from '../ui.js'

const PAGE = 30

function when(iso) {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString()
}

function Status({ status }) {
  return html`<span class=${`badge ${status === 'completed' ? 'added' : status === 'failed' ? 'removed' : ''}`}>${status}</span>`
}

const runsPath = (repo) => `/repositories/${enc(repo)}/actions/runs`

// The id of the run a "<event> hook aborted, run id '<id>': ..." message (lakeFS's HookAbortError) names.
export function abortedRunId(message) {
  const m = /hook aborted, run id '([^']+)'/.exec(message || '')
  return m ? m[1] : null
}

function RunsTable({ repo, runs }) {
  return html`<table class="table runs"><thead><tr><th>Run</th><th>Event</th><th>Branch</th><th>Status</th><th>Started</th><th>Commit</th></tr></thead><tbody>
    ${runs.map((r) => html`<tr>
      <td><${Link} class="mono" to=${['repositories', repo, 'actions', r.run_id]}>${r.run_id}</${Link}></td>
      <td>${r.event_type}</td><td>${r.branch}</td><td><${Status} status=${r.status} /></td><td>${when(r.start_time)}</td>
      <td>${r.commit_id ? html`<${Link} class="mono" to=${['repositories', repo, 'commits', r.commit_id]}>${shortId(r.commit_id)}</${Link}>` : ''}</td>
    </tr>`)}</tbody></table>`
}

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

function HookOutput({ repo, runId, hook }) {
  const output = useLoad(() => api.request('GET', `${runsPath(repo)}/${enc(runId)}/hooks/${enc(hook.hook_run_id)}/output`, { raw: true }).then((r) => r.text()), [repo, runId, hook.hook_run_id])
  return html`<section class="hook-run" aria-label=${`Hook ${hook.hook_id}`}>
    <h4>${hook.action} / ${hook.hook_id} <${Status} status=${hook.status} /></h4>
    <${ErrorBox} error=${output.error} />
    ${output.data !== undefined && output.data !== null && html`<pre class="code hook-output">${output.data}</pre>`}
  </section>`
}

// Each hook of a run with its output; ``onlyFailed`` keeps the failing ones (what a refused operation shows).
export function RunHooks({ repo, runId, onlyFailed }) {
  const hooks = useLoad(() => api.get(`${runsPath(repo)}/${enc(runId)}/hooks`, { amount: 1000 }), [repo, runId])
  if (hooks.error) return html`<${ErrorBox} error=${hooks.error} />`
  if (!hooks.data) return html`<p class="loading">Loading…</p>`
  const shown = hooks.data.results.filter((h) => !onlyFailed || h.status === 'failed')
  return html`<div class="hook-runs">${shown.map((h) => html`<${HookOutput} repo=${repo} runId=${runId} hook=${h} />`)}</div>`
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

// The runs of one commit, on its page (lakeFS shows them there too).
export function CommitRuns({ ctx, commitId }) {
  const runs = useLoad(() => api.get(runsPath(ctx.repo), { commit: commitId, amount: 100 }), [ctx.repo, commitId])
  if (runs.error) return html`<${ErrorBox} error=${runs.error} />`
  if (!runs.data || runs.data.results.length === 0) return null
  return html`<section class="commit-runs" aria-label="Action runs of this commit"><h3>Action runs</h3>
    <${RunsTable} repo=${ctx.repo} runs=${runs.data.results} /></section>`
}

// What a 412 from a hook shows: the message, then the failing hooks of the run it names with their output.
export function HookRefusal({ repo, error }) {
  const runId = error && error.status === 412 ? abortedRunId(error.message) : null
  if (!runId) return null
  return html`<div class="hook-refusal" role="alert"><h3>Refused by a hook</h3>
    <p>Run <${Link} class="mono" to=${['repositories', repo, 'actions', runId]}>${runId}</${Link}> failed; the operation did not happen.</p>
    <${RunHooks} key=${runId} repo=${repo} runId=${runId} onlyFailed=${true} /></div>`
}
