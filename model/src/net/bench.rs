//! Speed of the model on this machine, in the pattern a debugging session uses: read
//! the program's source once (prefill), then for each step read the action and decode
//! the next state token by token.

use std::fmt;
use std::path::PathBuf;
use std::time::Instant;

use burn::tensor::backend::AutodiffBackend;

use super::checkpoint::load_checkpoint;
use super::config::LlamaConfig;
use super::decode::{DecodeCache, Decoder};
use super::decoder::Llama;
use super::fast::{kernels, q8, FastLlama, WeightFormat};
use super::generate::{greedy, Allowed};
use super::train_step::{TrainBatch, Trainer, TrainerConfig};
use super::Error;

/// Which model to time.
#[derive(Debug, Clone)]
pub enum BenchModel {
    /// A checkpoint directory (`config.json` + `model.safetensors`).
    Checkpoint(PathBuf),
    /// Random weights of the given shape, with a name for the table.
    Random { name: String, config: LlamaConfig },
}

impl BenchModel {
    /// A checkpoint (if given) followed by the two random presets: what
    /// `neural-model bench` prints.
    pub fn with_presets(checkpoint: Option<PathBuf>) -> Vec<Self> {
        let mut models: Vec<Self> = checkpoint.into_iter().map(BenchModel::Checkpoint).collect();
        models.extend(Self::random_presets());
        models
    }

    /// The ~5M and ~20M random models with a 4096-token vocabulary.
    pub fn random_presets() -> Vec<Self> {
        vec![
            BenchModel::Random {
                name: "random-5M".into(),
                config: LlamaConfig::small_5m(4096),
            },
            BenchModel::Random {
                name: "random-20M".into(),
                config: LlamaConfig::medium_20m(4096),
            },
        ]
    }
}

/// The session to simulate.
#[derive(Debug, Clone, Copy)]
pub struct BenchOptions {
    /// Tokens of program source read once at the start.
    pub prefix_tokens: usize,
    /// Tokens read per step before decoding (the action).
    pub action_tokens: usize,
    /// Tokens decoded per step (one predicted state).
    pub state_tokens: usize,
    /// Steps timed; the context grows by `action_tokens + state_tokens` each step.
    pub steps: usize,
}

impl Default for BenchOptions {
    fn default() -> Self {
        Self {
            prefix_tokens: 256,
            action_tokens: 8,
            state_tokens: 40,
            steps: 20,
        }
    }
}

/// One model's timings on one decoder.
#[derive(Debug, Clone)]
pub struct BenchRow {
    pub name: String,
    /// `int8` or `bf16` (the fast CPU path, by its weights) or `burn` (the reference).
    pub decoder: &'static str,
    pub parameters: usize,
    /// Bytes one decoded token reads (weights, keys and values at the session's mean
    /// context), and its multiply-adds times two.
    pub bytes_per_token: usize,
    pub flops_per_token: usize,
    /// The rate this machine reads a buffer of `bytes_per_token`, again and again.
    pub bytes_gb_s: f64,
    pub prefill_ms: f64,
    /// One step: read the action, decode the state.
    pub step_ms_p50: f64,
    pub step_ms_p95: f64,
    pub token_ms_p50: f64,
    pub token_ms_p95: f64,
    /// Decoded tokens per second over all steps.
    pub tokens_per_s: f64,
    /// CPU time the process spent per decoded token (all threads), if the OS reports
    /// it: unlike wall time, it does not grow when other processes share the cores.
    pub cpu_ms_per_token: Option<f64>,
    /// Context length after the last step.
    pub final_context: usize,
    /// The process's peak resident memory so far (VmHWM), if the OS reports it.
    pub peak_rss_mib: Option<f64>,
}

/// What this machine can do, measured on as many threads as the decode path uses: the
/// bound on a decoded token's time.
#[derive(Debug, Clone, Copy)]
pub struct MachineLimits {
    pub threads: usize,
    /// Reading memory far larger than the caches.
    pub memory_gb_s: f64,
    /// The decode path's matrix kernels on weights that sit in the caches, by weights.
    pub int8_gflop_s: f64,
    pub bf16_gflop_s: f64,
}

