// Incremental MD5 (RFC 1321), for the checksum of a presigned upload: S3's ETag of a single-part PUT is the
// MD5 of the bytes, but a store that does not expose ETag to scripts (CORS) leaves the UI to compute it.
// Fed in chunks, so a large file is never held in memory whole.

const S = [7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
  5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10,
  15, 21, 6, 10, 15, 21]
const K = new Int32Array(64)
for (let i = 0; i < 64; i++) K[i] = Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) | 0

export class Md5 {
  constructor() {
    this.state = new Int32Array([0x67452301, 0xefcdab89 | 0, 0x98badcfe | 0, 0x10325476])
    this.buffer = new Uint8Array(64)
    this.buffered = 0
    this.length = 0
    this.words = new Int32Array(16)
  }

  update(bytes) {
    let i = 0
    this.length += bytes.length
    if (this.buffered) {
      const take = Math.min(64 - this.buffered, bytes.length)
      this.buffer.set(bytes.subarray(0, take), this.buffered)
      this.buffered += take
      i = take
      if (this.buffered < 64) return this
      this.block(this.buffer, 0)
      this.buffered = 0
    }
    for (; i + 64 <= bytes.length; i += 64) this.block(bytes, i)
    if (i < bytes.length) { this.buffer.set(bytes.subarray(i), 0); this.buffered = bytes.length - i }
    return this
  }

  block(bytes, at) {
    const w = this.words
    for (let j = 0; j < 16; j++) {
      const o = at + j * 4
      w[j] = bytes[o] | (bytes[o + 1] << 8) | (bytes[o + 2] << 16) | (bytes[o + 3] << 24)
    }
    let [a, b, c, d] = this.state
    for (let i = 0; i < 64; i++) {
      let f, g
      if (i < 16) { f = (b & c) | (~b & d); g = i }
      else if (i < 32) { f = (d & b) | (~d & c); g = (5 * i + 1) % 16 }
      else if (i < 48) { f = b ^ c ^ d; g = (3 * i + 5) % 16 }
      else { f = c ^ (b | ~d); g = (7 * i) % 16 }
      const sum = (a + f + K[i] + w[g]) | 0
      a = d; d = c; c = b
      b = (b + ((sum << S[i]) | (sum >>> (32 - S[i])))) | 0
    }
    const s = this.state
    s[0] = (s[0] + a) | 0; s[1] = (s[1] + b) | 0; s[2] = (s[2] + c) | 0; s[3] = (s[3] + d) | 0
  }

  hex() {
    const bits = this.length * 8
    const tail = new Uint8Array(((this.buffered + 8) >> 6) * 64 + 64 - this.buffered)
    tail[0] = 0x80
    const end = tail.length - 8
    for (let j = 0; j < 8; j++) tail[end + j] = Math.floor(bits / 2 ** (8 * j)) & 0xff
    const length = this.length
    this.update(tail)
    this.length = length
    let out = ''
    for (const word of this.state) for (let j = 0; j < 4; j++) out += ((word >>> (8 * j)) & 0xff).toString(16).padStart(2, '0')
    return out
  }
}

// The MD5 of a Blob, read 4 MiB at a time.
export async function md5OfBlob(blob, chunk = 4 * 1024 * 1024) {
  const md5 = new Md5()
  for (let at = 0; at < blob.size; at += chunk) md5.update(new Uint8Array(await blob.slice(at, at + chunk).arrayBuffer()))
  return md5.hex()
}
