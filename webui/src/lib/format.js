// Display formats (unit-tested).

export function bytes(n) {
  if (n === undefined || n === null) return ''
  if (n < 1024) return `${n} B`
  const units = ['KiB', 'MiB', 'GiB', 'TiB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++ }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`
}

export function date(seconds) {
  if (!seconds) return ''
  const d = new Date(seconds * 1000)
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')
}

// An ISO date-time (action runs' times) in the format of every other date of the UI.
export function isoDate(iso) {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? String(iso ?? '') : date(d.getTime() / 1000)
}

export function shortId(id) { return (id || '').slice(0, 12) }

export function percent(loaded, total) {
  if (!total) return 100
  return Math.min(100, Math.floor((loaded / total) * 100))
}
