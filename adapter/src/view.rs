//! How a state is shown: stack frames, scopes, variables (with handles for expanding
//! containers and objects) and evaluation of names and attribute/subscript paths.
//! Pure data in, pure data out: the DAP handlers turn these into JSON.
//!
//! Handles (`variablesReference`) live as long as one stop: a new [`View`] is made
//! each time the program stops, as DAP requires.

use indexmap::IndexMap;
use neural_model::repr::{type_name, Access, Kind, Repr};
use neural_model::{Event, State};
use std::collections::HashMap;

/// What a predicting engine said about the stop it predicted. Exact engines give none,
/// and their stops show no Prediction scope and plain types.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Confidence {
    /// The engine's short name (`"neural"`).
    pub engine: String,
    /// Probability of the whole predicted state.
    pub probability: Option<f64>,
    /// Probability of each local's predicted value.
    pub per_variable: Option<IndexMap<String, f64>>,
    /// Verify mode: how the prediction differs from real Python (empty: it matches).
    pub check: Option<Vec<String>>,
    /// Why the state is a guess and not the model's prediction.
    pub guess: Option<String>,
}

impl Confidence {
    /// Whether the stop has anything for a Prediction scope.
    fn has_scope(&self) -> bool {
        self.probability.is_some() || self.check.is_some()
    }

    /// Its rows: probability, engine, verify (with one child per difference).
    fn notes(&self) -> Vec<Note> {
        let mut notes = Vec::new();
        if let Some(p) = self.probability {
            notes.push(Note::leaf(
                "probability",
                probability_text(p),
                Some("float"),
            ));
        }
        notes.push(Note::leaf("engine", self.engine.clone(), None));
        if let Some(guess) = &self.guess {
            notes.push(Note::leaf("guess", guess.clone(), None));
        }
        match self.check.as_deref() {
            Some([]) => notes.push(Note::leaf("verify", "matches real Python".into(), None)),
            Some(diffs) => notes.push(Note {
                name: "verify".into(),
                value: match diffs.len() {
                    1 => "1 difference from real Python".into(),
                    n => format!("{n} differences from real Python"),
                },
                type_name: None,
                children: diffs
                    .iter()
                    .enumerate()
                    .map(|(i, d)| Note::leaf(&(i + 1).to_string(), d.clone(), None))
                    .collect(),
            }),
            None => {}
        }
        notes
    }
}

/// A probability as people read it: two decimals, or two significant digits when tiny
/// (a state predicted with 0.004 is not "0.00").
pub fn probability_text(p: f64) -> String {
    if p >= 0.01 || p == 0.0 {
        format!("{p:.2}")
    } else {
        format!("{p:.1e}")
    }
}

/// A Python type name with the model's confidence after it (`int · p=0.93`), so a hover
/// still starts with the type.
fn typed(type_name: Option<String>, p: Option<f64>) -> Option<String> {
    match (type_name, p) {
        (Some(t), Some(p)) => Some(format!("{t} · p={}", probability_text(p))),
        (None, Some(p)) => Some(format!("p={}", probability_text(p))),
        (t, None) => t,
    }
}

/// A row of plain text (not a Python value) in the Prediction scope.
#[derive(Clone, Debug)]
struct Note {
    name: String,
    value: String,
    type_name: Option<&'static str>,
    children: Vec<Note>,
}

impl Note {
    fn leaf(name: &str, value: String, type_name: Option<&'static str>) -> Note {
        Note {
            name: name.to_string(),
            value,
            type_name,
            children: Vec::new(),
        }
    }
}

/// One frame of the call stack, innermost first.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameView {
    /// 1-based: 1 is the innermost frame.
    pub id: i64,
    pub name: String,
    pub line: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ScopeView {
    pub name: &'static str,
    /// Handle for the scope's variables.
    pub reference: i64,
    pub count: usize,
    /// DAP presentation hint (`locals`, `globals`, `returnValue`); `None`: the generic UI.
    pub hint: Option<&'static str>,
}

/// A variable (or an evaluated expression) as shown.
#[derive(Clone, Debug, PartialEq)]
pub struct VariableView {
    pub name: String,
    /// The recorded `repr`.
    pub value: String,
    pub type_name: Option<String>,
    /// Non-zero when it expands into children.
    pub reference: i64,
    /// A path [`View::evaluate`] accepts, where Python could name it.
    pub evaluate_name: Option<String>,
}

