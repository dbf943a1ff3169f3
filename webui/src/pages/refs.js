// Branches (with hidden ones on request; create from any ref, delete, hard reset) and tags (create, delete).
import { useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { shortId } from '../lib/format.js'
import { html, Link, ErrorBox, Modal, Confirm, Pager, usePages, useLoad, useAction, Field, Icon } from '../ui.js'

function CreateRef({ ctx, kind, onClose }) {
  const [name, setName] = useState('')
  const [source, setSource] = useState(ctx.ref)
  const action = useAction()
  const submit = (e) => {
    e.preventDefault()
    action.run(async () => {
      if (kind === 'branch') await api.post(`/repositories/${enc(ctx.repo)}/branches`, { name, source })
      else await api.post(`/repositories/${enc(ctx.repo)}/tags`, { id: name, ref: source })
      onClose(true)
    })
  }
  return html`<${Modal} title=${`Create ${kind}`} onClose=${() => onClose(false)}><form onSubmit=${submit}>
    <${Field} label=${kind === 'branch' ? 'Branch name' : 'Tag name'}><input name="name" required value=${name} onInput=${(e) => setName(e.target.value)} /></${Field}>
    <${Field} label="From ref" hint="A branch, tag, commit ID or expression such as main~2">
      <input name="source" list="create-ref-sources" required value=${source} onInput=${(e) => setSource(e.target.value)} /></${Field}>
    <datalist id="create-ref-sources">${ctx.branches.map((b) => html`<option value=${b.id} />`)}${ctx.tags.map((t) => html`<option value=${t.id} />`)}</datalist>
    <${ErrorBox} error=${action.error} />
    <div class="actions"><button type="button" onClick=${() => onClose(false)}>Cancel</button><button class="primary" disabled=${action.busy}>Create ${kind}</button></div>
  </form></${Modal}>`
}

function ResetBranch({ ctx, branch, onClose }) {
  const [ref, setRef] = useState('')
  const action = useAction()
  const submit = (e) => {
    e.preventDefault()
    action.run(async () => { await api.put(`/repositories/${enc(ctx.repo)}/branches/${enc(branch)}/hard_reset`, undefined, { ref }); onClose(true) })
  }
  return html`<${Modal} title=${`Reset ${branch}`} onClose=${() => onClose(false)}><form onSubmit=${submit}>
    <p>Point ${branch} at another commit. Commits only reachable from ${branch} are no longer on it.</p>
    <${Field} label="Reset to ref"><input required value=${ref} onInput=${(e) => setRef(e.target.value)} placeholder="commit ID, tag or main~1" /></${Field}>
    <${ErrorBox} error=${action.error} />
    <div class="actions"><button type="button" onClick=${() => onClose(false)}>Cancel</button><button class="danger" disabled=${action.busy}>Reset branch</button></div>
  </form></${Modal}>`
}

function RefList({ ctx, kind, rows, onCreate, onDelete, extra, children }) {
  return html`<div>
    <div class="toolbar">${children}<div class="spacer"></div>
      ${onCreate && html`<button class="primary" onClick=${onCreate}>Create ${kind}</button>`}</div>
    <table class="table"><thead><tr><th>${kind === 'branch' ? 'Branch' : 'Tag'}</th><th>Commit</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>
      ${rows.map((r) => html`<tr><td><${Link} to=${['repositories', ctx.repo, 'objects']} query=${{ ref: r.id }}><${Icon} name=${kind === 'branch' ? 'branch' : 'commit'} /> ${r.id}</${Link}>
        ${r.id === ctx.repository.default_branch && html` <span class="badge">default</span>`}</td>
        <td><${Link} class="mono" to=${['repositories', ctx.repo, 'commits', r.commit_id]}>${shortId(r.commit_id)}</${Link}></td>
        <td class="row-actions">${extra && extra(r)}${onDelete && r.id !== ctx.repository.default_branch && html`<button class="link bad" aria-label=${`Delete ${kind} ${r.id}`} onClick=${() => onDelete(r.id)}>Delete</button>`}</td></tr>`)}
    </tbody></table></div>`
}

export function Branches({ ctx, route }) {
  const [hidden, setHidden] = useState(false)
  const [creating, setCreating] = useState(false)
  const [deleting, setDeleting] = useState(null)
  const [resetting, setResetting] = useState(null)
  const pages = usePages(String(hidden))
  const list = useLoad(() => api.get(`/repositories/${enc(ctx.repo)}/branches`, { show_hidden: hidden ? 'true' : undefined, after: pages.after, amount: 100 }), [ctx.repo, hidden, pages.after])
  const done = (changed) => { setCreating(false); setDeleting(null); setResetting(null); if (changed !== false) { list.reload(); ctx.reloadRefs() } }
  return html`<div>
    <${ErrorBox} error=${list.error} />
    ${list.data && html`<${RefList} ctx=${ctx} kind="branch" rows=${list.data.results}
      onCreate=${ctx.allowed['fs:CreateBranch'] && (() => setCreating(true))}
      onDelete=${ctx.allowed['fs:DeleteBranch'] && setDeleting}
      extra=${ctx.allowed['fs:RevertBranch'] && ((r) => html`<button class="link" aria-label=${`Reset branch ${r.id}`} onClick=${() => setResetting(r.id)}>Reset</button> `)}>
      <label class="check"><input type="checkbox" checked=${hidden} onChange=${(e) => setHidden(e.target.checked)} /> Show hidden branches</label>
    </${RefList}>
    <${Pager} hasPrev=${pages.hasPrev} hasMore=${list.data.pagination.has_more} onPrev=${pages.prev} onNext=${() => pages.next(list.data.pagination.next_offset)} />`}
    ${creating && html`<${CreateRef} ctx=${ctx} kind="branch" onClose=${done} />`}
    ${resetting && html`<${ResetBranch} ctx=${ctx} branch=${resetting} onClose=${done} />`}
    ${deleting && html`<${Confirm} title="Delete branch" message=${`Delete branch ${deleting}? Its uncommitted changes are lost.`}
      onConfirm=${() => api.del(`/repositories/${enc(ctx.repo)}/branches/${enc(deleting)}`)} onClose=${done} />`}
  </div>`
}

export function Tags({ ctx }) {
  const [creating, setCreating] = useState(false)
  const [deleting, setDeleting] = useState(null)
  const pages = usePages('')
  const list = useLoad(() => api.get(`/repositories/${enc(ctx.repo)}/tags`, { after: pages.after, amount: 100 }), [ctx.repo, pages.after])
  const done = (changed) => { setCreating(false); setDeleting(null); if (changed !== false) { list.reload(); ctx.reloadRefs() } }
  return html`<div>
    <${ErrorBox} error=${list.error} />
    ${list.data && html`<${RefList} ctx=${ctx} kind="tag" rows=${list.data.results}
      onCreate=${ctx.allowed['fs:CreateTag'] && (() => setCreating(true))} onDelete=${ctx.allowed['fs:DeleteTag'] && setDeleting} />
    ${list.data.results.length === 0 && html`<p class="empty">No tags yet.</p>`}
    <${Pager} hasPrev=${pages.hasPrev} hasMore=${list.data.pagination.has_more} onPrev=${pages.prev} onNext=${() => pages.next(list.data.pagination.next_offset)} />`}
    ${creating && html`<${CreateRef} ctx=${ctx} kind="tag" onClose=${done} />`}
    ${deleting && html`<${Confirm} title="Delete tag" message=${`Delete tag ${deleting}?`}
      onConfirm=${() => api.del(`/repositories/${enc(ctx.repo)}/tags/${enc(deleting)}`)} onClose=${done} />`}
  </div>`
}
