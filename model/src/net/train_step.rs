//! One optimisation step for the trainer: masked next-token cross-entropy, backprop,
//! global gradient-norm clipping, AdamW. The data pipeline and the loop live elsewhere.

use burn::module::{AutodiffModule, Module, ModuleVisitor, Param};
use burn::optim::adaptor::OptimizerAdaptor;
use burn::optim::{AdamW, AdamWConfig, GradientsParams, Optimizer};
use burn::tensor::activation::log_softmax;
use burn::tensor::backend::{AutodiffBackend, Backend};
use burn::tensor::{ElementConversion, Int, Tensor, TensorData};

use super::decoder::Llama;
use super::Error;

/// A batch of token sequences, row-major [batch, seq]. `loss_mask[b][t]` is true where
/// token `t` is one the model must learn to predict (a predicted-state token); the
/// model reads tokens `0..seq - 1` and is scored on tokens `1..seq`.
#[derive(Debug, Clone)]
pub struct TrainBatch {
    pub tokens: Vec<u32>,
    pub loss_mask: Vec<bool>,
    pub batch: usize,
    pub seq: usize,
}

/// Optimiser settings fixed for a run; the learning rate is given at each step.
#[derive(Debug, Clone, Copy)]
pub struct TrainerConfig {
    pub weight_decay: f32,
    pub beta_1: f32,
    pub beta_2: f32,
    /// Gradients are scaled so their global L2 norm is at most this (`None`: no clipping).
    pub max_grad_norm: Option<f32>,
}

impl Default for TrainerConfig {
    fn default() -> Self {
        Self {
            weight_decay: 0.1,
            beta_1: 0.9,
            beta_2: 0.95,
            max_grad_norm: Some(1.0),
        }
    }
}

/// What one step measured.
#[derive(Debug, Clone, Copy)]
pub struct StepStats {
    /// Mean cross-entropy over the masked target tokens (nats).
    pub loss: f32,
    /// Global gradient norm before clipping.
    pub grad_norm: f32,
    /// Number of target tokens the loss covered.
    pub targets: usize,
}

/// AdamW with global-norm clipping for a [`Llama`] on an autodiff backend.
pub struct Trainer<B: AutodiffBackend> {
    optimizer: OptimizerAdaptor<AdamW, Llama<B>, B>,
    max_grad_norm: Option<f32>,
}

impl<B: AutodiffBackend> Trainer<B> {
    pub fn new(config: TrainerConfig) -> Self {
        let optimizer = AdamWConfig::new()
            .with_weight_decay(config.weight_decay)
            .with_beta_1(config.beta_1)
            .with_beta_2(config.beta_2)
            .init();
        Self {
            optimizer,
            max_grad_norm: config.max_grad_norm,
        }
    }

    /// Runs one step at learning rate `lr` and returns the updated model.
    pub fn step(
        &mut self,
        model: Llama<B>,
        batch: &TrainBatch,
        lr: f64,
    ) -> Result<(Llama<B>, StepStats), Error> {
        let (loss, targets) = masked_loss(&model, batch)?;
        let loss_value: f32 = loss.clone().into_scalar().elem();
        let mut grads = GradientsParams::from_grads(loss.backward(), &model);

        let grad_norm = global_grad_norm(&model, &grads);
        if let Some(max) = self.max_grad_norm {
            if grad_norm > max {
                scale_grads(&model, &mut grads, (max / grad_norm) as f64);
            }
        }
        let model = self.optimizer.step(lr, model, grads);
        Ok((
            model,
            StepStats {
                loss: loss_value,
                grad_norm,
                targets,
            },
        ))
    }
}

/// Mean cross-entropy [1] over the masked targets, and their count. Works on any
/// backend, so evaluation can call it without autodiff.
pub fn masked_loss<B: Backend>(
    model: &Llama<B>,
    batch: &TrainBatch,
) -> Result<(Tensor<B, 1>, usize), Error> {
    let (b, s) = (batch.batch, batch.seq);
    if batch.tokens.len() != b * s || batch.loss_mask.len() != b * s || s < 2 {
        return Err(Error::BatchShape {
            batch: b,
            seq: s,
            got: batch.tokens.len().min(batch.loss_mask.len()),
        });
    }
    if let Some(&id) = batch
        .tokens
        .iter()
        .find(|&&t| t as usize >= model.vocab_size)
    {
        return Err(Error::TokenOutOfRange {
            id,
            vocab: model.vocab_size,
        });
    }
    let mut inputs = Vec::with_capacity(b * (s - 1));
    let mut targets = Vec::with_capacity(b * (s - 1));
    let mut weights = Vec::with_capacity(b * (s - 1));
    for row in 0..b {
        let tokens = &batch.tokens[row * s..(row + 1) * s];
        let mask = &batch.loss_mask[row * s..(row + 1) * s];
        inputs.extend(tokens[..s - 1].iter().map(|&t| t as i64));
        targets.extend(tokens[1..].iter().map(|&t| t as i64));
        weights.extend(mask[1..].iter().map(|&m| if m { 1.0f32 } else { 0.0 }));
    }
    let count = weights.iter().filter(|&&w| w > 0.0).count();
    if count == 0 {
        return Err(Error::NoTargets);
    }

    let device = model.device();
    let n = b * (s - 1);
    let inputs = Tensor::<B, 2, Int>::from_data(TensorData::new(inputs, [b, s - 1]), &device);
    let targets = Tensor::<B, 2, Int>::from_data(TensorData::new(targets, [n, 1]), &device);
    let weights = Tensor::<B, 1>::from_data(TensorData::new(weights, [n]), &device);

    let logits = model.forward(inputs).reshape([n, model.vocab_size]);
    let picked = log_softmax(logits, 1).gather(1, targets).reshape([n]); // log p(target)
    let loss = (picked * weights).sum().neg() / count as f64;
    Ok((loss, count))
}