impl MachineLimits {
    /// Measures all three (a second or two).
    pub fn measure() -> Self {
        let threads = super::fast::decode_threads();
        let memory_gb_s = read_rate(256 << 20, threads);
        // Compute: one token through a 256 x 512 matrix (in the cache), many times, on
        // each thread.
        let (rows, cols, reps) = (256, 512, 4000);
        let flops = (2 * rows * cols * reps * threads) as f64;
        let w: Vec<f32> = (0..rows * cols).map(|i| (i % 7) as f32 - 3.0).collect();
        let x = vec![0.5f32; cols];
        let int8 = q8::Q8Weights::quantize(&w, rows, cols);
        let int8_s = on_threads(threads, |_| {
            let mut activations = q8::Q8Activations::default();
            let mut out = vec![0.0f32; rows];
            for _ in 0..reps {
                activations.quantize(std::hint::black_box(&x), 1, cols);
                q8::matmul(&int8, &activations, 0..1, 0..rows, &mut out);
            }
            std::hint::black_box(&out);
        });
        let bf16: Vec<kernels::Bf16> = w.iter().map(|&v| kernels::to_bf16(v)).collect();
        let bf16_s = on_threads(threads, |_| {
            let mut out = vec![0.0f32; rows];
            for _ in 0..reps {
                kernels::matmul(&bf16, rows, cols, std::hint::black_box(&x), 1, &mut out);
            }
            std::hint::black_box(&out);
        });
        Self {
            threads,
            memory_gb_s,
            int8_gflop_s: flops / int8_s / 1e9,
            bf16_gflop_s: flops / bf16_s / 1e9,
        }
    }

    /// The least time a token can take: its bytes read (weights and the key/value
    /// cache, at the rate this machine reads a buffer of their size over and over, as
    /// decoding does: from the caches where they fit), or its arithmetic at the
    /// kernel's in-cache rate, whichever is longer.
    pub fn token_ms(&self, row: &BenchRow) -> f64 {
        let memory = row.bytes_per_token as f64 / (row.bytes_gb_s * 1e9);
        let rate = if row.decoder == "int8" {
            self.int8_gflop_s
        } else {
            self.bf16_gflop_s
        };
        let compute = row.flops_per_token as f64 / (rate * 1e9);
        memory.max(compute) * 1e3
    }
}

/// Seconds `work(i)` takes on threads `i` = 0..threads at once (this one is 0).
fn on_threads(threads: usize, work: impl Fn(usize) + Sync) -> f64 {
    let start = Instant::now();
    std::thread::scope(|scope| {
        for i in 1..threads {
            let work = &work;
            scope.spawn(move || work(i));
        }
        work(0);
    });
    start.elapsed().as_secs_f64()
}

/// GB/s at which `threads` threads read a buffer of `bytes` (a share each), again and
/// again (best of a few rounds, at least 256 MiB read in all).
fn read_rate(bytes: usize, threads: usize) -> f64 {
    let share = (bytes / threads / 64).max(1) * 8; // u64s a thread, in whole cache lines
    let buffers: Vec<Vec<u64>> = (0..threads).map(|_| vec![1u64; share]).collect();
    let passes = ((256usize << 20) / (share * 8 * threads)).clamp(1, 2_000);
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let seconds = on_threads(threads, |i| {
            let mine = &buffers[i];
            for _ in 0..passes {
                // Eight independent sums, so the loop is bound by loads, not by adds.
                let mut lanes = [0u64; 8];
                for chunk in std::hint::black_box(mine).chunks_exact(8) {
                    for i in 0..8 {
                        lanes[i] = lanes[i].wrapping_add(chunk[i]);
                    }
                }
                std::hint::black_box(lanes);
            }
        });
        best = best.min(seconds);
    }
    (share * 8 * threads * passes) as f64 / best / 1e9
}

