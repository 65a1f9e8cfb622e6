//! Debugger actions over a CWM model, which only ever writes the next frame: how its
//! frames become our states (depth, function and callers, which CWM does not write),
//! and how each action is walked with them, as CWM's demo walks them
//! (`demos/cwmdbg.py`): Step Into is one frame (a `line` forced after a `call`, so
//! that it goes into the function); Step Over forces `<|return_sep|>` after each call
//! it meets, so the model predicts the return without the body; Step Out walks to the
//! frame's return the same way; breakpoints and Continue walk Step Into. Inverse
//! actions are answered from the states the session has seen ([`StateTree`]): CWM
//! has none.

use super::{Frame, Reply, UNCHANGED};
use crate::action::Action;
use crate::program::ProgramModel;
use crate::state::{Event, Exit, Frame as Caller, State, Vars};
use crate::tree::{Outcome, StateTree, Transition};

/// Why a CWM step failed. The session stays usable after any of these.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CwmError {
    /// The model's reply is not a frame that can follow (for people).
    #[error("CWM's prediction could not be used: {0}")]
    Malformed(String),
    /// The prompt no longer fits the model's context.
    #[error("the run so far ({tokens} tokens) no longer fits the model's context of {max} tokens: restart the session, or step back and step over the long parts")]
    TooLong { tokens: usize, max: usize },
    /// A walk (Continue, a breakpoint, Step Out) went on longer than allowed.
    #[error("walked {0} frames without getting there: the model may be going round a loop it never leaves; set a breakpoint nearer, or step")]
    TooFar(usize),
    /// The model itself failed.
    #[error("the model failed: {0}")]
    Model(String),
}

/// What writes the next frame: a CWM checkpoint (`super::model`), or a script in tests.
pub trait FrameSource {
    /// The model's reply after the run `path` (oldest state first), the next frame's
    /// event written for it where `forced` says. With the reply, its probability.
    fn next_frame(
        &mut self,
        path: &[State],
        forced: Option<Event>,
    ) -> Result<(Reply, f64), CwmError>;
}

/// Where an action went: the states walked on the way (the last is where it stopped,
/// unless the run ended) and how it ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Walked {
    /// Every state the model wrote, in order (the prompt of later steps holds them all).
    pub states: Vec<State>,
    /// The outcome the user sees.
    pub outcome: Outcome,
    /// The probability of every frame the model wrote on the way.
    pub probability: f64,
    /// For an inverse action: the index in the path of the state it goes back to.
    pub back_to: Option<usize>,
}

/// Takes `action` after the run `path` (its last state is where the user stands),
/// with at most `max_frames` frames written.
pub fn walk(
    source: &mut dyn FrameSource,
    program: &ProgramModel,
    path: &[State],
    action: &Action,
    max_frames: usize,
) -> Result<Walked, CwmError> {
    let here = path
        .last()
        .ok_or_else(|| CwmError::Malformed("no state to step from".into()))?;
    if action.is_inverse() {
        return Ok(from_history(path, action));
    }
    let mut walker = Walker {
        source,
        program,
        path: path.to_vec(),
        written: 0,
        probability: 1.0,
        max_frames,
    };
    let depth = here.depth;
    let stop = match action {
        Action::StepInto => walker.step_into()?,
        Action::StepOver => {
            // At the end of a level, over goes up to the caller's next state.
            let level = if ends_level(here) {
                depth.saturating_sub(1)
            } else {
                depth
            };
            walker.until(|s| s.depth <= level && s.event != Event::Call, Some(level))?
        }
        Action::StepReturn => walker.step_out()?,
        Action::Breakpoint(lines) => {
            walker.until(|s| s.event == Event::Line && lines.contains(&s.line), None)?
        }
        Action::Continue => walker.until(|_| false, None)?,
        _ => unreachable!("inverse actions are answered from history"),
    };
    let states = walker.path.split_off(path.len());
    let outcome = match stop {
        Some(exit) => Outcome::Exit {
            exit,
            stdout: String::new(),
        },
        None => Outcome::State {
            state: states.last().expect("a state was written").clone(),
        },
    };
    Ok(Walked {
        states,
        outcome,
        probability: walker.probability,
        back_to: None,
    })
}

/// A `return` ends its frame's level. (So does an exception that leaves the frame,
/// which only the frame after it tells.)
fn ends_level(state: &State) -> bool {
    state.event == Event::Return
}

/// An inverse action, from the states seen: CWM only predicts forward.
fn from_history(path: &[State], action: &Action) -> Walked {
    let tree = StateTree::new(path.to_vec(), Exit::Normal, String::new());
    let from = path.len() - 1;
    let back_to = match tree.transition(from, action) {
        Transition::To(index) => index,
        Transition::Start | Transition::End => 0,
    };
    Walked {
        states: Vec::new(),
        outcome: tree.outcome(from, action),
        probability: 1.0,
        back_to: Some(back_to),
    }
}

