// The UI's module layering, read from the sources: pages import components/, lib/, api.js, ui.js and
// uploads.js but never another page (the shell, pages/repository.js, routes to them and may), nothing below
// the pages reaches up into them, and the module graph has no cycle. A widget two pages need lives in
// components/, so a page can change without dragging its neighbours along.
import test from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src')
const SHELL = 'pages/repository.js'
// The entry point routes to the top-level pages, as the shell does within a repository.
const ENTRY = 'main.js'

function sources(dir = SRC) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sources(path)
    return name.endsWith('.js') ? [relative(SRC, path).split('\\').join('/')] : []
  })
}

// Static imports, re-exports and dynamic import() calls with a literal specifier; only relative ones name
// our own modules.
const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/gm

function importsOf(file) {
  const text = readFileSync(join(SRC, file), 'utf8')
  const out = new Set()
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[1] || m[2] || m[3]
    if (spec.startsWith('.')) out.add(relative(SRC, resolve(SRC, dirname(file), spec)).split('\\').join('/'))
  }
  return [...out]
}

const isPage = (file) => file.startsWith('pages/')
const graph = new Map(sources().map((f) => [f, importsOf(f)]))

test('the reader sees the imports it is meant to judge', () => {
  // Without this, a parser that finds nothing would pass every rule below.
  assert.ok(graph.get(SHELL).includes('pages/objects.js'), 'the shell imports the objects page')
  assert.ok([...graph.values()].some((deps) => deps.includes('lib/markdown.js')), 'dynamic imports count')
})

test('a page imports no other page; only the shell routes to them', () => {
  const offences = []
  for (const [file, deps] of graph) {
    if (!isPage(file) || file === SHELL) continue
    for (const dep of deps) if (isPage(dep)) offences.push(`${file} -> ${dep}`)
  }
  assert.deepEqual(offences, [], 'move what pages share into components/, lib/ or api.js')
})

test('nothing below the pages imports a page', () => {
  const offences = []
  for (const [file, deps] of graph) {
    if (isPage(file) || file === ENTRY) continue
    for (const dep of deps) if (isPage(dep)) offences.push(`${file} -> ${dep}`)
  }
  assert.deepEqual(offences, [])
})

test('the shared widgets live in components/, objectUrl in api.js', async () => {
  for (const [file, name] of [['components/RefSelector.js', 'RefSelector'], ['components/DiffTable.js', 'DiffTable'], ['api.js', 'objectUrl']]) {
    assert.match(readFileSync(join(SRC, file), 'utf8'), new RegExp(`export function ${name}\\b`), `${name} in ${file}`)
  }
  const api = await import('../src/api.js')
  assert.equal(api.objectUrl('my repo', 'main~1', 'a b/c.csv'), 'api/v1/repositories/my%20repo/refs/main~1/objects?path=a%20b%2Fc.csv')
  assert.equal(api.objectUrl('r', 'main', 'x', true), 'api/v1/repositories/r/refs/main/objects?path=x&presign=true')
})

test('the module graph has no cycle', () => {
  const state = new Map()
  const cycles = []
  const visit = (file, path) => {
    if (state.get(file) === 'done') return
    if (state.get(file) === 'open') { cycles.push([...path.slice(path.indexOf(file)), file].join(' -> ')); return }
    state.set(file, 'open')
    for (const dep of graph.get(file) || []) visit(dep, [...path, file])
    state.set(file, 'done')
  }
  for (const file of graph.keys()) visit(file, [])
  assert.deepEqual(cycles, [])
})
