// The one way the UI talks to the API: same origin, session cookie, CSRF header on every request, errors as
// ApiError with the server's message (lakeFS's {"message"} shape) so every page can show it as it is.
import { apiPath, enc } from './lib/paths.js'

export class ApiError extends Error {
  constructor(status, message, body) {
    super(message)
    this.status = status
    this.body = body
  }
}

let onUnauthorized = () => {}
export function setUnauthorizedHandler(fn) { onUnauthorized = fn }

// Relative to the page, so the UI also works under an API Gateway stage prefix (https://host/api/).
export const API_BASE = 'api/v1'

export function url(path, query) {
  return API_BASE + apiPath(path, query)
}

// An object's bytes at a ref; presign asks for a 302 to the store, for downloads that skip the API's size limit.
export function objectUrl(repo, ref, path, presign) {
  return url(`/repositories/${enc(repo)}/refs/${enc(ref)}/objects`, { path, presign: presign ? 'true' : undefined })
}

export async function errorFrom(response) {
  let body = null
  let message = ''
  try {
    const text = await response.text()
    try { body = JSON.parse(text); message = body.message || '' } catch { message = text.slice(0, 300) }
  } catch { /* body unreadable */ }
  return new ApiError(response.status, describe(response.status, message), body)
}

export const LOGIN_REFUSED = 'Wrong access key ID or secret access key: check both and try again'

export function describe(status, message) {
  if (status === 403) return `Not allowed: ${message || 'your policies do not permit this action'}`
  if (status === 401) return 'Your session has ended: please log in again'
  if (status === 0) return 'The server could not be reached'
  return message || `The server answered ${status}`
}

export async function request(method, path, { query, body, headers, raw, allow } = {}) {
  const init = { method, credentials: 'same-origin', headers: { 'X-Lakelet-CSRF': '1', Accept: 'application/json', ...headers } }
  if (body !== undefined) {
    init.body = typeof body === 'string' || body instanceof Blob ? body : JSON.stringify(body)
    if (!init.headers['Content-Type']) init.headers['Content-Type'] = 'application/json'
  }
  let response
  try {
    response = await fetch(url(path, query), init)
  } catch (e) {
    throw new ApiError(0, describe(0, ''), null)
  }
  if (!response.ok && !(allow || []).includes(response.status)) {
    const error = await errorFrom(response)
    // A 401 from the login itself is a wrong key pair, not an ended session.
    if (response.status === 401 && path === '/auth/login') throw new ApiError(401, LOGIN_REFUSED, error.body)
    if (response.status === 401) onUnauthorized()
    throw error
  }
  if (raw) return response
  if (response.status === 204) return null
  const text = await response.text()
  if (!text) return null
  try { return { ...JSON.parse(text), _status: response.status } } catch { return { text, _status: response.status } }
}

export const get = (path, query, opts) => request('GET', path, { query, ...opts })
export const post = (path, body, query, opts) => request('POST', path, { body, query, ...opts })
export const put = (path, body, query, opts) => request('PUT', path, { body, query, ...opts })
export const patch = (path, body, query, opts) => request('PATCH', path, { body, query, ...opts })
export const del = (path, query, body) => request('DELETE', path, { query, body })

// Polls a commit or merge task until it completes; onTick gets each status (for a progress display).
export async function pollTask(statusPath, id, onTick, intervalMs = 700) {
  for (;;) {
    const status = await get(statusPath, { id })
    onTick && onTick(status)
    if (status.completed) {
      if (status.error) throw new ApiError(status.status_code || 500, status.error.message, status)
      return status.result
    }
    await new Promise((r) => setTimeout(r, intervalMs))
  }
}

// XHR rather than fetch: only XHR reports upload progress.
export function xhrSend(method, target, data, headers, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open(method, target)
    for (const [k, v] of Object.entries(headers || {})) xhr.setRequestHeader(k, v)
    xhr.upload.onprogress = (e) => { if (e.lengthComputable && onProgress) onProgress(e.loaded, e.total) }
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(xhr)
      else {
        let message = xhr.responseText
        try { message = JSON.parse(xhr.responseText).message || message } catch { /* not JSON */ }
        reject(new ApiError(xhr.status, describe(xhr.status, message), null))
      }
    }
    xhr.onerror = () => reject(new ApiError(0, describe(0, ''), null))
    xhr.send(data)
  })
}
