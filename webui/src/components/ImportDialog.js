// The Import dialog of the objects page, as lakeFS's: an s3:// source, a destination path on the branch and a
// commit message; then the count of objects imported while it runs (with Cancel), and the resulting commit.
// The server does the work (importStart / importStatus / importCancel): nothing is copied, entries point at the
// source objects.
import { useEffect, useRef, useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { html, ErrorBox, Modal, Field, Link } from '../ui.js'

const POLL_MS = 500

// onImported: called once the import has completed, so the page behind can list what it brought in.
export function ImportDialog({ ctx, prefix, onClose, onImported }) {
  const [source, setSource] = useState('')
  const [destination, setDestination] = useState(prefix)
  const [message, setMessage] = useState('')
  const [importId, setImportId] = useState(null)
  const [status, setStatus] = useState(null)
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)
  const alive = useRef(true)
  useEffect(() => () => { alive.current = false }, [])
  const path = `/repositories/${enc(ctx.repo)}/branches/${enc(ctx.ref)}/import`
  const running = importId !== null && !(status && (status.completed || status.error))

  const poll = async (id) => {
    while (alive.current) {
      let answer
      try { answer = await api.get(path, { id }) } catch (e) { setError(e); return }
      if (!alive.current) return
      setStatus(answer)
      if (answer.completed && onImported) onImported()
      if (answer.completed || answer.error) return
      await new Promise((r) => setTimeout(r, POLL_MS))
    }
  }

  const submit = async (e) => {
    e.preventDefault()
    setBusy(true); setError(null); setStatus(null)
    // A source ending in "/" is a prefix (every object under it), otherwise one object, as lakeFS's dialog.
    const type = source.endsWith('/') ? 'common_prefix' : 'object'
    try {
      const started = await api.post(path, {
        paths: [{ type, path: source, destination }],
        commit: { message: message || `Import from ${source}`, metadata: {} },
      })
      setImportId(started.id)
      await poll(started.id)
    } catch (e) { setError(e) } finally { setBusy(false) }
  }

  const cancel = async () => {
    try { await api.del(path, { id: importId }) } catch (e) { setError(e) }
  }

  const done = status && status.completed
  return html`<${Modal} title="Import data from S3" onClose=${() => onClose(!!done)}>
    <form onSubmit=${submit}>
      <p class="muted small">Objects are imported without copying: the branch points at them where they are.</p>
      <${Field} label="Import from" hint="s3://bucket/prefix/ for everything under a prefix, or one object's s3:// URI">
        <input required name="source" value=${source} placeholder="s3://bucket/prefix/" disabled=${busy || done}
          onInput=${(e) => setSource(e.target.value)} /></${Field}>
      <${Field} label="Destination" hint=${`a path on branch ${ctx.ref}`}>
        <input name="destination" value=${destination} disabled=${busy || done} onInput=${(e) => setDestination(e.target.value)} /></${Field}>
      <${Field} label="Commit message"><input name="message" value=${message} placeholder=${source ? `Import from ${source}` : ''}
        disabled=${busy || done} onInput=${(e) => setMessage(e.target.value)} /></${Field}>
      ${importId && html`<div class="import-progress" role="status" aria-live="polite">
        ${running && html`<span>Importing… ${(status && status.ingested_objects) || 0} objects so far</span>`}
        ${status && status.error && html`<span class="bad">Import failed: ${status.error.message}</span>`}
        ${done && html`<span>Imported ${status.ingested_objects} objects: commit${' '}<${Link} class="mono"
          to=${['repositories', ctx.repo, 'commits', status.commit.id]}>${status.commit.id.slice(0, 12)}</${Link}>${' '}on ${ctx.ref}.</span>`}
      </div>`}
      <${ErrorBox} error=${error} />
      <div class="actions">
        ${running && html`<button type="button" class="danger" onClick=${cancel}>Cancel import</button>`}
        <button type="button" onClick=${() => onClose(!!done)}>${done ? 'Close' : 'Cancel'}</button>
        ${!done && html`<button class="primary" disabled=${busy}>Import</button>`}
      </div>
    </form>
  </${Modal}>`
}
