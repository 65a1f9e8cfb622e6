//! The state tree of a recorded run, and the exact next state for any action.
//!
//! The events of a run, in trace order, form a tree: every event of a call hangs under
//! the `line` event that made the call, so tree depth is call depth. One execution of
//! a function (from its `call` event to the `return` or `exception` that ends it) is an
//! *activation*; its events are one *level* of the tree.
//!
//! Choices the paper leaves open, made here (and mirrored by the trace language):
//! - **step_over at the end of a level** (on a `return`, or an `exception` that leaves
//!   the frame) goes up: to the caller's next state, never into a sibling call made by
//!   the same caller line (`f(1) + g(2)`: over from `f`'s return skips `g`).
//! - **step_return** goes to the state that ends the current level. On that state itself
//!   it goes to the state that ends the caller's level, so it always makes progress.
//!   A level that never ends (the run was cut by a limit) leads to the program's end.
//! - **Breakpoints hit `line` states only** (a line about to run), never `call`,
//!   `return` or `exception` states, so a line is hit once per execution. A breakpoint
//!   on a `def` line hits when the `def` statement runs (the definition), not when the
//!   function is called: put it on the first line of the body for that. A breakpoint
//!   on a loop header hits on every iteration and once more when the loop ends.
//!   A breakpoint never hit leads to the program's end, like continue.
//! - **inv_step_over at the start of a level** (on a `call` state) goes up to the
//!   caller's `line` state that made the call, never into an earlier sibling call.
//! - **inv_step_call** goes to the `call` state of the current level; on that state
//!   itself, to the `call` state of the caller's level.
//! - Inverse actions that find nothing earlier give the run's first state and say so
//!   ([`Outcome::Start`]); so does inv_step_over from a top-level `call` state.
//! - The stdout of a forward outcome is everything printed since the state it came
//!   from; inverse outcomes print nothing.

use crate::action::Action;
use crate::state::{Exit, State};
use serde::{Deserialize, Serialize};

/// Where an action leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    /// To the state with this index.
    To(usize),
    /// Nothing earlier: to the first state (index 0).
    Start,
    /// The program's end ([`StateTree::exit`]).
    End,
}

/// What an action leads to, as the model must predict it and the editor shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "lowercase")]
pub enum Outcome {
    /// A state; its `stdout` holds what was printed since the state the action left.
    State { state: State },
    /// An inverse action found nothing earlier: the run's first state.
    Start { state: State },
    /// The program ended, printing `stdout` after the state the action left.
    Exit { exit: Exit, stdout: String },
}

impl Outcome {
    pub fn state(&self) -> Option<&State> {
        match self {
            Outcome::State { state } | Outcome::Start { state } => Some(state),
            Outcome::Exit { .. } => None,
        }
    }
}

/// A whole recorded run: its states in trace order, and how it ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateTree {
    states: Vec<State>,
    exit: Exit,
    /// stdout written after the last state.
    trailing_stdout: String,
    /// Per state: its activation (one execution of a function).
    activation: Vec<usize>,
    activations: Vec<Activation>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Activation {
    /// The activation of the caller, if any.
    parent: Option<usize>,
    /// Its states, in order; the first is its `call` state.
    states: Vec<usize>,
}

impl StateTree {
    /// Build the tree from states in trace order (each with the right `depth`).
    pub fn new(states: Vec<State>, exit: Exit, trailing_stdout: String) -> Self {
        let mut activation = Vec::with_capacity(states.len());
        let mut activations: Vec<Activation> = Vec::new();
        // open[d] = the activation now running at depth d.
        let mut open: Vec<usize> = Vec::new();
        for (index, state) in states.iter().enumerate() {
            let depth = state.depth as usize;
            let starts_new = state.event == crate::state::Event::Call || open.len() <= depth;
            let id = if starts_new {
                open.truncate(depth);
                let parent = depth.checked_sub(1).and_then(|d| open.get(d).copied());
                activations.push(Activation {
                    parent,
                    states: Vec::new(),
                });
                open.push(activations.len() - 1);
                activations.len() - 1
            } else {
                open.truncate(depth + 1);
                open[depth]
            };
            activations[id].states.push(index);
            activation.push(id);
        }
        StateTree {
            states,
            exit,
            trailing_stdout,
            activation,
            activations,
        }
    }

    pub fn states(&self) -> &[State] {
        &self.states
    }

    pub fn state(&self, index: usize) -> &State {
        &self.states[index]
    }

    pub fn len(&self) -> usize {
        self.states.len()
    }

    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    pub fn exit(&self) -> &Exit {
        &self.exit
    }

    pub fn trailing_stdout(&self) -> &str {
        &self.trailing_stdout
    }

