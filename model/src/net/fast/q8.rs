//! Products of int8 weights with int8 activations, summed exactly in 32-bit integers.
//!
//! Each weight row is quantised once, at load, with one scale per row; each activation
//! row is quantised when the product is taken, with one scale per [`BLOCK`] columns
//! (a scale per block keeps an outlier from flattening the rest of the row). Within a
//! block the sum of products is an exact integer; blocks are then added in f32.
//!
//! The weights are stored in tiles of [`TILE`] rows, four columns of each row side by
//! side, which is the operand layout of AVX-512 VNNI's `vpdpbusd`: one instruction
//! multiplies four activations (one 32-bit broadcast) into four columns of sixteen rows
//! and adds them to sixteen row sums, so no sum is ever reduced across a register. The
//! instruction multiplies unsigned by signed bytes: the weights are stored plus 128,
//! and 128 times each block's activation sum is taken off again.

use std::ops::Range;

/// Activation columns that share a scale.
pub const BLOCK: usize = 32;
/// Weight rows a tile holds: one 32-bit lane of a 512-bit register each.
pub const TILE: usize = 16;
/// Columns of a row stored side by side: the bytes one 32-bit lane multiplies.
const GROUP: usize = 4;
const ROUND: f32 = 12_582_912.0;

/// A weight matrix [rows, cols] quantised to int8, one scale per row, tiled.
#[derive(Debug, Clone)]
pub struct Q8Weights {
    /// [tiles, padded_cols / GROUP, TILE, GROUP]: the weights plus 128.
    bytes: Vec<u8>,
    /// One per row, padded to whole tiles (with ones).
    scales: Vec<f32>,
    rows: usize,
    cols: usize,
    padded_cols: usize,
}

impl Q8Weights {
    /// Quantises `w` ([rows, cols], row-major), symmetric, one scale per row.
    pub fn quantize(w: &[f32], rows: usize, cols: usize) -> Self {
        assert_eq!(w.len(), rows * cols);
        let padded_cols = cols.div_ceil(BLOCK) * BLOCK;
        let tiles = rows.div_ceil(TILE);
        let mut bytes = vec![128u8; tiles * TILE * padded_cols];
        let mut scales = vec![1.0f32; tiles * TILE];
        for (r, row) in w.chunks_exact(cols).enumerate() {
            let max = row.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
            scales[r] = scale;
            for (c, &v) in row.iter().enumerate() {
                let q = (v / scale).round().clamp(-127.0, 127.0) as i32;
                bytes[index(r, c, padded_cols)] = (q + 128) as u8;
            }
        }
        Self {
            bytes,
            scales,
            rows,
            cols,
            padded_cols,
        }
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The weight at (r, c) as quantised, before its row's scale.
    pub fn quantized(&self, r: usize, c: usize) -> i32 {
        self.bytes[index(r, c, self.padded_cols)] as i32 - 128
    }

    pub fn scale(&self, r: usize) -> f32 {
        self.scales[r]
    }
}

/// Where weight (r, c) is stored.
#[inline(always)]
fn index(r: usize, c: usize, padded_cols: usize) -> usize {
    let (tile, lane) = (r / TILE, r % TILE);
    ((tile * (padded_cols / GROUP) + c / GROUP) * TILE + lane) * GROUP + c % GROUP
}

/// Activation rows [n, cols] quantised to int8, one scale per block of each row; kept
/// between products so that quantising allocates nothing once the buffers have grown.
#[derive(Debug, Clone, Default)]
pub struct Q8Activations {
    /// [n, padded_cols], zero past `cols`.
    q: Vec<i8>,
    /// [n, blocks]
    scales: Vec<f32>,
    /// [n, blocks]: 128 times the block's sum of `q`, the offset the stored weights add.
    offsets: Vec<i32>,
    n: usize,
    padded_cols: usize,
}

impl Q8Activations {
    /// Quantises the `n` rows of `x` ([n, cols]).
    #[inline(always)]
    pub fn quantize(&mut self, x: &[f32], n: usize, cols: usize) {
        assert!(x.len() >= n * cols);
        let padded_cols = cols.div_ceil(BLOCK) * BLOCK;
        let blocks = padded_cols / BLOCK;
        self.q.clear();
        self.q.resize(n * padded_cols, 0);
        self.scales.resize(n * blocks, 0.0);
        self.offsets.resize(n * blocks, 0);
        self.n = n;
        self.padded_cols = padded_cols;
        for t in 0..n {
            let row = &x[t * cols..(t + 1) * cols];
            for b in 0..blocks {
                let part = &row[(b * BLOCK).min(cols)..((b + 1) * BLOCK).min(cols)];
                let max = part.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
                let inv = 1.0 / scale;
                let out = &mut self.q[t * padded_cols + b * BLOCK..];
                let mut sum = 0i32;
                for (o, &v) in out.iter_mut().zip(part) {
                    // Adding and taking away 1.5 * 2^23 rounds to the nearest integer
                    // (ties to even) in plain arithmetic, which vectorises.
                    let q = ((v * inv + ROUND) - ROUND).clamp(-127.0, 127.0) as i8;
                    *o = q;
                    sum += q as i32;
                }
                self.scales[t * blocks + b] = scale;
                self.offsets[t * blocks + b] = 128 * sum;
            }
        }
    }

