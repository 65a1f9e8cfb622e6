//! Episodes to token batches: tokenise, mark the tokens the model must predict, and
//! group examples of similar length so that little of a batch is padding.

use crate::data::Episode;
use crate::language::Locals;
use crate::net::TrainBatch;
use crate::tokenizer::Tokenizer;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::ops::Range;

/// One tokenised episode.
#[derive(Clone, Debug)]
pub struct Example {
    pub ids: Vec<u32>,
    /// True on tokens of a predicted outcome that the model must choose (the loss
    /// falls there): all but the source line of a state, which the decoding grammar
    /// writes once the line number is chosen.
    pub mask: Vec<bool>,
    /// Each predicted outcome: its action's name and its token range.
    pub targets: Vec<(&'static str, Range<usize>)>,
}

/// Tokenise `episode`, cut to at most `max_len` tokens (outcomes that do not fit whole
/// are dropped). `None` if no outcome fits.
pub fn encode(
    episode: &Episode,
    tokenizer: &Tokenizer,
    max_len: usize,
    locals: Locals,
) -> Option<Example> {
    let (text, ranges) = episode.render_as(locals);
    let encoding = tokenizer.inner().encode(text.as_str(), false).ok()?;
    let ids = encoding.get_ids();
    let offsets = encoding.get_offsets();
    let mut mask = vec![false; ids.len()];
    let mut targets = Vec::new();
    // Tokens never straddle a target's edges: targets start after <|frame_sep|> and
    // end with <|action_sep|>, and special tokens split the text before BPE runs.
    let mut token = 0;
    for ((action, _), range) in episode.steps.iter().zip(&ranges) {
        while token < ids.len() && offsets[token].0 < range.start {
            token += 1;
        }
        let first = token;
        while token < ids.len() && offsets[token].0 < range.end {
            token += 1;
        }
        if token > max_len {
            break;
        }
        let copied = source_line(&text, range.clone());
        for (t, m) in mask.iter_mut().enumerate().take(token).skip(first) {
            let (start, end) = offsets[t];
            *m = !(start >= copied.start && end <= copied.end);
        }
        targets.push((action.name(), first..token));
    }
    let end = targets.last()?.1.end;
    Some(Example {
        ids: ids[..end].to_vec(),
        mask: mask[..end].to_vec(),
        targets,
    })
}

/// The byte range of an outcome's source line with its newline (empty for an exit).
fn source_line(text: &str, outcome: Range<usize>) -> Range<usize> {
    let body = &text[outcome.clone()];
    let state = body.strip_prefix(crate::language::AT_START).unwrap_or(body);
    if state.starts_with("<|exit_") {
        return 0..0;
    }
    let Some(header_end) = body.find('\n') else {
        return 0..0;
    };
    let start = header_end + 1;
    let end = body[start..]
        .find('\n')
        .map_or(body.len(), |i| start + i + 1);
    outcome.start + start..outcome.start + end
}

/// A batch and, per row, the example it holds.
pub struct Batch {
    pub batch: TrainBatch,
    pub rows: Vec<usize>,
}

/// Pack examples `rows` into one padded batch (pad id 0, never scored).
pub fn pack(examples: &[Example], rows: &[usize]) -> Batch {
    let seq = rows
        .iter()
        .map(|&r| examples[r].ids.len())
        .max()
        .unwrap_or(2)
        .max(2);
    let mut tokens = Vec::with_capacity(rows.len() * seq);
    let mut loss_mask = Vec::with_capacity(rows.len() * seq);
    for &r in rows {
        let example = &examples[r];
        tokens.extend(&example.ids);
        tokens.extend(std::iter::repeat_n(0, seq - example.ids.len()));
        loss_mask.extend(&example.mask);
        loss_mask.extend(std::iter::repeat_n(false, seq - example.ids.len()));
    }
    Batch {
        batch: TrainBatch {
            tokens,
            loss_mask,
            batch: rows.len(),
            seq,
        },
        rows: rows.to_vec(),
    }
}

/// One epoch's batches: examples sorted by length, cut into batches of at most
/// `batch_tokens` tokens (padded), in an order shuffled by `seed` and `epoch`.
pub fn epoch_plan(
    examples: &[Example],
    batch_tokens: usize,
    seed: u64,
    epoch: u64,
) -> Vec<Vec<usize>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ epoch.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut order: Vec<usize> = (0..examples.len()).collect();
    order.shuffle(&mut rng); // ties in length are broken differently each epoch
    order.sort_by_key(|&i| examples[i].ids.len());
    let mut batches = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    for i in order {
        let len = examples[i].ids.len();
        if !current.is_empty() && (current.len() + 1) * len > batch_tokens {
            batches.push(std::mem::take(&mut current));
        }
        current.push(i);
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches.shuffle(&mut rng);
    batches
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(len: usize) -> Example {
        Example {
            ids: vec![1; len],
            mask: vec![true; len],
            targets: vec![("step_into", 0..len)],
        }
    }

    #[test]
    fn batches_hold_similar_lengths_within_the_token_budget() {
        let examples: Vec<Example> = [10, 200, 12, 190, 11, 205]
            .iter()
            .map(|&l| example(l))
            .collect();
        let plan = epoch_plan(&examples, 420, 7, 0);
        let mut seen: Vec<usize> = plan.iter().flatten().copied().collect();
        seen.sort();
        assert_eq!(seen, vec![0, 1, 2, 3, 4, 5], "every example once");
        for rows in &plan {
            let packed = pack(&examples, rows);
            assert!(packed.batch.batch * packed.batch.seq <= 420, "{rows:?}");
            let lens: Vec<usize> = rows.iter().map(|&r| examples[r].ids.len()).collect();
            assert!(
                lens.iter().max().unwrap() - lens.iter().min().unwrap() < 20,
                "{lens:?}"
            );
        }
        assert_eq!(
            plan,
            epoch_plan(&examples, 420, 7, 0),
            "the plan is reproducible"
        );
    }

    #[test]
    fn the_source_line_of_a_state_is_left_to_the_grammar() {
        let text = "p<|line|>3 0 f\n    x = 1\n{\"x\":\"1\"}<|action_sep|><|exit_normal|>\n<|stdout|>\"a\"";
        let state = 1..text.find("<|exit").unwrap();
        let line = source_line(text, state);
        assert_eq!(&text[line], "    x = 1\n");
        let exit = text.find("<|exit").unwrap()..text.len();
        assert!(
            source_line(text, exit).is_empty(),
            "an exit has no source line"
        );
    }

    #[test]
    fn padding_is_never_scored() {
        let examples = vec![example(3), example(5)];
        let packed = pack(&examples, &[0, 1]);
        assert_eq!(packed.batch.seq, 5);
        assert_eq!(
            &packed.batch.loss_mask[..5],
            &[true, true, true, false, false]
        );
        assert_eq!(&packed.batch.tokens[3..5], &[0, 0]);
    }
}
