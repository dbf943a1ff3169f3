// Entry point: the session (who is logged in, what they may do), the layout and the hash router.
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import * as api from './api.js'
import { parseHash } from './lib/paths.js'
import { html, Link, ErrorBox, Icon, useAction, Field } from './ui.js'
import { Repositories } from './pages/repositories.js'
import { RepositoryPage } from './pages/repository.js'
import { Admin } from './pages/admin.js'
import './style.css'

function useHash() {
  const [hash, setHash] = useState(location.hash)
  useEffect(() => {
    const on = () => setHash(location.hash)
    window.addEventListener('hashchange', on)
    return () => window.removeEventListener('hashchange', on)
  }, [])
  return parseHash(hash)
}

function Login({ onLogin }) {
  const [key, setKey] = useState('')
  const [secret, setSecret] = useState('')
  const action = useAction()
  const submit = (e) => {
    e.preventDefault()
    action.run(async () => {
      await api.post('/auth/login', { access_key_id: key.trim(), secret_access_key: secret })
      await onLogin()
    })
  }
  return html`<main class="login">
    <form onSubmit=${submit} aria-labelledby="login-title">
      <h1 id="login-title"><span class="logo" aria-hidden="true"></span> Lakelet</h1>
      <p class="muted">Sign in with an access key pair.</p>
      <${Field} label="Access key ID"><input name="access_key_id" autocomplete="username" required value=${key} onInput=${(e) => setKey(e.target.value)} /></${Field}>
      <${Field} label="Secret access key"><input name="secret_access_key" type="password" autocomplete="current-password" required value=${secret} onInput=${(e) => setSecret(e.target.value)} /></${Field}>
      <${ErrorBox} error=${action.error} />
      <button class="primary" type="submit" disabled=${action.busy}>Log in</button>
    </form>
  </main>`
}

function App() {
  const route = useHash()
  const [session, setSession] = useState({ state: 'loading' })
  const load = async () => {
    try {
      const [me, perms] = await Promise.all([api.get('/user'), api.get('/user/permissions')])
      setSession({ state: 'in', user: me.user, allowed: perms.allowed })
    } catch (e) {
      setSession(e.status === 401 ? { state: 'out' } : { state: 'error', error: e })
    }
  }
  useEffect(() => { api.setUnauthorizedHandler(() => setSession({ state: 'out' })); load() }, [])
  if (session.state === 'loading') return html`<p class="loading" aria-live="polite">Loading…</p>`
  if (session.state === 'out') return html`<${Login} onLogin=${load} />`
  if (session.state === 'error') return html`<main class="page"><${ErrorBox} error=${session.error} /></main>`
  const logout = async () => {
    try { await api.post('/auth/logout') } finally { setSession({ state: 'out' }); location.hash = '' }
  }
  const [section, repo] = route.parts
  const adminVisible = session.allowed['auth:ListUsers']
  let page
  if (section === 'repositories' && repo) page = html`<${RepositoryPage} key=${repo} repo=${repo} route=${route} session=${session} />`
  else if (section === 'admin') page = html`<${Admin} route=${route} session=${session} />`
  else page = html`<${Repositories} route=${route} session=${session} />`
  return html`<div class="app">
    <header class="top">
      <${Link} to=${['repositories']} class="brand"><span class="logo" aria-hidden="true"></span> Lakelet</${Link}>
      <nav aria-label="Main">
        <${Link} to=${['repositories']} aria-current=${section !== 'admin' ? 'page' : undefined}><${Icon} name="repo" /> Repositories</${Link}>
        ${adminVisible && html`<${Link} to=${['admin', 'users']} aria-current=${section === 'admin' ? 'page' : undefined}>Administration</${Link}>`}
      </nav>
      <div class="who"><span class="user" title="Logged in as">${session.user.id}</span>
        <button class="link" onClick=${logout}>Log out</button></div>
    </header>
    ${page}
  </div>`
}

render(html`<${App} />`, document.getElementById('root'))
