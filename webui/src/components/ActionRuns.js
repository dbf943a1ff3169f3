// Action runs (lakeFS's hooks) as the repository's pages show them: a table of runs, one run's hooks with
// their output, the runs of one commit (on its page), and what a refused operation shows: the failing hooks of
// the run the 412 names. The actions page and the pages whose operations hooks may refuse (commit, merge,
// revert) all use them.
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { isoDate, shortId } from '../lib/format.js'
import { html, Link, ErrorBox, useLoad } from '../ui.js'

export const when = isoDate

export function Status({ status }) {
  return html`<span class=${`badge ${status === 'completed' ? 'added' : status === 'failed' ? 'removed' : ''}`}>${status}</span>`
}

export const runsPath = (repo) => `/repositories/${enc(repo)}/actions/runs`

// The id of the run a "<event> hook aborted, run id '<id>': ..." message (lakeFS's HookAbortError) names.
export function abortedRunId(message) {
  const m = /hook aborted, run id '([^']+)'/.exec(message || '')
  return m ? m[1] : null
}

export function RunsTable({ repo, runs }) {
  return html`<table class="table runs"><thead><tr><th>Run</th><th>Event</th><th>Branch</th><th>Status</th><th>Started</th><th>Commit</th></tr></thead><tbody>
    ${runs.map((r) => html`<tr>
      <td><${Link} class="mono" to=${['repositories', repo, 'actions', r.run_id]}>${r.run_id}</${Link}></td>
      <td>${r.event_type}</td><td>${r.branch}</td><td><${Status} status=${r.status} /></td><td>${when(r.start_time)}</td>
      <td>${r.commit_id ? html`<${Link} class="mono" to=${['repositories', repo, 'commits', r.commit_id]}>${shortId(r.commit_id)}</${Link}>` : ''}</td>
    </tr>`)}</tbody></table>`
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