#[derive(Debug)]
enum Handle {
    /// Named reprs: a scope, with the model's confidence per name where it has one.
    Scope {
        name: &'static str,
        vars: Vec<(String, String)>,
        confidence: IndexMap<String, f64>,
    },
    /// A parsed value; `path` is how to evaluate it.
    Value { repr: Repr, path: Option<String> },
    /// Rows of text: the Prediction scope and its expansions.
    Notes(Vec<Note>),
}

/// Why an expression has no value here.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ViewError {
    #[error("unknown variables reference {0} (references last only until the program moves)")]
    UnknownReference(i64),
    #[error("unknown frame {0}")]
    UnknownFrame(i64),
    #[error("{0}")]
    NotAvailable(String),
}

/// What is shown at one stop.
pub struct View {
    state: State,
    confidence: Option<Confidence>,
    handles: Vec<Handle>,
    /// (parent handle, child index) -> child handle, so repeated requests reuse them.
    children: HashMap<(i64, usize), i64>,
}

impl View {
    pub fn new(state: State) -> Self {
        View {
            state,
            confidence: None,
            handles: Vec::new(),
            children: HashMap::new(),
        }
    }

    /// The same view with what the engine said about its prediction of this stop.
    pub fn with_confidence(mut self, confidence: Confidence) -> Self {
        self.confidence = Some(confidence);
        self
    }

    /// The model's confidence in local `name`, where it gave one.
    fn local_confidence(&self, name: &str) -> Option<f64> {
        self.confidence
            .as_ref()?
            .per_variable
            .as_ref()?
            .get(name)
            .copied()
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    pub fn frames(&self) -> Vec<FrameView> {
        // The module's `call` state has line 0; DAP lines start at 1.
        let innermost = FrameView {
            id: 1,
            name: self.state.function.clone(),
            line: self.state.line.max(1),
        };
        let callers = self
            .state
            .stack
            .iter()
            .rev()
            .enumerate()
            .map(|(i, frame)| FrameView {
                id: i as i64 + 2,
                name: frame.function.clone(),
                line: frame.line.max(1),
            });
        std::iter::once(innermost).chain(callers).collect()
    }

    /// Scopes of a frame. Only the innermost frame's locals are recorded in a state, so
    /// callers show their globals only.
    pub fn scopes(&mut self, frame: i64) -> Result<Vec<ScopeView>, ViewError> {
        if frame < 1 || frame as usize > self.state.stack.len() + 1 {
            return Err(ViewError::UnknownFrame(frame));
        }
        let mut scopes = Vec::new();
        if frame == 1 {
            let locals = pairs(&self.state.locals);
            let confidence = self
                .confidence
                .as_ref()
                .and_then(|c| c.per_variable.clone())
                .unwrap_or_default();
            scopes.push(self.scope("Locals", Some("locals"), locals, confidence));
            match (self.state.event, &self.state.value) {
                (Event::Return, Some(v)) => scopes.push(self.scope(
                    "Return value",
                    Some("returnValue"),
                    vec![("(return)".into(), v.clone())],
                    IndexMap::new(),
                )),
                (Event::Exception, Some(v)) => scopes.push(self.scope(
                    "Exception",
                    Some("locals"),
                    vec![("(exception)".into(), v.clone())],
                    IndexMap::new(),
                )),
                _ => {}
            }
        }
        if !self.state.globals.is_empty() {
            let globals = pairs(&self.state.globals);
            scopes.push(self.scope("Globals", Some("globals"), globals, IndexMap::new()));
        }
        // Last, so that the first scope stays Locals (editors expand the first one).
        if let Some(notes) = self
            .confidence
            .as_ref()
            .filter(|c| frame == 1 && c.has_scope())
            .map(Confidence::notes)
        {
            let count = notes.len();
            self.handles.push(Handle::Notes(notes));
            scopes.push(ScopeView {
                name: "Prediction",
                reference: self.handles.len() as i64,
                count,
                hint: None,
            });
        }
        Ok(scopes)
    }

    fn scope(
        &mut self,
        name: &'static str,
        hint: Option<&'static str>,
        vars: Vec<(String, String)>,
        confidence: IndexMap<String, f64>,
    ) -> ScopeView {
        let count = vars.len();
        self.handles.push(Handle::Scope {
            name,
            vars,
            confidence,
        });
        ScopeView {
            name,
            reference: self.handles.len() as i64,
            count,
            hint,
        }
    }

    /// Where the variables of `reference` are: the name of its scope ("Locals",
    /// "Globals", ...), or `None` for the children of a value or the Prediction notes.
    pub fn scope_name(&self, reference: i64) -> Result<Option<&'static str>, ViewError> {
        let handle = usize::try_from(reference - 1)
            .ok()
            .and_then(|i| self.handles.get(i))
            .ok_or(ViewError::UnknownReference(reference))?;
        Ok(match handle {
            Handle::Scope { name, .. } => Some(name),
            Handle::Value { .. } | Handle::Notes(_) => None,
        })
    }

