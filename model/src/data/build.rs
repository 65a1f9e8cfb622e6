//! `neural-model dataset`: programs in, shards of episodes and a manifest out.
//!
//! 1. Programs: `generated` ones from seeds, plus (module, call) pairs from each corpus
//!    folder; duplicates dropped; put in a fixed pseudo-random order (a hash of the
//!    program and call), so shards mix sources.
//! 2. Split **by program**: a hash of the program's text picks train, valid or test,
//!    so every call of a module, and every episode of a run, lands in one split.
//! 3. Shards of `programs_per_shard` programs per split. Each is traced in parallel
//!    (failures counted by reason, never fatal), episodes sampled with a generator
//!    seeded by the program, and written whole ([`super::shards`]). Shards already
//!    finished are skipped, so a cut build resumes where it was.
//! 4. `manifest.json` sums up the shards.

use super::corpus::{self, CorpusStats, ScanOptions};
use super::episodes::{sample_episode, Episode, EpisodeOptions};
use super::generate::{generate, generate_script, GenConfig, GeneratedProgram};
use super::shards::{self, Counts, ShardStats, TokenCounter};
use crate::tracer::{self, trace, Limits, Program, TraceError};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::hash::Hasher;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of `neural-model dataset` (flatten into a clap command).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, clap::Args)]
pub struct DatasetOptions {
    /// Folder for the shards and manifest.json (created if missing; a build there
    /// with the same options resumes).
    #[arg(long, default_value = "data/dataset")]
    pub out: PathBuf,
    /// How many generated programs to trace.
    #[arg(long, default_value_t = 20_000)]
    pub generated: usize,
    /// How many generated *scripts* to trace whole (module-level code calling the
    /// functions, as a user's script runs; origin `generated_script`).
    #[arg(long, default_value_t = 0)]
    #[serde(default)]
    pub generated_scripts: usize,
    /// Difficulty levels (1 to 3) of generated programs, used in turn.
    #[arg(long, value_delimiter = ',', default_value = "1,2,3")]
    pub levels: Vec<u32>,
    /// Seed of program generation and episode sampling.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// A folder of real Python code: calls come from doctests and from exercism-style
    /// `*_test.py` files next to `.meta/example.py` (repeatable).
    #[arg(long)]
    pub corpus: Vec<PathBuf>,
    /// A folder of Python scripts, each traced whole as a program (repeatable).
    #[arg(long)]
    #[serde(default)]
    pub scripts: Vec<PathBuf>,
    /// Episodes sampled from each traced program.
    #[arg(long, default_value_t = 3)]
    pub episodes_per_program: usize,
    /// Most actions in one episode.
    #[arg(long, default_value_t = 32)]
    pub max_steps: usize,
    /// Most characters of one rendered episode (the program included).
    #[arg(long, default_value_t = 6_000)]
    pub max_chars: usize,
    /// Programs per shard file.
    #[arg(long, default_value_t = 1_000)]
    pub programs_per_shard: usize,
    /// Percent of programs held out for validation.
    #[arg(long, default_value_t = 5)]
    pub valid_percent: u64,
    /// Percent of programs held out for test.
    #[arg(long, default_value_t = 5)]
    pub test_percent: u64,
    /// Tracer budget: events per run (a longer run ends as "never").
    #[arg(long, default_value_t = 2_000)]
    pub max_events: usize,
    /// Tracer budget: seconds per run.
    #[arg(long, default_value_t = 5.0)]
    pub max_seconds: f64,
    /// Corpus modules longer than this are skipped (the module is in every example).
    #[arg(long, default_value_t = 120)]
    pub max_corpus_lines: usize,
    /// Most calls kept per corpus function.
    #[arg(long, default_value_t = 5)]
    pub max_calls_per_function: usize,
    /// Programs traced at once (0: one per core).
    #[arg(long, default_value_t = 0)]
    #[serde(skip)]
    pub jobs: usize,
    /// No progress bar (there is none when stderr is not a terminal anyway).
    #[arg(long)]
    #[serde(skip)]
    pub no_progress: bool,
}

impl Default for DatasetOptions {
    /// The command line's defaults.
    fn default() -> Self {
        #[derive(clap::Parser)]
        struct Command {
            #[command(flatten)]
            options: DatasetOptions,
        }
        <Command as clap::Parser>::parse_from(["dataset"]).options
    }
}

