//! `neural-model`: record runs, take actions on them, and (with the `neural` feature)
//! build data, train, evaluate and benchmark the model.
//!
//! Exit codes: 0 ok, 1 the program's own error is reported (uncaught exception, or it
//! did not terminate), 2 bad usage or input.

use clap::{Args, Parser, Subcommand};
use neural_model::{trace, Action, Exit, Limits, Outcome, Program, State, Trace};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "neural-model",
    version,
    about = "World model of Python program runs: trace, step, data, train, eval"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a program under the tracer and print its events.
    Trace {
        #[command(flatten)]
        run: RunArgs,
        /// One JSON object per event (and a last `exit` object).
        #[arg(long)]
        json: bool,
    },
    /// Check Python files for syntax errors without Python (as the neural engine does
    /// at launch): prints each error; exit status 1 if any file has one.
    CheckSyntax { files: Vec<PathBuf> },
    /// Print, as JSON, the state an action leads to from event N.
    Step {
        #[command(flatten)]
        run: RunArgs,
        /// step_into, step_over, step_return, breakpoint:L1,L2, continue, inv_step_into,
        /// inv_step_over, inv_step_call, inv_breakpoint:L1,L2
        #[arg(long)]
        action: Action,
        /// Index of the event to act from (0 = the first).
        #[arg(long, default_value_t = 0)]
        from: usize,
    },
    /// Ask the model what an action leads to from event N, beside the truth.
    #[cfg(feature = "neural")]
    Predict {
        #[command(flatten)]
        run: RunArgs,
        #[arg(long)]
        action: Action,
        #[arg(long, default_value_t = 0)]
        from: usize,
        /// Checkpoint directory (default: the shipped model).
        #[arg(long)]
        model: Option<PathBuf>,
    },
    /// Exact match per action of the model and of a baseline (next line, locals unchanged).
    #[cfg(feature = "neural")]
    Eval {
        /// A split of the dataset: test (held out by program) or valid.
        #[arg(long, default_value = "test", conflicts_with = "programs")]
        split: String,
        #[arg(long, default_value = "data/dataset")]
        dataset: PathBuf,
        /// Evaluate on every .py file of this folder instead (traced now, as scripts).
        #[arg(long)]
        programs: Option<PathBuf>,
        /// Checkpoint directory (default: the shipped model).
        #[arg(long)]
        model: Option<PathBuf>,
        /// Most predictions to make (from episodes spread evenly over the split).
        #[arg(long, default_value_t = 400)]
        limit: usize,
        /// Only episodes of this origin (generated, thealgorithms, exercism, ...).
        #[arg(long, conflicts_with = "programs")]
        origin: Option<String>,
        /// Also write every prediction (truth, prediction or error) as JSON lines here;
        /// with `--sessions`, each session's first miss.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Predict nothing: check that the decoding grammar admits every true outcome.
        #[arg(long)]
        check_grammar: bool,
        /// Predict a breakpoint in one decode (a jump, as the paper measures it)
        /// instead of walking to it with Step Into predictions as the debugger does.
        #[arg(long)]
        jumps: bool,
        /// A machine-readable summary on stdout instead of the table.
        #[arg(long)]
        json: bool,
        /// Instead of single predictions from the true state: debugging sessions on this
        /// many programs of the split (spread evenly), each Step Into from the entry
        /// from the model's own last state, scored against the real run.
        #[arg(long)]
        sessions: Option<usize>,
        /// Per prediction, try up to this many other decodes where the model was unsure
        /// and keep the likeliest (0: greedy only, as the debugger decodes by default).
        #[arg(long, default_value_t = 0)]
        search: usize,
        /// Step Into requests per session.
        #[arg(long, default_value_t = 30)]
        session_steps: usize,
        /// With `--sessions`: run only the session on the K-th of those programs (from
        /// 1), to look into one miss.
        #[arg(long, requires = "sessions")]
        only: Option<usize>,
    },
    /// CruxEval-format benchmark: output prediction (step_return, breakpoint) or input
    /// prediction (inv_step_call), scored pass@1.
    #[cfg(feature = "neural")]
    Cruxeval {
        /// jsonl with code, input, output, id.
        #[arg(long)]
        data: PathBuf,
        #[arg(long, value_parser = ["output", "input"])]
        mode: String,
        #[arg(long)]
        model: Option<PathBuf>,
        /// Score only the first N samples (0: all).
        #[arg(long, default_value_t = 0)]
        limit: usize,
        /// Where to write one JSON line per sample and method.
        #[arg(long, default_value = "cruxeval-results.jsonl")]
        out: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Speed on this machine: prefill, ms per predicted state (p50, p95), ms per token
    /// beside this machine's measured limit, and peak memory, on the fast CPU decode path
    /// and on the burn model, for a checkpoint and for random ~5M and ~20M models.
    #[cfg(feature = "neural")]
    Bench {
        /// Checkpoint directory (default: the shipped model).
        #[arg(long)]
        model: Option<PathBuf>,
        /// Steps timed per model (the context grows by 48 tokens a step).
        #[arg(long, default_value_t = 15)]
        steps: usize,
        /// Tokens decoded per state.
        #[arg(long, default_value_t = 40)]
        state_tokens: usize,
        /// Tokens of program read once at the start.
        #[arg(long, default_value_t = 256)]
        prefix_tokens: usize,
        /// Decoders to time, comma-separated: int8 and bf16 (the CPU decode path by its
        /// weights), burn (the reference).
        #[arg(long, value_delimiter = ',', default_value = "int8,bf16,burn")]
        decoders: Vec<String>,
        /// Time only the checkpoint, not the random ~5M and ~20M models.
        #[arg(long)]
        no_presets: bool,
    },
    /// Print a checkpoint's next-token logits for token ids as JSON ([position][vocab]),
    /// to hold this engine against another implementation of the same weights.
    #[cfg(feature = "neural")]
    Logits {
        /// Checkpoint directory.
        #[arg(long)]
        model: PathBuf,
        /// Token ids, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        tokens: Vec<u32>,
        /// Where the burn model runs: cpu, cuda (f32) or cuda-bf16 (a `--features
        /// cuda` build).
        #[arg(long, default_value = "cpu")]
        device: Device,
    },
    /// Continue a prompt greedily with any checkpoint that has a tokenizer.json (ours,
    /// a Llama-3-family one, CWM): its token ids and text, to compare with
    /// `transformers` token for token, and the time it took. The prompt is read as
    /// written (special tokens as such, no beginning-of-text token added).
    #[cfg(feature = "neural")]
    Complete {
        /// Where the burn model runs: cpu, cuda (f32) or cuda-bf16 (a `--features
        /// cuda` build).
        #[arg(long, default_value = "cpu")]
        device: Device,
        /// Checkpoint directory (config.json, safetensors, tokenizer.json).
        #[arg(long)]
        model: PathBuf,
        /// A file holding the prompt's text.
        #[arg(long)]
        prompt_file: PathBuf,
        /// Tokens to generate.
        #[arg(long, default_value_t = 32)]
        max_tokens: usize,
        /// Print {prompt_tokens, tokens, text} as JSON instead of the text alone.
        #[arg(long)]
        json: bool,
    },
    /// Write a checkpoint of random weights shaped as a `config.json` says, with a
    /// tokenizer beside it: for timing a model's size on a device (`complete --device
    /// cuda-bf16`) without downloading one.
    #[cfg(feature = "neural")]
    InitCheckpoint {
        /// A Hugging Face Llama `config.json`.
        #[arg(long)]
        config: PathBuf,
        /// The `tokenizer.json` to put beside the weights (its ids must fit the vocabulary).
        #[arg(long)]
        tokenizer: PathBuf,
        /// The checkpoint directory to write (weights in bf16).
        #[arg(long)]
        out: PathBuf,
    },
    /// Trace programs (generated and real) and write sharded training episodes.
    Dataset(neural_model::data::DatasetOptions),
    /// Train the transformer as a config file says (resumes from its last checkpoint).
    #[cfg(feature = "neural")]
    Train {
        /// A TOML training config, e.g. model/configs/default.toml.
        #[arg(long)]
        config: PathBuf,
        /// Burn trainer: train on the GPU (needs a build with `--features cuda`). The
        /// PyTorch trainer takes a GPU whenever it sees one.
        #[arg(long)]
        cuda: bool,
        /// PyTorch trainer: only lay out the run folder (encoded data, train.py), e.g.
        /// for `torchrun --nproc_per_node N RUN/train.py RUN`.
        #[arg(long)]
        prepare: bool,
    },
}

