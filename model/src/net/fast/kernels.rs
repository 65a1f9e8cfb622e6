//! The arithmetic of the CPU decode path: products of bf16 weight matrices with f32
//! activations, accumulated in f32.
//!
//! Decoding one token reads every weight once, so its speed is the speed of reading
//! the weights: bf16 halves that traffic against f32, and widening a bf16 to an f32 is
//! a 16-bit shift. The AVX-512 kernel is picked at run time where the CPU has it; the
//! portable one is plain Rust that the compiler vectorises for whatever it targets.

/// A bf16 number as stored: the upper 16 bits of an f32.
pub type Bf16 = u16;

/// Rounds to the nearest bf16 (ties to even), as PyTorch does.
pub fn to_bf16(x: f32) -> Bf16 {
    half::bf16::from_f32(x).to_bits()
}

#[inline(always)]
pub fn widen(b: Bf16) -> f32 {
    f32::from_bits((b as u32) << 16)
}

/// `out[t * rows + r] = w[r] · x[t]` for the `n` rows of `x` ([n, cols], row-major)
/// and the `rows` rows of `w` ([rows, cols], row-major).
pub fn matmul(w: &[Bf16], rows: usize, cols: usize, x: &[f32], n: usize, out: &mut [f32]) {
    assert!(w.len() >= rows * cols && x.len() >= n * cols && out.len() >= n * rows);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked just above); the bounds are asserted.
        unsafe { avx512::matmul(w, rows, cols, x, n, out) };
        return;
    }
    portable::matmul(w, rows, cols, x, n, out);
}

/// The reference kernel: plain Rust, sixteen independent sums that the compiler keeps
/// in vector registers. (No `mul_add`: without an FMA target feature it is a libm call.)
mod portable {
    use super::{widen, Bf16};

    const LANES: usize = 16;

    pub fn matmul(w: &[Bf16], rows: usize, cols: usize, x: &[f32], n: usize, out: &mut [f32]) {
        for t in 0..n {
            let xt = &x[t * cols..(t + 1) * cols];
            for r in 0..rows {
                out[t * rows + r] = dot(&w[r * cols..(r + 1) * cols], xt);
            }
        }
    }

    fn dot(w: &[Bf16], x: &[f32]) -> f32 {
        let mut acc = [0.0f32; LANES];
        let body = w.len() / LANES * LANES;
        for (wc, xc) in w[..body]
            .chunks_exact(LANES)
            .zip(x[..body].chunks_exact(LANES))
        {
            for i in 0..LANES {
                acc[i] += widen(wc[i]) * xc[i];
            }
        }
        let mut sum: f32 = acc.iter().sum();
        for k in body..w.len() {
            sum += widen(w[k]) * x[k];
        }
        sum
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::needless_range_loop)] // rows are indices into several arrays at once
mod avx512 {
    use super::{widen, Bf16};
    use std::arch::x86_64::*;