impl DatasetOptions {
    /// The options that decide the content of the shards (not where, how fast).
    fn plan(&self) -> DatasetOptions {
        DatasetOptions {
            out: PathBuf::new(),
            jobs: 0,
            no_progress: false,
            ..self.clone()
        }
    }
}

/// The dataset's table of contents, written as `manifest.json` in the output folder.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// What a shard line is.
    pub format: String,
    pub options: DatasetOptions,
    pub totals: Counts,
    /// train, valid, test.
    pub splits: BTreeMap<String, Counts>,
    /// By origin: `generated`, or a corpus folder's top-level folder.
    pub sources: BTreeMap<String, Counts>,
    /// What each corpus scan found, by corpus folder.
    pub corpus: BTreeMap<String, CorpusStats>,
    pub shards: Vec<ShardEntry>,
    /// Speed of the run that wrote this manifest (resumed shards not counted).
    pub run: RunStats,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardEntry {
    pub name: String,
    pub split: String,
    /// File name, relative to the manifest's folder.
    pub file: String,
    pub episodes: usize,
    pub bytes: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunStats {
    pub seconds: f64,
    pub shards_built: usize,
    pub shards_resumed: usize,
    pub programs_generated: usize,
    pub generate_seconds: f64,
    pub programs_traced: usize,
    pub programs_per_second: f64,
    pub episodes_per_second: f64,
    /// Compressed bytes per 1,000 episodes.
    pub bytes_per_1000_episodes: f64,
}

pub const MANIFEST: &str = "manifest.json";
const FORMAT: &str = "gzip JSON lines, one neural_model::data::Episode a line";
pub const SPLITS: [&str; 3] = ["train", "valid", "test"];

impl Manifest {
    pub fn load(dir: &Path) -> anyhow::Result<Manifest> {
        let path = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "no dataset at {}: build one with `neural-model dataset`",
                path.display()
            )
        })?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a dataset manifest", path.display()))
    }

    /// A short report for the terminal: counts per split and source, failures, speed.
    pub fn summary(&self) -> String {
        use std::fmt::Write as _;
        let mut text = String::new();
        let row = |text: &mut String, name: &str, c: &Counts| {
            let _ = writeln!(
                text,
                "{name:<16} {:>8} {:>8} {:>9} {:>9} {:>12} {:>11}",
                c.programs, c.traced, c.episodes, c.steps, c.chars, c.bytes
            );
        };
        let _ = writeln!(
            text,
            "{:<16} {:>8} {:>8} {:>9} {:>9} {:>12} {:>11}",
            "", "programs", "traced", "episodes", "actions", "characters", "bytes"
        );
        for split in SPLITS {
            if let Some(counts) = self.splits.get(split) {
                row(&mut text, split, counts);
            }
        }
        for (origin, counts) in &self.sources {
            row(
                &mut text,
                origin,
                &Counts {
                    bytes: 0,
                    ..counts.clone()
                },
            );
        }
        row(&mut text, "total", &self.totals);
        if self.totals.tokens > 0 {
            let _ = writeln!(
                text,
                "tokens: {} ({} predicted)",
                self.totals.tokens, self.totals.target_tokens
            );
        }
        let list = |map: &BTreeMap<String, usize>| {
            map.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(text, "actions: {}", list(&self.totals.actions));
        let _ = writeln!(text, "exits: {}", list(&self.totals.exits));
        if !self.totals.failures.is_empty() {
            let _ = writeln!(text, "not traced: {}", list(&self.totals.failures));
        }
        let run = &self.run;
        let _ = writeln!(
            text,
            "this run: {} shards built, {} resumed; {:.1} programs/s, {:.1} episodes/s, {:.0} KB per 1,000 episodes",
            run.shards_built,
            run.shards_resumed,
            run.programs_per_second,
            run.episodes_per_second,
            run.bytes_per_1000_episodes / 1000.0
        );
        text
    }

    /// Shard files of one split, in order.
    pub fn shard_files(&self, dir: &Path, split: &str) -> Vec<PathBuf> {
        self.shards
            .iter()
            .filter(|s| s.split == split)
            .map(|s| dir.join(&s.file))
            .collect()
    }
}

