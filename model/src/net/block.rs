//! The pieces of one transformer layer: RMSNorm, the SwiGLU feed-forward network, and
//! the pre-norm residual block that joins them with attention.

use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::tensor::activation::silu;
use burn::tensor::backend::Backend;
use burn::tensor::Tensor;

use super::attention::{linear, Attention, Rope};
use super::cache::KeyValue;
use super::config::LlamaConfig;

/// `x / sqrt(mean(x^2) + eps) * weight` over the last axis (no mean subtraction, no bias).
#[derive(Module, Debug)]
pub struct RmsNorm<B: Backend> {
    /// [hidden]
    pub weight: Param<Tensor<B, 1>>,
    pub eps: f64,
}

impl<B: Backend> RmsNorm<B> {
    pub fn init(size: usize, eps: f64, device: &B::Device) -> Self {
        Self {
            weight: Param::from_tensor(Tensor::ones([size], device)),
            eps,
        }
    }

    /// [batch, seq, hidden] -> same
    pub fn forward(&self, x: Tensor<B, 3>) -> Tensor<B, 3> {
        let [_, _, d] = x.dims();
        let rms = (x.clone().square().mean_dim(2) + self.eps).sqrt(); // [b, s, 1]
        x / rms * self.weight.val().reshape([1, 1, d])
    }
}

/// `down(silu(gate(x)) * up(x))`
#[derive(Module, Debug)]
pub struct Mlp<B: Backend> {
    pub gate_proj: Linear<B>,
    pub up_proj: Linear<B>,
    pub down_proj: Linear<B>,
}

impl<B: Backend> Mlp<B> {
    pub fn init(config: &LlamaConfig, device: &B::Device) -> Self {
        let (d, f) = (config.hidden_size, config.intermediate_size);
        Self {
            gate_proj: linear(d, f, device),
            up_proj: linear(d, f, device),
            down_proj: linear(f, d, device),
        }
    }

    /// [batch, seq, hidden] -> same
    pub fn forward(&self, x: Tensor<B, 3>) -> Tensor<B, 3> {
        let gate = silu(self.gate_proj.forward(x.clone()));
        self.down_proj.forward(gate * self.up_proj.forward(x))
    }
}

/// `h = x + attn(norm(x)); out = h + mlp(norm(h))`
#[derive(Module, Debug)]
pub struct Block<B: Backend> {
    pub input_layernorm: RmsNorm<B>,
    pub self_attn: Attention<B>,
    pub post_attention_layernorm: RmsNorm<B>,
    pub mlp: Mlp<B>,
}

impl<B: Backend> Block<B> {
    pub fn init(config: &LlamaConfig, device: &B::Device) -> Self {
        let (d, eps) = (config.hidden_size, config.rms_norm_eps);
        Self {
            input_layernorm: RmsNorm::init(d, eps, device),
            self_attn: Attention::init(config, device),
            post_attention_layernorm: RmsNorm::init(d, eps, device),
            mlp: Mlp::init(config, device),
        }
    }

    /// See [`Attention::forward`] for `start`, `mask` and `past`.
    pub fn forward(
        &self,
        x: Tensor<B, 3>,
        rope: &Rope<B>,
        start: usize,
        mask: Option<&Tensor<B, 4>>,
        past: Option<KeyValue<B>>,
    ) -> (Tensor<B, 3>, KeyValue<B>) {
        let normed = self.input_layernorm.forward(x.clone());
        let (attended, kv) = self.self_attn.forward(normed, rope, start, mask, past);
        let h = x + attended;
        let out = h.clone() + self.mlp.forward(self.post_attention_layernorm.forward(h));
        (out, kv)
    }
}
