// Repository settings: GC rules (view, edit, remove), branch protection (when the server serves it) and the
// repository's metadata.
import { useEffect, useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { metadataFromRows } from '../lib/policy.js'
import { html, ErrorBox, useLoad, useAction, Field, KeyValueRows, Notice } from '../ui.js'

async function orNull(promise, statuses = [404]) {
  try { return await promise } catch (e) { if (statuses.includes(e.status)) return null; throw e }
}

function GcRules({ ctx }) {
  const base = `/repositories/${enc(ctx.repo)}/settings/gc_rules`
  const rules = useLoad(() => orNull(api.get(base)), [ctx.repo])
  const [days, setDays] = useState('')
  const [rows, setRows] = useState([])
  const [saved, setSaved] = useState(null)
  const action = useAction()
  const canEdit = ctx.allowed['retention:SetGarbageCollectionRules']
  useEffect(() => {
    if (rules.data) {
      setDays(String(rules.data.default_retention_days))
      setRows(rules.data.branches.map((b) => ({ key: b.branch_id, value: String(b.retention_days) })))
    }
  }, [rules.data])
  const save = (e) => {
    e.preventDefault()
    action.run(async () => {
      const branches = rows.filter((r) => r.key.trim()).map((r) => ({ branch_id: r.key.trim(), retention_days: Number(r.value) }))
      await api.put(base, { default_retention_days: Number(days), branches })
      setSaved('GC rules saved.')
      rules.reload()
    })
  }
  const remove = () => action.run(async () => { await api.del(base); setDays(''); setRows([]); setSaved('GC rules removed.'); rules.reload() })
  return html`<section class="card-section" aria-labelledby="gc-title"><h2 id="gc-title">Garbage collection rules</h2>
    <${ErrorBox} error=${rules.error && rules.error.status !== 403 ? rules.error : null} />
    ${rules.error && rules.error.status === 403 && html`<p class="muted">You may not read this repository's GC rules.</p>`}
    ${!rules.loading && !rules.data && !rules.error && html`<p class="muted">No rules set: nothing is collected.</p>`}
    ${canEdit ? html`<form onSubmit=${save}>
      <${Field} label="Default retention (days)"><input name="default_retention_days" type="number" min="0" required value=${days} onInput=${(e) => setDays(e.target.value)} /></${Field}>
      <${KeyValueRows} label="Per-branch retention (branch, days)" rows=${rows} setRows=${setRows} />
      <${ErrorBox} error=${action.error} />
      ${saved && html`<${Notice}>${saved}</${Notice}>`}
      <div class="actions left"><button class="primary" disabled=${action.busy}>Save GC rules</button>
        ${rules.data && html`<button type="button" class="danger" onClick=${remove}>Remove rules</button>`}</div>
    </form>` : rules.data && html`<dl class="props"><dt>Default retention</dt><dd>${rules.data.default_retention_days} days</dd>
      ${rules.data.branches.map((b) => html`<dt>${b.branch_id}</dt><dd>${b.retention_days} days</dd>`)}</dl>`}
  </section>`
}

function BranchProtection({ ctx }) {
  const base = `/repositories/${enc(ctx.repo)}/settings/branch_protection`
  const [missing, setMissing] = useState(false)
  const rules = useLoad(async () => {
    try {
      const r = await api.get(base, undefined, { raw: true })
      return { rules: await r.json(), etag: r.headers.get('ETag') }
    } catch (e) {
      // An API without the route answers 404 (or API Gateway's 403 "Missing Authentication Token").
      if (e.status === 404 || e.status === 405 || /Missing Authentication Token/.test(e.message)) { setMissing(true); return null }
      throw e
    }
  }, [ctx.repo])
  const [pattern, setPattern] = useState('')
  const action = useAction()
  const canEdit = ctx.allowed['branches:SetBranchProtectionRules']
  const save = (list) => action.run(async () => {
    await api.put(base, list, undefined, { headers: rules.data.etag ? { 'If-Match': rules.data.etag } : {} })
    rules.reload()
  })
  if (missing) return html`<section class="card-section"><h2>Branch protection</h2><p class="muted">This server does not offer branch protection.</p></section>`
  const list = rules.data ? (Array.isArray(rules.data.rules) ? rules.data.rules : rules.data.rules.rules || []) : []
  return html`<section class="card-section" aria-labelledby="bp-title"><h2 id="bp-title">Branch protection</h2>
    <${ErrorBox} error=${rules.error || action.error} />
    ${rules.data && html`<ul class="plain">${list.map((r) => html`<li><span class="mono">${r.pattern}</span>
      ${canEdit && html` <button class="link bad" onClick=${() => save(list.filter((x) => x.pattern !== r.pattern))} aria-label=${`Remove protection ${r.pattern}`}>Remove</button>`}</li>`)}
      ${list.length === 0 && html`<li class="muted">No protected branches.</li>`}</ul>
    ${canEdit && html`<form class="inline-form" onSubmit=${(e) => { e.preventDefault(); pattern && save([...list, { pattern }]); setPattern('') }}>
      <${Field} label="Protect branches matching"><input value=${pattern} onInput=${(e) => setPattern(e.target.value)} placeholder="main or release-*" /></${Field}>
      <button type="submit">Add rule</button></form>`}`}
  </section>`
}

function Metadata({ ctx }) {
  const base = `/repositories/${enc(ctx.repo)}/metadata`
  const meta = useLoad(() => api.get(base), [ctx.repo])
  const [rows, setRows] = useState([])
  const [saved, setSaved] = useState(null)
  const action = useAction()
  const canEdit = ctx.allowed['fs:UpdateRepository']
  useEffect(() => { if (meta.data) { const { _status, ...m } = meta.data; setRows(Object.entries(m).map(([key, value]) => ({ key, value }))) } }, [meta.data])
  const save = (e) => {
    e.preventDefault()
    action.run(async () => {
      const values = metadataFromRows(rows)
      const { _status, ...old } = meta.data || {}
      const gone = Object.keys(old).filter((k) => !(k in values))
      if (gone.length) await api.del(base, undefined, { keys: gone })
      if (Object.keys(values).length) await api.post(base, { metadata: values })
      setSaved('Metadata saved.')
      meta.reload()
    })
  }
  return html`<section class="card-section" aria-labelledby="meta-title"><h2 id="meta-title">Repository metadata</h2>
    <${ErrorBox} error=${meta.error} />
    <dl class="props"><dt>Storage namespace</dt><dd class="mono">${ctx.repository.storage_namespace}</dd>
      <dt>Default branch</dt><dd>${ctx.repository.default_branch}</dd>
      ${ctx.repository.read_only && html`<dt>Read-only</dt><dd>yes</dd>`}</dl>
    ${canEdit ? html`<form onSubmit=${save}><${KeyValueRows} rows=${rows} setRows=${setRows} />
      <${ErrorBox} error=${action.error} />${saved && html`<${Notice}>${saved}</${Notice}>`}
      <div class="actions left"><button class="primary" disabled=${action.busy}>Save metadata</button></div></form>`
      : html`<dl class="props">${rows.map((r) => html`<dt>${r.key}</dt><dd>${r.value}</dd>`)}</dl>`}
  </section>`
}

export function Settings({ ctx }) {
  return html`<div class="settings"><${GcRules} ctx=${ctx} /><${BranchProtection} ctx=${ctx} /><${Metadata} ctx=${ctx} /></div>`
}
