//! Greedy decoding, optionally constrained, with each chosen token's log-probability.

use super::decode::Decoder;
use super::Error;

/// Which tokens a constraint lets come next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Allowed {
    Any,
    Only(Vec<u32>),
}

/// The tokens decoded and the model's log-probability of each (natural log, over the
/// whole vocabulary, so the sum is the log-probability of the whole prediction).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decoded {
    pub tokens: Vec<u32>,
    pub logprobs: Vec<f32>,
    /// Each token's log-probability among the tokens the constraint allowed there (0
    /// where it allowed one): how sure the model was of what it chose.
    pub choices: Vec<f32>,
    /// Where the model chose among several tokens: the best one it did not take and
    /// that token's log-probability among the allowed ones (where a search for other
    /// likely predictions can branch off).
    pub runner_up: Vec<Option<(u32, f32)>>,
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

    /// The probability of the whole prediction among those the constraint allowed.
    pub fn choice_probability(&self) -> f64 {
        self.choices.iter().map(|&c| c as f64).sum::<f64>().exp()
    }
}

/// Reads `prompt` after the positions already in `cache`, then picks the most likely
/// token at each step among those `constraint` allows (given the tokens generated so
/// far), until a token in `stop` or `max_new` tokens.
///
/// When the constraint allows exactly one token, that token is taken without running
/// the model, and the run of such forced tokens is read later in one batched call
/// (much cheaper than one call per token on a CPU). The tokens and log-probabilities
/// are the same as decoding one token at a time.
///
/// On return the cache holds the prompt and every generated token except the last, so
/// `cache.len()` is the position of the last generated token; truncate the cache to
/// go back to any earlier position.
pub fn greedy<M: Decoder>(
    model: &M,
    cache: &mut M::Cache,
    prompt: &[u32],
    max_new: usize,
    stop: &[u32],
    constraint: impl FnMut(&[u32]) -> Allowed,
) -> Result<Decoded, Error> {
    greedy_above(
        model,
        cache,
        prompt,
        max_new,
        stop,
        f32::NEG_INFINITY,
        constraint,
    )
}

/// [`greedy`], given up (not `stopped`) as soon as the sum of its choices' log-
/// probabilities falls below `floor`: a search's branch that can no longer beat the
/// likeliest prediction found (each choice only lowers the sum).
pub fn greedy_above<M: Decoder>(
    model: &M,
    cache: &mut M::Cache,
    prompt: &[u32],
    max_new: usize,
    stop: &[u32],
    floor: f32,
    mut constraint: impl FnMut(&[u32]) -> Allowed,
) -> Result<Decoded, Error> {
    let mut run = Run {
        model,
        cache,
        tokens: Vec::new(),
        logprobs: Vec::new(),
        choices: Vec::new(),
        runner_up: Vec::new(),
        read: 0,
        next: Vec::new(),
    };
    if max_new == 0 {
        return Ok(Decoded::default());
    }
    run.next = model.extend(prompt, run.cache)?;
    let mut chosen = 0.0f32;
    let stopped = loop {
        let allowed = constraint(&run.tokens);
        match &allowed {
            Allowed::Only(ids) if ids.len() == 1 && run.tokens.len() > run.read => {
                run.tokens.push(ids[0]);
                run.choices.push(0.0);
                run.runner_up.push(None);
            }
            _ => {
                run.read_up_to(run.tokens.len())?;
                // One normalisation over the vocabulary serves the token's score and, when
                // any token may follow, its choice's (2,048 exponentials a token, once).
                let all = log_sum_exp(&run.next);
                let (token, logprob) = pick(&run.next, &allowed, run.tokens.len(), all)?;
                run.tokens.push(token);
                run.logprobs.push(logprob);
                let among = match &allowed {
                    Allowed::Any => all,
                    Allowed::Only(_) => allowed_log_sum_exp(&run.next, &allowed),
                };
                run.choices.push(run.next[token as usize] - among);
                run.runner_up
                    .push(runner_up(&run.next, &allowed, token, among));
            }
        }
        chosen += run.choices.last().copied().unwrap_or(0.0);
        let last = *run.tokens.last().expect("a token was just pushed");
        if stop.contains(&last) {
            break true;
        }
        if chosen < floor {
            break false;
        }
        if run.tokens.len() == max_new {
            break false;
        }
    };
    // Read all but the last token, which scores the ones still unscored.
    run.read_up_to(run.tokens.len() - 1)?;
    if run.logprobs.len() < run.tokens.len() {
        let last = *run.tokens.last().expect("at least one token");
        run.logprobs.push(score(&run.next, last));
    }
    Ok(Decoded {
        tokens: run.tokens,
        logprobs: run.logprobs,
        choices: run.choices,
        runner_up: run.runner_up,
        stopped,
    })
}

/// The log-probability of `token` among the tokens `allowed` (renormalised over them).
#[cfg(test)]
fn chosen_among(logits: &[f32], allowed: &Allowed, token: u32) -> f32 {
    logits[token as usize] - allowed_log_sum_exp(logits, allowed)
}

/// The log-sum-exp of the logits of the tokens `allowed`: what a choice among them is
/// normalised by.
fn allowed_log_sum_exp(logits: &[f32], allowed: &Allowed) -> f32 {
    match allowed {
        Allowed::Any => log_sum_exp(logits),
        Allowed::Only(ids) => {
            let among: Vec<f32> = ids
                .iter()
                .filter(|&&id| (id as usize) < logits.len())
                .map(|&id| logits[id as usize])
                .collect();
            log_sum_exp(&among)
        }
    }
}