/// One program to trace.
#[derive(Clone, Debug)]
struct Job {
    origin: String,
    source: String,
    call: String,
}

/// A traced program's episodes, or why it has none.
struct JobResult {
    origin: String,
    outcome: Result<(String, Vec<Episode>), String>,
}

fn fnv(parts: &[&[u8]]) -> u64 {
    let mut hasher = fnv::FnvHasher::default();
    for part in parts {
        hasher.write(part);
        hasher.write_u8(0xff);
    }
    hasher.finish()
}

/// The split of a program, from its text alone.
pub fn split_of(source: &str, valid_percent: u64, test_percent: u64) -> &'static str {
    let bucket = fnv(&[b"split", source.as_bytes()]) % 100;
    if bucket < valid_percent {
        "valid"
    } else if bucket < valid_percent + test_percent {
        "test"
    } else {
        "train"
    }
}

/// Build (or resume) the dataset that `options` describe; see the module docs.
pub fn build_dataset(options: &DatasetOptions) -> anyhow::Result<Manifest> {
    build_dataset_counting(options, None)
}

/// [`build_dataset`], also counting tokens with `tokens` (say, the model's tokenizer:
/// `&|text| tokenizer.encode(text).map_or(0, |ids| ids.len())`). Target tokens are
/// counted on the predicted parts alone, so they are approximate at the seams.
pub fn build_dataset_counting(
    options: &DatasetOptions,
    tokens: Option<&TokenCounter>,
) -> anyhow::Result<Manifest> {
    let started = Instant::now();
    if options.valid_percent + options.test_percent > 100 {
        anyhow::bail!("--valid-percent plus --test-percent is over 100");
    }
    if options.programs_per_shard == 0 {
        anyhow::bail!("--programs-per-shard must be at least 1");
    }
    let out = &options.out;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    check_plan(out, options)?;
    let stdlib = corpus::stdlib_modules(&tracer::python())?;

    let (jobs, corpus_stats, generate_seconds) = collect_jobs(options, stdlib)?;
    let mut by_split: BTreeMap<&str, Vec<Job>> = BTreeMap::new();
    for job in jobs {
        let split = split_of(&job.source, options.valid_percent, options.test_percent);
        by_split.entry(split).or_default().push(job);
    }
    let mut plan: Vec<(String, &str, &[Job])> = Vec::new();
    for split in SPLITS {
        for (index, chunk) in by_split
            .get(split)
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .chunks(options.programs_per_shard)
            .enumerate()
        {
            plan.push((format!("{split}-{index:05}"), split, chunk));
        }
    }

    let todo: usize = plan
        .iter()
        .filter(|(name, _, _)| shards::finished(out, name).is_none())
        .map(|(_, _, c)| c.len())
        .sum();
    let progress = progress_bar(todo as u64, options.no_progress);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.jobs)
        .build()
        .context("cannot start the tracing threads")?;
    let scratch = tempfile::Builder::new()
        .prefix("neural-dataset-")
        .tempdir()
        .context("cannot create a temporary folder")?;
    let limits = Limits {
        max_events: options.max_events,
        max_seconds: options.max_seconds,
        ..Limits::default()
    };
    let episode_options = EpisodeOptions {
        max_steps: options.max_steps,
        max_chars: options.max_chars,
        ..EpisodeOptions::default()
    };

    let mut all = Vec::new();
    let mut run = RunStats {
        programs_generated: options.generated,
        generate_seconds,
        ..RunStats::default()
    };
    let tracing = Instant::now();
    let mut new_episodes = 0;
    let mut new_bytes = 0;
    for (name, split, chunk) in &plan {
        if let Some(stats) = shards::finished(out, name) {
            run.shards_resumed += 1;
            all.push(stats);
            continue;
        }
        let results: Vec<JobResult> = pool.install(|| {
            chunk
                .par_iter()
                .enumerate()
                .map(|(i, job)| {
                    let path = scratch.path().join(format!("{name}-{i}.py"));
                    let result = run_job(job, &path, &limits, &episode_options, options);
                    progress.inc(1);
                    result
                })
                .collect()
        });
        let (stats, episodes) = shard_stats(name, split, results, tokens);
        let stats = shards::write_shard(out, stats, &episodes)?;
        run.shards_built += 1;
        run.programs_traced += chunk.len();
        new_episodes += stats.counts.episodes;
        new_bytes += stats.counts.bytes;
        all.push(stats);
    }
    progress.finish_and_clear();
    let seconds = tracing.elapsed().as_secs_f64().max(1e-9);
    run.seconds = started.elapsed().as_secs_f64();
    run.programs_per_second = run.programs_traced as f64 / seconds;
    run.episodes_per_second = new_episodes as f64 / seconds;
    run.bytes_per_1000_episodes = if new_episodes > 0 {
        new_bytes as f64 * 1000.0 / new_episodes as f64
    } else {
        0.0
    };

    let manifest = summarize(options, corpus_stats, &all, run);
    shards::write_atomically(&out.join(MANIFEST), |w| {
        serde_json::to_writer_pretty(&mut *w, &manifest)?;
        Ok(())
    })?;
    Ok(manifest)
}

