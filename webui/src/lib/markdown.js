// A small Markdown reader that builds a tree of plain objects, never HTML: the renderer turns it into
// elements, so nothing in a document can inject markup or script. Covers headings, paragraphs, lists,
// fenced code, block quotes, rules, GitHub's pipe tables, and inline code, emphasis, strong and links
// (http(s), mailto, relative).

// A table's second line: cells of dashes, each with an optional colon at either end for its alignment.
const DELIMITER_ROW = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/

// As GitHub's: a header row with pipes, then a delimiter row with as many cells.
function isTableStart(lines, i) {
  return lines[i].includes('|') && i + 1 < lines.length && DELIMITER_ROW.test(lines[i + 1]) &&
    tableCells(lines[i]).length === tableCells(lines[i + 1]).length
}

// The cells of a table row: split on pipes, except escaped ones (\|), without the optional outer pipes.
export function tableCells(line) {
  const cells = ['']
  const text = line.trim().replace(/^\|/, '').replace(/(^|[^\\])\|$/, '$1')
  for (let k = 0; k < text.length; k++) {
    if (text[k] === '\\' && text[k + 1] === '|') { cells[cells.length - 1] += '|'; k++ }
    else if (text[k] === '|') cells.push('')
    else cells[cells.length - 1] += text[k]
  }
  return cells.map((c) => c.trim())
}

function alignment(cell) {
  const left = cell.startsWith(':')
  const right = cell.endsWith(':')
  return left && right ? 'center' : right ? 'right' : left ? 'left' : null
}

export function parseMarkdown(text) {
  const lines = text.replace(/\r\n?/g, '\n').split('\n')
  const blocks = []
  let i = 0
  while (i < lines.length) {
    const line = lines[i]
    if (/^\s*$/.test(line)) { i++; continue }
    const fence = line.match(/^\s*(```|~~~)(.*)$/)
    if (fence) {
      const body = []
      i++
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++])
      i++
      blocks.push({ type: 'code', lang: fence[2].trim(), text: body.join('\n') })
      continue
    }
    if (isTableStart(lines, i)) {
      const header = tableCells(line)
      const align = tableCells(lines[i + 1]).map(alignment)
      const rows = []
      i += 2
      while (i < lines.length && !/^\s*$/.test(lines[i]) && lines[i].includes('|')) {
        const cells = tableCells(lines[i++])
        // As GitHub does: every row has the header's number of cells, padded or cut.
        rows.push(header.map((_, k) => inline(cells[k] || '')))
      }
      blocks.push({ type: 'table', align: header.map((_, k) => align[k] || null), header: header.map(inline), rows })
      continue
    }
    const heading = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/)
    if (heading) { blocks.push({ type: 'heading', level: heading[1].length, children: inline(heading[2]) }); i++; continue }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) { blocks.push({ type: 'rule' }); i++; continue }
    if (/^\s*>/.test(line)) {
      const body = []
      while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ''))
      blocks.push({ type: 'quote', children: parseMarkdown(body.join('\n')) })
      continue
    }
    const item = /^\s*([-*+]|\d+[.)])\s+/
    if (item.test(line)) {
      const ordered = /^\s*\d/.test(line)
      const items = []
      while (i < lines.length && item.test(lines[i])) {
        items.push(inline(lines[i].replace(item, '')))
        i++
      }
      blocks.push({ type: 'list', ordered, items })
      continue
    }
    const para = []
    while (i < lines.length && !/^\s*$/.test(lines[i]) && !/^(#{1,6}\s|\s*```|\s*>)/.test(lines[i]) && !item.test(lines[i]) &&
           !(para.length && isTableStart(lines, i))) {
      para.push(lines[i++].trim())
    }
    blocks.push({ type: 'paragraph', children: inline(para.join(' ')) })
  }
  return blocks
}

export function safeHref(href) {
  const h = href.trim()
  if (/^(https?:|mailto:)/i.test(h)) return h
  if (/^[a-z][a-z0-9+.-]*:/i.test(h)) return null // javascript:, data:, vbscript: ...
  return h
}

const INLINE = /(`+)([\s\S]*?)\1|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*]+)\*|_([^_]+)_|\[([^\]]*)\]\(([^)\s]*)\)/

export function inline(text) {
  const out = []
  let rest = text
  while (rest) {
    const m = rest.match(INLINE)
    if (!m) { out.push({ type: 'text', text: rest }); break }
    if (m.index > 0) out.push({ type: 'text', text: rest.slice(0, m.index) })
    if (m[1]) out.push({ type: 'code', text: m[2] })
    else if (m[3] || m[4]) out.push({ type: 'strong', children: inline(m[3] || m[4]) })
    else if (m[5] || m[6]) out.push({ type: 'em', children: inline(m[5] || m[6]) })
    else {
      const href = safeHref(m[8])
      out.push(href ? { type: 'link', href, children: inline(m[7]) } : { type: 'text', text: m[7] })
    }
    rest = rest.slice(m.index + m[0].length)
  }
  return out
}
