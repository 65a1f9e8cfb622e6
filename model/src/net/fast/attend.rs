//! Attention over the key/value cache, and the element-wise arithmetic around the
//! matrix products, written as fixed-width loops that the compiler turns into vector
//! instructions (AVX-512 inside the decode path's `target_feature` function, whatever
//! the target has elsewhere).

/// Positions whose keys are stored together, transposed: the lanes of one vector.
pub const POSITIONS: usize = 16;

/// One query head at one position: the cache's head it reads and how far.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    pub kv_head: usize,
    pub query: &'a [f32],
    /// Positions it attends to (`from..seen`: all before it, or a sliding window).
    pub from: usize,
    pub seen: usize,
    pub scale: f32,
}

/// One layer's keys and values, in space for every position the model can hold.
#[derive(Debug, Clone)]
pub struct LayerCache {
    /// [kv_heads, blocks, head_dim, POSITIONS]: each block of positions transposed, so
    /// that one product of a query dimension with a row gives sixteen partial scores.
    keys: Vec<f32>,
    /// [kv_heads, capacity, head_dim]
    values: Vec<f32>,
    head_dim: usize,
    blocks: usize,
    capacity: usize,
}

impl LayerCache {
    pub fn new(kv_heads: usize, capacity: usize, head_dim: usize) -> Self {
        let blocks = capacity.div_ceil(POSITIONS);
        Self {
            keys: vec![0.0; kv_heads * blocks * head_dim * POSITIONS],
            values: vec![0.0; kv_heads * capacity * head_dim],
            head_dim,
            blocks,
            capacity,
        }
    }

    /// Stores the key and value of `kv_head` at `pos`.
    #[inline(always)]
    pub fn write(&mut self, kv_head: usize, pos: usize, key: &[f32], value: &[f32]) {
        let hd = self.head_dim;
        let block = (kv_head * self.blocks + pos / POSITIONS) * hd * POSITIONS;
        for (d, &k) in key.iter().enumerate() {
            self.keys[block + d * POSITIONS + pos % POSITIONS] = k;
        }
        let at = (kv_head * self.capacity + pos) * hd;
        self.values[at..at + hd].copy_from_slice(value);
    }