/// A folder already holding shards must have been built with the same options.
fn check_plan(out: &Path, options: &DatasetOptions) -> anyhow::Result<()> {
    let path = out.join("plan.json");
    let plan = serde_json::to_string_pretty(&options.plan())?;
    match std::fs::read_to_string(&path) {
        Ok(old) if old == plan => Ok(()),
        Ok(_) => anyhow::bail!(
            "{} holds a dataset built with other options (see {}): use another --out, or delete the folder to rebuild",
            out.display(),
            path.display()
        ),
        Err(_) => shards::write_atomically(&path, |w| Ok(w.write_all(plan.as_bytes())?)),
    }
}

/// Every program to trace, deduplicated, in a fixed pseudo-random order.
fn collect_jobs(
    options: &DatasetOptions,
    stdlib: HashSet<String>,
) -> anyhow::Result<(Vec<Job>, BTreeMap<String, CorpusStats>, f64)> {
    let mut jobs = Vec::new();
    let generating = Instant::now();
    let levels = if options.levels.is_empty() {
        vec![2]
    } else {
        options.levels.clone()
    };
    type Generator = fn(u64, &GenConfig) -> GeneratedProgram;
    let kinds: [(usize, &[u8], &str, Generator); 2] = [
        (options.generated, b"program", "generated", generate),
        (
            options.generated_scripts,
            b"script",
            "generated_script",
            generate_script,
        ),
    ];
    for (count, tag, origin, make) in kinds {
        for i in 0..count {
            let seed = fnv(&[tag, &options.seed.to_le_bytes(), &(i as u64).to_le_bytes()]);
            let program = make(seed, &GenConfig::level(levels[i % levels.len()]));
            jobs.push(Job {
                origin: origin.into(),
                source: program.source,
                call: program.call,
            });
        }
    }
    let generate_seconds = generating.elapsed().as_secs_f64();
    let scan_options = ScanOptions {
        stdlib,
        max_calls_per_function: options.max_calls_per_function,
        max_lines: options.max_corpus_lines,
    };
    let mut corpus_stats = BTreeMap::new();
    for dir in &options.corpus {
        let (programs, stats) = corpus::scan(dir, &scan_options)?;
        corpus_stats.insert(dir.display().to_string(), stats);
        jobs.extend(programs.into_iter().map(|p| Job {
            origin: p.origin,
            source: p.source,
            call: p.call,
        }));
    }
    for dir in &options.scripts {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read the scripts folder {}", dir.display()))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|e| e == "py"))
            .collect();
        files.sort();
        for path in files {
            let source = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            // An empty call means "run the whole script".
            jobs.push(Job {
                origin: "scripts".into(),
                source,
                call: String::new(),
            });
        }
    }
    let mut seen = HashSet::new();
    jobs.retain(|job| seen.insert(fnv(&[job.source.as_bytes(), job.call.as_bytes()])));
    jobs.sort_by_cached_key(|job| fnv(&[b"order", job.source.as_bytes(), job.call.as_bytes()]));
    Ok((jobs, corpus_stats, generate_seconds))
}

