//! Debugger actions: the moves of the Markov decision process over program states.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

/// A debugger action. Forward actions run the program on; inverse actions run it back.
/// The exact meaning of each is [`crate::tree::StateTree::transition`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "action", content = "lines", rename_all = "snake_case")]
pub enum Action {
    StepInto,
    StepOver,
    StepReturn,
    /// Run to the first later `line` state on any of these lines.
    Breakpoint(BTreeSet<u32>),
    Continue,
    InvStepInto,
    InvStepOver,
    InvStepCall,
    /// Run back to the last earlier `line` state on any of these lines.
    InvBreakpoint(BTreeSet<u32>),
}

impl Action {
    /// Every action kind, by name, in a fixed order (for tables and metrics).
    pub const NAMES: [&'static str; 9] = [
        "step_into",
        "step_over",
        "step_return",
        "breakpoint",
        "continue",
        "inv_step_into",
        "inv_step_over",
        "inv_step_call",
        "inv_breakpoint",
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Action::StepInto => "step_into",
            Action::StepOver => "step_over",
            Action::StepReturn => "step_return",
            Action::Breakpoint(_) => "breakpoint",
            Action::Continue => "continue",
            Action::InvStepInto => "inv_step_into",
            Action::InvStepOver => "inv_step_over",
            Action::InvStepCall => "inv_step_call",
            Action::InvBreakpoint(_) => "inv_breakpoint",
        }
    }

    pub fn is_inverse(&self) -> bool {
        self.name().starts_with("inv_")
    }

    /// Step Into or Step Over: one step on, in the run's order.
    pub fn is_forward_step(&self) -> bool {
        matches!(self, Action::StepInto | Action::StepOver)
    }

    /// A single step (as opposed to a jump): the next state is written as a diff of locals.
    pub fn is_single_step(&self) -> bool {
        matches!(
            self,
            Action::StepInto | Action::StepOver | Action::InvStepInto | Action::InvStepOver
        )
    }

    pub fn breakpoint_lines(&self) -> Option<&BTreeSet<u32>> {
        match self {
            Action::Breakpoint(lines) | Action::InvBreakpoint(lines) => Some(lines),
            _ => None,
        }
    }
}

impl fmt::Display for Action {
    /// `step_into`, ..., `breakpoint:3,7`: the form [`Action::from_str`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        if let Some(lines) = self.breakpoint_lines() {
            let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
            write!(f, ":{}", lines.join(","))?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("bad action {text:?}: {why}. Actions: step_into, step_over, step_return, breakpoint:L1,L2, continue, inv_step_into, inv_step_over, inv_step_call, inv_breakpoint:L1,L2")]
pub struct ParseActionError {
    pub text: String,
    pub why: String,
}

impl FromStr for Action {
    type Err = ParseActionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |why: &str| ParseActionError {
            text: text.to_string(),
            why: why.to_string(),
        };
        let (name, lines) = match text.trim().split_once([':', '=', ' ']) {
            Some((name, lines)) => (name.trim(), Some(lines.trim())),
            None => (text.trim(), None),
        };
        let parse_lines = || -> Result<BTreeSet<u32>, ParseActionError> {
            let lines = lines.ok_or_else(|| fail("a breakpoint needs lines"))?;
            let set = lines
                .split(',')
                .map(|l| l.trim().parse::<u32>().ok().filter(|&n| n > 0))
                .collect::<Option<BTreeSet<u32>>>()
                .ok_or_else(|| fail("lines must be positive integers separated by commas"))?;
            if set.is_empty() {
                return Err(fail("a breakpoint needs lines"));
            }
            Ok(set)
        };
        let simple = |action: Action| match lines {
            Some(_) => Err(fail("this action takes no lines")),
            None => Ok(action),
        };
        match name {
            "step_into" => simple(Action::StepInto),
            "step_over" => simple(Action::StepOver),
            "step_return" => simple(Action::StepReturn),
            "continue" => simple(Action::Continue),
            "inv_step_into" => simple(Action::InvStepInto),
            "inv_step_over" => simple(Action::InvStepOver),
            "inv_step_call" => simple(Action::InvStepCall),
            "breakpoint" => Ok(Action::Breakpoint(parse_lines()?)),
            "inv_breakpoint" => Ok(Action::InvBreakpoint(parse_lines()?)),
            _ => Err(fail("unknown action")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_round_trips_through_text() {
        let lines: BTreeSet<u32> = [3, 7].into_iter().collect();
        let all = [
            Action::StepInto,
            Action::StepOver,
            Action::StepReturn,
            Action::Breakpoint(lines.clone()),
            Action::Continue,
            Action::InvStepInto,
            Action::InvStepOver,
            Action::InvStepCall,
            Action::InvBreakpoint(lines),
        ];
        for action in all {
            assert_eq!(action.to_string().parse::<Action>(), Ok(action.clone()));
            assert!(Action::NAMES.contains(&action.name()));
        }
    }

    #[test]
    fn bad_actions_say_why() {
        assert!("jump"
            .parse::<Action>()
            .unwrap_err()
            .why
            .contains("unknown"));
        assert!("breakpoint".parse::<Action>().is_err());
        assert!("breakpoint:0".parse::<Action>().is_err());
        assert!("breakpoint:x".parse::<Action>().is_err());
        assert!("step_into:3".parse::<Action>().is_err());
        assert_eq!(
            "breakpoint 4, 2".parse::<Action>(),
            Ok(Action::Breakpoint([2, 4].into_iter().collect()))
        );
    }
}

/// Which exception states a forward run stops at (DAP's exception filters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExceptionStops {
    /// Where any exception is raised (not where it reaches a caller).
    pub raised: bool,
    /// Where the exception that ends the program was raised.
    pub uncaught: bool,
}

impl ExceptionStops {
    pub fn any(&self) -> bool {
        self.raised || self.uncaught
    }
}