/// The bench's result, printable as a Markdown table.
#[derive(Debug, Clone)]
pub struct BenchTable {
    pub machine: String,
    pub options: BenchOptions,
    pub limits: Option<MachineLimits>,
    pub rows: Vec<BenchRow>,
}

/// The decoders a bench can time: the fast path by its weights, and burn.
pub const DECODERS: [&str; 3] = ["int8", "bf16", "burn"];

/// Times each model on the CPU, on each of `decoders` (names from [`DECODERS`]); the
/// models are timed one after the other in this process, so the peak memory column
/// only grows.
pub fn bench(
    models: &[BenchModel],
    decoders: &[&str],
    options: BenchOptions,
    limits: Option<MachineLimits>,
) -> Result<BenchTable, Error> {
    if let Some(unknown) = decoders.iter().find(|d| !DECODERS.contains(d)) {
        return Err(Error::Config(format!(
            "no decoder called {unknown}: the bench times {}",
            DECODERS.join(", ")
        )));
    }
    let device = Default::default();
    let mut rows = Vec::new();
    for model in models {
        let (name, config, llama) = match model {
            BenchModel::Checkpoint(dir) => {
                let (config, llama) = load_checkpoint::<super::Cpu>(dir, &device)?;
                (dir.display().to_string(), config, llama)
            }
            BenchModel::Random { name, config } => (
                name.clone(),
                config.clone(),
                Llama::<super::Cpu>::init(config, &device)?,
            ),
        };
        for format in [WeightFormat::Int8, WeightFormat::Bf16] {
            if !decoders.contains(&format.name()) {
                continue;
            }
            let fast = FastLlama::from_burn(&llama, &config, format)?;
            let bytes = format.bytes_per_weight();
            rows.push(bench_one(
                &name,
                format.name(),
                &config,
                &fast,
                bytes,
                options,
            )?);
        }
        if decoders.contains(&"burn") {
            rows.push(bench_one(&name, "burn", &config, &llama, 4, options)?);
        }
    }
    Ok(BenchTable {
        machine: machine_name(),
        options,
        limits,
        rows,
    })
}