struct Walker<'a> {
    source: &'a mut dyn FrameSource,
    program: &'a ProgramModel,
    /// The run so far, with the states this action has written.
    path: Vec<State>,
    written: usize,
    probability: f64,
    max_frames: usize,
}

impl Walker<'_> {
    /// One frame, into a call's body where the last state is its `call`. `Some(exit)`
    /// where the run ended.
    fn step_into(&mut self) -> Result<Option<Exit>, CwmError> {
        let last = self.path.last().expect("a path has states");
        let forced = (last.event == Event::Call).then_some(Event::Line);
        self.step(forced)
    }

    /// Frames until one that `arrived` accepts, or the end. A call deeper than `over`
    /// is not gone into: its return is forced at once.
    fn until(
        &mut self,
        arrived: impl Fn(&State) -> bool,
        over: Option<u32>,
    ) -> Result<Option<Exit>, CwmError> {
        loop {
            let exit = match over {
                Some(level) => self.step_over_calls_below(level)?,
                None => self.step_into()?,
            };
            if exit.is_some() {
                return Ok(exit);
            }
            if arrived(self.path.last().expect("a state was written")) {
                return Ok(None);
            }
        }
    }

    /// To the state that ends the current level (on that state itself, the caller's):
    /// its `return`, or the exception after which the run leaves it.
    fn step_out(&mut self) -> Result<Option<Exit>, CwmError> {
        let start = self.path.len();
        let here = self.path.last().expect("a path has states");
        let mut level = match ends_level(here) {
            true if here.depth == 0 => return self.step(None),
            true => here.depth - 1,
            false => here.depth,
        };
        loop {
            let exit = self.step_over_calls_below(level)?;
            let last = self.path.last().expect("a path has states");
            if let Some(exit) = exit {
                // An exception the run ends with ends its level, unless the user stands on it.
                let raised = last.event == Event::Exception && last.depth <= level;
                return Ok((!raised || self.path.len() == start).then_some(exit));
            }
            if last.depth <= level && ends_level(last) {
                return Ok(None);
            }
            if last.depth < level {
                // The state before ended the level by its exception: stop there, or,
                // where that was where the user stood, go on to the caller's end.
                if self.path.len() - 1 > start {
                    self.path.pop();
                    return Ok(None);
                }
                level -= 1;
            }
        }
    }

    /// One frame, except that a call deeper than `level` is not gone into: its return
    /// is forced at once.
    fn step_over_calls_below(&mut self, level: u32) -> Result<Option<Exit>, CwmError> {
        let last = self.path.last().expect("a path has states");
        if last.event == Event::Call && last.depth > level {
            self.step(Some(Event::Return))
        } else {
            self.step_into()
        }
    }

    /// One frame, its event `forced` if given, added to the path.
    fn step(&mut self, forced: Option<Event>) -> Result<Option<Exit>, CwmError> {
        let last = self.path.last().expect("a path has states");
        // The traced call has returned: the run is over, whatever the model would say.
        if last.event == Event::Return && last.depth == 0 {
            return Ok(Some(Exit::Normal));
        }
        if self.written == self.max_frames {
            return Err(CwmError::TooFar(self.written));
        }
        self.written += 1;
        let (reply, probability) = self.source.next_frame(&self.path, forced)?;
        self.probability *= probability;
        match reply {
            Reply::End => Ok(Some(ending(last))),
            Reply::Frame(frame, line) => {
                let state = next_state(self.program, &self.path, frame, line)?;
                self.path.push(state);
                Ok(None)
            }
        }
    }
}

/// How the run ends after `last` when the model writes `<|end_of_text|>`.
fn ending(last: &State) -> Exit {
    match (last.event, last.exception_type()) {
        (Event::Exception, Some(kind)) => {
            let value = last.value.as_deref().unwrap_or_default();
            let message = value
                .strip_prefix(kind)
                .and_then(|rest| rest.strip_prefix('('))
                .and_then(|rest| rest.strip_suffix(')'))
                .map(|m| m.trim_matches(['\'', '"']).to_string())
                .unwrap_or_default();
            Exit::Error {
                r#type: kind.to_string(),
                message,
            }
        }
        _ => Exit::Normal,
    }
}