    /// The activation at (t, c) as quantised and its block's scale.
    pub fn quantized(&self, t: usize, c: usize) -> (i32, f32) {
        let blocks = self.padded_cols / BLOCK;
        (
            self.q[t * self.padded_cols + c] as i32,
            self.scales[t * blocks + c / BLOCK],
        )
    }
}

/// `out[t, r] = scale[r] * Σ_b xscale[t, b] * (w[r, b] · x[t, b])` for the quantised
/// rows `tokens` of `x` and the rows `rows` of `w` (starting on a tile), into `out`
/// [tokens.len(), rows.len()].
pub fn matmul(
    w: &Q8Weights,
    x: &Q8Activations,
    tokens: Range<usize>,
    rows: Range<usize>,
    out: &mut [f32],
) {
    assert_eq!(x.padded_cols, w.padded_cols, "activations of another width");
    assert!(tokens.end <= x.n && rows.end <= w.rows && rows.start.is_multiple_of(TILE));
    assert!(out.len() >= tokens.len() * rows.len());
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512vnni") {
        // SAFETY: the CPU has AVX-512F and VNNI (checked just above); the shapes are
        // asserted above and by construction of both operands.
        unsafe { avx512::matmul(w, x, tokens, rows, out) };
        return;
    }
    portable(w, x, tokens, rows, out);
}