fn bench_one<M: Decoder>(
    name: &str,
    decoder: &'static str,
    config: &LlamaConfig,
    model: &M,
    bytes_per_weight: usize,
    o: BenchOptions,
) -> Result<BenchRow, Error> {
    let needed = o.prefix_tokens + o.steps * (o.action_tokens + o.state_tokens);
    if needed > model.max_positions() {
        return Err(Error::ContextFull {
            needed,
            max: model.max_positions(),
        });
    }
    // Arbitrary but fixed token ids standing in for source and actions.
    let ids = |n: usize, seed: usize| -> Vec<u32> {
        (0..n)
            .map(|i| ((i * 7919 + seed * 104_729) % config.vocab_size) as u32)
            .collect()
    };

    // Warm-up: the first calls allocate and start threads.
    let mut warm = model.new_cache();
    greedy(model, &mut warm, &ids(16, 0), 4, &[], |_| Allowed::Any)?;

    let mut cache = model.new_cache();
    let start = Instant::now();
    model.extend(&ids(o.prefix_tokens, 1), &mut cache)?;
    let prefill_ms = start.elapsed().as_secs_f64() * 1e3;

    let mut step_ms = Vec::new();
    let mut token_ms = Vec::new();
    let mut decoded = 0usize;
    let mut decoding_s = 0.0;
    let cpu_start = process_cpu_ns();
    for step in 0..o.steps {
        let step_start = Instant::now();
        let mut last = Instant::now();
        // Time each token through the constraint callback, which runs once per token.
        let out = greedy(
            model,
            &mut cache,
            &ids(o.action_tokens, step + 2),
            o.state_tokens,
            &[],
            |so_far| {
                let now = Instant::now();
                if !so_far.is_empty() {
                    token_ms.push((now - last).as_secs_f64() * 1e3);
                }
                last = now;
                Allowed::Any
            },
        )?;
        let elapsed = step_start.elapsed().as_secs_f64();
        step_ms.push(elapsed * 1e3);
        decoded += out.tokens.len();
        decoding_s += elapsed;
        // Read the last decoded token too, as the next step would.
        model.extend(&[*out.tokens.last().expect("state_tokens > 0")], &mut cache)?;
    }
    let cpu_ms_per_token = match (cpu_start, process_cpu_ns()) {
        (Some(a), Some(b)) if decoded > 0 => Some((b - a) as f64 / 1e6 / decoded as f64),
        _ => None,
    };
    // Every matrix is read once per token; of the embedding, one row.
    let d = config.hidden_size;
    let matrices = config.num_parameters() - config.vocab_size * d
        + if config.tie_word_embeddings {
            config.vocab_size * d
        } else {
            0
        }
        - (2 * config.num_hidden_layers + 1) * d;
    let heads_dim = config.num_attention_heads * config.head_dim();
    let mean_context = o.prefix_tokens + o.steps * (o.action_tokens + o.state_tokens) / 2;
    // The cache holds f32 keys and values (the burn model's too).
    let kv_dim = config.num_key_value_heads * config.head_dim();
    let cache_bytes = config.num_hidden_layers * mean_context * 2 * kv_dim * 4;
    let bytes = matrices * bytes_per_weight + d * 4 + cache_bytes;
    Ok(BenchRow {
        name: name.to_string(),
        decoder,
        parameters: config.num_parameters(),
        bytes_per_token: bytes,
        bytes_gb_s: read_rate(bytes, super::fast::decode_threads()),
        // Attention: a score and a weighted value per head dimension and position.
        flops_per_token: 2 * matrices + 4 * config.num_hidden_layers * heads_dim * mean_context,
        prefill_ms,
        step_ms_p50: percentile(&mut step_ms, 0.50),
        step_ms_p95: percentile(&mut step_ms, 0.95),
        token_ms_p50: percentile(&mut token_ms, 0.50),
        token_ms_p95: percentile(&mut token_ms, 0.95),
        tokens_per_s: decoded as f64 / decoding_s,
        cpu_ms_per_token,
        final_context: cache.len(),
        peak_rss_mib: peak_rss_mib(),
    })
}

/// Training throughput of one configuration.
#[derive(Debug, Clone)]
pub struct TrainBenchRow {
    pub parameters: usize,
    pub batch: usize,
    pub seq: usize,
    pub step_ms_p50: f64,
    pub tokens_per_s: f64,
    pub first_loss: f32,
    pub last_loss: f32,
}

/// Times `steps` optimiser steps on one fixed random batch (after one warm-up step);
/// the loss falling shows the step learns.
pub fn bench_train<B: AutodiffBackend>(
    config: &LlamaConfig,
    batch: usize,
    seq: usize,
    steps: usize,
    device: &B::Device,
) -> Result<TrainBenchRow, Error> {
    let mut model = Llama::<B>::init(config, device)?;
    let mut trainer = Trainer::<B>::new(TrainerConfig::default());
    let tokens: Vec<u32> = (0..batch * seq)
        .map(|i| ((i * 7919) % config.vocab_size) as u32)
        .collect();
    let loss_mask = (0..batch * seq).map(|i| i % seq >= seq / 2).collect();
    let data = TrainBatch {
        tokens,
        loss_mask,
        batch,
        seq,
    };
    let (warmed, first) = trainer.step(model, &data, 1e-3)?;
    model = warmed;
    let mut times = Vec::new();
    let mut last_loss = first.loss;
    for _ in 0..steps {
        let start = Instant::now();
        let (next, stats) = trainer.step(model, &data, 1e-3)?;
        times.push(start.elapsed().as_secs_f64() * 1e3);
        model = next;
        last_loss = stats.loss;
    }
    let total_s: f64 = times.iter().sum::<f64>() / 1e3;
    Ok(TrainBenchRow {
        parameters: config.num_parameters(),
        batch,
        seq,
        step_ms_p50: percentile(&mut times, 0.5),
        tokens_per_s: (steps * batch * seq) as f64 / total_s,
        first_loss: first.loss,
        last_loss,
    })
}