    /// Sixteen bf16 weights from `p`, widened to f32.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn load16(p: *const Bf16) -> __m512 {
        let halves = _mm256_loadu_si256(p as *const __m256i);
        _mm512_castsi512_ps(_mm512_slli_epi32::<16>(_mm512_cvtepu16_epi32(halves)))
    }

    #[target_feature(enable = "avx512f")]
    pub unsafe fn matmul(
        w: &[Bf16],
        rows: usize,
        cols: usize,
        x: &[f32],
        n: usize,
        out: &mut [f32],
    ) {
        let body = cols / 16 * 16;
        let tail = |r: usize, t: usize| -> f32 {
            (body..cols)
                .map(|k| widen(w[r * cols + k]) * x[t * cols + k])
                .sum()
        };
        let (wp, xp) = (w.as_ptr(), x.as_ptr());
        if n == 1 {
            // One token: four rows at a time share each load of x.
            let mut r = 0;
            while r + 4 <= rows {
                let mut acc = [_mm512_setzero_ps(); 4];
                let mut k = 0;
                while k < body {
                    let xv = _mm512_loadu_ps(xp.add(k));
                    for (j, a) in acc.iter_mut().enumerate() {
                        *a = _mm512_fmadd_ps(load16(wp.add((r + j) * cols + k)), xv, *a);
                    }
                    k += 16;
                }
                for (j, a) in acc.iter().enumerate() {
                    out[r + j] = _mm512_reduce_add_ps(*a) + tail(r + j, 0);
                }
                r += 4;
            }
            for r in r..rows {
                let mut a = _mm512_setzero_ps();
                let mut k = 0;
                while k < body {
                    a = _mm512_fmadd_ps(
                        load16(wp.add(r * cols + k)),
                        _mm512_loadu_ps(xp.add(k)),
                        a,
                    );
                    k += 16;
                }
                out[r] = _mm512_reduce_add_ps(a) + tail(r, 0);
            }
            return;
        }
        // Several tokens: each row's weights are widened once for four tokens.
        for r in 0..rows {
            let mut t = 0;
            while t < n {
                let block = (n - t).min(4);
                let mut acc = [_mm512_setzero_ps(); 4];
                let mut k = 0;
                while k < body {
                    let wv = load16(wp.add(r * cols + k));
                    for (j, a) in acc.iter_mut().enumerate().take(block) {
                        *a = _mm512_fmadd_ps(wv, _mm512_loadu_ps(xp.add((t + j) * cols + k)), *a);
                    }
                    k += 16;
                }
                for (j, a) in acc.iter().enumerate().take(block) {
                    out[(t + j) * rows + r] = _mm512_reduce_add_ps(*a) + tail(r, t + j);
                }
                t += block;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(w: &[Bf16], rows: usize, cols: usize, x: &[f32], n: usize) -> Vec<f32> {
        let mut out = vec![0.0; n * rows];
        for t in 0..n {
            for r in 0..rows {
                out[t * rows + r] = (0..cols)
                    .map(|k| widen(w[r * cols + k]) as f64 * x[t * cols + k] as f64)
                    .sum::<f64>() as f32;
            }
        }
        out
    }

    #[test]
    fn bf16_rounds_to_nearest_and_widens_exactly() {
        assert_eq!(widen(to_bf16(1.0)), 1.0);
        assert_eq!(widen(to_bf16(-2.5)), -2.5);
        // 1 + 2^-8 lies halfway between two bf16 values: ties go to the even one.
        assert_eq!(widen(to_bf16(1.0 + 1.0 / 256.0)), 1.0);
        assert!((widen(to_bf16(0.1)) - 0.1).abs() < 1e-3);
    }

    #[test]
    fn kernels_agree_with_a_plain_sum_for_any_shape() {
        // Shapes that hit the 16-lane body, the tail, the four-row and four-token blocks
        // and the rest of each.
        for (rows, cols, n) in [(7, 35, 1), (8, 32, 1), (5, 48, 3), (9, 17, 6), (3, 5, 2)] {
            let w: Vec<Bf16> = (0..rows * cols)
                .map(|i| to_bf16(((i * 37 % 101) as f32 - 50.0) / 37.0))
                .collect();
            let x: Vec<f32> = (0..n * cols)
                .map(|i| ((i * 53 % 89) as f32 - 44.0) / 29.0)
                .collect();
            let want = reference(&w, rows, cols, &x, n);
            let mut fast = vec![0.0; n * rows];
            matmul(&w, rows, cols, &x, n, &mut fast);
            let mut plain = vec![0.0; n * rows];
            portable::matmul(&w, rows, cols, &x, n, &mut plain);
            for i in 0..n * rows {
                assert!(
                    (fast[i] - want[i]).abs() < 1e-4,
                    "{rows}x{cols} n={n} [{i}]"
                );
                assert!(
                    (plain[i] - want[i]).abs() < 1e-4,
                    "{rows}x{cols} n={n} [{i}]"
                );
            }
        }
    }
}
