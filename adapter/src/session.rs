//! A debugging session, independent of DAP: the program, its breakpoints, the stops
//! visited so far, the current one, and moves forward and backward through the run.
//! The DAP handlers drive it; a terminal CLI can drive the same type.
//!
//! History: every stop shown is kept. A move already made from a stop (and the exact
//! inverse of a single step) is answered from history without asking the engine, so
//! stepping back shows exactly what was shown before and stepping forward again
//! returns the same states; only positions never seen are asked of the engine. An
//! engine that returns a key it returned before gets the stop recorded for that key;
//! one that does not know the run's order (the neural engine: fresh keys, predictions
//! from the state alone) gets the stop already shown with an equal state.
//!
//! Stdout: each piece is given once. Engines that know the run's order say what was
//! printed where; for the others the session keeps what the run printed up to each
//! stop reached forwards from the entry, and gives only what is past the output
//! already shown.
//!
//! Methods that move call the engine and may block for a long time (a neural engine):
//! call them off the async runtime.

use crate::engine::{Engine, EngineError, ExceptionStops, Position, PositionKey, Prediction};
use indexmap::IndexMap;
use neural_model::program::ProgramModel;
use neural_model::{Action, Event, Exit, Outcome, Program, State};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

/// Index of a stop in [`Session::history`].
pub type StopId = usize;

/// One stop: a position the user has been shown, with the engine's confidence in it.
#[derive(Clone, Debug, PartialEq)]
pub struct Stop {
    pub position: Position,
    pub probability: Option<f64>,
    pub confidence: Option<IndexMap<String, f64>>,
    /// Verify mode: how the prediction differs from real Python (empty: exact).
    pub check: Option<Vec<String>>,
    /// Why the stop is a guess and not the engine's prediction.
    pub guess: Option<String>,
}

impl Stop {
    pub fn state(&self) -> &State {
        &self.position.state
    }
}

/// The user's moves, as a debugger's buttons name them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// step_into.
    Into,
    /// step_over.
    Over,
    /// step_return, then step_over from the return to land in the caller.
    Out,
    /// To the next breakpoint (or exception stop), else to the end.
    Continue,
    /// inv_step_over.
    Back,
    /// To the previous breakpoint hit, else to the entry.
    ReverseContinue,
}

/// Why the session stopped where it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    Entry,
    Step,
    Breakpoint,
    Exception,
}

/// The result of a move.
#[derive(Clone, Debug, PartialEq)]
pub enum Move {
    /// Stopped at `stop`; `stdout` is what the program printed on the way and was not
    /// given before (engines that know the run's order give each piece once; for
    /// others, a stop shown before prints nothing).
    Stopped {
        stop: StopId,
        reason: StopReason,
        stdout: String,
    },
    /// The program ended.
    Exited { exit: Exit, stdout: String },
}

#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum SessionError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("the program has ended ({0}); start a new session to debug it again")]
    Ended(Exit),
}

pub struct Session {
    engine: Arc<dyn Engine>,
    program: Program,
    /// What the program's text says (which frames a line can reach).
    model: ProgramModel,
    breakpoints: BTreeSet<u32>,
    exception_stops: ExceptionStops,
    history: Vec<Stop>,
    by_key: HashMap<PositionKey, StopId>,
    moves: HashMap<(StopId, Action), StopId>,
    current: StopId,
    ended: Option<Exit>,
    /// For engines that know the run's order: the furthest position whose stdout has
    /// been given, so that moving back and forth prints each piece once.
    printed_through: Option<u64>,
    /// For engines that do not: what the program printed from its start up to each
    /// stop, where forward moves from the entry tell it...
    printed_until: HashMap<StopId, String>,
    /// ...and all the stdout given so far, so a run over known ground prints only
    /// what is new.
    given: String,
    /// What the user should be told about the last move (see [`Session::take_notes`]).
    notes: Vec<String>,
}