    /// The children of a handle, `start`/`count` paging them.
    pub fn variables(
        &mut self,
        reference: i64,
        start: usize,
        count: Option<usize>,
    ) -> Result<Vec<VariableView>, ViewError> {
        let handle = usize::try_from(reference - 1)
            .ok()
            .and_then(|i| self.handles.get(i))
            .ok_or(ViewError::UnknownReference(reference))?;
        let mut confidence = IndexMap::new();
        let items: Vec<(String, Repr, Option<String>)> = match handle {
            Handle::Notes(notes) => {
                let notes = notes.clone();
                return Ok(self.note_views(reference, notes, start, count));
            }
            Handle::Scope {
                vars,
                confidence: scope_confidence,
                ..
            } => {
                confidence = scope_confidence.clone();
                vars.iter()
                    .map(|(k, v)| (k.clone(), Repr::parse(v), plain_name(k)))
                    .collect()
            }
            Handle::Value { repr, path } => repr
                .children()
                .into_iter()
                .map(|child| {
                    let name_path = path.as_ref().and_then(|p| child_path(p, &child.access));
                    (child.name, child.value, name_path)
                })
                .collect(),
        };
        let end = page_end(items.len(), start, count);
        let mut out = Vec::new();
        for (index, (name, repr, path)) in items.into_iter().enumerate().take(end).skip(start) {
            let reference = self.child_handle(reference, index, &repr, path.clone());
            out.push(VariableView {
                type_name: typed(type_name(&repr.text), confidence.get(&name).copied()),
                name,
                value: repr.text,
                reference,
                evaluate_name: path,
            });
        }
        Ok(out)
    }

    /// Rows of the Prediction scope (text, not Python values: nothing to evaluate).
    fn note_views(
        &mut self,
        parent: i64,
        notes: Vec<Note>,
        start: usize,
        count: Option<usize>,
    ) -> Vec<VariableView> {
        let end = page_end(notes.len(), start, count);
        let mut out = Vec::new();
        for (index, note) in notes.into_iter().enumerate().take(end).skip(start) {
            let reference = if note.children.is_empty() {
                0
            } else if let Some(&known) = self.children.get(&(parent, index)) {
                known
            } else {
                self.handles.push(Handle::Notes(note.children));
                let reference = self.handles.len() as i64;
                self.children.insert((parent, index), reference);
                reference
            };
            out.push(VariableView {
                name: note.name,
                value: note.value,
                type_name: note.type_name.map(str::to_string),
                reference,
                evaluate_name: None,
            });
        }
        out
    }

    fn child_handle(
        &mut self,
        parent: i64,
        index: usize,
        repr: &Repr,
        path: Option<String>,
    ) -> i64 {
        if !repr.is_expandable() {
            return 0;
        }
        if let Some(&known) = self.children.get(&(parent, index)) {
            return known;
        }
        self.handles.push(Handle::Value {
            repr: repr.clone(),
            path,
        });
        let reference = self.handles.len() as i64;
        self.children.insert((parent, index), reference);
        reference
    }

    /// Evaluate a name or a path like `p.x`, `xs[0]`, `d['k'][1]` over the innermost
    /// frame (locals, then globals; `(return)` / `(exception)` for the value).
    pub fn evaluate(&mut self, expression: &str) -> Result<VariableView, ViewError> {
        let expression = expression.trim();
        let (name, steps) = parse_path(expression).ok_or_else(|| {
            ViewError::NotAvailable(format!(
                "not available: cannot evaluate {expression:?}; only names and attribute or subscript paths (a.b, a[0], a['k']) can be shown from a recorded state"
            ))
        })?;
        let value = match name.as_str() {
            "(return)" | "(exception)" => self.state.value.as_ref(),
            _ => None,
        };
        let root = self
            .state
            .locals
            .get(&name)
            .or_else(|| self.state.globals.get(&name))
            .or(value)
            .ok_or_else(|| ViewError::NotAvailable(format!("{name} is not defined here")))?;
        let mut repr = Repr::parse(root);
        let mut walked = name.clone();
        for step in &steps {
            let child = repr
                .children()
                .into_iter()
                .find(|c| matches_step(&c.access, step, &repr.kind))
                .ok_or_else(|| {
                    ViewError::NotAvailable(format!("{walked} has no {}", show_step(step)))
                })?;
            walked.push_str(&show_step(step));
            repr = child.value;
        }
        let reference = if repr.is_expandable() {
            self.handles.push(Handle::Value {
                repr: repr.clone(),
                path: Some(expression.to_string()),
            });
            self.handles.len() as i64
        } else {
            0
        };
        // A local's own value carries the model's confidence, as in the Locals scope.
        let p = if steps.is_empty() && self.state.locals.contains_key(&name) {
            self.local_confidence(&name)
        } else {
            None
        };
        Ok(VariableView {
            name: expression.to_string(),
            type_name: typed(type_name(&repr.text), p),
            value: repr.text,
            reference,
            evaluate_name: Some(expression.to_string()),
        })
    }
}

