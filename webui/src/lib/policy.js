// Checks a policy document before it is sent, so the editor can say what is wrong where (the server checks
// again). Returns a list of messages; empty means valid.
const ACTION = /^(fs|auth|ci|retention|branches|pr|\*):[A-Za-z*?]+$|^\*$/

export function validatePolicy(text) {
  let doc
  try { doc = JSON.parse(text) } catch (e) { return [`Not valid JSON: ${e.message}`] }
  const problems = []
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return ['The policy must be a JSON object']
  if (typeof doc.id !== 'string' || !doc.id) problems.push('"id" must be a non-empty string')
  if (!Array.isArray(doc.statement) || doc.statement.length === 0) {
    problems.push('"statement" must be a non-empty list')
    return problems
  }
  doc.statement.forEach((s, i) => {
    const where = `statement ${i + 1}`
    if (!s || typeof s !== 'object') { problems.push(`${where} must be an object`); return }
    if (s.effect !== 'allow' && s.effect !== 'deny') problems.push(`${where}: "effect" must be "allow" or "deny"`)
    if (typeof s.resource !== 'string' || !s.resource) problems.push(`${where}: "resource" must be a non-empty string`)
    if (!Array.isArray(s.action) || s.action.length === 0) problems.push(`${where}: "action" must be a non-empty list`)
    else s.action.forEach((a) => { if (typeof a !== 'string' || !ACTION.test(a)) problems.push(`${where}: unknown action ${JSON.stringify(a)}`) })
  })
  return problems
}

// Key/value rows of a form -> the metadata object the API takes; blank keys are dropped, duplicates refused.
export function metadataFromRows(rows) {
  const out = {}
  for (const { key, value } of rows) {
    const k = (key || '').trim()
    if (!k) continue
    if (k in out) throw new Error(`Metadata key "${k}" is given twice`)
    out[k] = value || ''
  }
  return out
}
