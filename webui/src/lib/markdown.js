// Markdown as a syntax tree (mdast), parsed by micromark with its GFM extensions: CommonMark and GitHub's
// tables, strikethrough, task lists, autolinks and footnotes, and no emphasis inside words (lake_id stays
// lake_id). The tree is rendered as Preact elements by pages/preview.js, never as HTML, so nothing in a
// document can add markup or script. Links are the only way out of the page; linkTarget decides where each
// may go: http(s) URLs as they are, paths inside the repository as UI routes, anything else nowhere.
import { fromMarkdown } from 'mdast-util-from-markdown'
import { gfm } from 'micromark-extension-gfm'
import { gfmFromMarkdown } from 'mdast-util-gfm'
import { hashFor, parentPrefix } from './paths.js'

export function parseMarkdown(text) {
  return fromMarkdown(text, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] })
}

// [label]: url lines, by their normalized identifier (mdast lowercases it), for reference-style links.
export function definitions(tree) {
  const found = {}
  const walk = (node) => {
    if (node.type === 'definition' && !(node.identifier in found)) found[node.identifier] = node.url
    for (const child of node.children || []) walk(child)
  }
  walk(tree)
  return found
}

// An absolute http(s) URL, or null for anything else with a scheme (javascript:, data:, mailto:, vbscript:).
export function safeHref(href) {
  const h = (href || '').trim()
  if (/^https?:\/\/[^\s]/i.test(h)) return h
  return null
}

// The repository path a relative link names, seen from the document at docPath. A leading "/" is the
// repository's root, as on GitHub; ".." never climbs above it. A trailing "/" names a prefix.
export function repoPath(href, docPath) {
  let path = href.replace(/[?#].*$/, '')
  if (!path) return null
  try { path = decodeURIComponent(path) } catch { /* not percent-encoded: as written */ }
  const base = path.startsWith('/') ? [] : parentPrefix(docPath || '').split('/').filter(Boolean)
  const parts = [...base]
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue
    if (part === '..') parts.pop()
    else parts.push(part)
  }
  if (parts.length === 0) return ''
  return parts.join('/') + (path.endsWith('/') ? '/' : '')
}

// The object an API object URL names (api/v1/repositories/{r}/refs/{ref}/objects[/stat]?path=...), or null.
export function apiObject(href) {
  const m = href.match(/^(?:[a-z][a-z0-9+.-]*:\/\/[^/]*)?(?:\/|\.\/)?(?:[^?#]*\/)?api\/v1\/repositories\/([^/?#]+)\/refs\/([^/?#]+)\/objects(?:\/stat)?\?([^#]*)/i)
  if (!m) return null
  const path = new URLSearchParams(m[3]).get('path')
  if (!path) return null
  try { return { repo: decodeURIComponent(m[1]), ref: decodeURIComponent(m[2]), path } } catch { return null }
}

function objectRoute(repo, ref, path) {
  if (path === '' || path.endsWith('/')) return hashFor(['repositories', repo, 'objects'], { ref, prefix: path })
  return hashFor(['repositories', repo, 'objects'], { ref, prefix: parentPrefix(path), path })
}

// Where a link in a document at {repo, ref, path} may lead: {external: true, href} for an http(s) URL,
// {external: false, href: '#/...'} for a UI route, or null (the text stays, unlinked). A raw API URL, even on
// this origin, becomes the UI route of the object it names: the UI shows objects, it never opens their bytes.
export function linkTarget(url, doc, origin) {
  const href = (url || '').trim()
  const named = apiObject(href)
  if (named && (!/^[a-z][a-z0-9+.-]*:/i.test(href) || (origin && href.startsWith(origin + '/')))) {
    return { external: false, href: objectRoute(named.repo, named.ref, named.path) }
  }
  const safe = safeHref(href)
  if (safe) return { external: true, href: safe }
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) return null // another scheme, or another host
  if (href.startsWith('#') || !doc) return null // an anchor would replace the UI's own route
  const path = repoPath(href, doc.path)
  if (path === null) return null
  return { external: false, href: objectRoute(doc.repo, doc.ref, path) }
}
