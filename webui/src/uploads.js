// Uploads: straight to S3 through a presigned PUT when the server supports it (GET staging/backing, PUT the
// bytes, PUT staging/backing to link), else through the API. Progress per file and overall via XHR.
import * as api from './api.js'
import { enc } from './lib/paths.js'

let presignSupport = null
export async function presignSupported() {
  if (presignSupport === null) {
    try { presignSupport = !!(await api.get('/config/storage')).pre_sign_support } catch { presignSupport = false }
  }
  return presignSupport
}

async function viaPresign(repo, branch, path, file, onProgress) {
  const base = `/repositories/${enc(repo)}/branches/${enc(branch)}/staging/backing`
  const location = await api.get(base, { path, presign: 'true' })
  if (!location.presigned_url) return false
  // Hashed while it uploads: the ETag is the checksum, but a store may not expose it to scripts (CORS). The
  // hasher loads with the first presigned upload, not with the UI.
  const digest = import('./lib/md5.js').then(({ md5OfBlob }) => md5OfBlob(file))
  // Awaited only when the store hides the ETag; a failure nobody awaits must not surface as unhandled.
  digest.catch(() => {})
  let xhr
  try {
    xhr = await api.xhrSend('PUT', location.presigned_url, file, {}, onProgress)
  } catch (e) {
    // A store without CORS for this origin: say nothing, go through the API instead.
    if (e.status === 0) return false
    throw e
  }
  const etag = xhr.getResponseHeader('ETag') || await digest
  await api.put(base, {
    staging: { physical_address: location.physical_address }, checksum: etag, size_bytes: file.size,
    content_type: file.type || 'application/octet-stream',
  }, { path })
  return true
}

async function viaApi(repo, branch, path, file, onProgress) {
  const target = api.url(`/repositories/${enc(repo)}/branches/${enc(branch)}/objects`, { path })
  await api.xhrSend('POST', target, file, { 'X-Lakelet-CSRF': '1', 'Content-Type': file.type || 'application/octet-stream' }, onProgress)
}

// Uploads one file; returns 'presigned' or 'api' (how it went), throws ApiError.
export async function uploadFile(repo, branch, path, file, onProgress) {
  if (await presignSupported()) {
    if (await viaPresign(repo, branch, path, file, onProgress)) return 'presigned'
  }
  await viaApi(repo, branch, path, file, onProgress)
  return 'api'
}
