// Compare and merge: the three-dot diff of two refs, a dry-run preview (what changes in the destination and
// every conflict with what each side did), the merge with a strategy and per-path strategies, and after a
// 409 the conflict list where each path gets its side before merging again.
import { useEffect, useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { html, Link, ErrorBox, Pager, usePages, useLoad, useAction, Field, Notice, go } from '../ui.js'
import { RefSelector } from '../components/RefSelector.js'
import { DiffTable } from '../components/DiffTable.js'
import { HookRefusal } from '../components/ActionRuns.js'
import { OpenPullRequest } from '../components/OpenPullRequest.js'

const STRATEGIES = [['', 'None (fail on conflicts)'], ['source-wins', 'Source wins'], ['dest-wins', 'Destination wins']]

function StrategySelect({ value, onChange, label, withFail }) {
  return html`<select aria-label=${label} value=${value} onChange=${(e) => onChange(e.target.value)}>
    ${(withFail ? [['fail', 'Fail'], ...STRATEGIES.slice(1)] : STRATEGIES).map(([v, l]) => html`<option value=${v}>${l}</option>`)}
  </select>`
}

function ConflictRow({ c, choice, onChoose }) {
  return html`<tr class="conflict-row"><td class="mono">${c.path}</td><td>source ${c.source}</td><td>destination ${c.destination}</td>
    <td>${onChoose ? html`<select aria-label=${`Resolution of ${c.path}`} value=${choice || ''} onChange=${(e) => onChoose(e.target.value)}>
        <option value="">Unresolved</option><option value="source-wins">Take source</option><option value="dest-wins">Keep destination</option></select>`
      : c.resolution || html`<span class="bad">unresolved</span>`}</td></tr>`
}

// onPreview(shown): the page hides its own diff list while the preview's, which says what the merge would do,
// is on screen, so that the changes are listed once.
function Merge({ ctx, source, dest, onMerged, onPreview }) {
  const [strategy, setStrategy] = useState('')
  const [rules, setRules] = useState([])
  const [message, setMessage] = useState('')
  const [preview, setPreview] = useState(null)
  const [conflicts, setConflicts] = useState(null)
  const [choices, setChoices] = useState({})
  const [result, setResult] = useState(null)
  const action = useAction()
  const base = `/repositories/${enc(ctx.repo)}/refs/${enc(source)}/merge/${enc(dest)}`
  const body = (extra) => {
    const pathStrategies = [
      ...rules.filter((r) => r.path.trim()).map((r) => ({ path: r.path.trim(), strategy: r.strategy || 'fail' })),
      ...Object.entries(choices).filter(([, s]) => s).map(([path, s]) => ({ path, strategy: s })),
    ]
    const out = { ...extra }
    if (strategy) out.strategy = strategy
    if (pathStrategies.length) out.path_strategies = pathStrategies
    if (message) out.message = message
    return out
  }
  const runPreview = () => action.run(async () => {
    setResult(null)
    setPreview(await api.post(base, body({ dry_run: true }), { amount: 200 }))
  })
  const runMerge = () => action.run(async () => {
    setPreview(null)
    let answer = await api.post(base, body({}), undefined, { allow: [202, 409] })
    if (answer._status === 409) { setConflicts(answer.conflicts || []); setResult(null); throw new api.ApiError(409, answer.message, answer) }
    if (answer._status === 202) answer = await api.pollTask(`${base}/status`, answer.id, () => {})
    setConflicts(null); setChoices({})
    setResult(answer.reference)
    ctx.reloadRefs()
    if (onMerged) onMerged() // the diff above was of the refs before the merge
  })
  useEffect(() => {
    onPreview(Boolean(preview))
    return () => onPreview(false)
  }, [preview])
  const conflictRows = preview ? preview.results.filter((r) => r.conflict) : []
  return html`<section class="merge" aria-label="Merge">
    <h2>Merge ${source} into ${dest}</h2>
    <div class="merge-form">
      <${Field} label="Strategy"><${StrategySelect} label="Strategy" value=${strategy} onChange=${setStrategy} /></${Field}>
      <${Field} label="Commit message (optional)"><input value=${message} onInput=${(e) => setMessage(e.target.value)} placeholder=${`Merge '${source}' into '${dest}'`} /></${Field}>
    </div>
    <fieldset class="kv"><legend>Per-path strategies (glob patterns, first match wins)</legend>
      ${rules.map((r, i) => html`<div class="kv-row">
        <input aria-label=${`Path pattern ${i + 1}`} placeholder="data/*.csv" value=${r.path} onInput=${(e) => setRules(rules.map((x, j) => (j === i ? { ...x, path: e.target.value } : x)))} />
        <${StrategySelect} withFail label=${`Strategy of pattern ${i + 1}`} value=${r.strategy} onChange=${(v) => setRules(rules.map((x, j) => (j === i ? { ...x, strategy: v } : x)))} />
        <button class="link" onClick=${() => setRules(rules.filter((_, j) => j !== i))} aria-label=${`Remove pattern ${i + 1}`}>Remove</button></div>`)}
      <button type="button" onClick=${() => setRules([...rules, { path: '', strategy: 'source-wins' }])}>Add path strategy</button>
    </fieldset>
    <div class="actions left"><button onClick=${runPreview} disabled=${action.busy}>Preview merge</button>
      <button class="primary" onClick=${runMerge} disabled=${action.busy}>${conflicts ? 'Merge again' : 'Merge'}</button></div>
    <${ErrorBox} error=${action.error} />
    <${HookRefusal} repo=${ctx.repo} error=${action.error} />
    ${result && html`<${Notice}>Merged: ${dest} is now at <${Link} class="mono" to=${['repositories', ctx.repo, 'commits', result]}>${result.slice(0, 12)}</${Link}>.
      <${Link} to=${['repositories', ctx.repo, 'commits']} query=${{ ref: dest }}>See the log of ${dest}</${Link}></${Notice}>`}
    ${conflicts && html`<div class="conflicts"><h3>${conflicts.length} conflicting path${conflicts.length === 1 ? '' : 's'}: choose a side for each, then merge again</h3>
      <table class="table"><thead><tr><th>Path</th><th>Source</th><th>Destination</th><th>Resolution</th></tr></thead><tbody>
      ${conflicts.map((c) => html`<${ConflictRow} c=${c} choice=${choices[c.path]} onChoose=${(v) => setChoices({ ...choices, [c.path]: v })} />`)}</tbody></table></div>`}
    ${preview && html`<div class="preview-result"><h3>Dry run: what the merge would do</h3>
      <p class="summary">${preview.summary.added} added · ${preview.summary.changed} changed · ${preview.summary.removed} removed${' · '}<b class=${preview.summary.unresolved ? 'bad' : ''}>${preview.summary.conflict} conflict${preview.summary.conflict === 1 ? '' : 's'} (${preview.summary.unresolved} unresolved)</b></p>
      ${conflictRows.length > 0 && html`<table class="table"><caption>Conflicts</caption><thead><tr><th>Path</th><th>Source</th><th>Destination</th><th>Resolution</th></tr></thead><tbody>
        ${conflictRows.map((r) => html`<${ConflictRow} c=${r.conflict} />`)}</tbody></table>`}
      <h4>All changes to ${dest}</h4><${DiffTable} results=${preview.results} />
      ${preview.pagination.has_more && html`<p class="muted small">The first ${preview.results.length} changes are shown.</p>`}
    </div>`}
  </section>`
}

// The page's counts first, so that the merge controls stay near the top however long the list: the diff API
// pages and gives no totals, so the counts say which page they are of.
export function diffSummary(results, hasMore, hasPrev) {
  if (results.length === 0 && !hasPrev) return 'No differences.'
  const counts = {}
  for (const r of results) counts[r.type] = (counts[r.type] || 0) + 1
  const parts = ['added', 'changed', 'removed', 'conflict'].filter((t) => counts[t]).map((t) => `${counts[t]} ${t}`)
  const where = hasPrev || hasMore ? ` on this page${hasMore ? ' (more on the next)' : ''}` : ''
  return `${results.length} change${results.length === 1 ? '' : 's'}${where}: ${parts.join(' · ')}`
}

export function Compare({ ctx, route }) {
  const base = route.query.base || ctx.repository.default_branch
  const compare = route.query.compare || ''
  const pages = usePages(`${base}|${compare}`)
  const diff = useLoad(() => compare
    ? api.get(`/repositories/${enc(ctx.repo)}/refs/${enc(base)}/diff/${enc(compare)}`, { type: 'three_dot', after: pages.after, amount: 100 })
    : Promise.resolve(null), [ctx.repo, base, compare, pages.after])
  const set = (q) => go(['repositories', ctx.repo, 'compare'], { base, compare, ...q })
  const destIsBranch = ctx.branches.some((b) => b.id === base)
  const [previewing, setPreviewing] = useState(false)
  return html`<div>
    <div class="toolbar">
      <${RefSelector} ctx=${ctx} id="base" label="Base (destination)" value=${base} onChange=${(v) => set({ base: v })} />
      <span aria-hidden="true">←</span>
      <${RefSelector} ctx=${ctx} id="compare" label="Compare (source)" value=${compare} onChange=${(v) => set({ compare: v })} />
      ${compare && destIsBranch && compare !== base && ctx.branches.some((b) => b.id === compare) && ctx.allowed['pr:WritePullRequest']
        && html`<${OpenPullRequest} ctx=${ctx} source=${compare} dest=${base} />`}
    </div>
    ${!compare && html`<p class="muted">Pick a ref to compare with ${base}.</p>`}
    <${ErrorBox} error=${diff.error} />
    ${diff.data && html`<h2>Changes on ${compare} since it split from ${base}</h2>
      <p class="summary diff-summary">${diffSummary(diff.data.results, diff.data.pagination.has_more, pages.hasPrev)}</p>`}
    ${compare && destIsBranch && ctx.allowed['fs:CreateCommit'] && html`<${Merge} key=${base + '|' + compare} ctx=${ctx} source=${compare} dest=${base}
      onMerged=${() => (pages.hasPrev ? pages.reset() : diff.reload())} onPreview=${setPreviewing} />`}
    ${diff.data && !previewing && html`<section class="diff-list" aria-label="Changes">
      <${DiffTable} results=${diff.data.results} />
      <${Pager} hasPrev=${pages.hasPrev} hasMore=${diff.data.pagination.has_more} onPrev=${pages.prev} onNext=${() => pages.next(diff.data.pagination.next_offset)} />
    </section>`}
  </div>`
}
