// Unit tests of the UI's own logic (node --test): paths and routes, CSV, policies, MD5, range reads and
// formats. Markdown has its own file, markdown.test.js.
import test from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes } from 'node:crypto'
import { parseHash, hashFor, breadcrumbs, parentPrefix, uploadPath, previewKind, queryString } from '../src/lib/paths.js'
import { parseCsv } from '../src/lib/csv.js'
import { validatePolicy, metadataFromRows } from '../src/lib/policy.js'
import { md5OfBlob } from '../src/lib/md5.js'
import { rangeFile, cellText } from '../src/lib/rangefile.js'
import { bytes, date, isoDate, percent } from '../src/lib/format.js'

test('hash routes round-trip names that need escaping', () => {
  const hash = hashFor(['repositories', 'my repo', 'objects'], { ref: 'main~1', prefix: 'a b/ü/', empty: '' })
  assert.equal(hash, '#/repositories/my%20repo/objects?ref=main~1&prefix=a%20b%2F%C3%BC%2F')
  assert.deepEqual(parseHash(hash), { parts: ['repositories', 'my repo', 'objects'], query: { ref: 'main~1', prefix: 'a b/ü/' } })
  assert.deepEqual(parseHash(''), { parts: [], query: {} })
  assert.equal(queryString({ prefixes: ['a/', 'b/'], skip: false, none: undefined }), 'prefixes=a%2F&prefixes=b%2F')
})

test('breadcrumbs, parents and upload paths', () => {
  assert.deepEqual(breadcrumbs('a/b/'), [{ name: 'a', prefix: 'a/' }, { name: 'b', prefix: 'a/b/' }])
  assert.deepEqual(breadcrumbs(''), [])
  assert.equal(parentPrefix('a/b/'), 'a/')
  assert.equal(parentPrefix('a/'), '')
  assert.equal(uploadPath('data/', { name: 'x.csv', webkitRelativePath: 'folder/sub/x.csv' }), 'data/folder/sub/x.csv')
  assert.equal(uploadPath('', { name: 'x.csv', webkitRelativePath: '' }), 'x.csv')
})

test('preview kinds come from the extension, then the content type', () => {
  assert.equal(previewKind('a/b.parquet', 'application/octet-stream'), 'parquet')
  assert.equal(previewKind('README.MD', ''), 'markdown')
  assert.equal(previewKind('noext', 'application/json'), 'json')
  assert.equal(previewKind('pic', 'image/png'), 'image')
  assert.equal(previewKind('blob.bin', 'application/octet-stream'), null)
})

test('CSV: quotes, doubled quotes, CRLF, limits and a cut last line', () => {
  assert.deepEqual(parseCsv('a,b\r\n"x, y","say ""hi"""\n1,2'), [['a', 'b'], ['x, y', 'say "hi"'], ['1', '2']])
  assert.deepEqual(parseCsv('a\n1\n2\n3\n', { maxRows: 2 }), [['a'], ['1']])
  assert.deepEqual(parseCsv('a,b\n1,2\n3,', { truncated: true }), [['a', 'b'], ['1', '2']])
  assert.deepEqual(parseCsv('a\tb\n1\t2\n', { delimiter: '\t' }), [['a', 'b'], ['1', '2']])
})

test('policies are checked before they are sent', () => {
  assert.deepEqual(validatePolicy('{"id":"p","statement":[{"effect":"allow","action":["fs:Read*"],"resource":"*"}]}'), [])
  assert.match(validatePolicy('{')[0], /Not valid JSON/)
  const problems = validatePolicy('{"statement":[{"effect":"maybe","action":["nope"],"resource":""}]}')
  assert.equal(problems.length, 4)
  assert.deepEqual(metadataFromRows([{ key: ' a ', value: '1' }, { key: '', value: 'x' }]), { a: '1' })
  assert.throws(() => metadataFromRows([{ key: 'a', value: '1' }, { key: 'a', value: '2' }]), /twice/)
})

test('MD5 matches node crypto at every block boundary, fed in pieces', async () => {
  for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 4099]) {
    const data = randomBytes(n)
    assert.equal(await md5OfBlob(new Blob([data]), 7), createHash('md5').update(data).digest('hex'), `length ${n}`)
  }
})

test('MD5 gives the known vectors of RFC 1321, whatever the chunk size', async () => {
  const vectors = {
    '': 'd41d8cd98f00b204e9800998ecf8427e',
    a: '0cc175b9c0f1b6a831c399e269772661',
    abc: '900150983cd24fb0d6963f7d28e17f72',
    'message digest': 'f96b697d7cb7938d525a2f31aaf161d0',
    abcdefghijklmnopqrstuvwxyz: 'c3fcd3d76192e4007dfb496cca67e13b',
    ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789: 'd174ab98d277d9f5a5611c2c9f419d9f',
    '12345678901234567890123456789012345678901234567890123456789012345678901234567890': '57edf4a22be3c955ac49da2e2107b67a',
  }
  for (const [text, hex] of Object.entries(vectors)) {
    for (const chunk of [1, 3, 64, undefined]) assert.equal(await md5OfBlob(new Blob([text]), chunk), hex, `${JSON.stringify(text)} by ${chunk}`)
  }
  // Multi-byte text hashes its UTF-8 bytes, as the file on disk holds them.
  assert.equal(await md5OfBlob(new Blob(['grüße'])), createHash('md5').update('grüße', 'utf8').digest('hex'))
})

test('range reads ask for exactly the bytes wanted and count them', async () => {
  const data = Uint8Array.from({ length: 100 }, (_, i) => i)
  const asked = []
  const fakeFetch = async (href, init) => {
    const [, start, end] = init.headers.Range.match(/bytes=(\d+)-(\d+)/)
    asked.push(init.headers.Range)
    const body = data.slice(Number(start), Number(end) + 1)
    return { status: 206, arrayBuffer: async () => body.buffer }
  }
  const file = rangeFile('x', 100, fakeFetch)
  const tail = new Uint8Array(await file.slice(92))
  assert.deepEqual([...tail], [92, 93, 94, 95, 96, 97, 98, 99])
  await file.slice(0, 4)
  assert.deepEqual(asked, ['bytes=92-99', 'bytes=0-3'])
  assert.equal(file.fetched, 12)
  // Read again where it overlaps: the distinct bytes stay within the file, the transfer counts everything.
  await file.slice(90)
  await file.slice(0, 100)
  assert.equal(file.fetched, 100)
  assert.equal(file.transferred, 12 + 10 + 100)
  assert.equal(file.requests, 4)
  assert.equal(cellText(10n), '10')
  assert.equal(cellText({ a: 1n }), '{"a":"1"}')
})

test('formats', () => {
  assert.equal(bytes(0), '0 B')
  assert.equal(bytes(1536), '1.5 KiB')
  assert.equal(bytes(5 * 1024 ** 3), '5.0 GiB')
  assert.equal(percent(5, 0), 100)
  assert.equal(percent(1, 3), 33)
  assert.equal(isoDate('2026-11-28T02:15:33.123Z'), date(1795832133))
  assert.equal(isoDate('2026-11-28T02:15:33Z'), '2026-11-28 02:15:33 UTC')
  assert.equal(isoDate('not a date'), 'not a date')
})