impl Session {
    /// Start at the engine's entry state (blocking).
    pub fn new(engine: Arc<dyn Engine>, program: Program) -> Result<Self, EngineError> {
        let entry = engine.entry()?;
        let entry_key = entry.key;
        let mut session = Session {
            engine,
            model: ProgramModel::of(&program.source),
            program,
            breakpoints: BTreeSet::new(),
            exception_stops: ExceptionStops::default(),
            history: Vec::new(),
            by_key: HashMap::new(),
            moves: HashMap::new(),
            current: 0,
            ended: None,
            printed_through: None,
            printed_until: HashMap::new(),
            given: String::new(),
            notes: Vec::new(),
        };
        session.printed_through = session.engine.order(entry_key);
        let entry = session.record(Stop {
            position: entry,
            probability: None,
            confidence: None,
            check: None,
            guess: None,
        });
        session.printed_until.insert(entry, String::new());
        Ok(session)
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    pub fn engine(&self) -> &dyn Engine {
        self.engine.as_ref()
    }

    pub fn breakpoints(&self) -> &BTreeSet<u32> {
        &self.breakpoints
    }

    /// Lines that `continue` and `reverseContinue` stop at (replaces the old set).
    pub fn set_breakpoints(&mut self, lines: BTreeSet<u32>) {
        self.breakpoints = lines;
    }

    pub fn set_exception_stops(&mut self, stops: ExceptionStops) {
        self.exception_stops = stops;
    }

    /// The stop the user is at (the last one shown, also after the program ended).
    pub fn current(&self) -> &Stop {
        &self.history[self.current]
    }

    pub fn current_id(&self) -> StopId {
        self.current
    }

    /// How the program ended, once it has.
    pub fn ended(&self) -> Option<&Exit> {
        self.ended.as_ref()
    }

    /// Every stop shown so far, in the order first shown.
    pub fn history(&self) -> &[Stop] {
        &self.history
    }

    /// Make a move (blocking: may ask the engine).
    pub fn step(&mut self, step: Step) -> Result<Move, SessionError> {
        if let Some(exit) = &self.ended {
            return Err(SessionError::Ended(exit.clone()));
        }
        match step {
            Step::Into => self.act(
                &Action::StepInto,
                StopReason::Step,
                ExceptionStops::default(),
            ),
            Step::Over => {
                if let Some(hit) = self.breakpoint_first(&[Action::StepOver])? {
                    return Ok(hit);
                }
                self.act(
                    &Action::StepOver,
                    StopReason::Step,
                    ExceptionStops::default(),
                )
            }
            Step::Out => {
                // On a return (or an exception leaving the frame) the function is
                // already at its end: only the move to the caller is left.
                let at_end = matches!(
                    self.current().state().event,
                    Event::Return | Event::Exception
                );
                let actions: &[Action] = if at_end {
                    &[Action::StepOver]
                } else {
                    &[Action::StepReturn, Action::StepOver]
                };
                if let Some(hit) = self.breakpoint_first(actions)? {
                    return Ok(hit);
                }
                let mut printed = String::new();
                let mut last = None;
                for action in actions {
                    match self.act(action, StopReason::Step, ExceptionStops::default())? {
                        Move::Stopped {
                            stop,
                            reason,
                            stdout,
                        } => {
                            printed.push_str(&stdout);
                            last = Some((stop, reason));
                        }
                        Move::Exited { exit, stdout } => {
                            return Ok(Move::Exited {
                                exit,
                                stdout: printed + &stdout,
                            })
                        }
                    }
                }
                let (stop, reason) = last.expect("stepOut takes at least one action");
                Ok(Move::Stopped {
                    stop,
                    reason,
                    stdout: printed,
                })
            }
            Step::Continue => {
                let action = if self.breakpoints.is_empty() {
                    Action::Continue
                } else {
                    Action::Breakpoint(self.breakpoints.clone())
                };
                let mut moved = self.act(&action, StopReason::Breakpoint, self.exception_stops)?;
                if let Move::Stopped { reason, stop, .. } = &mut moved {
                    if self.history[*stop].state().event == Event::Exception {
                        *reason = StopReason::Exception;
                    }
                }
                Ok(moved)
            }
            Step::Back => self.act(
                &Action::InvStepOver,
                StopReason::Step,
                ExceptionStops::default(),
            ),
            Step::ReverseContinue => {
                if self.breakpoints.is_empty() {
                    self.current = 0;
                    return Ok(Move::Stopped {
                        stop: 0,
                        reason: StopReason::Entry,
                        stdout: String::new(),
                    });
                }
                let action = Action::InvBreakpoint(self.breakpoints.clone());
                self.act(&action, StopReason::Breakpoint, ExceptionStops::default())
            }
        }
    }

    /// A breakpoint hit before the place that `actions` (taken in turn) lead to: the
    /// move to it. Stepping over or out of code stops at breakpoints inside it, as in
    /// every debugger.
    fn breakpoint_first(&mut self, actions: &[Action]) -> Result<Option<Move>, SessionError> {
        let engine = self.engine.clone();
        let here = self.current().position.clone();
        if self.breakpoints.is_empty() {
            return Ok(None);
        }
        let hit_action = Action::Breakpoint(self.breakpoints.clone());
        let first = match engine.order(here.key) {
            Some(_) => {
                let end = self.order_after(&here, actions)?;
                let hit = engine.predict(&here, &hit_action)?;
                let hit_order = hit.outcome.state().and_then(|_| engine.order(hit.key));
                hit_order.is_some_and(|order| order < end)
            }
            // Without the run's order (the neural engine), where the next breakpoint
            // lands says whether it comes first: deeper than this frame means inside a
            // call made from here; when stepping out, this frame's own lines count too.
            None => {
                let stepping_out = actions.first() == Some(&Action::StepReturn);
                let model = &self.model;
                // No prediction where no breakpoint's frame can be reached from here.
                let reachable = self.breakpoints.iter().any(|&line| {
                    model.layout.frames_of(line, false).iter().any(|frame| {
                        model.may_call(here.state.line, frame)
                            || stepping_out && *frame == here.state.function
                    })
                });
                if !reachable {
                    return Ok(None);
                }
                let hit = engine.predict_quickly(&here, &hit_action)?;
                hit.outcome.state().is_some_and(|hit| {
                    hit.depth > here.state.depth && model.may_call(here.state.line, &hit.function)
                        || stepping_out
                            && hit.depth == here.state.depth
                            && hit.function == here.state.function
                })
            }
        };
        if !first {
            return Ok(None);
        }
        self.act(
            &hit_action,
            StopReason::Breakpoint,
            ExceptionStops::default(),
        )
        .map(Some)
    }

    /// The run order of the place `actions` (taken in turn) lead to from `here`
    /// (`u64::MAX` for the end).
    fn order_after(&self, here: &Position, actions: &[Action]) -> Result<u64, SessionError> {
        let engine = &self.engine;
        let mut at = here.clone();
        let mut end = u64::MAX;
        for action in actions {
            let prediction = engine.predict(&at, action)?;
            let Some(state) = prediction.outcome.state() else {
                return Ok(u64::MAX);
            };
            end = engine.order(prediction.key).unwrap_or(u64::MAX);
            at = Position {
                state: state.clone(),
                key: prediction.key,
            };
        }
        Ok(end)
    }

    /// Take one MDP action from the current stop (blocking). `reason` is reported for a
    /// state reached; an inverse action that finds nothing earlier reports `Entry`.
    pub fn act(
        &mut self,
        action: &Action,
        reason: StopReason,
        stops: ExceptionStops,
    ) -> Result<Move, SessionError> {
        if let Some(exit) = &self.ended {
            return Err(SessionError::Ended(exit.clone()));
        }
        let from = self.current;
        if !stops.any() {
            if let Some(&to) = self.moves.get(&(from, action.clone())) {
                self.current = to;
                let reason = if to == 0 && action.is_inverse() {
                    StopReason::Entry
                } else {
                    reason
                };
                return Ok(Move::Stopped {
                    stop: to,
                    reason,
                    stdout: String::new(),
                });
            }
        }
        let prediction =
            self.engine
                .predict_stopping(&self.history[from].position, action, stops)?;
        let Prediction {
            outcome,
            key,
            probability,
            confidence,
            check,
            guess,
        } = prediction;
        let from_key = self.history[from].position.key;
        let (state, reason) = match outcome {
            Outcome::Exit { exit, stdout } => {
                self.ended = Some(exit.clone());
                let stdout = match self.unprinted(from_key, None, stdout) {
                    Ok(stdout) => stdout,
                    Err(stdout) => self.unprinted_text(from, stdout).0,
                };
                return Ok(Move::Exited { exit, stdout });
            }
            Outcome::Start { .. } => {
                // Nothing earlier: the entry the session started at.
                self.remember(from, action, 0);
                self.current = 0;
                return Ok(Move::Stopped {
                    stop: 0,
                    reason: StopReason::Entry,
                    stdout: String::new(),
                });
            }
            Outcome::State { state } => (state, reason),
        };
        let printed = if action.is_inverse() {
            String::new()
        } else {
            state.stdout.clone()
        };
        let known = self
            .by_key
            .get(&key)
            .copied()
            .or_else(|| self.shown_state(&state, key));
        if let Some(known) = known.filter(|&k| !action.is_inverse() && self.leads_to(k, from)) {
            self.notes.push(self.cycle_note(known));
        }
        let (to, stdout) = match known {
            // Shown before: its output too, unless the engine's order says otherwise.
            Some(known) => (
                known,
                self.unprinted(from_key, Some(key), printed)
                    .unwrap_or_default(),
            ),
            None => {
                let (stdout, through) = match self.unprinted(from_key, Some(key), printed) {
                    Ok(stdout) => (stdout, None),
                    // Backwards, what was printed before the new stop is unknown.
                    Err(_) if action.is_inverse() => (String::new(), None),
                    Err(stdout) => self.unprinted_text(from, stdout),
                };
                let stop = Stop {
                    position: Position { state, key },
                    probability,
                    confidence,
                    check,
                    guess,
                };
                let to = self.record(stop);
                if let Some(through) = through {
                    self.printed_until.insert(to, through);
                }
                (to, stdout)
            }
        };
        if !stops.any() {
            self.remember(from, action, to);
        }
        self.current = to;
        Ok(Move::Stopped {
            stop: to,
            reason,
            stdout,
        })
    }

    /// Set a variable of the current frame (the engine decides whether it can).
    pub fn set_variable(&mut self, name: &str, value: &str) -> Result<&Stop, SessionError> {
        if let Some(exit) = &self.ended {
            return Err(SessionError::Ended(exit.clone()));
        }
        let position = self.engine.edit(&self.current().position, name, value)?;
        let stop = Stop {
            position,
            probability: None,
            confidence: None,
            check: None,
            guess: None,
        };
        // An edited state is a new position: old moves from here no longer hold.
        self.history.push(stop);
        self.current = self.history.len() - 1;
        self.by_key
            .insert(self.history[self.current].position.key, self.current);
        Ok(self.current())
    }

    /// The part of `stdout` (printed between `from` and `to`, `None` for the end) not
    /// given before. `Ok` when the engine knows the run's order, `Err(stdout)` as it
    /// came when it does not.
    fn unprinted(
        &mut self,
        from: PositionKey,
        to: Option<PositionKey>,
        stdout: String,
    ) -> Result<String, String> {
        let engine = self.engine.clone();
        let (Some(through), Some(from)) = (self.printed_through, engine.order(from)) else {
            return Err(stdout);
        };
        let to = match to {
            Some(key) => match engine.order(key) {
                Some(order) => order,
                None => return Err(stdout),
            },
            None => u64::MAX,
        };
        if to <= through {
            return Ok(String::new());
        }
        self.printed_through = Some(to);
        if from >= through {
            return Ok(stdout);
        }
        // From behind what was printed: drop the part already given.
        let given = engine.printed(from, through).unwrap_or_default();
        Ok(stdout
            .strip_prefix(given.as_str())
            .map(str::to_string)
            .unwrap_or(stdout))
    }

    /// For engines without an order: the part of `stdout`, printed on a forward move
    /// from stop `from`, that was not given before, and what the run printed from its
    /// start through the move (when known). A move from a stop whose past output is
    /// unknown (reached backwards, or edited) prints all of `stdout`.
    fn unprinted_text(&mut self, from: StopId, stdout: String) -> (String, Option<String>) {
        let Some(before) = self.printed_until.get(&from) else {
            return (stdout, None);
        };
        let through = format!("{before}{stdout}");
        let fresh = if let Some(new) = through.strip_prefix(self.given.as_str()) {
            new.to_string()
        } else if self.given.starts_with(&through) {
            String::new() // over ground already covered
        } else {
            stdout // a different story from the one told so far: tell it as it comes
        };
        if !self.given.starts_with(&through) {
            self.given = through.clone();
        }
        (fresh, Some(through))
    }

    /// For engines that do not know the run's order (the neural engine): the stop
    /// already shown with this very state (its stdout aside). Such an engine predicts
    /// from the state alone, so an equal state is the same place, and going back and
    /// forth over it shows the same stop and prints nothing again.
    fn shown_state(&self, state: &State, key: PositionKey) -> Option<StopId> {
        if self.engine.order(key).is_some() {
            return None;
        }
        let bare = |s: &State| State {
            stdout: String::new(),
            ..s.clone()
        };
        let wanted = bare(state);
        self.history
            .iter()
            .position(|stop| bare(stop.state()) == wanted)
    }

    /// Whether the remembered forward moves lead from `start` to `goal`. A forward
    /// step from `goal` that lands on `start` closes that loop: an engine that predicts
    /// from the state alone would go round it for good.
    fn leads_to(&self, start: StopId, goal: StopId) -> bool {
        let mut seen = vec![false; self.history.len()];
        let mut todo = vec![start];
        while let Some(at) = todo.pop() {
            if at == goal {
                return true;
            }
            if std::mem::replace(&mut seen[at], true) {
                continue;
            }
            let forward = self.moves.iter();
            todo.extend(
                forward
                    .filter(|((from, action), _)| *from == at && !action.is_inverse())
                    .map(|(_, &to)| to),
            );
        }
        false
    }

    fn cycle_note(&self, known: StopId) -> String {
        let state = self.history[known].state();
        format!(
            "The predicted run is back at a state it was in before (line {} in {}, every \
             variable the same): stepping on would go round the same stops for good. Python \
             repeats a state only in an endless loop, so a value probably went wrong on the \
             way: step back to find it, or set the variable to what it should be.",
            state.line, state.function
        )
    }

    /// What the user should be told about the moves since the last call (a predicted
    /// run going round in a loop), taken once.
    pub fn take_notes(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notes)
    }

