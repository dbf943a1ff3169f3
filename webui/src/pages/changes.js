// Uncommitted changes of a branch: the staged diff (added, changed, removed, with sizes), reset of one object,
// a prefix or everything, and the commit dialog (message + metadata); a long commit is followed to its end.
import { useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { bytes } from '../lib/format.js'
import { metadataFromRows } from '../lib/policy.js'
import { html, ErrorBox, Modal, Confirm, Pager, usePages, useLoad, useAction, Field, KeyValueRows, DiffType, Notice, go } from '../ui.js'
import { RefSelector } from '../components/RefSelector.js'
import { HookRefusal } from '../components/ActionRuns.js'

const PAGE = 100

export function CommitDialog({ ctx, onClose }) {
  const [message, setMessage] = useState('')
  const [rows, setRows] = useState([])
  const [progress, setProgress] = useState(null)
  const action = useAction()
  const base = `/repositories/${enc(ctx.repo)}/branches/${enc(ctx.ref)}/commits`
  const submit = (e) => {
    e.preventDefault()
    action.run(async () => {
      const metadata = metadataFromRows(rows)
      let result = await api.post(base, { message, metadata }, undefined, { allow: [202] })
      let workflow = null
      if (result && result._status === 202) {
        setProgress('The commit runs as a workflow: waiting for it to finish…')
        const started = Date.now()
        result = await api.pollTask(`${base}/status`, result.id, () =>
          setProgress(`The commit runs as a workflow: ${Math.round((Date.now() - started) / 1000)} s so far…`))
        workflow = Math.max(1, Math.round((Date.now() - started) / 1000))
      }
      onClose(result && { ...result, workflow })
    })
  }
  return html`<${Modal} title=${`Commit changes to ${ctx.ref}`} onClose=${() => onClose(null)}>
    <form onSubmit=${submit}>
      <${Field} label="Commit message"><textarea name="message" required rows="3" value=${message} onInput=${(e) => setMessage(e.target.value)}></textarea></${Field}>
      <${KeyValueRows} rows=${rows} setRows=${setRows} />
      ${progress && html`<${Notice}>${progress}</${Notice}>`}
      <${ErrorBox} error=${action.error} />
      <${HookRefusal} repo=${ctx.repo} error=${action.error} />
      <div class="actions"><button type="button" onClick=${() => onClose(null)}>Cancel</button>
        <button class="primary" type="submit" disabled=${action.busy}>${action.busy ? 'Committing…' : 'Commit'}</button></div>
    </form>
  </${Modal}>`
}

export function Changes({ ctx, route }) {
  const pages = usePages(ctx.ref)
  const [committing, setCommitting] = useState(false)
  const [resetting, setResetting] = useState(null)
  const [done, setDone] = useState(null)
  const [prefix, setPrefix] = useState('')
  const diff = useLoad(() => ctx.isBranch
    ? api.get(`/repositories/${enc(ctx.repo)}/branches/${enc(ctx.ref)}/diff`, { after: pages.after, amount: PAGE })
    : Promise.resolve(null), [ctx.repo, ctx.ref, pages.after])
  const canCommit = ctx.allowed['fs:CreateCommit']
  const canReset = ctx.allowed['fs:RevertBranch']
  const reset = (body) => api.put(`/repositories/${enc(ctx.repo)}/branches/${enc(ctx.ref)}`, body)
  const empty = diff.data && diff.data.results.length === 0 && !pages.hasPrev
  return html`<div>
    <div class="toolbar">
      <${RefSelector} ctx=${ctx} label="Branch" value=${ctx.ref} onChange=${(ref) => go(['repositories', ctx.repo, 'changes'], { ref })} />
      <div class="spacer"></div>
      ${canReset && !empty && diff.data && html`<button onClick=${() => setResetting({ type: 'reset' })}>Reset all</button>`}
      ${canCommit && !empty && diff.data && html`<button class="primary" onClick=${() => setCommitting(true)}>Commit changes</button>`}
    </div>
    ${!ctx.isBranch && html`<p class="muted">${ctx.ref} is not a branch: only branches have uncommitted changes.</p>`}
    ${done && html`<${Notice}>Committed <a href=${`#/repositories/${enc(ctx.repo)}/commits/${enc(done.id)}`} class="mono">${done.id.slice(0, 12)}</a>.${done.workflow ? ` It ran as a workflow for ${done.workflow} s.` : ''}</${Notice}>`}
    <${ErrorBox} error=${diff.error} />
    ${empty && html`<p class="empty">No uncommitted changes on ${ctx.ref}.</p>`}
    ${diff.data && !empty && html`<table class="table"><thead><tr><th>Change</th><th>Path</th><th class="num">Size</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>
      ${diff.data.results.map((d) => html`<tr><td><${DiffType} type=${d.type} /></td><td class="mono">${d.path}</td>
        <td class="num">${d.size_bytes !== undefined ? bytes(d.size_bytes) : ''}</td>
        <td class="row-actions">${canReset && html`<button class="link" aria-label=${`Reset ${d.path}`}
          onClick=${() => setResetting({ type: d.path_type === 'common_prefix' ? 'common_prefix' : 'object', path: d.path })}>Reset</button>`}</td></tr>`)}
    </tbody></table>
    <${Pager} hasPrev=${pages.hasPrev} hasMore=${diff.data.pagination.has_more} onPrev=${pages.prev} onNext=${() => pages.next(diff.data.pagination.next_offset)} />`}
    ${canReset && ctx.isBranch && !empty && html`<form class="inline-form" onSubmit=${(e) => { e.preventDefault(); prefix && setResetting({ type: 'common_prefix', path: prefix }) }}>
      <${Field} label="Reset a prefix"><input placeholder="e.g. data/2024/" value=${prefix} onInput=${(e) => setPrefix(e.target.value)} /></${Field}>
      <button type="submit">Reset prefix</button></form>`}
    ${committing && html`<${CommitDialog} ctx=${ctx} onClose=${(commit) => { setCommitting(false); if (commit) { setDone(commit); diff.reload() } }} />`}
    ${resetting && html`<${Confirm} title="Reset uncommitted changes" confirmLabel="Reset"
      message=${resetting.type === 'reset' ? `Drop every uncommitted change on ${ctx.ref}?` : `Drop the uncommitted changes to ${resetting.path}?`}
      onConfirm=${() => reset(resetting)} onClose=${() => { setResetting(null); diff.reload() }} />`}
  </div>`
}