    /// `out = softmax(q · keys[from..seen] * scale) · values[from..seen]` for one query
    /// head; `scores` is scratch of at least `seen` rounded up to a block.
    pub fn attend(&self, q: &Query, scores: &mut [f32], out: &mut [f32]) {
        // Called from the team's jobs (closures, which do not inherit the decode path's
        // target features), so it picks its own.
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F, checked just above.
            return unsafe { self.attend_avx512(q, scores, out) };
        }
        self.attend_sized(q, scores, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn attend_avx512(&self, q: &Query, scores: &mut [f32], out: &mut [f32]) {
        self.attend_sized(q, scores, out)
    }

    #[inline(always)]
    fn attend_sized(&self, q: &Query, scores: &mut [f32], out: &mut [f32]) {
        // A head size known when compiling keeps every sum in registers.
        match self.head_dim {
            64 => self.attend_in::<64>(q, scores, out),
            128 => self.attend_in::<128>(q, scores, out),
            32 => self.attend_in::<32>(q, scores, out),
            16 => self.attend_in::<16>(q, scores, out),
            _ => self.attend_in::<0>(q, scores, out),
        }
    }

    /// [`Self::attend`] for heads of `HD` dimensions (0: any, known at run time).
    #[inline(always)]
    fn attend_in<const HD: usize>(&self, q: &Query, scores: &mut [f32], out: &mut [f32]) {
        let Query {
            kv_head,
            query,
            from,
            seen,
            scale,
        } = *q;
        let hd = if HD == 0 { self.head_dim } else { HD };
        let blocks = seen.div_ceil(POSITIONS);
        let keys = &self.keys[kv_head * self.blocks * hd * POSITIONS..];
        for b in 0..blocks {
            let block = &keys[b * hd * POSITIONS..(b + 1) * hd * POSITIONS];
            // Four chains of sums (dimensions by their remainder mod 4), so that each
            // add need not wait for the one before.
            let mut sums = [[0.0f32; POSITIONS]; 4];
            let mut d = 0;
            while d + 4 <= hd {
                for (c, chain) in sums.iter_mut().enumerate() {
                    let (q, k) = (query[d + c], &block[(d + c) * POSITIONS..]);
                    for i in 0..POSITIONS {
                        chain[i] += q * k[i];
                    }
                }
                d += 4;
            }
            for d in d..hd {
                let (q, k) = (query[d], &block[d * POSITIONS..]);
                for i in 0..POSITIONS {
                    sums[0][i] += q * k[i];
                }
            }
            let dst = &mut scores[b * POSITIONS..(b + 1) * POSITIONS];
            for i in 0..POSITIONS {
                dst[i] = ((sums[0][i] + sums[1][i]) + (sums[2][i] + sums[3][i])) * scale;
            }
        }
        let scores = &mut scores[from..seen];
        softmax(scores);
        let values = &self.values[(kv_head * self.capacity + from) * hd..];
        if HD == 0 {
            out.fill(0.0);
            for (j, &w) in scores.iter().enumerate() {
                for (o, &v) in out.iter_mut().zip(&values[j * hd..(j + 1) * hd]) {
                    *o += w * v;
                }
            }
            return;
        }
        // Two positions at a time into two sums, added at the end.
        let mut first = [0.0f32; HD];
        let mut second = [0.0f32; HD];
        let seen = scores.len();
        let pairs = seen / 2;
        for p in 0..pairs {
            let j = 2 * p;
            let (wa, wb) = (scores[j], scores[j + 1]);
            let va = &values[j * HD..(j + 1) * HD];
            let vb = &values[(j + 1) * HD..(j + 2) * HD];
            for d in 0..HD {
                first[d] += wa * va[d];
                second[d] += wb * vb[d];
            }
        }
        if seen % 2 == 1 {
            let j = seen - 1;
            let (w, v) = (scores[j], &values[j * HD..(j + 1) * HD]);
            for d in 0..HD {
                first[d] += w * v[d];
            }
        }
        for d in 0..HD {
            out[d] = first[d] + second[d];
        }
    }
}

/// e^x to within a few units in the last place, without branches or calls, so that
/// loops over it become vector code (Cephes' expf: x = n ln 2 + r, a polynomial in r).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    const LOG2_E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_359_4;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Adding and taking away 1.5 * 2^23 rounds to the nearest integer.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.3, 88.3);
    let n = (x * LOG2_E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let mut p = 1.987_569_1e-4;
    p = p * r + 1.398_199_9e-3;
    p = p * r + 8.333_452e-3;
    p = p * r + 4.166_579_6e-2;
    p = p * r + 1.666_666_5e-1;
    p = p * r + 0.5;
    let y = p * r * r + r + 1.0;
    y * f32::from_bits(((n as i32 + 127) << 23) as u32)
}

/// Softmax in place.
#[inline(always)]
pub fn softmax(xs: &mut [f32]) {
    let max = max(xs);
    for x in xs.iter_mut() {
        *x = exp(*x - max);
    }
    let inv = 1.0 / sum(xs);
    for x in xs.iter_mut() {
        *x *= inv;
    }
}

/// SwiGLU: `gate[i] = silu(gate[i]) * up[i]`.
#[inline(always)]
pub fn swiglu(gate: &mut [f32], up: &[f32]) {
    for (g, &u) in gate.iter_mut().zip(up) {
        *g = *g / (1.0 + exp(-*g)) * u;
    }
}

/// RMSNorm of each row of `x` (rows of `weight.len()`) into `out`.
#[inline(always)]
pub fn rms_norm(x: &[f32], weight: &[f32], eps: f32, out: &mut [f32]) {
    let d = weight.len();
    for (row, dst) in x.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
        let mut squares = [0.0f32; POSITIONS];
        let body = d / POSITIONS * POSITIONS;
        for chunk in row[..body].chunks_exact(POSITIONS) {
            for i in 0..POSITIONS {
                squares[i] += chunk[i] * chunk[i];
            }
        }
        let tail: f32 = row[body..].iter().map(|v| v * v).sum();
        let mean_square = (squares.iter().sum::<f32>() + tail) / d as f32;
        let inv = 1.0 / (mean_square + eps).sqrt();
        for ((o, &v), &w) in dst.iter_mut().zip(row).zip(weight) {
            *o = v * inv * w;
        }
    }
}