fn percentile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let index = ((values.len() - 1) as f64 * q).round() as usize;
    values[index]
}

/// Nanoseconds all of this process's threads have run, from /proc (Linux only).
fn process_cpu_ns() -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(total)
}

/// VmHWM from /proc/self/status, in MiB (Linux only).
pub fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn machine_name() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{cpu}, {threads} threads")
}

impl fmt::Display for BenchTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let o = &self.options;
        writeln!(f, "machine: {}", self.machine)?;
        if let Some(l) = &self.limits {
            writeln!(
                f,
                "measured here on {} thread(s): memory {:.1} GB/s, the int8 and bf16 kernels {:.1} and {:.1} GFLOP/s on weights in cache; \
                 limit = max(bytes read (weights, keys and values) / the rate a buffer of their size is read, FLOPs / the kernel's rate)",
                l.threads, l.memory_gb_s, l.int8_gflop_s, l.bf16_gflop_s
            )?;
        }
        writeln!(
            f,
            "session: prefix {} tokens, then {} steps of {} action tokens + {} decoded state tokens",
            o.prefix_tokens, o.steps, o.action_tokens, o.state_tokens
        )?;
        writeln!(f)?;
        writeln!(
            f,
            "| model | decoder | params | prefill ms | step ms p50 | step ms p95 | ms/token p50 | ms/token p95 | limit ms/token | tokens/s | CPU ms/token | final context | peak RSS MiB |"
        )?;
        writeln!(f, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")?;
        for r in &self.rows {
            let rss = r
                .peak_rss_mib
                .map_or("n/a".to_string(), |m| format!("{m:.0}"));
            let cpu = r
                .cpu_ms_per_token
                .map_or("n/a".to_string(), |m| format!("{m:.2}"));
            let limit = self
                .limits
                .map_or("n/a".to_string(), |l| format!("{:.3}", l.token_ms(r)));
            writeln!(
                f,
                "| {} | {} | {:.1}M | {:.1} | {:.1} | {:.1} | {:.3} | {:.3} | {} | {:.0} | {} | {} | {} |",
                r.name,
                r.decoder,
                r.parameters as f64 / 1e6,
                r.prefill_ms,
                r.step_ms_p50,
                r.step_ms_p95,
                r.token_ms_p50,
                r.token_ms_p95,
                limit,
                r.tokens_per_s,
                cpu,
                r.final_context,
                rss
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_from_the_sorted_values() {
        let mut v = vec![5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&mut v, 0.5), 3.0);
        assert_eq!(percentile(&mut v, 0.95), 5.0);
        assert!(percentile(&mut [], 0.5).is_nan());
    }

    #[test]
    fn a_tiny_bench_fills_every_column() {
        let config = LlamaConfig::new(64, 32, 64, 2, 4, 2);
        let models = [BenchModel::Random {
            name: "tiny".into(),
            config,
        }];
        let options = BenchOptions {
            prefix_tokens: 10,
            action_tokens: 2,
            state_tokens: 3,
            steps: 2,
        };
        let table = bench(&models, &DECODERS, options, None).unwrap();
        assert_eq!(table.rows.len(), 3);
        for row in &table.rows {
            assert_eq!(row.final_context, 10 + 2 * (2 + 3));
            assert!(row.token_ms_p50 > 0.0 && row.tokens_per_s > 0.0);
        }
        let text = table.to_string();
        for decoder in DECODERS {
            assert!(text.contains(&format!("| tiny | {decoder} |")), "{text}");
        }
        let one = bench(&models, &["int8"], options, None).unwrap();
        assert_eq!(one.rows.len(), 1);
        assert!(bench(&models, &["f64"], options, None).is_err());
    }
}