/// The state a frame the model wrote after `path` stands for: its line (found from its
/// text, preferring the frame's own function where a text repeats), its function,
/// depth and callers from the frames before (a `call` goes one deeper, the frame after
/// a `return` one up), its locals with CWM's `".."` filled in.
pub fn next_state(
    program: &ProgramModel,
    path: &[State],
    frame: Frame,
    line: Option<u32>,
) -> Result<State, CwmError> {
    let last = path
        .last()
        .ok_or_else(|| CwmError::Malformed("no state before the frame".into()))?;
    let text = frame.source.trim_end_matches('\n').to_string();
    // The frame the run is in after `last`: the caller's, once `last` has left its own.
    let (mut function, mut depth, mut stack, mut at) = (
        last.function.clone(),
        last.depth,
        last.stack.clone(),
        last.line,
    );
    let left = last.event == Event::Return
        // An exception reaching the caller: raised again at the line that made the call.
        || frame.event == Event::Exception
            && last.event == Event::Exception
            && raised_at_the_call(program, last, &text);
    if left {
        let caller = stack.pop().ok_or_else(|| {
            CwmError::Malformed("the model went on after the traced call returned".into())
        })?;
        (function, depth, at) = (caller.function, depth - 1, caller.line);
    }
    if frame.event == Event::Call {
        stack.push(Caller { function, line: at });
        (function, depth) = (String::new(), depth + 1);
    }
    // The frame's state before this one (none for a call: its frame is new).
    let before = path
        .iter()
        .rev()
        .find(|s| s.depth == depth && s.function == function);
    let line = find_line(program, &text, frame.event, &function, before)
        .or(line)
        .ok_or_else(|| {
            CwmError::Malformed(format!(
                "the model wrote a line that is not in the program: {text:?}"
            ))
        })?;
    let function = match frame.event {
        // A generator's frame resumes with a call on the line where it paused.
        Event::Call => program
            .layout
            .calls
            .get(&line)
            .or_else(|| {
                let owner = program.layout.scope.get(line as usize - 1)?;
                program.layout.resumable.contains(owner).then_some(owner)
            })
            .cloned()
            .ok_or_else(|| {
                CwmError::Malformed(format!(
                    "a call frame on line {line}, which starts no function: {text:?}"
                ))
            })?,
        _ => function,
    };
    let locals = match frame.event {
        Event::Call => frame.locals,
        Event::Line => filled_in(frame.locals, before),
        // CWM writes no locals with a return or an exception: the frame's stay.
        Event::Return | Event::Exception => before.map(|s| s.locals.clone()).unwrap_or_default(),
    };
    Ok(State {
        event: frame.event,
        line,
        source: program
            .lines
            .get(line as usize - 1)
            .cloned()
            .unwrap_or(text),
        function,
        depth,
        stack,
        locals,
        globals: Vars::new(),
        value: frame.value,
        stdout: String::new(),
    })
}

/// Whether a frame with text `text` after the exception `last` is that exception
/// reaching the caller: the text is the caller's line's (the tracer writes no return
/// for a frame an exception leaves).
fn raised_at_the_call(program: &ProgramModel, last: &State, text: &str) -> bool {
    let text = text.strip_suffix(super::START_MARKER).unwrap_or(text);
    last.stack
        .last()
        .and_then(|caller| program.lines.get(caller.line as usize - 1))
        .is_some_and(|line| line == text)
}

/// The line whose text is `text`: a `def` line for a call, else one of `function`'s
/// lines; where several are, one that can follow the frame's state before (`before`)
/// in the program's flow; else the first.
fn find_line(
    program: &ProgramModel,
    text: &str,
    event: Event,
    function: &str,
    before: Option<&State>,
) -> Option<u32> {
    let text = text.strip_suffix(super::START_MARKER).unwrap_or(text);
    let fits = |n: &u32| match event {
        Event::Call => program.layout.calls.contains_key(n),
        _ => program
            .layout
            .scope
            .get(*n as usize - 1)
            .is_some_and(|s| s == function),
    };
    let matching: Vec<u32> = (1..=program.lines.len() as u32)
        .filter(|&n| program.lines[n as usize - 1] == text)
        .collect();
    let fitting: Vec<u32> = matching.iter().copied().filter(fits).collect();
    let flow = &program.flow;
    let follows = |n: &u32| match (event, before) {
        (Event::Line, Some(b)) if b.event == Event::Call => {
            flow.first(b.line).is_some_and(|f| f.contains(n))
        }
        (Event::Line, Some(b)) => flow.after(b.line).is_some_and(|f| f.contains(n)),
        (Event::Return | Event::Exception, Some(b)) => b.line == *n,
        _ => true,
    };
    fitting
        .iter()
        .find(|n| follows(n))
        .or(fitting.first())
        .or(matching.first())
        .copied()
}

/// Locals as the model wrote them, a `".."` (unchanged) replaced by the value the
/// frame had `before`, as CWM's demo reads them.
fn filled_in(written: Vars, before: Option<&State>) -> Vars {
    written
        .into_iter()
        .map(|(name, value)| {
            let kept = (value == UNCHANGED)
                .then(|| before.and_then(|s| s.locals.get(&name)).cloned())
                .flatten();
            (name, kept.unwrap_or(value))
        })
        .collect()
}
