// A hyparquet AsyncBuffer over HTTP range requests to the API (same origin, session cookie): a Parquet
// preview reads the footer and the row groups it needs, never the whole file. ``fetched`` counts the distinct
// bytes of the file read (hyparquet reads some twice: the footer, then a row group that overlaps it), so it never
// exceeds the file's size; ``transferred`` counts every byte that came over the network.
export function rangeFile(href, byteLength, fetchImpl = fetch) {
  const covered = [] // sorted, disjoint [start, end) intervals of the file read so far
  const cover = (start, end) => {
    const merged = []
    for (const [s, e] of covered) {
      if (e < start || s > end) merged.push([s, e])
      else { start = Math.min(start, s); end = Math.max(end, e) }
    }
    merged.push([start, end])
    merged.sort((a, b) => a[0] - b[0])
    covered.splice(0, covered.length, ...merged)
    file.fetched = covered.reduce((sum, [s, e]) => sum + (e - s), 0)
  }
  const file = {
    byteLength,
    fetched: 0,
    transferred: 0,
    requests: 0,
    async slice(start, end) {
      const last = (end === undefined ? byteLength : end) - 1
      if (last < start) return new ArrayBuffer(0)
      const response = await fetchImpl(href, { headers: { Range: `bytes=${start}-${last}` }, credentials: 'same-origin' })
      if (response.status !== 206 && response.status !== 200) throw new Error(`range read answered ${response.status}`)
      const buffer = await response.arrayBuffer()
      file.transferred += buffer.byteLength
      file.requests += 1
      if (response.status === 200) cover(0, Math.min(buffer.byteLength, byteLength))
      else cover(start, Math.min(start + buffer.byteLength, byteLength))
      // A server that ignores Range answers 200 with everything: cut out what was asked.
      return response.status === 200 ? buffer.slice(start, last + 1) : buffer
    },
  }
  return file
}

// Parquet values (BigInt, Date, bytes, nested) as display text.
export function cellText(value) {
  if (value === null || value === undefined) return ''
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Date) return value.toISOString()
  if (value instanceof Uint8Array) return `<${value.length} bytes>`
  if (typeof value === 'object') return JSON.stringify(value, (k, v) => (typeof v === 'bigint' ? v.toString() : v))
  return String(value)
}
