// Builds the UI into ../chalicelib/webui_dist/: index.html and assets/ with content-hashed flat names
// (chalicelib/webui.py serves them), and prints the gzipped size of what the first page loads.
import { build } from 'esbuild'
import { mkdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { dirname, join, basename } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const out = join(here, '..', 'chalicelib', 'webui_dist')
const assets = join(out, 'assets')
const BUDGET_GZIP_BYTES = 300 * 1024

rmSync(out, { recursive: true, force: true })
mkdirSync(assets, { recursive: true })

const result = await build({
  entryPoints: [join(here, 'src', 'main.js')],
  bundle: true,
  splitting: true,
  format: 'esm',
  minify: true,
  target: ['es2020'],
  outdir: assets,
  entryNames: '[name]-[hash]',
  chunkNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
})

const outputs = Object.entries(result.metafile.outputs)
const entry = outputs.find(([, o]) => o.entryPoint)
const js = basename(entry[0])
const css = basename(entry[1].cssBundle)
// What the first page needs: the entry, its CSS and the chunks it imports statically (not hyparquet).
const first = new Set([entry[0], entry[1].cssBundle, ...entry[1].imports.filter((i) => i.kind === 'import-statement').map((i) => i.path)])
let firstGzip = 0
for (const file of first) firstGzip += gzipSync(readFileSync(join(here, file))).length

writeFileSync(join(out, 'index.html'), `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lakelet</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="assets/${css}">
<script type="module" src="assets/${js}"></script>
</head>
<body><div id="root"></div></body>
</html>
`)
const report = { first_load_gzip_bytes: firstGzip, files: outputs.map(([p, o]) => ({ file: basename(p), bytes: o.bytes })) }
writeFileSync(join(out, 'build.json'), JSON.stringify(report, null, 2))
console.log(`webui: first load ${(firstGzip / 1024).toFixed(1)} KiB gzipped (budget ${BUDGET_GZIP_BYTES / 1024} KiB)`)
if (firstGzip > BUDGET_GZIP_BYTES) { console.error('webui: over the size budget'); process.exit(1) }
