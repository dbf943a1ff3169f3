// The Markdown reader (node --test): CommonMark and GFM through micromark, and where each link may lead.
import test from 'node:test'
import assert from 'node:assert/strict'
import { parseMarkdown, definitions, safeHref, repoPath, apiObject, linkTarget } from '../src/lib/markdown.js'

const QUICKSTART = `# Lakes

| lake_id | name | area_km2 |
|---|:---|---:|
| 1 | Superior | 82100 |

Columns: lake_id, name, area_km2 and snake_case_words.

\`\`\`python
import lakefs
\`\`\`

See https://lakefs.io and <https://example.com/x>.

- [x] load
- [ ] check
`

const DOC = { repo: 'demo', ref: 'main', path: 'README.md' }

function find(node, type, out = []) {
  if (node.type === type) out.push(node)
  for (const child of node.children || []) find(child, type, out)
  return out
}

function text(node) {
  if (node.value !== undefined && node.type !== 'code') return node.value
  return (node.children || []).map(text).join('')
}

test('GFM tables become table nodes with their alignment', () => {
  const [table] = find(parseMarkdown(QUICKSTART), 'table')
  assert.ok(table, 'a table node')
  assert.deepEqual(table.align, [null, 'left', 'right'])
  assert.deepEqual(table.children[0].children.map(text), ['lake_id', 'name', 'area_km2'])
  assert.deepEqual(table.children[1].children.map(text), ['1', 'Superior', '82100'])
})

test('underscores inside words are text, never emphasis', () => {
  const tree = parseMarkdown(QUICKSTART)
  assert.equal(find(tree, 'emphasis').length, 0)
  const para = find(tree, 'paragraph').find((p) => text(p).startsWith('Columns'))
  assert.equal(text(para), 'Columns: lake_id, name, area_km2 and snake_case_words.')
  assert.equal(find(parseMarkdown('an _emphasized_ word'), 'emphasis').length, 1)
})

test('fenced code keeps its language and its text as it is', () => {
  const [code] = find(parseMarkdown(QUICKSTART + '\n```\n<script>alert(1)</script>\n```\n'), 'code')
  assert.deepEqual([code.lang, code.value], ['python', 'import lakefs'])
  const codes = find(parseMarkdown('```\n<script>alert(1)</script>\n```'), 'code')
  assert.equal(codes[0].value, '<script>alert(1)</script>')
})

test('bare URLs and angle-bracket autolinks are links; task items carry their state', () => {
  const tree = parseMarkdown(QUICKSTART)
  assert.deepEqual(find(tree, 'link').map((l) => l.url), ['https://lakefs.io', 'https://example.com/x'])
  assert.deepEqual(find(tree, 'listItem').map((i) => i.checked), [true, false])
})

test('raw HTML stays a node of its own, never markup', () => {
  const tree = parseMarkdown('<script>alert(1)</script>\n\nA <b onclick="x()">b</b>')
  assert.ok(find(tree, 'html').some((n) => n.value.includes('<script>')))
  assert.ok(find(tree, 'html').some((n) => n.value.includes('onclick')))
})

test('reference links resolve through their definitions', () => {
  const tree = parseMarkdown('[docs][D]\n\n[d]: https://docs.example.com')
  assert.deepEqual(definitions(tree), { d: 'https://docs.example.com' })
  assert.equal(find(tree, 'linkReference')[0].identifier, 'd')
})

test('only http(s) URLs leave the UI', () => {
  for (const bad of ['javascript:alert(1)', 'JAVASCRIPT:alert(1)', ' javascript:x', 'data:text/html,<script>x</script>',
    'vbscript:x', 'mailto:a@b.c', 'file:///etc/passwd', '//evil.example/x']) {
    assert.equal(linkTarget(bad, DOC, 'http://ui.test'), null, bad)
  }
  assert.equal(safeHref('http:'), null)
  assert.deepEqual(linkTarget('https://example.com/a?b#c', DOC), { external: true, href: 'https://example.com/a?b#c' })
})

test('relative links are UI routes to the object they name, from the document\'s folder', () => {
  assert.equal(repoPath('report.html', 'docs/README.md'), 'docs/report.html')
  assert.equal(repoPath('../data/a%20b.csv', 'docs/README.md'), 'data/a b.csv')
  assert.equal(repoPath('/top.md', 'docs/deep/README.md'), 'top.md')
  assert.equal(repoPath('../../../../x', 'docs/README.md'), 'x')
  assert.equal(repoPath('./tables/', 'README.md'), 'tables/')
  assert.deepEqual(linkTarget('docs/report.html', DOC),
    { external: false, href: '#/repositories/demo/objects?ref=main&prefix=docs%2F&path=docs%2Freport.html' })
  assert.deepEqual(linkTarget('tables/', { ...DOC, path: 'a/README.md' }),
    { external: false, href: '#/repositories/demo/objects?ref=main&prefix=a%2Ftables%2F' })
  assert.equal(linkTarget('#usage', DOC), null)
})

test('a raw API object URL becomes the UI route of its object', () => {
  const api = 'api/v1/repositories/demo/refs/main/objects?path=docs%2Freport.html'
  assert.deepEqual(apiObject(api), { repo: 'demo', ref: 'main', path: 'docs/report.html' })
  const route = { external: false, href: '#/repositories/demo/objects?ref=main&prefix=docs%2F&path=docs%2Freport.html' }
  assert.deepEqual(linkTarget(api, DOC, 'http://ui.test'), route)
  assert.deepEqual(linkTarget('/' + api, DOC, 'http://ui.test'), route)
  assert.deepEqual(linkTarget('../../' + api, { ...DOC, path: 'a/b/README.md' }, 'http://ui.test'), route)
  assert.deepEqual(linkTarget('http://ui.test/' + api, DOC, 'http://ui.test'), route)
  // Another origin's API is just a URL, and its own server's business.
  assert.equal(linkTarget('https://other.test/' + api, DOC, 'http://ui.test').external, true)
})
