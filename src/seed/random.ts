/** A small seeded PRNG (sfc32) so that `admin seed --seed S` writes the same data every time. */
export class Random {
  private a: number
  private b: number
  private c: number
  private d: number

  constructor(seed: string) {
    // Spread the seed string over the four words of state (cyrb128-style mixing).
    let h1 = 1779033703, h2 = 3144134277, h3 = 1013904242, h4 = 2773480762
    for (let i = 0; i < seed.length; i++) {
      const k = seed.charCodeAt(i)
      h1 = h2 ^ Math.imul(h1 ^ k, 597399067)
      h2 = h3 ^ Math.imul(h2 ^ k, 2869860233)
      h3 = h4 ^ Math.imul(h3 ^ k, 951274213)
      h4 = h1 ^ Math.imul(h4 ^ k, 2716044179)
    }
    this.a = h1 >>> 0
    this.b = h2 >>> 0
    this.c = h3 >>> 0
    this.d = h4 >>> 0
    for (let i = 0; i < 12; i++) this.next()
  }

  /** Uniform in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return (t >>> 0) / 4294967296
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!
  }

  /** Exponentially distributed with the given mean. */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  id(prefix: string, length = 12): string {
    const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz'
    let out = prefix
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(this.next() * 36)]
    return out
  }
}