fn run_job(
    job: &Job,
    path: &Path,
    limits: &Limits,
    episodes: &EpisodeOptions,
    options: &DatasetOptions,
) -> JobResult {
    let fail = |why: String| JobResult {
        origin: job.origin.clone(),
        outcome: Err(why),
    };
    if let Err(e) = std::fs::write(path, &job.source) {
        return fail(format!("cannot write a temporary file: {e}"));
    }
    let program = Program {
        path: path.to_path_buf(),
        source: job.source.clone(),
        call: (!job.call.is_empty()).then(|| job.call.clone()),
        ..Program::default()
    };
    let traced = trace(&program, limits);
    let _ = std::fs::remove_file(path);
    let trace = match traced {
        Ok(trace) => trace,
        Err(TraceError::Program { kind, .. }) => return fail(format!("program error: {kind}")),
        Err(TraceError::Tracer(_)) => return fail("tracer failed".into()),
        Err(e) => return fail(format!("not run: {e}")),
    };
    let tree = &trace.tree;
    if tree.is_empty() {
        // The call failed before entering the program (an undefined name in it, say).
        let why = match tree.exit() {
            crate::state::Exit::Error { r#type, .. } => r#type.clone(),
            exit => exit.kind().to_string(),
        };
        return fail(format!("no states: {why}"));
    }
    let seed = fnv(&[
        b"episodes",
        &options.seed.to_le_bytes(),
        job.source.as_bytes(),
        job.call.as_bytes(),
    ]);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let sampled = (0..options.episodes_per_program)
        .filter_map(|_| {
            sample_episode(
                tree,
                &job.source,
                program.call.as_deref(),
                episodes,
                &mut rng,
            )
        })
        .map(|mut episode| {
            episode.origin = job.origin.clone();
            episode
        })
        .collect();
    JobResult {
        origin: job.origin.clone(),
        outcome: Ok((tree.exit().kind().to_string(), sampled)),
    }
}

fn shard_stats(
    name: &str,
    split: &str,
    results: Vec<JobResult>,
    tokens: Option<&TokenCounter>,
) -> (ShardStats, Vec<Episode>) {
    let mut stats = ShardStats {
        name: name.to_string(),
        split: split.to_string(),
        ..ShardStats::default()
    };
    let mut episodes = Vec::new();
    for result in results {
        let mut counts = Counts {
            programs: 1,
            ..Counts::default()
        };
        match result.outcome {
            Ok((exit, sampled)) => {
                counts.traced = 1;
                counts.exits.insert(exit, 1);
                for episode in sampled {
                    counts.add_episode(&episode, tokens);
                    episodes.push(episode);
                }
            }
            Err(why) => {
                counts.failures.insert(why, 1);
            }
        }
        stats.counts.add(&counts);
        stats
            .by_origin
            .entry(result.origin)
            .or_default()
            .add(&counts);
    }
    (stats, episodes)
}

fn summarize(
    options: &DatasetOptions,
    corpus: BTreeMap<String, CorpusStats>,
    all: &[ShardStats],
    run: RunStats,
) -> Manifest {
    let mut manifest = Manifest {
        format: FORMAT.into(),
        options: options.clone(),
        totals: Counts::default(),
        splits: BTreeMap::new(),
        sources: BTreeMap::new(),
        corpus,
        shards: Vec::new(),
        run,
    };
    for stats in all {
        manifest.totals.add(&stats.counts);
        manifest
            .splits
            .entry(stats.split.clone())
            .or_default()
            .add(&stats.counts);
        for (origin, counts) in &stats.by_origin {
            manifest
                .sources
                .entry(origin.clone())
                .or_default()
                .add(counts);
        }
        manifest.shards.push(ShardEntry {
            name: stats.name.clone(),
            split: stats.split.clone(),
            file: shards::shard_path(Path::new(""), &stats.name)
                .display()
                .to_string(),
            episodes: stats.counts.episodes,
            bytes: stats.counts.bytes,
        });
    }
    manifest
}

fn progress_bar(total: u64, hidden: bool) -> ProgressBar {
    if hidden || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template(
        "tracing {wide_bar} {pos}/{len} programs, {per_sec}, {eta} left",
    )
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(out: &Path) -> DatasetOptions {
        DatasetOptions {
            out: out.to_path_buf(),
            generated: 24,
            programs_per_shard: 10,
            valid_percent: 20,
            test_percent: 20,
            jobs: 2,
            no_progress: true,
            ..DatasetOptions::default()
        }
    }

    #[test]
    fn defaults_are_the_command_lines() {
        let options = DatasetOptions::default();
        assert_eq!(options.generated, 20_000);
        assert_eq!(options.levels, [1, 2, 3]);
        assert_eq!(options.out, PathBuf::from("data/dataset"));
    }

    #[test]
    fn splits_follow_the_program_text_only() {
        let sources: Vec<String> = (0..2000)
            .map(|i| format!("def f():\n    return {i}\n"))
            .collect();
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for source in &sources {
            let split = split_of(source, 5, 5);
            assert_eq!(split, split_of(source, 5, 5));
            *counts.entry(split).or_insert(0) += 1;
        }
        assert!(
            (50..150).contains(&counts["valid"]) && (50..150).contains(&counts["test"]),
            "{counts:?}"
        );
    }

    #[test]
    fn a_build_writes_shards_by_program_and_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus/algos");
        std::fs::create_dir_all(&corpus).unwrap();
        std::fs::write(
            corpus.join("double.py"),
            "def double(x):\n    \"\"\"\n    >>> double(2)\n    4\n    >>> double('a')\n    'aa'\n    >>> double(y)\n    \"\"\"\n    return x * 2\n",
        )
        .unwrap();
        let out = dir.path().join("out");
        let options = DatasetOptions {
            corpus: vec![dir.path().join("corpus")],
            generated_scripts: 6,
            ..small(&out)
        };
        let words = |text: &str| text.split_whitespace().count();
        let manifest = build_dataset_counting(&options, Some(&words)).unwrap();

        assert_eq!(manifest.totals.programs, 33);
        assert_eq!(manifest.sources["algos"].programs, 3);
        assert_eq!(manifest.sources["generated_script"].programs, 6);
        // `double(y)` names nothing defined: counted, not fatal.
        assert_eq!(
            manifest.totals.failures.get("no states: NameError"),
            Some(&1)
        );
        assert_eq!(
            manifest.totals.traced + manifest.totals.failures.values().sum::<usize>(),
            33
        );
        assert!(manifest.totals.episodes >= 3 * 24);
        assert_eq!(
            manifest.totals.actions.values().sum::<usize>(),
            manifest.totals.steps
        );
        assert!(
            0 < manifest.totals.target_tokens
                && manifest.totals.target_tokens < manifest.totals.tokens
        );
        assert_eq!(manifest.run.shards_built, manifest.shards.len());

        // Every program's episodes are in the one split its text gives.
        let mut split_of_source: BTreeMap<String, String> = BTreeMap::new();
        let mut read = 0;
        for split in SPLITS {
            for file in manifest.shard_files(&out, split) {
                for episode in shards::read_shard(&file).unwrap() {
                    read += 1;
                    assert_eq!(split_of(&episode.source, 20, 20), split);
                    // A script is traced whole, from its module frame.
                    let script = episode.origin == "generated_script";
                    assert_eq!(script, episode.call.is_none(), "{}", episode.origin);
                    let previous =
                        split_of_source.insert(episode.source.clone(), split.to_string());
                    assert!(previous.is_none_or(|p| p == split));
                }
            }
        }
        assert_eq!(read, manifest.totals.episodes);
        let loaded = Manifest::load(&out).unwrap();
        let summary = loaded.summary();
        assert!(
            summary.contains("algos") && summary.contains("no states: NameError 1"),
            "{summary}"
        );
        assert_eq!(
            (&loaded.totals, &loaded.shards, &loaded.splits),
            (&manifest.totals, &manifest.shards, &manifest.splits)
        );

        // A second build skips every finished shard and rebuilds a lost one.
        let first = &manifest.shards[0];
        std::fs::remove_file(shards::stats_path(&out, &first.name)).unwrap();
        let again = build_dataset_counting(&options, Some(&words)).unwrap();
        assert_eq!(again.run.shards_resumed, manifest.shards.len() - 1);
        assert_eq!(again.run.shards_built, 1);
        assert_eq!(again.totals, manifest.totals);

        // Other options in the same folder are refused.
        let other = DatasetOptions { seed: 9, ..options };
        let error = build_dataset(&other).unwrap_err().to_string();
        assert!(error.contains("other options"), "{error}");
    }
}
