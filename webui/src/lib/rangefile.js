// A hyparquet AsyncBuffer over HTTP range requests to the API (same origin, session cookie): a Parquet
// preview reads the footer and the row groups it needs, never the whole file. Counts the bytes it fetched.
export function rangeFile(href, byteLength, fetchImpl = fetch) {
  const file = {
    byteLength,
    fetched: 0,
    async slice(start, end) {
      const last = (end === undefined ? byteLength : end) - 1
      if (last < start) return new ArrayBuffer(0)
      const response = await fetchImpl(href, { headers: { Range: `bytes=${start}-${last}` }, credentials: 'same-origin' })
      if (response.status !== 206 && response.status !== 200) throw new Error(`range read answered ${response.status}`)
      const buffer = await response.arrayBuffer()
      file.fetched += buffer.byteLength
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