#[derive(Args)]
struct RunArgs {
    /// The Python program.
    file: PathBuf,
    /// Trace this call of a function the program defines, e.g. 'f([1, 2])'.
    #[arg(long)]
    call: Option<String>,
    /// Events before the run counts as not terminating.
    #[arg(long, default_value_t = Limits::default().max_events)]
    max_events: usize,
    /// Seconds before the run counts as not terminating.
    #[arg(long, default_value_t = Limits::default().max_seconds)]
    max_seconds: f64,
    /// Nested calls before RecursionError.
    #[arg(long, default_value_t = Limits::default().max_depth)]
    max_depth: usize,
    /// Characters of one repr before it is cut.
    #[arg(long, default_value_t = Limits::default().max_repr)]
    max_repr: usize,
    /// Characters of stdout kept.
    #[arg(long, default_value_t = Limits::default().max_stdout)]
    max_stdout: usize,
}

impl RunArgs {
    fn record(&self) -> Result<Trace, String> {
        let limits = Limits {
            max_events: self.max_events,
            max_seconds: self.max_seconds,
            max_stdout: self.max_stdout,
            max_depth: self.max_depth,
            max_repr: self.max_repr,
        };
        let program = Program::load(&self.file, self.call.clone()).map_err(|e| e.to_string())?;
        trace(&program, &limits).map_err(|e| e.to_string())
    }
}