/// The best allowed token other than `taken`, and its log-probability among the
/// allowed tokens (`among`: their log-sum-exp); `None` if `taken` was the only one.
fn runner_up(logits: &[f32], allowed: &Allowed, taken: u32, among: f32) -> Option<(u32, f32)> {
    let others = |(i, _): &(usize, f32)| *i != taken as usize;
    let best = match allowed {
        Allowed::Any => argmax(logits.iter().copied().enumerate().filter(others)),
        Allowed::Only(ids) => argmax(
            ids.iter()
                .filter(|&&id| (id as usize) < logits.len())
                .map(|&id| (id as usize, logits[id as usize]))
                .filter(others),
        ),
    };
    best.map(|(i, logit)| (i as u32, logit - among))
}

/// The state of one greedy decode: `tokens[..read]` are in the cache, `next` is the
/// distribution for `tokens[read]`, and `logprobs` scores a prefix of `tokens`.
struct Run<'a, M: Decoder> {
    model: &'a M,
    cache: &'a mut M::Cache,
    tokens: Vec<u32>,
    logprobs: Vec<f32>,
    choices: Vec<f32>,
    runner_up: Vec<Option<(u32, f32)>>,
    read: usize,
    next: Vec<f32>,
}

impl<M: Decoder> Run<'_, M> {
    /// Reads `tokens[read..upto]` in one call, scoring each from the logits before it.
    fn read_up_to(&mut self, upto: usize) -> Result<(), Error> {
        if upto <= self.read {
            return Ok(());
        }
        let pending = &self.tokens[self.read..upto];
        if self.logprobs.len() == self.read {
            self.logprobs.push(score(&self.next, pending[0]));
        }
        let rows = self.model.extend_all(pending, self.cache)?;
        let vocab = self.model.vocab_size();
        for (j, row) in rows.chunks_exact(vocab).enumerate() {
            let index = self.read + j + 1;
            if index < upto {
                self.logprobs.push(score(row, self.tokens[index]));
            } else {
                self.next = row.to_vec();
            }
        }
        self.read = upto;
        Ok(())
    }
}

/// The log-softmax of `token` under `logits`.
fn score(logits: &[f32], token: u32) -> f32 {
    logits[token as usize] - log_sum_exp(logits)
}

/// The allowed token with the highest logit, and its log-softmax over all logits
/// (`all`: their log-sum-exp).
fn pick(logits: &[f32], allowed: &Allowed, after: usize, all: f32) -> Result<(u32, f32), Error> {
    let best = match allowed {
        Allowed::Any => argmax(logits.iter().copied().enumerate()),
        Allowed::Only(ids) => argmax(
            ids.iter()
                .filter(|&&id| (id as usize) < logits.len())
                .map(|&id| (id as usize, logits[id as usize])),
        ),
    };
    let (index, logit) = best.ok_or(Error::NoAllowedToken { after })?;
    Ok((index as u32, logit - all))
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
        let (t, lp) = pick(&logits, &Allowed::Any, 0, log_sum_exp(&logits)).unwrap();
        assert_eq!(t, 1);
        let z: f32 = logits.iter().map(|x| x.exp()).sum();
        assert!((lp - (3.0f32.exp() / z).ln()).abs() < 1e-6);

        let (t, lp) = pick(&logits, &Allowed::Only(vec![0, 2]), 0, log_sum_exp(&logits)).unwrap();
        assert_eq!(t, 2);
        assert!((lp - (2.0f32.exp() / z).ln()).abs() < 1e-6);

        assert!(matches!(
            pick(&logits, &Allowed::Only(vec![7]), 4, log_sum_exp(&logits)),
            Err(Error::NoAllowedToken { after: 4 })
        ));
    }

    #[test]
    fn a_choice_is_scored_among_the_allowed_tokens() {
        let logits = [1.0f32, 3.0, 2.0];
        let among = chosen_among(&logits, &Allowed::Only(vec![0, 2]), 2);
        let z = 1.0f32.exp() + 2.0f32.exp();
        assert!((among - (2.0f32.exp() / z).ln()).abs() < 1e-6);
        assert_eq!(chosen_among(&logits, &Allowed::Only(vec![2]), 2), 0.0);
        assert_eq!(chosen_among(&logits, &Allowed::Any, 1), score(&logits, 1));
    }

    #[test]
    fn the_runner_up_is_the_best_other_allowed_token() {
        let logits = [1.0f32, 3.0, 2.0];
        let all = allowed_log_sum_exp(&logits, &Allowed::Any);
        let (t, lp) = runner_up(&logits, &Allowed::Any, 1, all).unwrap();
        assert_eq!(t, 2);
        assert_eq!(lp, score(&logits, 2));
        let only = Allowed::Only(vec![0, 1]);
        assert_eq!(
            runner_up(&logits, &only, 1, allowed_log_sum_exp(&logits, &only)).unwrap(),
            (0, chosen_among(&logits, &only, 0))
        );
        let one = Allowed::Only(vec![1]);
        assert_eq!(
            runner_up(&logits, &one, 1, allowed_log_sum_exp(&logits, &one)),
            None
        );
    }
}
