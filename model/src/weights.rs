//! Where the shipped weights are found when no checkpoint is named.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The folder a bundle puts the shipped checkpoint in, next to the executable (the
/// VS Code extension's `bin/model/`, a release archive's `model/`).
pub const BUNDLED: &str = "model";

/// The shipped model: `$NEURAL_MODEL` if set; else a checkpoint bundled next to the
/// running executable ([`BUNDLED`]); else `model/weights/default/` of the source tree
/// this binary was built from, or, where that tree is gone (a build in another
/// checkout sharing this target folder), of the tree around the executable's
/// `target/<profile>/`.
pub fn default_dir() -> PathBuf {
    resolve(
        std::env::var_os("NEURAL_MODEL"),
        std::env::current_exe().ok(),
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("weights/default"),
    )
}

fn resolve(env: Option<OsString>, exe: Option<PathBuf>, source_tree: &Path) -> PathBuf {
    if let Some(dir) = env {
        return PathBuf::from(dir);
    }
    let holds_a_model = |dir: &PathBuf| dir.join("config.json").is_file();
    let bin = exe.as_deref().and_then(Path::parent);
    let bundled = bin.map(|dir| dir.join(BUNDLED));
    let around_target = bin
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(|root| root.join("model/weights/default"));
    [bundled, Some(source_tree.to_path_buf()), around_target]
        .into_iter()
        .flatten()
        .find(holds_a_model)
        .unwrap_or_else(|| source_tree.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_wins_then_a_bundle_then_the_source_tree() {
        let bin = tempfile::tempdir().unwrap();
        let exe = bin.path().join("neural-dap");
        let source_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("weights/default");
        let resolve = |env, exe| resolve(env, exe, &source_tree);
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

    #[test]
    fn a_missing_source_tree_falls_back_to_the_tree_around_the_target_folder() {
        let root = tempfile::tempdir().unwrap();
        let exe = root.path().join("target/release/neural-dap");
        let gone = root.path().join("gone/model/weights/default");
        assert_eq!(
            resolve(None, Some(exe.clone()), &gone),
            gone,
            "named in the error"
        );
        let around = root.path().join("model/weights/default");
        std::fs::create_dir_all(&around).unwrap();
        std::fs::write(around.join("config.json"), "{}").unwrap();
        assert_eq!(resolve(None, Some(exe), &gone), around);
    }
}
