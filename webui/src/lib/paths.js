// Pure helpers for paths, URLs and hash routes (unit-tested with node --test).

export function enc(s) { return encodeURIComponent(s) }

// '/repositories/{r}/...' with each segment given already encoded by the caller via seg().
export function apiPath(path, query) {
  const q = query ? queryString(query) : ''
  return q ? `${path}?${q}` : path
}

export function queryString(query) {
  const parts = []
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '' || v === false) continue
    const values = Array.isArray(v) ? v : [v]
    for (const one of values) parts.push(`${enc(k)}=${enc(String(one))}`)
  }
  return parts.join('&')
}

export function parseQuery(s) {
  const out = {}
  for (const part of (s || '').split('&')) {
    if (!part) continue
    const i = part.indexOf('=')
    const k = decodeURIComponent(i < 0 ? part : part.slice(0, i))
    out[k] = i < 0 ? '' : decodeURIComponent(part.slice(i + 1).replace(/\+/g, ' '))
  }
  return out
}

// '#/repositories/r/objects?ref=main&prefix=a/' -> {parts: ['repositories','r','objects'], query: {...}}
export function parseHash(hash) {
  const raw = (hash || '').replace(/^#\/?/, '')
  const i = raw.indexOf('?')
  const path = i < 0 ? raw : raw.slice(0, i)
  const parts = path.split('/').filter(Boolean).map((p) => decodeURIComponent(p))
  return { parts, query: parseQuery(i < 0 ? '' : raw.slice(i + 1)) }
}

export function hashFor(parts, query) {
  const q = query ? queryString(query) : ''
  return '#/' + parts.map(enc).join('/') + (q ? '?' + q : '')
}

// 'a/b/c/' -> [{name:'a', prefix:'a/'}, {name:'b', prefix:'a/b/'}, {name:'c', prefix:'a/b/c/'}]
export function breadcrumbs(prefix) {
  const out = []
  let acc = ''
  for (const name of (prefix || '').split('/')) {
    if (!name) continue
    acc += name + '/'
    out.push({ name, prefix: acc })
  }
  return out
}

export function baseName(path) {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path
  return trimmed.slice(trimmed.lastIndexOf('/') + 1)
}

export function parentPrefix(path) {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path
  const i = trimmed.lastIndexOf('/')
  return i < 0 ? '' : trimmed.slice(0, i + 1)
}

// Where an uploaded file lands: the browsed prefix + its path inside a picked folder (webkitRelativePath).
export function uploadPath(prefix, file) {
  const rel = (file.webkitRelativePath || file.name || '').replace(/^\/+/, '')
  return (prefix || '') + rel
}

export function extension(path) {
  const name = baseName(path).toLowerCase()
  const i = name.lastIndexOf('.')
  return i <= 0 ? '' : name.slice(i + 1)
}

export const PREVIEW_KINDS = {
  md: 'markdown', markdown: 'markdown', json: 'json', jsonl: 'text', ndjson: 'text', csv: 'csv', tsv: 'tsv',
  parquet: 'parquet', png: 'image', jpg: 'image', jpeg: 'image', gif: 'image', webp: 'image', svg: 'image',
  txt: 'text', log: 'text', py: 'text', sql: 'text', yaml: 'text', yml: 'text', toml: 'text', sh: 'text',
  js: 'text', xml: 'text', html: 'text', ini: 'text', cfg: 'text',
}

export function previewKind(path, contentType) {
  const byExt = PREVIEW_KINDS[extension(path)]
  if (byExt) return byExt
  const ct = (contentType || '').toLowerCase()
  if (ct.startsWith('image/') && ct !== 'image/svg+xml') return 'image'
  if (ct.includes('json')) return 'json'
  if (ct.includes('csv')) return 'csv'
  if (ct.startsWith('text/')) return 'text'
  return null
}