/// Where a page of `len` items that starts at `start` ends (`count` 0 or none: all).
fn page_end(len: usize, start: usize, count: Option<usize>) -> usize {
    count
        .filter(|&c| c > 0)
        .map_or(len, |c| (start + c).min(len))
}

fn pairs(vars: &neural_model::Vars) -> Vec<(String, String)> {
    vars.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn plain_name(name: &str) -> Option<String> {
    Some(name.to_string()).filter(|n| n.chars().all(|c| c.is_alphanumeric() || c == '_'))
}

fn child_path(parent: &str, access: &Access) -> Option<String> {
    match access {
        Access::Index(i) => Some(format!("{parent}[{i}]")),
        Access::Key(k) => Some(format!("{parent}[{k}]")),
        Access::Field(f) => Some(format!("{parent}.{f}")),
        Access::None => None,
    }
}

#[derive(Debug, PartialEq)]
enum PathStep {
    Field(String),
    /// The subscript's text, as written.
    Subscript(String),
}

fn show_step(step: &PathStep) -> String {
    match step {
        PathStep::Field(f) => format!(".{f}"),
        PathStep::Subscript(s) => format!("[{s}]"),
    }
}

/// `name(.field | [literal])*`; `None` for anything else.
fn parse_path(text: &str) -> Option<(String, Vec<PathStep>)> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    if text.starts_with('(') && text.ends_with(')') && !text[1..].contains('(') {
        return Some((text.to_string(), Vec::new())); // (return), (exception)
    }
    let end = text.find(|c: char| !is_ident(c)).unwrap_or(text.len());
    let (name, mut rest) = text.split_at(end);
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut steps = Vec::new();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(|c: char| !is_ident(c)).unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            steps.push(PathStep::Field(after[..end].to_string()));
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let close = subscript_end(after)?;
            let inside = after[..close].trim();
            let literal = Repr::parse(inside);
            if inside.is_empty() || type_name(&literal.text).is_none() || literal.kind != Kind::Atom
            {
                return None; // only literal keys: no calls, names or slices
            }
            steps.push(PathStep::Subscript(inside.to_string()));
            rest = &after[close + 1..];
        } else {
            return None;
        }
    }
    Some((name.to_string(), steps))
}

/// Index of the `]` that closes a subscript, skipping quoted text.
fn subscript_end(text: &str) -> Option<usize> {
    let mut quote = None;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match quote {
            Some(q) if escaped => {
                escaped = false;
                let _ = q;
            }
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == ']' => return Some(i),
            None => {}
        }
    }
    None
}

fn matches_step(access: &Access, step: &PathStep, kind: &Kind) -> bool {
    match (access, step) {
        (Access::Field(f), PathStep::Field(g)) => f == g,
        (Access::Index(i), PathStep::Subscript(s)) => {
            let len = match kind {
                Kind::List(items) | Kind::Tuple(items) => items.len() as i64,
                _ => return false,
            };
            match s.parse::<i64>() {
                Ok(n) if n < 0 => n + len == *i as i64,
                Ok(n) => n == *i as i64,
                Err(_) => false,
            }
        }
        (Access::Key(k), PathStep::Subscript(s)) => canonical(k) == canonical(s),
        _ => false,
    }
}