/// Where the burn model of `logits` and `complete` runs.
#[cfg(feature = "neural")]
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Device {
    Cpu,
    Cuda,
    CudaBf16,
}

/// `$body` with `$backend` the burn backend that `$device` names and `$on` its device
/// (a GPU only in a `--features cuda` build, and only if one answers; otherwise the
/// command fails saying so).
#[cfg(feature = "neural")]
macro_rules! on_device {
    ($device:expr, |$backend:ident, $on:ident| $body:expr) => {
        match $device {
            Device::Cpu => {
                type $backend = neural_model::net::Cpu;
                let $on = Default::default();
                $body
            }
            #[cfg(feature = "cuda")]
            Device::Cuda => {
                type $backend = neural_model::net::Cuda;
                let $on = cuda_device()?;
                $body
            }
            #[cfg(feature = "cuda")]
            Device::CudaBf16 => {
                type $backend = neural_model::net::CudaBf16;
                let $on = cuda_device()?;
                $body
            }
            #[cfg(not(feature = "cuda"))]
            _ => return Err(no_cuda()),
        }
    };
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<ExitCode, String> {
    match command {
        Command::CheckSyntax { files } => {
            let mut broken = 0;
            for path in &files {
                let source = neural_model::tracer::read_source(path).map_err(|e| e.to_string())?;
                if let Err(problem) = neural_model::program::syntax::check(&source) {
                    println!("{}: {problem}", path.display());
                    broken += 1;
                }
            }
            Ok(if broken > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Trace { run, json } => {
            let trace = run.record()?;
            print_trace(&trace, json);
            Ok(match trace.tree.exit() {
                Exit::Normal => ExitCode::SUCCESS,
                _ => ExitCode::from(1),
            })
        }
        Command::Step { run, action, from } => {
            let trace = run.record()?;
            if from >= trace.tree.len() {
                return Err(format!(
                    "--from {from} is past the last event ({} events were recorded)",
                    trace.tree.len()
                ));
            }
            let outcome: Outcome = trace.tree.outcome(from, &action);
            println!(
                "{}",
                serde_json::to_string_pretty(&outcome).expect("outcomes serialise")
            );
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "neural")]
        Command::Predict {
            run,
            action,
            from,
            model,
        } => {
            use neural_model::infer::{default_model_dir, Predictor};
            let trace = run.record()?;
            if from >= trace.tree.len() {
                return Err(format!(
                    "--from {from} is past the last event ({} events)",
                    trace.tree.len()
                ));
            }
            let dir = model.unwrap_or_else(default_model_dir);
            let predictor = Predictor::load(&dir).map_err(|e| e.to_string())?;
            let started = std::time::Instant::now();
            let mut context = predictor
                .prepare(&trace.program.source, trace.program.call.as_deref())
                .map_err(|e| e.to_string())?;
            let prefill = started.elapsed();
            let started = std::time::Instant::now();
            let prediction = predictor.predict(&mut context, trace.tree.state(from), &action);
            let step = started.elapsed();
            let truth = trace.tree.outcome(from, &action);
            let report = match &prediction {
                Ok(p) => serde_json::json!({
                    "prediction": p.outcome, "probability": p.probability,
                    "confidence": p.confidence, "text": p.text,
                    "exact_match": p.outcome == truth,
                }),
                Err(e) => serde_json::json!({ "error": e.to_string() }),
            };
            let mut report = report;
            report["truth"] = serde_json::to_value(&truth).expect("outcomes serialise");
            report["prefill_ms"] = (prefill.as_secs_f64() * 1e3).into();
            report["step_ms"] = (step.as_secs_f64() * 1e3).into();
            println!("{}", serde_json::to_string_pretty(&report).expect("json"));
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "neural")]
        Command::Eval {
            split,
            dataset,
            programs,
            model,
            limit,
            origin,
            out,
            check_grammar,
            jumps,
            json,
            sessions,
            search,
            session_steps,
            only,
        } => {
            use neural_model::eval::{episodes_from_programs, evaluate, table};
            let mut episodes = match &programs {
                Some(dir) => episodes_from_programs(dir, 2).map_err(|e| format!("{e:#}"))?,
                None => neural_model::train::load_split(&dataset, &split)
                    .map_err(|e| format!("{e:#}"))?,
            };
            if let Some(origin) = &origin {
                episodes.retain(|e| &e.origin == origin);
                if episodes.is_empty() {
                    return Err(format!(
                        "no {split} episodes of origin {origin:?} in {}",
                        dataset.display()
                    ));
                }
            }
            if let Some(count) = sessions {
                // Each program once (its episodes share the source), spread over the split.
                let mut programs: Vec<(String, Option<String>)> = Vec::new();
                for e in &episodes {
                    let program = (e.source.clone(), e.call.clone());
                    if !programs.contains(&program) {
                        programs.push(program);
                    }
                }
                let stride = programs.len().div_ceil(count.max(1)).max(1);
                let mut programs: Vec<_> =
                    programs.into_iter().step_by(stride).take(count).collect();
                if let Some(k) = only {
                    programs = programs
                        .into_iter()
                        .skip(k.saturating_sub(1))
                        .take(1)
                        .collect();
                }
                let predictor = load_predictor(model)?.with_search(search);
                let progress = neural_model::progress::bar(programs.len() as u64, "sessions");
                let mut misses = SampleFile::create(out.as_deref())?;
                let report = neural_model::eval::sessions(
                    &predictor,
                    &programs,
                    session_steps,
                    &progress,
                    |miss| misses.write(&miss),
                )
                .map_err(|e| format!("{e:#}"))?;
                misses.finish()?;
                progress.finish_and_clear();
                if json {
                    println!("{}", serde_json::to_string_pretty(&report).expect("json"));
                } else {
                    print!("{}", report.table());
                }
                return Ok(ExitCode::SUCCESS);
            }
            // Spread the predictions over the whole split: every k-th episode.
            let steps: usize = episodes.iter().map(|e| e.steps.len()).sum();
            let stride = steps.div_ceil(limit.max(1)).max(1);
            let episodes: Vec<_> = episodes.into_iter().step_by(stride).collect();
            let predictor = load_predictor(model)?.with_search(search);
            if check_grammar {
                let (checked, refused) =
                    neural_model::eval::check_grammar(&predictor, &episodes, limit);
                for why in refused.iter().take(20) {
                    println!("{why}");
                }
                println!(
                    "the grammar refused {} of {checked} true outcomes",
                    refused.len()
                );
                return Ok(if refused.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                });
            }
            let total: usize = episodes
                .iter()
                .map(|e| e.steps.len())
                .sum::<usize>()
                .min(limit);
            let progress = neural_model::progress::bar(total as u64, "evaluating");
            let mut samples = SampleFile::create(out.as_deref())?;
            let report = evaluate(&predictor, &episodes, limit, jumps, &progress, |sample| {
                samples.write(&sample)
            });
            samples.finish()?;
            progress.finish_and_clear();
            if json {
                println!("{}", serde_json::to_string_pretty(&report).expect("json"));
            } else {
                print!("{}", table(&report));
            }
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "neural")]
        Command::Cruxeval {
            data,
            mode,
            model,
            limit,
            out,
            json,
        } => {
            use neural_model::cruxeval;
            let mut samples = cruxeval::load(&data).map_err(|e| format!("{e:#}"))?;
            if limit > 0 {
                samples.truncate(limit);
            }
            let predictor = load_predictor(model)?;
            let progress = neural_model::progress::bar(samples.len() as u64, "cruxeval");
            let scored = cruxeval::run(&predictor, &samples, &mode, &progress);
            progress.finish_and_clear();
            let lines: Vec<String> = scored
                .iter()
                .map(|s| serde_json::to_string(s).expect("json"))
                .collect();
            std::fs::write(&out, lines.join("\n") + "\n")
                .map_err(|e| format!("{}: {e}", out.display()))?;
            let summary = cruxeval::summary(&scored);
            if json {
                let rows: Vec<_> = summary
                    .iter()
                    .map(|(m, pass, n)| serde_json::json!({"method": m, "pass": pass, "n": n, "pass@1": *pass as f64 / (*n).max(1) as f64}))
                    .collect();
                println!("{}", serde_json::json!({"mode": mode, "results": rows}));
            } else {
                println!("| mode | method | pass@1 | n |\n|---|---|---|---|");
                for (method, pass, n) in summary {
                    println!(
                        "| {mode} | {method} | {:.1}% | {n} |",
                        100.0 * pass as f64 / n.max(1) as f64
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "neural")]
        Command::Bench {
            model,
            steps,
            state_tokens,
            prefix_tokens,
            decoders,
            no_presets,
        } => {
            use neural_model::net;
            let dir = model.unwrap_or_else(neural_model::infer::default_model_dir);
            let options = net::BenchOptions {
                steps,
                state_tokens,
                prefix_tokens,
                ..Default::default()
            };
            let limits = net::MachineLimits::measure();
            let models = if no_presets {
                vec![net::BenchModel::Checkpoint(dir)]
            } else {
                net::BenchModel::with_presets(Some(dir))
            };
            let decoders: Vec<&str> = decoders.iter().map(String::as_str).collect();
            let table =
                net::bench(&models, &decoders, options, Some(limits)).map_err(|e| e.to_string())?;
            println!("{table}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Dataset(options) => {
            let manifest =
                neural_model::data::build_dataset(&options).map_err(|e| format!("{e:#}"))?;
            println!(
                "{}",
                serde_json::to_string_pretty(&manifest.totals).expect("counts serialise")
            );
            eprintln!(
                "wrote {}",
                options
                    .out
                    .join(neural_model::data::build::MANIFEST)
                    .display()
            );
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "neural")]
        Command::Logits {
            model,
            tokens,
            device,
        } => {
            let logits = on_device!(device, |B, on| checkpoint_logits::<B>(&model, &tokens, &on))
                .map_err(|e| format!("{e:#}"))?;
            println!(
                "{}",
                serde_json::json!({ "tokens": tokens, "logits": logits })
            );
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "neural")]
        Command::InitCheckpoint {
            config,
            tokenizer,
            out,
        } => {
            use neural_model::net::{save_checkpoint, Cpu, Llama, LlamaConfig, SaveDtype};
            let shape = LlamaConfig::load(&config).map_err(|e| e.to_string())?;
            let model =
                Llama::<Cpu>::init(&shape, &Default::default()).map_err(|e| e.to_string())?;
            save_checkpoint(&model, &shape, &out, SaveDtype::BF16).map_err(|e| e.to_string())?;
            std::fs::copy(&tokenizer, out.join("tokenizer.json"))
                .map_err(|e| format!("{}: {e}", tokenizer.display()))?;
            eprintln!("wrote {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "neural")]
        Command::Complete {
            device,
            model,
            prompt_file,
            max_tokens,
            json,
        } => {
            use neural_model::net::complete_on;
            let prompt = std::fs::read_to_string(&prompt_file)
                .map_err(|e| format!("{}: {e}", prompt_file.display()))?;
            let done = on_device!(device, |B, on| complete_on::<B>(
                &model, &on, &prompt, max_tokens
            ))
            .map_err(|e| format!("{}: {e}", model.display()))?;
            match json {
                true => println!("{}", serde_json::to_string(&done).expect("serialises")),
                false => println!("{}", done.text),
            }
            Ok(ExitCode::SUCCESS)
        }
        #[cfg(feature = "neural")]
        Command::Train {
            config,
            cuda,
            prepare,
        } => {
            use neural_model::train::{torch, TrainerKind};
            let config =
                neural_model::train::TrainConfig::load(&config).map_err(|e| format!("{e:#}"))?;
            let done = match (config.trainer, prepare) {
                (TrainerKind::Torch, true) => torch::prepare(&config).map(|()| {
                    eprintln!(
                        "prepared; train with: python3 {0}/train.py {0}   (or torchrun --nproc_per_node N {0}/train.py {0})",
                        config.out.display()
                    )
                }),
                (TrainerKind::Torch, false) => torch::run(&config),
                (TrainerKind::Burn, true) => Err(anyhow::anyhow!(
                    "--prepare is for the PyTorch trainer (trainer = \"torch\" in the config)"
                )),
                (TrainerKind::Burn, false) => train_on(&config, cuda),
            };
            done.map_err(|e| format!("{e:#}"))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Where `eval --out` writes its samples, one JSON line each (nowhere without `--out`).
#[cfg(feature = "neural")]
struct SampleFile(Option<std::io::BufWriter<std::fs::File>>);

#[cfg(feature = "neural")]
impl SampleFile {
    fn create(path: Option<&std::path::Path>) -> Result<Self, String> {
        let file = match path {
            Some(path) => Some(
                std::fs::File::create(path)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
            ),
            None => None,
        };
        Ok(SampleFile(file.map(std::io::BufWriter::new)))
    }

    fn write(&mut self, sample: &neural_model::eval::Sample) {
        use std::io::Write;
        if let Some(file) = self.0.as_mut() {
            let line = serde_json::to_string(sample).expect("samples serialise");
            let _ = writeln!(file, "{line}");
        }
    }

    fn finish(self) -> Result<(), String> {
        use std::io::Write;
        match self.0 {
            Some(mut file) => file
                .flush()
                .map_err(|e| format!("cannot write the samples: {e}")),
            None => Ok(()),
        }
    }
}

#[cfg(feature = "neural")]
fn load_predictor(model: Option<PathBuf>) -> Result<neural_model::infer::Predictor, String> {
    let dir = model.unwrap_or_else(neural_model::infer::default_model_dir);
    neural_model::infer::Predictor::load(&dir).map_err(|e| e.to_string())
}

#[cfg(all(feature = "neural", not(feature = "cuda")))]
fn no_cuda() -> String {
    "this build has no CUDA support: rebuild with `cargo build --release -p neural-model --features cuda`".into()
}

/// The GPU, or why there is none.
#[cfg(feature = "cuda")]
fn cuda_device() -> Result<burn::backend::cuda::CudaDevice, String> {
    neural_model::net::cuda_device().ok_or_else(|| {
        "no CUDA device answered (is the NVIDIA driver loaded? nvidia-smi says)".into()
    })
}

#[cfg(feature = "neural")]
fn checkpoint_logits<B: burn::tensor::backend::Backend>(
    dir: &std::path::Path,
    tokens: &[u32],
    device: &B::Device,
) -> anyhow::Result<Vec<Vec<f32>>> {
    use burn::tensor::{Int, Tensor, TensorData};
    use neural_model::net::load_checkpoint;
    let (config, model) = load_checkpoint::<B>(dir, device)?;
    if let Some(bad) = tokens.iter().find(|&&t| t as usize >= config.vocab_size) {
        anyhow::bail!(
            "token {bad} is outside the vocabulary of {}",
            config.vocab_size
        );
    }
    let ids: Vec<i64> = tokens.iter().map(|&t| t as i64).collect();
    let input =
        Tensor::<B, 2, Int>::from_data(TensorData::new(ids, [1, tokens.len()]), &model.device());
    let values: Vec<f32> = model
        .forward(input)
        .into_data()
        .convert::<f32>()
        .to_vec()
        .unwrap();
    Ok(values
        .chunks(config.vocab_size)
        .map(<[f32]>::to_vec)
        .collect())
}

#[cfg(feature = "neural")]
fn train_on(config: &neural_model::train::TrainConfig, cuda: bool) -> anyhow::Result<()> {
    use neural_model::train::train;
    if cuda {
        #[cfg(feature = "cuda")]
        return train::<neural_model::net::CudaAutodiff>(config, &Default::default());
        #[cfg(not(feature = "cuda"))]
        anyhow::bail!(
            "this build has no CUDA support: rebuild with `cargo build --release --features cuda`"
        );
    }
    train::<neural_model::net::CpuAutodiff>(config, &Default::default())
}

fn print_trace(trace: &Trace, json: bool) {
    let tree = &trace.tree;
    for (index, state) in tree.states().iter().enumerate() {
        if json {
            println!(
                "{}",
                serde_json::to_string(state).expect("states serialise")
            );
        } else {
            print!("{}", describe(index, state));
        }
    }
    let exit = tree.exit();
    if json {
        let mut record = serde_json::to_value(exit).expect("exits serialise");
        record["event"] = "exit".into();
        record["stdout"] = tree.trailing_stdout().into();
        println!("{record}");
    } else {
        print!("{}", tree.trailing_stdout());
        println!("-- {} events; the program {exit}", tree.len());
    }
    if !trace.stderr.is_empty() {
        eprint!("{}", trace.stderr);
    }
}

/// One event as a line for people: program output first, then the event, indented by depth.
fn describe(index: usize, state: &State) -> String {
    let indent = "  ".repeat(state.depth as usize);
    let vars: Vec<String> = state
        .locals
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let value = state
        .value
        .as_ref()
        .map(|v| format!(" -> {v}"))
        .unwrap_or_default();
    format!(
        "{}#{index:<5} {indent}{:<9} {}:{:<4} {}{value}   [{}]\n",
        state.stdout,
        state.event.name(),
        state.function,
        state.line,
        state.source.trim(),
        vars.join(", ")
    )
}