/// The reference kernel, in the same order of operations as the vector one.
#[allow(clippy::needless_range_loop)] // columns index the weights' tiles and the row
fn portable(
    w: &Q8Weights,
    x: &Q8Activations,
    tokens: Range<usize>,
    rows: Range<usize>,
    out: &mut [f32],
) {
    let blocks = w.padded_cols / BLOCK;
    let width = rows.len();
    for t in tokens.clone() {
        let xq = &x.q[t * x.padded_cols..(t + 1) * x.padded_cols];
        for r in rows.clone() {
            let mut sum = 0.0f32;
            for b in 0..blocks {
                let mut acc = 0i32;
                for c in b * BLOCK..(b + 1) * BLOCK {
                    acc += w.bytes[index(r, c, w.padded_cols)] as i32 * xq[c] as i32;
                }
                acc -= x.offsets[t * blocks + b];
                sum += acc as f32 * x.scales[t * blocks + b];
            }
            out[(t - tokens.start) * width + r - rows.start] = sum * w.scales[r];
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::needless_range_loop)] // tiles and tokens index several arrays at once
mod avx512 {
    use super::{Q8Activations, Q8Weights, BLOCK, GROUP, TILE};
    use std::arch::x86_64::*;
    use std::ops::Range;

    /// Bytes of one tile's group: sixteen rows by four columns.
    const GROUP_BYTES: usize = TILE * GROUP;

    #[target_feature(enable = "avx512f,avx512vnni")]
    pub unsafe fn matmul(
        w: &Q8Weights,
        x: &Q8Activations,
        tokens: Range<usize>,
        rows: Range<usize>,
        out: &mut [f32],
    ) {
        let tiles = rows.end.div_ceil(TILE);
        let o = Out {
            rows: rows.clone(),
            first_token: tokens.start,
            ptr: out.as_mut_ptr(),
        };
        let mut t = tokens.start;
        // One token (decoding): four tiles at once, four independent chains of sums.
        // Several (a step's batch, the prefill): two tiles for four tokens at a time.
        while t < tokens.end {
            let count = (tokens.end - t).min(4);
            let mut tile = rows.start / TILE;
            let out = &o;
            match count {
                1 => {
                    while tile + 4 <= tiles {
                        tiles_tokens::<4, 1>(w, x, tile, t, out);
                        tile += 4;
                    }
                    while tile < tiles {
                        tiles_tokens::<1, 1>(w, x, tile, t, out);
                        tile += 1;
                    }
                }
                4 => {
                    while tile + 2 <= tiles {
                        tiles_tokens::<2, 4>(w, x, tile, t, out);
                        tile += 2;
                    }
                    while tile < tiles {
                        tiles_tokens::<1, 4>(w, x, tile, t, out);
                        tile += 1;
                    }
                }
                2 => {
                    while tile < tiles {
                        tiles_tokens::<1, 2>(w, x, tile, t, out);
                        tile += 1;
                    }
                }
                _ => {
                    while tile < tiles {
                        tiles_tokens::<1, 3>(w, x, tile, t, out);
                        tile += 1;
                    }
                }
            }
            t += count;
        }
    }

    /// Where a tile's sums go: rows `rows` of tokens from `first_token`, [tokens, rows].
    struct Out {
        rows: Range<usize>,
        first_token: usize,
        ptr: *mut f32,
    }

    /// Tiles `first..first + U` against tokens `t0..t0 + T`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vnni")]
    unsafe fn tiles_tokens<const U: usize, const T: usize>(
        w: &Q8Weights,
        x: &Q8Activations,
        first: usize,
        t0: usize,
        out: &Out,
    ) {
        let groups = w.padded_cols / GROUP;
        let blocks = w.padded_cols / BLOCK;
        let wp = w.bytes.as_ptr();
        let mut sums = [[_mm512_setzero_ps(); T]; U];
        for b in 0..blocks {
            let mut acc = [[_mm512_setzero_si512(); T]; U];
            for g in b * BLOCK / GROUP..(b + 1) * BLOCK / GROUP {
                let mut xv = [_mm512_setzero_si512(); T];
                for (j, v) in xv.iter_mut().enumerate() {
                    let p = x.q.as_ptr().add((t0 + j) * x.padded_cols + g * GROUP);
                    *v = _mm512_set1_epi32((p as *const i32).read_unaligned());
                }
                for (u, acc_u) in acc.iter_mut().enumerate() {
                    let wv = _mm512_loadu_si512(
                        wp.add(((first + u) * groups + g) * GROUP_BYTES) as *const __m512i
                    );
                    for j in 0..T {
                        acc_u[j] = _mm512_dpbusd_epi32(acc_u[j], wv, xv[j]);
                    }
                }
            }
            for j in 0..T {
                let i = (t0 + j) * blocks + b;
                let offset = _mm512_set1_epi32(x.offsets[i]);
                let scale = _mm512_set1_ps(x.scales[i]);
                for u in 0..U {
                    let exact = _mm512_sub_epi32(acc[u][j], offset);
                    sums[u][j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(exact), scale, sums[u][j]);
                }
            }
        }
        let width = out.rows.len();
        for u in 0..U {
            let row0 = (first + u) * TILE;
            let scales = _mm512_loadu_ps(w.scales.as_ptr().add(row0));
            let live = (out.rows.end - row0).min(TILE);
            let mask: __mmask16 = if live == TILE { !0 } else { (1u16 << live) - 1 };
            for j in 0..T {
                let at = (t0 + j - out.first_token) * width + row0 - out.rows.start;
                _mm512_mask_storeu_ps(out.ptr.add(at), mask, _mm512_mul_ps(sums[u][j], scales));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(len: usize, seed: usize) -> Vec<f32> {
        (0..len)
            .map(|i| (((i * 37 + seed * 11) % 101) as f32 - 50.0) / 37.0)
            .collect()
    }

    #[test]
    fn quantised_weights_round_trip_within_half_a_step() {
        let (rows, cols) = (19, 45);
        let w = values(rows * cols, 1);
        let q = Q8Weights::quantize(&w, rows, cols);
        for r in 0..rows {
            for c in 0..cols {
                let back = q.quantized(r, c) as f32 * q.scale(r);
                assert!((back - w[r * cols + c]).abs() <= q.scale(r) * 0.5 + 1e-6);
            }
        }
    }

    #[test]
    fn products_are_exact_sums_over_the_quantised_values() {
        // Shapes with whole and partial tiles, blocks, four-tile and four-token runs.
        for (rows, cols, n) in [
            (16, 32, 1),
            (7, 35, 1),
            (70, 64, 1),
            (33, 96, 4),
            (17, 40, 3),
            (80, 256, 6),
            (5, 5, 2),
        ] {
            let w = values(rows * cols, 2);
            let x = values(n * cols, 3);
            let q = Q8Weights::quantize(&w, rows, cols);
            let mut a = Q8Activations::default();
            a.quantize(&x, n, cols);
            let mut fast = vec![f32::NAN; n * rows];
            matmul(&q, &a, 0..n, 0..rows, &mut fast);
            let mut plain = vec![f32::NAN; n * rows];
            portable(&q, &a, 0..n, 0..rows, &mut plain);
            // A part of the rows, or of the tokens, is the same part of the whole.
            let tail = (rows / 2 / TILE * TILE)..rows;
            let mut part = vec![f32::NAN; n * tail.len()];
            matmul(&q, &a, 0..n, tail.clone(), &mut part);
            for t in 0..n {
                assert_eq!(
                    part[t * tail.len()..(t + 1) * tail.len()],
                    fast[t * rows + tail.start..(t + 1) * rows]
                );
            }
            let mut last = vec![f32::NAN; rows];
            matmul(&q, &a, n - 1..n, 0..rows, &mut last);
            assert_eq!(last[..], fast[(n - 1) * rows..]);
            for t in 0..n {
                for r in 0..rows {
                    let want: f64 = (0..cols)
                        .map(|c| {
                            let (xq, xs) = a.quantized(t, c);
                            (q.quantized(r, c) * xq) as f64 * xs as f64 * q.scale(r) as f64
                        })
                        .sum();
                    let i = t * rows + r;
                    let tol = 1e-4 * (1.0 + want.abs());
                    assert!(
                        (fast[i] as f64 - want).abs() < tol,
                        "{rows}x{cols} n={n} [{i}]"
                    );
                    assert!(
                        (plain[i] as f64 - want).abs() < tol,
                        "{rows}x{cols} n={n} [{i}]"
                    );
                }
            }
        }
    }

    #[test]
    fn products_stay_close_to_the_float_product() {
        let (rows, cols, n) = (48, 256, 2);
        let w = values(rows * cols, 4);
        let x = values(n * cols, 5);
        let q = Q8Weights::quantize(&w, rows, cols);
        let mut a = Q8Activations::default();
        a.quantize(&x, n, cols);
        let mut out = vec![0.0; n * rows];
        matmul(&q, &a, 0..n, 0..rows, &mut out);
        for t in 0..n {
            for r in 0..rows {
                let exact: f32 = (0..cols).map(|c| w[r * cols + c] * x[t * cols + c]).sum();
                let magnitude: f32 = (0..cols)
                    .map(|c| (w[r * cols + c] * x[t * cols + c]).abs())
                    .sum();
                assert!((out[t * rows + r] - exact).abs() < 0.02 * magnitude);
            }
        }
    }
}