/// A literal's text with string quotes normalised, so `["a"]` finds the key `'a'`.
fn canonical(text: &str) -> String {
    let t = text.trim();
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') && !t.contains('\'') {
        return format!("'{}'", &t[1..t.len() - 1]);
    }
    t.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use neural_model::Frame;

    fn state() -> State {
        State {
            event: Event::Line,
            line: 7,
            source: "    return x".into(),
            function: "inner".into(),
            depth: 2,
            stack: vec![
                Frame {
                    function: "<module>".into(),
                    line: 12,
                },
                Frame {
                    function: "outer".into(),
                    line: 9,
                },
            ],
            locals: [
                ("xs", "[1, [2, 3]]"),
                ("d", "{'k': Point(x=1, y=2), 3: 'v'}"),
                ("n", "4"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
            globals: [("G".to_string(), "(1, 2)".to_string())]
                .into_iter()
                .collect(),
            value: None,
            stdout: String::new(),
        }
    }

    #[test]
    fn frames_are_innermost_first() {
        let view = View::new(state());
        let names: Vec<(String, u32)> = view
            .frames()
            .into_iter()
            .map(|f| (f.name, f.line))
            .collect();
        assert_eq!(
            names,
            vec![
                ("inner".into(), 7),
                ("outer".into(), 9),
                ("<module>".into(), 12)
            ]
        );
    }

    #[test]
    fn variables_expand_and_page() {
        let mut view = View::new(state());
        let scopes = view.scopes(1).unwrap();
        assert_eq!(
            scopes.iter().map(|s| s.name).collect::<Vec<_>>(),
            vec!["Locals", "Globals"]
        );
        let locals = view.variables(scopes[0].reference, 0, None).unwrap();
        assert_eq!(locals[0].type_name.as_deref(), Some("list"));
        assert!(locals[0].reference > 0 && locals[2].reference == 0);
        let items = view.variables(locals[0].reference, 1, Some(1)).unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(
            (items[0].name.as_str(), items[0].value.as_str()),
            ("1", "[2, 3]")
        );
        assert_eq!(items[0].evaluate_name.as_deref(), Some("xs[1]"));
        let again = view.variables(locals[0].reference, 1, Some(1)).unwrap();
        assert_eq!(again[0].reference, items[0].reference, "handles are reused");
        assert_eq!(
            view.scopes(3).unwrap().len(),
            1,
            "callers show globals only"
        );
        assert!(view.scopes(4).is_err());
        assert!(view.variables(999, 0, None).is_err());
    }

    #[test]
    fn a_reference_tells_its_scope_or_that_it_is_part_of_a_value() {
        let mut view = View::new(state());
        let scopes = view.scopes(1).unwrap();
        assert_eq!(
            view.scope_name(scopes[0].reference).unwrap(),
            Some("Locals")
        );
        assert_eq!(
            view.scope_name(scopes[1].reference).unwrap(),
            Some("Globals")
        );
        let xs = view.variables(scopes[0].reference, 0, None).unwrap()[0].reference;
        assert_eq!(view.scope_name(xs).unwrap(), None);
        assert!(view.scope_name(999).is_err());
    }

    fn predicted(check: Option<Vec<String>>) -> Confidence {
        Confidence {
            engine: "neural".into(),
            probability: Some(0.934),
            per_variable: Some(
                [("xs", 0.5), ("n", 0.004)]
                    .into_iter()
                    .map(|(k, p)| (k.to_string(), p))
                    .collect(),
            ),
            check,
            guess: None,
        }
    }

    fn rows(view: &mut View, reference: i64) -> Vec<(String, String, Option<String>)> {
        view.variables(reference, 0, None)
            .unwrap()
            .into_iter()
            .map(|v| (v.name, v.value, v.type_name))
            .collect()
    }

    #[test]
    fn an_exact_stop_has_no_prediction_scope_and_plain_types() {
        let mut view = View::new(state());
        let scopes = view.scopes(1).unwrap();
        assert!(scopes.iter().all(|s| s.name != "Prediction"));
        assert_eq!(scopes[0].hint, Some("locals"));
        let types: Vec<Option<String>> = rows(&mut view, scopes[0].reference)
            .into_iter()
            .map(|r| r.2)
            .collect();
        assert_eq!(
            types,
            [Some("list".into()), Some("dict".into()), Some("int".into())]
        );
    }

    #[test]
    fn a_predicted_stop_shows_its_probability_and_each_locals_confidence() {
        let mut view = View::new(state()).with_confidence(predicted(None));
        let scopes = view.scopes(1).unwrap();
        let names: Vec<&str> = scopes.iter().map(|s| s.name).collect();
        assert_eq!(names, ["Locals", "Globals", "Prediction"]);
        let prediction = &scopes[2];
        assert_eq!((prediction.hint, prediction.count), (None, 2));
        assert_eq!(
            rows(&mut view, prediction.reference),
            [
                ("probability".into(), "0.93".into(), Some("float".into())),
                ("engine".into(), "neural".into(), None),
            ]
        );
        let locals = rows(&mut view, scopes[0].reference);
        assert_eq!(locals[0].2.as_deref(), Some("list · p=0.50"));
        assert_eq!(locals[1].2.as_deref(), Some("dict"), "no confidence given");
        assert_eq!(locals[2].2.as_deref(), Some("int · p=4.0e-3"));
        // Globals and list items are not what the confidence is about.
        let globals = rows(&mut view, scopes[1].reference);
        assert_eq!(globals[0].2.as_deref(), Some("tuple"));
        let xs = view.variables(scopes[0].reference, 0, Some(1)).unwrap();
        let items = rows(&mut view, xs[0].reference);
        assert_eq!(items[0].2.as_deref(), Some("int"));
        // Hovers read the same type.
        assert_eq!(
            view.evaluate("n").unwrap().type_name.as_deref(),
            Some("int · p=4.0e-3")
        );
        assert_eq!(
            view.evaluate("xs[0]").unwrap().type_name.as_deref(),
            Some("int")
        );
        assert!(view
            .scopes(2)
            .unwrap()
            .iter()
            .all(|s| s.name != "Prediction"));
    }

    #[test]
    fn verify_mode_lists_each_difference_or_says_it_matches() {
        let mut view = View::new(state()).with_confidence(predicted(Some(Vec::new())));
        let scopes = view.scopes(1).unwrap();
        let verify = rows(&mut view, scopes.last().unwrap().reference).remove(2);
        assert_eq!(
            (verify.0.as_str(), verify.1.as_str()),
            ("verify", "matches real Python")
        );

        let diffs = vec![
            "n: predicted 4, Python has 5".to_string(),
            "xs: missing from the prediction, Python has [1]".to_string(),
        ];
        let mut view = View::new(state()).with_confidence(predicted(Some(diffs.clone())));
        let scopes = view.scopes(1).unwrap();
        let reference = scopes.last().unwrap().reference;
        let verify = view.variables(reference, 2, Some(1)).unwrap().remove(0);
        assert_eq!(verify.name, "verify");
        assert_eq!(verify.value, "2 differences from real Python");
        assert!(verify.reference > 0 && verify.evaluate_name.is_none());
        let children = rows(&mut view, verify.reference);
        assert_eq!(
            children,
            [
                ("1".into(), diffs[0].clone(), None),
                ("2".into(), diffs[1].clone(), None)
            ]
        );
        let again = view.variables(reference, 2, Some(1)).unwrap().remove(0);
        assert_eq!(again.reference, verify.reference, "handles are reused");

        // A stop checked by the referee but without a probability still has the scope.
        let mut view = View::new(state()).with_confidence(Confidence {
            engine: "neural".into(),
            check: Some(Vec::new()),
            ..Confidence::default()
        });
        let scopes = view.scopes(1).unwrap();
        assert_eq!(scopes.last().unwrap().name, "Prediction");
        let mut unchecked = View::new(state()).with_confidence(Confidence {
            engine: "neural".into(),
            ..Confidence::default()
        });
        assert!(unchecked
            .scopes(1)
            .unwrap()
            .iter()
            .all(|s| s.name != "Prediction"));
    }

    #[test]
    fn probabilities_read_well() {
        assert_eq!(probability_text(0.934), "0.93");
        assert_eq!(probability_text(1.0), "1.00");
        assert_eq!(probability_text(0.0), "0.00");
        assert_eq!(probability_text(0.00031), "3.1e-4");
    }

    #[test]
    fn evaluates_paths() {
        let mut view = View::new(state());
        assert_eq!(view.evaluate("xs[1][-1]").unwrap().value, "3");
        assert_eq!(view.evaluate("d['k'].y").unwrap().value, "2");
        assert_eq!(view.evaluate("d[\"k\"].x").unwrap().value, "1");
        assert_eq!(view.evaluate("d[3]").unwrap().value, "'v'");
        assert_eq!(
            view.evaluate("G").unwrap().type_name.as_deref(),
            Some("tuple")
        );
        assert!(view.evaluate("d['k']").unwrap().reference > 0);
        for bad in ["n + 1", "f(1)", "xs[n]", "zz", "xs[5]", "d['k'].z", ""] {
            assert!(view.evaluate(bad).is_err(), "{bad}");
        }
    }
}
