//! The dataset on disk: shards of gzip-compressed JSON lines (one [`Episode`] a line),
//! each written whole or not at all, and a statistics file beside each shard.
//!
//! A shard `NAME` is `NAME.jsonl.gz` plus `NAME.stats.json`; the stats file is written
//! last, so a shard counts as done only when its stats exist (a build cut short redoes
//! the shard it was writing, and only that one).

use super::episodes::Episode;
use anyhow::Context;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use flate2::Compression;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Counts for a shard, a split, or the whole dataset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Programs given to the tracer.
    pub programs: usize,
    /// Programs traced into at least one state.
    pub traced: usize,
    pub episodes: usize,
    /// Actions, all episodes together.
    pub steps: usize,
    /// Characters of rendered episode text ([`Episode::render`]).
    pub chars: usize,
    /// Characters the model must predict (the outcomes).
    pub target_chars: usize,
    /// Tokens of rendered text, and of the predicted parts, when the build was given a
    /// tokenizer (else 0).
    #[serde(default)]
    pub tokens: usize,
    #[serde(default)]
    pub target_tokens: usize,
    /// Compressed bytes on disk.
    pub bytes: u64,
    /// Actions by name.
    pub actions: BTreeMap<String, usize>,
    /// How traced runs ended: normal, error, never.
    pub exits: BTreeMap<String, usize>,
    /// Programs that gave no episode, by reason.
    pub failures: BTreeMap<String, usize>,
}

impl Counts {
    pub fn add(&mut self, other: &Counts) {
        self.programs += other.programs;
        self.traced += other.traced;
        self.episodes += other.episodes;
        self.steps += other.steps;
        self.chars += other.chars;
        self.target_chars += other.target_chars;
        self.tokens += other.tokens;
        self.target_tokens += other.target_tokens;
        self.bytes += other.bytes;
        for (into, from) in [
            (&mut self.actions, &other.actions),
            (&mut self.exits, &other.exits),
            (&mut self.failures, &other.failures),
        ] {
            for (key, n) in from {
                *into.entry(key.clone()).or_insert(0) += n;
            }
        }
    }

    /// Count one episode's steps and text (and tokens, with a token counter).
    pub fn add_episode(&mut self, episode: &Episode, tokens: Option<&TokenCounter>) {
        let (text, targets) = episode.render();
        if let Some(count) = tokens {
            self.tokens += count(&text);
            self.target_tokens += targets
                .iter()
                .map(|t| count(&text[t.clone()]))
                .sum::<usize>();
        }
        self.episodes += 1;
        self.steps += episode.steps.len();
        self.chars += text.len();
        self.target_chars += targets.iter().map(|t| t.len()).sum::<usize>();
        for (action, _) in &episode.steps {
            *self.actions.entry(action.name().to_string()).or_insert(0) += 1;
        }
    }
}

/// Tokens in a text, by some tokenizer.
pub type TokenCounter = dyn Fn(&str) -> usize + Sync;

/// What a finished shard holds: its counts, overall and by source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardStats {
    pub name: String,
    pub split: String,
    pub counts: Counts,
    pub by_origin: BTreeMap<String, Counts>,
}

pub fn shard_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.jsonl.gz"))
}

pub fn stats_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.stats.json"))
}

/// The stats of shard `name` if it was finished, else `None` (to be built).
pub fn finished(dir: &Path, name: &str) -> Option<ShardStats> {
    if !shard_path(dir, name).is_file() {
        return None;
    }
    let text = std::fs::read_to_string(stats_path(dir, name)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Write `path` whole or not at all: into a temporary file beside it, then renamed.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir).with_context(|| {
        format!(
            "cannot create a file in {}: check that it is writable",
            dir.display()
        )
    })?;
    {
        let mut out = BufWriter::new(temp.as_file_mut());
        write(&mut out)?;
        out.flush()?;
    }
    temp.as_file().sync_all()?;
    temp.persist(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Write the episodes of shard `name`, then its stats (with the shard's size filled in).
pub fn write_shard(
    dir: &Path,
    mut stats: ShardStats,
    episodes: &[Episode],
) -> anyhow::Result<ShardStats> {
    let path = shard_path(dir, &stats.name);
    write_atomically(&path, |out| {
        let mut gz = GzEncoder::new(out, Compression::default());
        for episode in episodes {
            serde_json::to_writer(&mut gz, episode)?;
            gz.write_all(b"\n")?;
        }
        gz.finish()?;
        Ok(())
    })?;
    stats.counts.bytes = std::fs::metadata(&path)?.len();
    write_atomically(&stats_path(dir, &stats.name), |out| {
        serde_json::to_writer_pretty(&mut *out, &stats)?;
        Ok(())
    })?;
    Ok(stats)
}

/// Read every episode of a shard file.
pub fn read_shard(path: &Path) -> anyhow::Result<Vec<Episode>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot open shard {}", path.display()))?;
    let mut episodes = Vec::new();
    for (number, line) in BufReader::new(GzDecoder::new(file)).lines().enumerate() {
        let line =
            line.with_context(|| format!("{} is not a readable gzip file", path.display()))?;
        let episode = serde_json::from_str(&line)
            .with_context(|| format!("{} line {}: not an episode", path.display(), number + 1))?;
        episodes.push(episode);
    }
    Ok(episodes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::action::Action;
    use crate::state::{Event, Exit, State, Vars};
    use crate::tree::Outcome;

    fn episode(n: usize) -> Episode {
        let state = State {
            event: Event::Call,
            line: 1,
            source: "def f(x):".into(),
            function: "f".into(),
            depth: 0,
            stack: Vec::new(),
            locals: [("x".to_string(), n.to_string())]
                .into_iter()
                .collect::<Vars>(),
            globals: Vars::new(),
            value: None,
            stdout: String::new(),
        };
        Episode {
            source: "def f(x):\n    return x\n".into(),
            call: Some(format!("f({n})")),
            origin: "test".into(),
            mixture: "mixed".into(),
            start_index: 0,
            start: state,
            steps: vec![(
                Action::Continue,
                Outcome::Exit {
                    exit: Exit::Normal,
                    stdout: String::new(),
                },
            )],
        }
    }

    #[test]
    fn a_shard_reads_back_what_was_written_and_then_counts_as_finished() {
        let dir = tempfile::tempdir().unwrap();
        let episodes: Vec<Episode> = (0..5).map(episode).collect();
        let mut counts = Counts::default();
        episodes.iter().for_each(|e| counts.add_episode(e, None));
        assert_eq!(
            (counts.episodes, counts.steps, counts.actions["continue"]),
            (5, 5, 5)
        );
        assert!(finished(dir.path(), "train-00000").is_none());
        let stats = ShardStats {
            name: "train-00000".into(),
            split: "train".into(),
            counts,
            by_origin: BTreeMap::new(),
        };
        let written = write_shard(dir.path(), stats, &episodes).unwrap();
        assert!(written.counts.bytes > 0);
        assert_eq!(
            read_shard(&shard_path(dir.path(), "train-00000")).unwrap(),
            episodes
        );
        assert_eq!(finished(dir.path(), "train-00000"), Some(written));
        // No temporary files are left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_shard_without_stats_is_not_finished() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(shard_path(dir.path(), "test-00001"), b"partial").unwrap();
        assert!(finished(dir.path(), "test-00001").is_none());
    }
}