/// Sums in sixteen lanes (a plain `sum` is one chain the compiler may not reorder).
#[inline(always)]
fn sum(xs: &[f32]) -> f32 {
    let mut lanes = [0.0f32; POSITIONS];
    let body = xs.len() / POSITIONS * POSITIONS;
    for chunk in xs[..body].chunks_exact(POSITIONS) {
        for i in 0..POSITIONS {
            lanes[i] += chunk[i];
        }
    }
    lanes.iter().sum::<f32>() + xs[body..].iter().sum::<f32>()
}

#[inline(always)]
fn max(xs: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; POSITIONS];
    let body = xs.len() / POSITIONS * POSITIONS;
    for chunk in xs[..body].chunks_exact(POSITIONS) {
        for i in 0..POSITIONS {
            lanes[i] = lanes[i].max(chunk[i]);
        }
    }
    let tail = xs[body..].iter().copied().fold(f32::NEG_INFINITY, f32::max);
    lanes.iter().copied().fold(tail, f32::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_a_few_ulps_of_the_library_one() {
        let mut x = -87.0f32;
        while x < 88.0 {
            let (got, want) = (exp(x), x.exp());
            assert!(
                (got - want).abs() <= 4.0 * f32::EPSILON * want,
                "exp({x}) = {got}, not {want}"
            );
            x += 0.0137;
        }
        assert!(exp(-1000.0) >= 0.0 && exp(-1000.0) < 1e-37);
        assert!(exp(1000.0).is_finite());
    }

    #[test]
    fn attention_matches_the_plain_formula() {
        // (head size, first position seen, positions): the later rows see a window.
        for (hd, from, seen) in [
            (64, 0, 1),
            (64, 0, 37),
            (8, 0, 16),
            (5, 0, 33),
            (64, 0, 100),
            (32, 0, 2),
            (128, 0, 17),
            (64, 30, 37),
            (8, 5, 16),
            (128, 16, 17),
            (5, 17, 100),
        ] {
            let (kv_heads, capacity) = (2, 112);
            let mut cache = LayerCache::new(kv_heads, capacity, hd);
            let value = |pos: usize, d: usize, s: usize| {
                (((pos * 31 + d * 7 + s) % 23) as f32 - 11.0) / 9.0
            };
            for pos in 0..seen {
                for kh in 0..kv_heads {
                    let k: Vec<f32> = (0..hd).map(|d| value(pos, d, kh)).collect();
                    let v: Vec<f32> = (0..hd).map(|d| value(pos, d, 5 + kh)).collect();
                    cache.write(kh, pos, &k, &v);
                }
            }
            let q: Vec<f32> = (0..hd).map(|d| value(3, d, 9)).collect();
            let scale = 1.0 / (hd as f32).sqrt();
            let mut scores = vec![0.0; capacity.div_ceil(POSITIONS) * POSITIONS];
            let mut out = vec![0.0; hd];
            let head = Query {
                kv_head: 1,
                query: &q,
                from,
                seen,
                scale,
            };
            cache.attend(&head, &mut scores, &mut out);
            let raw: Vec<f64> = (from..seen)
                .map(|p| {
                    (0..hd).map(|d| (q[d] * value(p, d, 1)) as f64).sum::<f64>() * scale as f64
                })
                .collect();
            let top = raw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let weights: Vec<f64> = raw.iter().map(|s| (s - top).exp()).collect();
            let total: f64 = weights.iter().sum();
            for (d, &got) in out.iter().enumerate() {
                let want: f64 = (from..seen)
                    .map(|p| weights[p - from] / total * value(p, d, 6) as f64)
                    .sum();
                assert!(
                    (got as f64 - want).abs() < 1e-5,
                    "hd {hd} {from}..{seen} [{d}]"
                );
            }
        }
    }

    #[test]
    fn norms_and_sums_keep_every_element() {
        let x: Vec<f32> = (0..37).map(|i| i as f32 - 18.0).collect();
        assert_eq!(sum(&x), x.iter().sum::<f32>());
        assert_eq!(max(&x), 18.0);
        let weight = vec![2.0; 37];
        let mut out = vec![0.0; 37];
        rms_norm(&x, &weight, 0.0, &mut out);
        let rms = (x.iter().map(|v| v * v).sum::<f32>() / 37.0).sqrt();
        for (o, v) in out.iter().zip(&x) {
            assert!((o - 2.0 * v / rms).abs() < 1e-5);
        }
    }
}