    /// Index of the state that ends the level of `index` (its activation's last state).
    fn level_end(&self, index: usize) -> usize {
        *self.activations[self.activation[index]]
            .states
            .last()
            .expect("activations are never empty")
    }

    fn level_start(&self, index: usize) -> usize {
        self.activations[self.activation[index]].states[0]
    }

    fn ends_level(&self, index: usize) -> bool {
        use crate::state::Event;
        self.level_end(index) == index
            && matches!(self.states[index].event, Event::Return | Event::Exception)
    }

    /// The neighbour of `index` within its own level (`+1` next, `-1` previous).
    fn level_neighbour(&self, index: usize, forward: bool) -> Option<usize> {
        let level = &self.activations[self.activation[index]].states;
        let at = level
            .binary_search(&index)
            .expect("a state is in its own level");
        if forward {
            level.get(at + 1).copied()
        } else {
            at.checked_sub(1).map(|at| level[at])
        }
    }

    /// The next state of the caller after `index`, or the caller's state before it.
    fn caller_neighbour(&self, index: usize, forward: bool) -> Option<usize> {
        let parent = self.activations[self.activation[index]].parent?;
        let level = &self.activations[parent].states;
        let at = level.partition_point(|&s| s < index);
        if forward {
            level.get(at).copied()
        } else {
            at.checked_sub(1).map(|at| level[at])
        }
    }

    /// The exact effect of `action` taken at state `from` (see the module docs).
    pub fn transition(&self, from: usize, action: &Action) -> Transition {
        assert!(from < self.states.len(), "state {from} is not in the tree");
        let to_or_end = |next: Option<usize>| next.map_or(Transition::End, Transition::To);
        let to_or_start = |prev: Option<usize>| prev.map_or(Transition::Start, Transition::To);
        match action {
            Action::StepInto => to_or_end(Some(from + 1).filter(|&n| n < self.states.len())),
            Action::StepOver => {
                if self.ends_level(from) {
                    to_or_end(self.caller_neighbour(from, true))
                } else {
                    to_or_end(self.level_neighbour(from, true))
                }
            }
            Action::StepReturn => {
                let end = self.level_end(from);
                if !self.ends_level(end) {
                    Transition::End
                } else if end != from {
                    Transition::To(end)
                } else {
                    let parent = self.activations[self.activation[from]].parent;
                    let parent_end = parent
                        .map(|p| self.activations[p].states[0])
                        .map(|s| self.level_end(s));
                    match parent_end {
                        Some(end) if self.ends_level(end) => Transition::To(end),
                        _ => Transition::End,
                    }
                }
            }
            Action::Breakpoint(lines) => {
                to_or_end((from + 1..self.states.len()).find(|&i| self.is_hit(i, lines)))
            }
            Action::Continue => Transition::End,
            Action::InvStepInto => to_or_start(from.checked_sub(1)),
            Action::InvStepOver => {
                if self.level_start(from) == from {
                    to_or_start(self.caller_neighbour(from, false))
                } else {
                    to_or_start(self.level_neighbour(from, false))
                }
            }
            Action::InvStepCall => {
                let start = self.level_start(from);
                if start != from {
                    Transition::To(start)
                } else {
                    let parent = self.activations[self.activation[from]].parent;
                    to_or_start(parent.map(|p| self.activations[p].states[0]))
                }
            }
            Action::InvBreakpoint(lines) => {
                to_or_start((0..from).rev().find(|&i| self.is_hit(i, lines)))
            }
        }
    }

    fn is_hit(&self, index: usize, lines: &std::collections::BTreeSet<u32>) -> bool {
        let state = &self.states[index];
        state.event == crate::state::Event::Line && lines.contains(&state.line)
    }

    /// What `action` at `from` leads to, with the stdout printed on the way.
    pub fn outcome(&self, from: usize, action: &Action) -> Outcome {
        match self.transition(from, action) {
            Transition::To(to) => {
                let mut state = self.states[to].clone();
                state.stdout = if to > from {
                    self.stdout_between(from, to)
                } else {
                    String::new()
                };
                Outcome::State { state }
            }
            Transition::Start => {
                let mut state = self.states[0].clone();
                state.stdout.clear();
                Outcome::Start { state }
            }
            Transition::End => {
                let mut stdout = self.stdout_between(from, self.states.len() - 1);
                stdout.push_str(&self.trailing_stdout);
                Outcome::Exit {
                    exit: self.exit.clone(),
                    stdout,
                }
            }
        }
    }

    /// Everything printed after state `from`, up to and including state `to`.
    pub fn stdout_between(&self, from: usize, to: usize) -> String {
        self.states[from + 1..=to]
            .iter()
            .map(|s| s.stdout.as_str())
            .collect()
    }
}
