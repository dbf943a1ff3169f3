// Administration: users (groups, policies, access keys with the secret shown once), groups (members,
// policies) and policies (a JSON editor that validates before saving).
import { useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { date } from '../lib/format.js'
import { validatePolicy } from '../lib/policy.js'
import { html, Link, ErrorBox, Modal, Confirm, Pager, usePages, useLoad, useAction, Field, Notice, go } from '../ui.js'

const TABS = [['users', 'Users'], ['groups', 'Groups'], ['policies', 'Policies']]

function Listing({ path, kind, columns, row, onCreate, onDelete, reloadKey }) {
  const kinds = kind === 'policy' ? 'policies' : `${kind}s`
  const [search, setSearch] = useState('')
  const pages = usePages(search + reloadKey)
  const list = useLoad(() => api.get(path, { prefix: search, after: pages.after, amount: 100 }), [path, search, pages.after, reloadKey])
  return html`<div>
    <div class="toolbar"><input type="search" class="search" aria-label=${`Search ${kinds}`} placeholder=${`Find ${kinds} by prefix`} value=${search} onInput=${(e) => setSearch(e.target.value)} />
      <div class="spacer"></div>${onCreate && html`<button class="primary" onClick=${onCreate}>Create ${kind}</button>`}</div>
    <${ErrorBox} error=${list.error} />
    ${list.data && html`<table class="table"><thead><tr>${columns.map((c) => html`<th>${c}</th>`)}<th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>
      ${list.data.results.map((r) => html`<tr>${row(r)}<td class="row-actions"><button class="link bad" aria-label=${`Delete ${kind} ${r.id}`} onClick=${() => onDelete(r.id, list.reload)}>Delete</button></td></tr>`)}
    </tbody></table>
    <${Pager} hasPrev=${pages.hasPrev} hasMore=${list.data.pagination.has_more} onPrev=${pages.prev} onNext=${() => pages.next(list.data.pagination.next_offset)} />`}
  </div>`
}

function CreateSimple({ kind, onSubmit, onClose, extra }) {
  const [id, setId] = useState('')
  const [choice, setChoice] = useState(extra ? extra.initial : '')
  const action = useAction()
  const submit = (e) => { e.preventDefault(); action.run(async () => { await onSubmit(id.trim(), choice); onClose(true) }) }
  return html`<${Modal} title=${`Create ${kind}`} onClose=${() => onClose(false)}><form onSubmit=${submit}>
    <${Field} label=${`${kind[0].toUpperCase() + kind.slice(1)} ID`}><input name="id" required value=${id} onInput=${(e) => setId(e.target.value)} /></${Field}>
    ${extra && html`<${Field} label=${extra.label}><select name="group" value=${choice} onChange=${(e) => setChoice(e.target.value)}>
      ${extra.options.map((o) => html`<option value=${o}>${o || '(none)'}</option>`)}</select></${Field}>`}
    <${ErrorBox} error=${action.error} />
    <div class="actions"><button type="button" onClick=${() => onClose(false)}>Cancel</button><button class="primary" disabled=${action.busy}>Create ${kind}</button></div>
  </form></${Modal}>`
}

function Users({ allowed }) {
  const [creating, setCreating] = useState(false)
  const [deleting, setDeleting] = useState(null)
  const [key, setKey] = useState(0)
  const groups = useLoad(() => api.get('/auth/groups', { amount: 1000 }), [])
  const groupIds = groups.data ? ['', ...groups.data.results.map((g) => g.id)] : ['']
  // The dialog opens once the groups are known: its first choice (Viewers) is set when it opens.
  return html`<div>
    <${Listing} path="/auth/users" kind="user" columns=${['User', 'Created']} reloadKey=${key}
      row=${(u) => html`<td><${Link} to=${['admin', 'users', u.id]}>${u.id}</${Link}></td><td>${date(u.creation_date)}</td>`}
      onCreate=${allowed['auth:CreateUser'] && (() => setCreating(true))} onDelete=${(id) => setDeleting(id)} />
    ${creating && (groups.data || groups.error) && html`<${CreateSimple} kind="user" extra=${{ label: 'Add to group', options: groupIds, initial: groupIds.includes('Viewers') ? 'Viewers' : '' }}
      onSubmit=${async (id, group) => { await api.post('/auth/users', { id }); if (group) await api.put(`/auth/groups/${enc(group)}/members/${enc(id)}`) }}
      onClose=${(ok) => { setCreating(false); if (ok) setKey(key + 1) }} />`}
    ${deleting && html`<${Confirm} title="Delete user" message=${`Delete user ${deleting} and its access keys?`}
      onConfirm=${() => api.del(`/auth/users/${enc(deleting)}`)} onClose=${() => { setDeleting(null); setKey(key + 1) }} />`}
  </div>`
}

function SecretOnce({ credentials, onClose }) {
  return html`<${Modal} title="New access key" onClose=${onClose}>
    <p><b>Copy the secret now: it is shown only once.</b></p>
    <dl class="props"><dt>Access key ID</dt><dd class="mono" id="new-key-id">${credentials.access_key_id}</dd>
      <dt>Secret access key</dt><dd class="mono" id="new-key-secret">${credentials.secret_access_key}</dd></dl>
    <div class="actions"><button onClick=${() => navigator.clipboard && navigator.clipboard.writeText(`${credentials.access_key_id}\n${credentials.secret_access_key}`)}>Copy both</button>
      <button class="primary" onClick=${onClose}>Done</button></div>
  </${Modal}>`
}

function Attach({ label, options, onAttach }) {
  const [value, setValue] = useState('')
  const action = useAction()
  return html`<form class="inline-form" onSubmit=${(e) => { e.preventDefault(); value && action.run(() => onAttach(value)) }}>
    <${Field} label=${label}><select value=${value} onChange=${(e) => setValue(e.target.value)}><option value="">Choose…</option>
      ${options.map((o) => html`<option value=${o}>${o}</option>`)}</select></${Field}>
    <button type="submit" disabled=${action.busy}>Add</button><${ErrorBox} error=${action.error} /></form>`
}

function UserDetails({ id }) {
  const base = `/auth/users/${enc(id)}`
  const data = useLoad(async () => {
    const [user, groups, policies, creds, allGroups, allPolicies] = await Promise.all([
      api.get(base), api.get(`${base}/groups`, { amount: 1000 }), api.get(`${base}/policies`, { amount: 1000 }),
      api.get(`${base}/credentials`, { amount: 1000 }), api.get('/auth/groups', { amount: 1000 }), api.get('/auth/policies', { amount: 1000 }),
    ])
    return { user, groups: groups.results, policies: policies.results, creds: creds.results, allGroups: allGroups.results, allPolicies: allPolicies.results }
  }, [id])
  const [secret, setSecret] = useState(null)
  const action = useAction()
  if (data.error) return html`<${ErrorBox} error=${data.error} />`
  if (!data.data) return html`<p class="loading">Loading…</p>`
  const d = data.data
  const act = (fn) => action.run(async () => { await fn(); data.reload() })
  return html`<div>
    <h2>User ${id}</h2>
    <${ErrorBox} error=${action.error} />
    <section class="card-section"><h3>Groups</h3><ul class="plain">${d.groups.map((g) => html`<li>${g.id}
      <button class="link bad" onClick=${() => act(() => api.del(`/auth/groups/${enc(g.id)}/members/${enc(id)}`))}>Remove</button></li>`)}</ul>
      <${Attach} label="Add to group" options=${d.allGroups.map((g) => g.id).filter((g) => !d.groups.some((x) => x.id === g))}
        onAttach=${(g) => act(() => api.put(`/auth/groups/${enc(g)}/members/${enc(id)}`))} /></section>
    <section class="card-section"><h3>Policies attached directly</h3><ul class="plain">${d.policies.map((p) => html`<li>${p.id}
      <button class="link bad" onClick=${() => act(() => api.del(`${base}/policies/${enc(p.id)}`))}>Detach</button></li>`)}</ul>
      <${Attach} label="Attach policy" options=${d.allPolicies.map((p) => p.id).filter((p) => !d.policies.some((x) => x.id === p))}
        onAttach=${(p) => act(() => api.put(`${base}/policies/${enc(p)}`))} /></section>
    <section class="card-section"><h3>Access keys</h3>
      <table class="table"><thead><tr><th>Access key ID</th><th>Created</th><th><span class="visually-hidden">Actions</span></th></tr></thead><tbody>
      ${d.creds.map((c) => html`<tr><td class="mono">${c.access_key_id}</td><td>${date(c.creation_date)}</td>
        <td class="row-actions"><button class="link bad" onClick=${() => act(() => api.del(`${base}/credentials/${enc(c.access_key_id)}`))}>Revoke</button></td></tr>`)}</tbody></table>
      <button onClick=${() => action.run(async () => { setSecret(await api.post(`${base}/credentials`)); data.reload() })}>Create access key</button></section>
    ${secret && html`<${SecretOnce} credentials=${secret} onClose=${() => setSecret(null)} />`}
  </div>`
}

function GroupDetails({ id }) {
  const base = `/auth/groups/${enc(id)}`
  const data = useLoad(async () => {
    const [members, policies, allPolicies, users] = await Promise.all([api.get(`${base}/members`, { amount: 1000 }),
      api.get(`${base}/policies`, { amount: 1000 }), api.get('/auth/policies', { amount: 1000 }), api.get('/auth/users', { amount: 1000 })])
    return { members: members.results, policies: policies.results, allPolicies: allPolicies.results, users: users.results }
  }, [id])
  const action = useAction()
  if (data.error) return html`<${ErrorBox} error=${data.error} />`
  if (!data.data) return html`<p class="loading">Loading…</p>`
  const d = data.data
  const act = (fn) => action.run(async () => { await fn(); data.reload() })
  return html`<div><h2>Group ${id}</h2><${ErrorBox} error=${action.error} />
    <section class="card-section"><h3>Members</h3><ul class="plain">${d.members.map((u) => html`<li><${Link} to=${['admin', 'users', u.id]}>${u.id}</${Link}>
      <button class="link bad" onClick=${() => act(() => api.del(`${base}/members/${enc(u.id)}`))}>Remove</button></li>`)}</ul>
      <${Attach} label="Add member" options=${d.users.map((u) => u.id).filter((u) => !d.members.some((m) => m.id === u))} onAttach=${(u) => act(() => api.put(`${base}/members/${enc(u)}`))} /></section>
    <section class="card-section"><h3>Policies</h3><ul class="plain">${d.policies.map((p) => html`<li><${Link} to=${['admin', 'policies', p.id]}>${p.id}</${Link}>
      <button class="link bad" onClick=${() => act(() => api.del(`${base}/policies/${enc(p.id)}`))}>Detach</button></li>`)}</ul>
      <${Attach} label="Attach policy" options=${d.allPolicies.map((p) => p.id).filter((p) => !d.policies.some((x) => x.id === p))} onAttach=${(p) => act(() => api.put(`${base}/policies/${enc(p)}`))} /></section>
  </div>`
}

function Groups({ allowed }) {
  const [creating, setCreating] = useState(false)
  const [deleting, setDeleting] = useState(null)
  const [key, setKey] = useState(0)
  return html`<div>
    <${Listing} path="/auth/groups" kind="group" columns=${['Group', 'Created']} reloadKey=${key}
      row=${(g) => html`<td><${Link} to=${['admin', 'groups', g.id]}>${g.id}</${Link}></td><td>${date(g.creation_date)}</td>`}
      onCreate=${allowed['auth:CreateGroup'] && (() => setCreating(true))} onDelete=${(id) => setDeleting(id)} />
    ${creating && html`<${CreateSimple} kind="group" onSubmit=${(id) => api.post('/auth/groups', { id })} onClose=${(ok) => { setCreating(false); if (ok) setKey(key + 1) }} />`}
    ${deleting && html`<${Confirm} title="Delete group" message=${`Delete group ${deleting}?`}
      onConfirm=${() => api.del(`/auth/groups/${enc(deleting)}`)} onClose=${() => { setDeleting(null); setKey(key + 1) }} />`}
  </div>`
}

const POLICY_TEMPLATE = JSON.stringify({ id: 'MyPolicy', statement: [{ effect: 'allow', action: ['fs:ReadObject'], resource: 'arn:lakefs:fs:::repository/my-repo/object/*' }] }, null, 2)

function PolicyEditor({ id, onClose }) {
  const existing = useLoad(() => (id ? api.get(`/auth/policies/${enc(id)}`) : Promise.resolve(null)), [id])
  const [text, setText] = useState(null)
  const action = useAction()
  const shown = text !== null ? text : existing.data
    ? JSON.stringify({ id: existing.data.id, statement: existing.data.statement }, null, 2) : id ? '' : POLICY_TEMPLATE
  const problems = shown ? validatePolicy(shown) : []
  const save = (e) => {
    e.preventDefault()
    if (problems.length) return
    action.run(async () => {
      const doc = JSON.parse(shown)
      if (id) await api.put(`/auth/policies/${enc(id)}`, doc)
      else await api.post('/auth/policies', doc)
      onClose(true)
    })
  }
  return html`<${Modal} wide title=${id ? `Edit policy ${id}` : 'Create policy'} onClose=${() => onClose(false)}><form onSubmit=${save}>
    <${ErrorBox} error=${existing.error} />
    <${Field} label="Policy document (JSON)"><textarea class="code-editor" rows="16" spellcheck="false" value=${shown} onInput=${(e) => setText(e.target.value)}
      aria-invalid=${problems.length > 0} aria-describedby="policy-problems"></textarea></${Field}>
    <ul id="policy-problems" class="problems" aria-live="polite">${problems.map((p) => html`<li>${p}</li>`)}</ul>
    <${ErrorBox} error=${action.error} />
    <div class="actions"><button type="button" onClick=${() => onClose(false)}>Cancel</button>
      <button class="primary" disabled=${action.busy || problems.length > 0}>Save policy</button></div>
  </form></${Modal}>`
}

function Policies({ selected, allowed }) {
  const [editing, setEditing] = useState(selected ? { id: selected } : null)
  const [deleting, setDeleting] = useState(null)
  const [key, setKey] = useState(0)
  return html`<div>
    <${Listing} path="/auth/policies" kind="policy" columns=${['Policy', 'Statements']} reloadKey=${key}
      row=${(p) => html`<td><button class="link" onClick=${() => setEditing({ id: p.id })}>${p.id}</button></td><td>${p.statement.length}</td>`}
      onCreate=${allowed['auth:CreatePolicy'] && (() => setEditing({ id: null }))} onDelete=${(id) => setDeleting(id)} />
    ${editing && html`<${PolicyEditor} id=${editing.id} onClose=${(ok) => { setEditing(null); if (ok) setKey(key + 1); if (selected) go(['admin', 'policies']) }} />`}
    ${deleting && html`<${Confirm} title="Delete policy" message=${`Delete policy ${deleting}?`}
      onConfirm=${() => api.del(`/auth/policies/${enc(deleting)}`)} onClose=${() => { setDeleting(null); setKey(key + 1) }} />`}
  </div>`
}

export function Admin({ route, session }) {
  const allowed = session.allowed
  const tab = route.parts[1] || 'users'
  const id = route.parts[2]
  let body
  if (tab === 'users' && id) body = html`<${UserDetails} id=${id} />`
  else if (tab === 'users') body = html`<${Users} allowed=${allowed} />`
  else if (tab === 'groups' && id) body = html`<${GroupDetails} id=${id} />`
  else if (tab === 'groups') body = html`<${Groups} allowed=${allowed} />`
  else body = html`<${Policies} selected=${id} allowed=${allowed} />`
  return html`<main class="page"><div class="title-row"><h1>Administration</h1></div>
    <nav class="tabs" aria-label="Administration">${TABS.map(([t, l]) => html`<${Link} to=${['admin', t]} aria-current=${tab === t ? 'page' : undefined}>${l}</${Link}>`)}</nav>
    ${body}</main>`
}
