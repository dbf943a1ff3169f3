// A small RFC 4180 CSV reader: quoted fields, doubled quotes, CR/LF line ends, a row limit (previews show
// the first rows of a possibly truncated read, so a last partial line is dropped when `truncated`).
export function parseCsv(text, { delimiter = ',', maxRows = 200, truncated = false } = {}) {
  const rows = []
  let row = []
  let field = ''
  let quoted = false
  let i = 0
  const n = text.length
  while (i < n && rows.length < maxRows) {
    const c = text[i]
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') { field += '"'; i += 2; continue }
        quoted = false; i++; continue
      }
      field += c; i++; continue
    }
    if (c === '"' && field === '') { quoted = true; i++; continue }
    if (c === delimiter) { row.push(field); field = ''; i++; continue }
    if (c === '\r' || c === '\n') {
      row.push(field); rows.push(row); row = []; field = ''
      if (c === '\r' && text[i + 1] === '\n') i++
      i++; continue
    }
    field += c; i++
  }
  if (rows.length < maxRows && (field !== '' || row.length) && !truncated) { row.push(field); rows.push(row) }
  return rows
}
