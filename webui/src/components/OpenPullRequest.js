// The "Open pull request" button of Compare & merge: a title and a description, then the new pull request's page
// (pages/pulls.js).
import { useState } from 'preact/hooks'
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { html, ErrorBox, useAction, Field, Modal, go } from '../ui.js'

export function OpenPullRequest({ ctx, source, dest }) {
  const [shown, setShown] = useState(false)
  const [title, setTitle] = useState('')
  const [description, setDescription] = useState('')
  const action = useAction()
  const create = () => action.run(async () => {
    const created = await api.post(`/repositories/${enc(ctx.repo)}/pulls`, { title, description, source_branch: source, destination_branch: dest })
    go(['repositories', ctx.repo, 'pulls', created.id])
  })
  return html`<span>
    <button onClick=${() => setShown(true)}>Open pull request</button>
    ${shown && html`<${Modal} title=${`Pull request: ${source} into ${dest}`} onClose=${() => setShown(false)}>
      <${Field} label="Title"><input value=${title} onInput=${(e) => setTitle(e.target.value)} placeholder=${`Merge ${source} into ${dest}`} /></${Field}>
      <${Field} label="Description"><textarea rows="5" value=${description} onInput=${(e) => setDescription(e.target.value)} /></${Field}>
      <${ErrorBox} error=${action.error} />
      <div class="actions"><button onClick=${() => setShown(false)}>Cancel</button>
        <button class="primary" disabled=${action.busy || !title.trim()} onClick=${create}>Open pull request</button></div>
    </${Modal}>`}
  </span>`
}