    fn record(&mut self, stop: Stop) -> StopId {
        self.by_key.insert(stop.position.key, self.history.len());
        self.history.push(stop);
        self.history.len() - 1
    }

    /// Remember `from --action--> to`, and the exact inverse where the tree's rules
    /// make it certain (single steps between neighbours).
    fn remember(&mut self, from: StopId, action: &Action, to: StopId) {
        self.moves.insert((from, action.clone()), to);
        let (a, b) = (self.history[from].state(), self.history[to].state());
        let ends_level = matches!(a.event, Event::Return | Event::Exception);
        let same_level = b.depth == a.depth && b.event != Event::Call && !ends_level;
        match action {
            Action::StepInto => {
                self.moves.insert((to, Action::InvStepInto), from);
                let into_call =
                    b.event == Event::Call && b.depth == a.depth + 1 && a.event == Event::Line;
                if same_level || into_call {
                    self.moves.insert((to, Action::InvStepOver), from);
                }
            }
            Action::StepOver if same_level => {
                self.moves.insert((to, Action::InvStepOver), from);
            }
            Action::InvStepInto => {
                self.moves.insert((to, Action::StepInto), from);
            }
            Action::InvStepOver if b.depth == a.depth && a.event != Event::Call => {
                let back_ends_level = matches!(b.event, Event::Return | Event::Exception);
                if !back_ends_level {
                    self.moves.insert((to, Action::StepOver), from);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::trace::TraceEngine;
    use crate::engine::Prediction;
    use neural_model::{Limits, StateTree, Trace};

    fn state(event: Event, line: u32, depth: u32, x: &str) -> State {
        State {
            event,
            line,
            source: String::new(),
            function: if depth == 0 {
                "<module>".into()
            } else {
                "f".into()
            },
            depth,
            stack: Vec::new(),
            locals: [("x".to_string(), x.to_string())].into_iter().collect(),
            globals: IndexMap::new(),
            value: None,
            stdout: String::new(),
        }
    }

    /// A module that calls f twice: line 1 (call), f body, line 2, exit.
    fn session() -> Session {
        let states = vec![
            state(Event::Line, 1, 0, "0"),
            state(Event::Call, 5, 1, "1"),
            state(Event::Line, 6, 1, "1"),
            state(Event::Return, 6, 1, "1"),
            state(Event::Line, 2, 0, "1"),
            state(Event::Line, 3, 0, "2"),
        ];
        let tree = StateTree::new(states, Exit::Normal, String::new());
        let program = Program {
            path: "p.py".into(),
            source: String::new(),
            call: None,
            ..Program::default()
        };
        let trace = Trace {
            program: program.clone(),
            tree,
            stderr: String::new(),
        };
        let _ = Limits::default();
        Session::new(Arc::new(TraceEngine::from_trace(trace)), program).unwrap()
    }

    fn line(session: &Session) -> (Event, u32) {
        (
            session.current().state().event,
            session.current().state().line,
        )
    }

    #[test]
    fn steps_back_to_exactly_what_was_shown() {
        let mut s = session();
        let mut seen = vec![line(&s)];
        for _ in 0..3 {
            s.step(Step::Into).unwrap();
            seen.push(line(&s));
        }
        let ids: Vec<StopId> = (0..4).collect();
        for expected in seen.iter().rev().skip(1) {
            s.step(Step::Back).unwrap();
            assert_eq!(&line(&s), expected);
        }
        assert_eq!(s.current_id(), 0);
        for (i, expected) in seen.iter().enumerate().skip(1) {
            s.step(Step::Into).unwrap();
            assert_eq!(&line(&s), expected);
            assert_eq!(s.current_id(), ids[i], "the same recorded stop");
        }
    }

    #[test]
    fn continue_stops_at_breakpoints_then_exits() {
        let mut s = session();
        s.set_breakpoints([6].into_iter().collect());
        let moved = s.step(Step::Continue).unwrap();
        assert!(matches!(
            moved,
            Move::Stopped {
                reason: StopReason::Breakpoint,
                ..
            }
        ));
        assert_eq!(line(&s), (Event::Line, 6));
        assert!(matches!(
            s.step(Step::Continue).unwrap(),
            Move::Exited {
                exit: Exit::Normal,
                ..
            }
        ));
        assert!(matches!(s.step(Step::Into), Err(SessionError::Ended(_))));
    }

    #[test]
    fn reverse_continue_without_breakpoints_returns_to_entry() {
        let mut s = session();
        s.step(Step::Over).unwrap();
        s.step(Step::Over).unwrap();
        let moved = s.step(Step::ReverseContinue).unwrap();
        assert_eq!(
            moved,
            Move::Stopped {
                stop: 0,
                reason: StopReason::Entry,
                stdout: String::new()
            }
        );
    }

    #[test]
    fn step_out_lands_in_the_caller() {
        let mut s = session();
        s.step(Step::Into).unwrap();
        s.step(Step::Into).unwrap();
        assert_eq!(line(&s), (Event::Line, 6));
        s.step(Step::Out).unwrap();
        assert_eq!(line(&s), (Event::Line, 2));
    }

    #[test]
    fn step_out_from_a_return_goes_straight_to_the_caller() {
        let mut s = session();
        s.set_breakpoints([6].into_iter().collect());
        s.step(Step::Continue).unwrap();
        s.step(Step::Over).unwrap();
        assert_eq!(line(&s), (Event::Return, 6));
        s.step(Step::Out).unwrap();
        assert_eq!(line(&s), (Event::Line, 2));
    }

    #[test]
    fn step_over_stops_at_a_breakpoint_inside_the_call() {
        let mut s = session();
        s.set_breakpoints([6].into_iter().collect());
        let moved = s.step(Step::Over).unwrap();
        assert!(matches!(
            moved,
            Move::Stopped {
                reason: StopReason::Breakpoint,
                ..
            }
        ));
        assert_eq!(line(&s), (Event::Line, 6));
    }

    /// A stand-in for the neural engine: lines 1..=4 of a module, `x` = the line, each
    /// line prints its number; a fresh key for every answer and no order.
    struct Markov {
        keys: std::sync::atomic::AtomicU64,
        /// A line that runs one frame deeper (a function called from the line before).
        deeper: Option<u32>,
    }

    impl Markov {
        fn session() -> Session {
            Self::session_with_call(None)
        }

        fn session_with_call(deeper: Option<u32>) -> Session {
            Self::session_and_engine(deeper).0
        }

        /// A session and its engine, to count what the session asks it.
        fn session_and_engine(deeper: Option<u32>) -> (Session, Arc<Markov>) {
            let engine = Arc::new(Markov {
                keys: std::sync::atomic::AtomicU64::new(1),
                deeper,
            });
            let program = Program {
                path: "p.py".into(),
                // Line 2 names f, whose body is line 3 (that runs deeper when asked).
                source: "x = 1\ndef f():\n    z = 3\nw = 4\n".into(),
                call: None,
                ..Program::default()
            };
            (Session::new(engine.clone(), program).unwrap(), engine)
        }

        /// How many predictions were asked for.
        fn asked(&self) -> u64 {
            self.keys.load(std::sync::atomic::Ordering::Relaxed) - 1
        }

        fn at(&self, line: u32, stdout: String) -> Outcome {
            let depth = (self.deeper == Some(line)) as u32;
            let mut state = state(Event::Line, line, depth, &line.to_string());
            state.stdout = stdout;
            Outcome::State { state }
        }
    }

    impl Engine for Markov {
        fn name(&self) -> &str {
            "markov"
        }
        fn entry(&self) -> Result<Position, EngineError> {
            Ok(Position {
                state: state(Event::Line, 1, 0, "1"),
                key: 0,
            })
        }
        fn predict(&self, from: &Position, action: &Action) -> Result<Prediction, EngineError> {
            let line = from.state.line;
            let printed = |to: u32| (line..to).map(|l| format!("{l}\n")).collect::<String>();
            let outcome = match action {
                Action::InvStepOver if line == 1 => Outcome::Start {
                    state: from.state.clone(),
                },
                Action::InvStepOver => self.at(line - 1, String::new()),
                Action::Breakpoint(lines) => match lines.range(line + 1..).next() {
                    Some(&to) => self.at(to, printed(to)),
                    None => Outcome::Exit {
                        exit: Exit::Normal,
                        stdout: printed(5),
                    },
                },
                Action::Continue => Outcome::Exit {
                    exit: Exit::Normal,
                    stdout: printed(5),
                },
                // Stepping over the call on the line before the deeper line skips it.
                Action::StepOver if self.deeper == Some(line + 1) && line + 2 <= 4 => {
                    self.at(line + 2, printed(line + 2))
                }
                _ if line == 4 => Outcome::Exit {
                    exit: Exit::Normal,
                    stdout: printed(5),
                },
                _ => self.at(line + 1, printed(line + 1)),
            };
            Ok(Prediction {
                outcome,
                key: self.keys.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                probability: Some(0.9),
                confidence: None,
                check: None,
                guess: None,
            })
        }
        fn edit(&self, at: &Position, _: &str, _: &str) -> Result<Position, EngineError> {
            Ok(at.clone())
        }
    }

    /// A stand-in for a model that got a loop wrong: lines 1, 2, 3, then line 1 again
    /// with nothing changed, for good.
    struct Circle {
        keys: std::sync::atomic::AtomicU64,
    }

    impl Engine for Circle {
        fn name(&self) -> &str {
            "circle"
        }
        fn entry(&self) -> Result<Position, EngineError> {
            Ok(Position {
                state: state(Event::Line, 1, 0, "0"),
                key: 0,
            })
        }
        fn predict(&self, from: &Position, action: &Action) -> Result<Prediction, EngineError> {
            let line = match action.is_inverse() {
                true => (from.state.line + 1) % 3 + 1,
                false => from.state.line % 3 + 1,
            };
            Ok(Prediction {
                outcome: Outcome::State {
                    state: state(Event::Line, line, 0, "0"),
                },
                key: self.keys.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
                probability: Some(0.9),
                confidence: None,
                check: None,
                guess: None,
            })
        }
        fn edit(&self, at: &Position, _: &str, _: &str) -> Result<Position, EngineError> {
            Ok(at.clone())
        }
    }

    #[test]
    fn a_predicted_run_back_at_an_earlier_state_is_told_once_per_return() {
        let engine = Arc::new(Circle {
            keys: std::sync::atomic::AtomicU64::new(1),
        });
        let program = Program {
            path: "p.py".into(),
            source: "x = 0\nx = 0\nx = 0\n".into(),
            ..Program::default()
        };
        let mut s = Session::new(engine, program).unwrap();
        s.step(Step::Into).unwrap();
        s.step(Step::Into).unwrap();
        assert!(s.take_notes().is_empty(), "two new states");
        s.step(Step::Into).unwrap();
        assert_eq!(s.current_id(), 0, "the entry's state again");
        let notes = s.take_notes();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("line 1 in <module>"), "{}", notes[0]);
        assert!(s.take_notes().is_empty(), "told once");
    }

    #[test]
    fn walking_known_ground_again_is_no_loop() {
        let mut s = Markov::session();
        s.step(Step::Into).unwrap();
        s.step(Step::Into).unwrap();
        s.step(Step::Back).unwrap();
        s.step(Step::Back).unwrap();
        s.step(Step::Into).unwrap();
        s.step(Step::Into).unwrap();
        assert_eq!(line(&s), (Event::Line, 3));
        assert!(s.take_notes().is_empty());
    }

    #[test]
    fn without_an_order_step_over_stops_at_a_breakpoint_only_inside_the_call() {
        let mut flat = Markov::session();
        flat.set_breakpoints([3].into_iter().collect());
        flat.step(Step::Over).unwrap();
        assert_eq!(line(&flat), (Event::Line, 2), "line 3 is after the step");

        let mut called = Markov::session_with_call(Some(3));
        called.set_breakpoints([3].into_iter().collect());
        called.step(Step::Over).unwrap();
        assert_eq!(
            line(&called),
            (Event::Line, 2),
            "line 1 calls nothing: the deeper hit is not inside its step"
        );
        let mut called = Markov::session_with_call(Some(3));
        called.set_breakpoints([3].into_iter().collect());
        called.step(Step::Into).unwrap();
        called.step(Step::Over).unwrap();
        assert_eq!(
            line(&called),
            (Event::Line, 3),
            "line 3 runs inside line 2's call"
        );
        assert_eq!(called.current().state().depth, 1);
    }

    #[test]
    fn step_over_asks_no_breakpoint_check_where_no_breakpoint_can_be_reached() {
        let (mut s, engine) = Markov::session_and_engine(None);
        s.set_breakpoints([4].into_iter().collect());
        let before = engine.asked();
        s.step(Step::Over).unwrap();
        assert_eq!(line(&s), (Event::Line, 2));
        assert_eq!(engine.asked() - before, 1, "line 1 calls nothing: one step");
        // Line 2 names f, which holds line 3: a breakpoint there is checked first.
        s.set_breakpoints([3].into_iter().collect());
        let before = engine.asked();
        s.step(Step::Over).unwrap();
        assert_eq!(engine.asked() - before, 2, "a check, then the step");
    }

    fn printed(moved: Move) -> String {
        match moved {
            Move::Stopped { stdout, .. } | Move::Exited { stdout, .. } => stdout,
        }
    }

    #[test]
    fn without_an_order_back_and_forth_shows_the_same_stops_and_prints_once() {
        let mut s = Markov::session();
        s.set_breakpoints([3].into_iter().collect());
        assert_eq!(printed(s.step(Step::Continue).unwrap()), "1\n2\n");
        let at_three = s.current_id();
        // Back is predicted (nothing remembered it), forward again meets line 3.
        assert_eq!(printed(s.step(Step::Back).unwrap()), "");
        assert_eq!(line(&s), (Event::Line, 2));
        assert_eq!(printed(s.step(Step::Over).unwrap()), "");
        assert_eq!(s.current_id(), at_three, "the stop already shown");
        s.set_breakpoints(Default::default());
        assert_eq!(printed(s.step(Step::Continue).unwrap()), "3\n4\n");
        assert_eq!(s.history().len(), 3, "entry, line 3, line 2");
    }

    #[test]
    fn without_an_order_a_run_past_known_ground_prints_only_what_is_new() {
        let mut s = Markov::session();
        assert_eq!(printed(s.step(Step::Over).unwrap()), "1\n");
        assert_eq!(printed(s.step(Step::Over).unwrap()), "2\n");
        s.step(Step::ReverseContinue).unwrap();
        assert_eq!(s.current_id(), 0);
        s.set_breakpoints([4].into_iter().collect());
        assert_eq!(printed(s.step(Step::Continue).unwrap()), "3\n");
        assert_eq!(line(&s), (Event::Line, 4));
        s.set_breakpoints(Default::default());
        assert_eq!(printed(s.step(Step::Continue).unwrap()), "4\n");
    }

    #[test]
    fn the_trace_engine_refuses_edits_and_the_session_goes_on() {
        let mut s = session();
        let err = s.set_variable("x", "5").unwrap_err();
        assert!(err.to_string().contains("cannot change its past"), "{err}");
        assert!(s.step(Step::Into).is_ok());
    }
}
