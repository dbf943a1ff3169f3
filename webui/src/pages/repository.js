// One repository: its tabs, the ref in use, and what the caller may do there (GET /user/permissions).
import * as api from '../api.js'
import { enc } from '../lib/paths.js'
import { html, Link, ErrorBox, useLoad } from '../ui.js'
import { Objects } from './objects.js'
import { Changes } from './changes.js'
import { Commits, CommitDetails } from './commits.js'
import { Compare } from './compare.js'
import { Branches, Tags } from './refs.js'
import { Settings } from './settings.js'
import { Actions, RunDetails } from './actions.js'
import { Pulls } from './pulls.js'

const TABS = [
  ['objects', 'Objects'], ['changes', 'Uncommitted changes'], ['commits', 'Commits'], ['compare', 'Compare & merge'], ['pulls', 'Pull requests'],
  ['branches', 'Branches'], ['tags', 'Tags'], ['actions', 'Actions'], ['settings', 'Settings'],
]

export function RepositoryPage({ repo, route }) {
  const tab = route.parts[2] || 'objects'
  const info = useLoad(async () => {
    const [repository, branches, tags] = await Promise.all([
      api.get(`/repositories/${enc(repo)}`),
      api.get(`/repositories/${enc(repo)}/branches`, { amount: 1000 }),
      api.get(`/repositories/${enc(repo)}/tags`, { amount: 1000 }),
    ])
    return { repository, branches: branches.results, tags: tags.results }
  }, [repo, route.parts[2]])
  const ref = route.query.ref || (info.data ? info.data.repository.default_branch : '')
  const isBranch = info.data ? info.data.branches.some((b) => b.id === ref) : false
  const perms = useLoad(() => api.get('/user/permissions', { repository: repo, branch: isBranch ? ref : '' }), [repo, ref, isBranch])
  const allowed = perms.data ? perms.data.allowed : {}
  const keep = route.query.ref ? { ref: route.query.ref } : undefined
  if (info.error) return html`<main class="page"><${ErrorBox} error=${info.error} /></main>`
  if (!info.data) return html`<main class="page"><p class="loading">Loading…</p></main>`
  const ctx = { repo, ref, isBranch, allowed, reloadRefs: info.reload, ...info.data }
  let body
  if (tab === 'objects') body = html`<${Objects} ctx=${ctx} route=${route} />`
  else if (tab === 'changes') body = html`<${Changes} ctx=${ctx} route=${route} />`
  else if (tab === 'commits' && route.parts[3]) body = html`<${CommitDetails} ctx=${ctx} id=${route.parts[3]} />`
  else if (tab === 'commits') body = html`<${Commits} ctx=${ctx} route=${route} />`
  else if (tab === 'compare') body = html`<${Compare} ctx=${ctx} route=${route} />`
  else if (tab === 'pulls') body = html`<${Pulls} ctx=${ctx} route=${route} />`
  else if (tab === 'branches') body = html`<${Branches} ctx=${ctx} route=${route} />`
  else if (tab === 'tags') body = html`<${Tags} ctx=${ctx} />`
  else if (tab === 'actions' && route.parts[3]) body = html`<${RunDetails} ctx=${ctx} id=${route.parts[3]} />`
  else if (tab === 'actions') body = html`<${Actions} ctx=${ctx} route=${route} />`
  else body = html`<${Settings} ctx=${ctx} />`
  return html`<main class="page">
    <div class="title-row"><h1><${Link} to=${['repositories']}>Repositories</${Link}> / ${repo}</h1></div>
    <nav class="tabs" aria-label="Repository">
      ${TABS.map(([id, label]) => html`<${Link} to=${['repositories', repo, id]} query=${id === 'objects' || id === 'changes' || id === 'commits' ? keep : undefined}
        aria-current=${tab === id ? 'page' : undefined}>${label}</${Link}>`)}
    </nav>
    ${body}
  </main>`
}
