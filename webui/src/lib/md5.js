// MD5 for the checksum of a presigned upload: S3's ETag of a single-part PUT is the MD5 of the bytes, but a
// store that does not expose ETag to scripts (CORS) leaves the UI to compute it. spark-md5 hashes
// incrementally, so a large file is read a chunk at a time and never held in memory whole.
import SparkMD5 from 'spark-md5'

// The MD5 of a Blob (a File too) as lower-case hex, read 4 MiB at a time.
export async function md5OfBlob(blob, chunk = 4 * 1024 * 1024) {
  const md5 = new SparkMD5.ArrayBuffer()
  for (let at = 0; at < blob.size; at += chunk) md5.append(await blob.slice(at, at + chunk).arrayBuffer())
  return md5.end()
}
