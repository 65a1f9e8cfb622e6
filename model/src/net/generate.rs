//! Greedy decoding, optionally constrained, with each chosen token's log-probability.

use burn::tensor::backend::Backend;

use super::cache::KvCache;
use super::decoder::Llama;
use super::Error;

/// Which tokens a constraint lets come next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowed {
    Any,
    Only(Vec<u32>),
}

/// The tokens decoded and the model's log-probability of each (natural log, over the
/// whole vocabulary, so the sum is the log-probability of the whole prediction).
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub tokens: Vec<u32>,
    pub logprobs: Vec<f32>,
    /// True if decoding ended on a stop token (which is included in `tokens`).
    pub stopped: bool,
}

impl Decoded {
    pub fn logprob(&self) -> f32 {
        self.logprobs.iter().sum()
    }

    /// The probability of the whole prediction.
    pub fn probability(&self) -> f32 {
        self.logprob().exp()
    }
}

/// Reads `prompt` after the positions already in `cache`, then picks the most likely
/// token at each step among those `constraint` allows (given the tokens generated so
/// far), until a token in `stop` or `max_new` tokens.
///
/// On return the cache holds the prompt and every generated token except the last, so
/// `cache.len()` is the position of the last generated token; truncate the cache to
/// go back to any earlier position.
pub fn greedy<B: Backend>(
    model: &Llama<B>,
    cache: &mut KvCache<B>,
    prompt: &[u32],
    max_new: usize,
    stop: &[u32],
    mut constraint: impl FnMut(&[u32]) -> Allowed,
) -> Result<Decoded, Error> {
    let mut out = Decoded {
        tokens: Vec::new(),
        logprobs: Vec::new(),
        stopped: false,
    };
    if max_new == 0 {
        return Ok(out);
    }
    let mut logits = model.extend(prompt, cache)?;
    loop {
        let row: Vec<f32> = logits
            .into_data()
            .into_vec()
            .map_err(|e| Error::Config(format!("reading logits: {e:?}")))?;
        let (token, logprob) = pick(&row, &constraint(&out.tokens), out.tokens.len())?;
        out.tokens.push(token);
        out.logprobs.push(logprob);
        if stop.contains(&token) {
            out.stopped = true;
            return Ok(out);
        }
        if out.tokens.len() == max_new {
            return Ok(out);
        }
        logits = model.decode_step(token, cache)?;
    }
}

/// The allowed token with the highest logit, and its log-softmax over all logits.
fn pick(logits: &[f32], allowed: &Allowed, after: usize) -> Result<(u32, f32), Error> {
    let best = match allowed {
        Allowed::Any => argmax(logits.iter().copied().enumerate()),
        Allowed::Only(ids) => argmax(
            ids.iter()
                .filter(|&&id| (id as usize) < logits.len())
                .map(|&id| (id as usize, logits[id as usize])),
        ),
    };
    let (index, value) = best.ok_or(Error::NoAllowedToken { after })?;
    Ok((index as u32, value - log_sum_exp(logits)))
}

fn argmax(items: impl Iterator<Item = (usize, f32)>) -> Option<(usize, f32)> {
    items.fold(None, |best, (i, v)| match best {
        Some((_, b)) if b >= v => best,
        _ => Some((i, v)),
    })
}

fn log_sum_exp(xs: &[f32]) -> f32 {
    let max = xs.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = xs.iter().map(|&x| ((x - max) as f64).exp()).sum();
    max + sum.ln() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_respects_the_constraint_and_normalises_over_the_vocabulary() {
        let logits = [1.0f32, 3.0, 2.0];
        let (t, lp) = pick(&logits, &Allowed::Any, 0).unwrap();
        assert_eq!(t, 1);
        let z: f32 = logits.iter().map(|x| x.exp()).sum();
        assert!((lp - (3.0f32.exp() / z).ln()).abs() < 1e-6);

        let (t, lp) = pick(&logits, &Allowed::Only(vec![0, 2]), 0).unwrap();
        assert_eq!(t, 2);
        assert!((lp - (2.0f32.exp() / z).ln()).abs() < 1e-6);

        assert!(matches!(
            pick(&logits, &Allowed::Only(vec![7]), 4),
            Err(Error::NoAllowedToken { after: 4 })
        ));
    }
}