/// sqrt(sum of every gradient's squared entries).
fn global_grad_norm<B: AutodiffBackend>(model: &Llama<B>, grads: &GradientsParams) -> f32 {
    struct SumSquares<'a> {
        grads: &'a GradientsParams,
        total: f64,
    }
    impl<B: AutodiffBackend> ModuleVisitor<B> for SumSquares<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            if let Some(g) = self.grads.get::<B::InnerBackend, D>(param.id) {
                self.total += g.square().sum().into_scalar().elem::<f64>();
            }
        }
    }
    let mut visitor = SumSquares { grads, total: 0.0 };
    model.visit(&mut visitor);
    visitor.total.sqrt() as f32
}

fn scale_grads<B: AutodiffBackend>(model: &Llama<B>, grads: &mut GradientsParams, factor: f64) {
    struct Scale<'a> {
        grads: &'a mut GradientsParams,
        factor: f64,
    }
    impl<B: AutodiffBackend> ModuleVisitor<B> for Scale<'_> {
        fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<B, D>>) {
            if let Some(g) = self.grads.remove::<B::InnerBackend, D>(param.id) {
                self.grads.register(param.id, g * self.factor);
            }
        }
    }
    model.visit(&mut Scale { grads, factor });
}

/// The inference copy of a trained model (no autodiff bookkeeping).
pub fn inference_model<B: AutodiffBackend>(model: &Llama<B>) -> Llama<B::InnerBackend> {
    model.valid()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{Cpu, CpuAutodiff, LlamaConfig};

    fn batch() -> TrainBatch {
        let tokens: Vec<u32> = (0..2 * 10).map(|i| (i * 7 % 32) as u32).collect();
        let loss_mask = (0..2 * 10).map(|i| i % 10 >= 4).collect();
        TrainBatch {
            tokens,
            loss_mask,
            batch: 2,
            seq: 10,
        }
    }

    #[test]
    fn loss_covers_only_masked_targets() {
        let config = LlamaConfig::new(32, 16, 24, 1, 2, 1);
        let model = Llama::<Cpu>::init(&config, &Default::default()).unwrap();
        let b = batch();
        let (loss, count) = masked_loss(&model, &b).unwrap();
        assert_eq!(count, 2 * 6);

        // Recompute by hand from the logits of each row.
        let mut total = 0.0f64;
        for row in 0..2 {
            let toks = &b.tokens[row * 10..(row + 1) * 10];
            let logits: Vec<f32> = model
                .forward(model.token_tensor(&toks[..9]).unwrap())
                .into_data()
                .into_vec()
                .unwrap();
            for t in 1..10 {
                if b.loss_mask[row * 10 + t] {
                    let l = &logits[(t - 1) * 32..t * 32];
                    let z = l.iter().map(|&x| (x as f64).exp()).sum::<f64>().ln();
                    total += z - l[toks[t] as usize] as f64;
                }
            }
        }
        let expected = (total / count as f64) as f32;
        let got: f32 = loss.into_scalar().elem();
        assert!((got - expected).abs() < 1e-4, "{got} vs {expected}");

        let none = TrainBatch {
            loss_mask: vec![false; 20],
            ..batch()
        };
        assert!(matches!(masked_loss(&model, &none), Err(Error::NoTargets)));
    }

    #[test]
    fn steps_reduce_the_loss_and_clip_gradients() {
        let config = LlamaConfig::new(32, 16, 24, 1, 2, 1);
        let mut model = Llama::<CpuAutodiff>::init(&config, &Default::default()).unwrap();
        let mut trainer = Trainer::new(TrainerConfig {
            max_grad_norm: Some(0.5),
            ..TrainerConfig::default()
        });
        let mut losses = Vec::new();
        for _ in 0..30 {
            let (next, stats) = trainer.step(model, &batch(), 1e-2).unwrap();
            assert!(stats.grad_norm.is_finite() && stats.grad_norm > 0.0);
            losses.push(stats.loss);
            model = next;
        }
        assert!(losses[29] < losses[0] * 0.5, "{losses:?}");
        let frozen = inference_model(&model);
        assert_eq!(frozen.vocab_size, 32);
    }

    #[test]
    fn global_norm_and_scaling_agree() {
        let config = LlamaConfig::new(32, 16, 24, 1, 2, 1);
        let model = Llama::<CpuAutodiff>::init(&config, &Default::default()).unwrap();
        let (loss, _) = masked_loss(&model, &batch()).unwrap();
        let mut grads = GradientsParams::from_grads(loss.backward(), &model);
        let norm = global_grad_norm(&model, &grads);
        scale_grads(&model, &mut grads, 0.25);
        let scaled = global_grad_norm(&model, &grads);
        assert!(
            (scaled - norm * 0.25).abs() < 1e-4 * norm.max(1.0),
            "{scaled} vs {norm}"
        );
    }
}
