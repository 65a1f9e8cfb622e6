//! What the client said it speaks, at `initialize`: where its lines and columns start,
//! whether it names files by path or by `file://` URI, and which optional parts of
//! the protocol it wants. Lines and paths are converted here, at the edge, so the
//! session and the engines only ever see 1-based lines and file paths.

use dap::requests::PathFormat;
use lsp_types::{Position, Url};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientConventions {
    lines_start_at1: bool,
    columns_start_at1: bool,
    uri_paths: bool,
    /// `supportsVariableType`: variables and evaluate results carry `type`.
    pub variable_type: bool,
    /// `supportsVariablePaging`: scopes carry `namedVariables`.
    pub variable_paging: bool,
    /// `supportsProgressReporting`: long work is shown with progress events.
    pub progress: bool,
}

impl Default for ClientConventions {
    /// DAP's defaults for a client that has not said otherwise.
    fn default() -> Self {
        ClientConventions {
            lines_start_at1: true,
            columns_start_at1: true,
            uri_paths: false,
            variable_type: false,
            variable_paging: false,
            progress: false,
        }
    }
}

/// A position in the program: 1-based line and column, as the session counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourcePoint {
    pub line: u32,
    pub column: u32,
}

impl ClientConventions {
    /// From `initialize`'s arguments (`None`: the DAP default).
    pub fn new(
        lines_start_at1: Option<bool>,
        columns_start_at1: Option<bool>,
        path_format: Option<&PathFormat>,
    ) -> Result<Self, String> {
        let uri_paths = match path_format {
            None | Some(PathFormat::Path) => false,
            Some(PathFormat::Uri) => true,
            Some(PathFormat::Other(other)) => {
                return Err(format!(
                    "pathFormat {other:?} is not supported: use \"path\" or \"uri\""
                ))
            }
        };
        Ok(ClientConventions {
            lines_start_at1: lines_start_at1.unwrap_or(true),
            columns_start_at1: columns_start_at1.unwrap_or(true),
            uri_paths,
            ..ClientConventions::default()
        })
    }

    /// A line the client sent, as a 1-based line (`None` if before the first line).
    pub fn line_in(&self, line: i64) -> Option<u32> {
        let zero_based = u32::try_from(line - i64::from(self.lines_start_at1)).ok()?;
        Some(zero_based + 1)
    }

    /// A 1-based point as the client numbers lines and columns.
    pub fn point_out(&self, point: SourcePoint) -> (i64, i64) {
        let position = Position::new(point.line.saturating_sub(1), point.column.saturating_sub(1));
        (
            i64::from(position.line) + i64::from(self.lines_start_at1),
            i64::from(position.character) + i64::from(self.columns_start_at1),
        )
    }

    /// A 1-based line as the client numbers lines.
    pub fn line_out(&self, line: u32) -> i64 {
        self.point_out(SourcePoint { line, column: 1 }).0
    }

    /// A `Source.path` the client sent, as a file path.
    pub fn path_in(&self, text: &str) -> Result<PathBuf, String> {
        if !self.uri_paths {
            return Ok(PathBuf::from(text));
        }
        let uri = Url::parse(text).map_err(|e| format!("{text:?} is not a URI ({e})"))?;
        if uri.scheme() != "file" {
            return Err(format!(
                "{text:?} is not a file URI: only local files can be debugged"
            ));
        }
        uri.to_file_path()
            .map_err(|()| format!("{text:?} does not name a local file"))
    }

    /// A file path as the client names files (a `file://` URI if it asked for those).
    pub fn path_out(&self, path: &Path) -> String {
        if self.uri_paths {
            if let Ok(uri) = Url::from_file_path(path) {
                return uri.to_string();
            }
        }
        path.display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_based_clients_see_lines_unchanged() {
        let client = ClientConventions::default();
        assert_eq!(client.line_in(3), Some(3));
        assert_eq!(client.line_in(0), None);
        assert_eq!(client.line_out(3), 3);
        assert_eq!(client.point_out(SourcePoint { line: 3, column: 1 }), (3, 1));
    }

    #[test]
    fn zero_based_clients_count_from_zero_both_ways() {
        let client = ClientConventions::new(Some(false), Some(false), None).unwrap();
        assert_eq!(client.line_in(0), Some(1));
        assert_eq!(client.line_in(-1), None);
        assert_eq!(client.line_out(1), 0);
        assert_eq!(client.point_out(SourcePoint { line: 5, column: 1 }), (4, 0));
        let mixed = ClientConventions::new(Some(false), Some(true), None).unwrap();
        assert_eq!(mixed.point_out(SourcePoint { line: 5, column: 1 }), (4, 1));
    }

    #[test]
    fn uri_clients_get_file_uris_with_spaces_and_non_ascii_encoded() {
        let client = ClientConventions::new(None, None, Some(&PathFormat::Uri)).unwrap();
        let path = Path::new("/tmp/my progs/café.py");
        let uri = client.path_out(path);
        assert_eq!(uri, "file:///tmp/my%20progs/caf%C3%A9.py");
        assert_eq!(client.path_in(&uri).unwrap(), path);
        assert!(client.path_in("https://example.com/x.py").is_err());
        assert!(client.path_in("not a uri").is_err());
        let plain = ClientConventions::default();
        assert_eq!(plain.path_out(path), "/tmp/my progs/café.py");
        assert_eq!(plain.path_in("/tmp/x.py").unwrap(), Path::new("/tmp/x.py"));
    }

    #[test]
    fn an_unknown_path_format_is_refused_by_name() {
        let refused =
            ClientConventions::new(None, None, Some(&PathFormat::Other("urn".into()))).unwrap_err();
        assert!(refused.contains("\"urn\""), "{refused}");
    }
}
