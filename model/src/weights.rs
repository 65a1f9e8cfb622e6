//! Where the shipped weights are found when no checkpoint is named.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The folder a bundle puts the shipped checkpoint in, next to the executable (the
/// VS Code extension's `bin/model/`, a release archive's `model/`).
pub const BUNDLED: &str = "model";

/// The shipped model: `$NEURAL_MODEL` if set; else a checkpoint bundled next to the
/// running executable ([`BUNDLED`]); else `model/weights/default/` of the source tree
/// this binary was built from.
pub fn default_dir() -> PathBuf {
    resolve(
        std::env::var_os("NEURAL_MODEL"),
        std::env::current_exe().ok(),
    )
}

fn resolve(env: Option<OsString>, exe: Option<PathBuf>) -> PathBuf {
    if let Some(dir) = env {
        return PathBuf::from(dir);
    }
    let bundled = exe
        .as_deref()
        .and_then(Path::parent)
        .map(|dir| dir.join(BUNDLED))
        .filter(|dir| dir.join("config.json").is_file());
    bundled.unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("weights/default"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_wins_then_a_bundle_then_the_source_tree() {
        let bin = tempfile::tempdir().unwrap();
        let exe = bin.path().join("neural-dap");
        let source_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("weights/default");
        assert_eq!(
            resolve(None, Some(exe.clone())),
            source_tree,
            "no bundle yet"
        );
        std::fs::create_dir(bin.path().join(BUNDLED)).unwrap();
        assert_eq!(
            resolve(None, Some(exe.clone())),
            source_tree,
            "a bundle needs config.json"
        );
        std::fs::write(bin.path().join(BUNDLED).join("config.json"), "{}").unwrap();
        assert_eq!(resolve(None, Some(exe.clone())), bin.path().join(BUNDLED));
        let named = OsString::from("/elsewhere/checkpoint");
        assert_eq!(
            resolve(Some(named), Some(exe)),
            PathBuf::from("/elsewhere/checkpoint")
        );
        assert_eq!(resolve(None, None), source_tree);
    }
}
