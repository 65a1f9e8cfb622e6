//! Where the next state may stand: the frames a step can reach, the lines control flow
//! allows in them, and the header (`LINE DEPTH FUNCTION`) those admit.

use super::NextState;
use crate::language;
use crate::{Action, Event};
use std::collections::BTreeSet;

/// Where a step can land: the frames it can reach (`None`: any) and, in one of them,
/// the lines control flow allows.
pub struct Reach<'a> {
    pub frames: Option<&'a [(u32, Option<&'a str>)]>,
    pub flow: Option<&'a (u32, BTreeSet<u32>)>,
}

impl NextState<'_> {
    /// The frames a forward step can reach from the current state, as (depth,
    /// function if known); `None`: any. A frame is left only through its `return` or
    /// `exception` state, so from inside a frame a step stays in it (same depth, same
    /// function) or goes one deeper into a call; from a frame's end it goes to the
    /// caller (an exception may also be caught in the frame that raised it).
    pub fn frames(&self, event: &str) -> Option<Vec<(u32, Option<&str>)>> {
        let prev = self.prev;
        let d = prev.depth;
        let here = (d, Some(prev.function.as_str()));
        let caller = d
            .checked_sub(1)
            .map(|c| (c, prev.stack.last().map(|f| f.function.as_str())));
        let inside = matches!(prev.event, Event::Line | Event::Call);
        match self.action {
            Action::StepInto if event == "<|call|>" => Some(match prev.event {
                _ if inside => vec![(d + 1, None)],
                Event::Return => vec![(d, None)],
                _ => vec![(d, None), (d + 1, None)],
            }),
            Action::StepInto | Action::StepOver | Action::StepReturn => Some(match prev.event {
                Event::Return => caller.into_iter().collect(),
                Event::Exception => std::iter::once(here).chain(caller).collect(),
                _ => vec![here],
            }),
            // Backwards: a frame's call is entered from its caller's line (or, one
            // state back, right after a sibling call's end, as in `f(g(x))`); before
            // any other state of a frame comes the frame itself, or the end of a
            // call it made (one step back into it). A sibling call ends with its
            // `return` (after an `exception`, too), so a `line` or `call` one step
            // before a call is the caller's.
            Action::InvStepInto if prev.event == Event::Call => Some(match event {
                "<|return|>" | "<|exception|>" => vec![(d, None)],
                _ => caller.into_iter().collect(),
            }),
            Action::InvStepOver | Action::InvStepCall if prev.event == Event::Call => {
                Some(caller.into_iter().collect())
            }
            // One step back into a call made here lands on its end: a callee's last
            // state is its `return`.
            Action::InvStepInto => Some(match event {
                "<|return|>" => vec![(d + 1, None)],
                "<|exception|>" => vec![here, (d + 1, None)],
                _ => vec![here],
            }),
            Action::InvStepOver | Action::InvStepCall => Some(vec![here]),
            _ => None,
        }
    }

    /// Whether a state of this event can stand on any line at all.
    pub fn some_line(&self, event: &str) -> bool {
        let frames = self.frames(event);
        let flow = self.flow_lines(event);
        let reach = Reach {
            frames: frames.as_deref(),
            flow: flow.as_ref(),
        };
        (1..=self.program.lines.len()).any(|n| self.header_admits(event, &format!("{n} "), &reach))
    }

    /// The lines a state of this event may stand on, by the program's control flow,
    /// in the one frame where the step's flow is known (its depth); `None`: any line.
    /// Forward: after a line, the lines that can follow it (or, to end the frame, the
    /// same statement); a fresh call's first lines; back in a caller after a return,
    /// its calling statement or what follows it; a Step Into's `call`, the first lines
    /// of what the running statement can call (see `ProgramModel::callees_of`).
    /// Backward: the lines that can lead to the current one.
    pub fn flow_lines(&self, event: &str) -> Option<(u32, BTreeSet<u32>)> {
        let (prev, flow) = (self.prev, &self.program.flow);
        // Stepping into a call: a function the running statement may call.
        if event == "<|call|>" && *self.action == Action::StepInto {
            return match prev.event {
                Event::Line => Some((prev.depth + 1, self.program.callees_of(prev.line))),
                Event::Return => {
                    let caller = prev.stack.last()?;
                    Some((prev.depth, self.program.callees_of(caller.line)))
                }
                _ => None,
            };
        }
        let line_event = event == "<|line|>";
        if !line_event && event != "<|return|>" && event != "<|exception|>" {
            return None;
        }
        let here = prev.depth;
        let forward = self.action.is_forward_step();
        let backward = matches!(self.action, Action::InvStepInto | Action::InvStepOver);
        match prev.event {
            Event::Line | Event::Exception if forward => Some((
                here,
                if line_event {
                    let mut lines = flow.after(prev.line)?.clone();
                    // From a `for` line whose next item is known: into its block or
                    // out of it.
                    if let Some(continues) = self.bindings().and_then(|b| b.continues) {
                        let block = self.program.block(prev.line);
                        lines.retain(|line| block.contains(line) == continues);
                    }
                    lines
                } else {
                    let mut lines = flow.statement(prev.line);
                    // The frame returns right after this statement only if it can end it.
                    if event == "<|return|>" && !lines.iter().any(|&l| self.program.ends_frame(l)) {
                        lines.clear();
                    }
                    lines
                },
            )),
            Event::Call if forward && line_event => {
                let fresh = self.program.layout.calls.get(&prev.line) == Some(&prev.function)
                    || (prev.line == 1 && prev.function == "<module>");
                if fresh {
                    Some((here, flow.first(prev.line)?.clone()))
                } else {
                    // A generator resumes where it paused.
                    let mut lines = flow.after(prev.line)?.clone();
                    lines.extend(flow.statement(prev.line));
                    Some((here, lines))
                }
            }
            Event::Return if forward => {
                let caller = prev.stack.last()?;
                let mut lines = flow.statement(caller.line);
                if line_event {
                    lines.extend(flow.after(caller.line)?.iter().copied());
                }
                Some((here.checked_sub(1)?, lines))
            }
            // A frame returns from a line that can end it, or pauses at a `yield`.
            Event::Line | Event::Call
                if *self.action == Action::StepReturn && event == "<|return|>" =>
            {
                let program = self.program;
                let lines = (1..=program.lines.len() as u32)
                    .filter(|&l| program.layout.scope.get(l as usize - 1) == Some(&prev.function))
                    .filter(|&l| program.ends_frame(l))
                    .collect();
                Some((here, lines))
            }
            Event::Line if backward && line_event => Some((here, flow.before(prev.line))),
            Event::Return | Event::Exception if backward && line_event => {
                Some((here, flow.statement(prev.line)))
            }
            Event::Call if backward && line_event => {
                let caller = prev.stack.last()?;
                Some((here.checked_sub(1)?, flow.statement(caller.line)))
            }
            _ => None,
        }
    }

    /// Whether the header may go on with `piece` and then a character that begins with
    /// the bytes `begun` (a token ended inside it): one of the program's own
    /// characters, since a header holds nothing else.
    pub fn header_admits_begun(
        &self,
        text: &str,
        piece: &str,
        begun: &[u8],
        reach: &Reach,
    ) -> bool {
        let chars: BTreeSet<char> = self
            .program
            .lines
            .iter()
            .flat_map(|line| line.chars())
            .filter(|c| c.encode_utf8(&mut [0; 4]).as_bytes().starts_with(begun))
            .collect();
        chars
            .into_iter()
            .any(|c| self.header_admits(text, &format!("{piece}{c}"), reach))
    }

    /// A state's header is `LINE DEPTH FUNCTION` with a line of the program, a depth
    /// the action can reach and the function that line belongs to; the next line is
    /// that line's text, exactly.
    pub fn header_admits(&self, text: &str, piece: &str, reach: &Reach) -> bool {
        let frames = reach.frames;
        let at_start = text.starts_with(language::AT_START);
        let body = text.strip_prefix(language::AT_START).unwrap_or(text);
        let Some(split) = body.find("|>") else {
            return true;
        };
        let (event, after) = (&body[..split + 2], &body[split + 2..]);
        let candidate = format!("{after}{piece}");
        let (header, rest) = match candidate.split_once('\n') {
            Some((header, rest)) => (header, Some(rest)),
            None => (candidate.as_str(), None),
        };
        let fields: Vec<&str> = header.split(' ').collect();
        let digits =
            |f: &str| f.bytes().all(|b| b.is_ascii_digit()) && !(f.len() > 1 && f.starts_with('0'));
        // A state is never on a blank or comment line; a call stands on a `def`.
        let hit = |n: usize| at_start || self.breakpoints.is_none_or(|b| b.contains(&(n as u32)));
        let is_call = event == "<|call|>";
        let code_line = |n: usize| {
            let text = self.program.lines.get(n.wrapping_sub(1));
            // The module's frame starts on line 1, whatever is written there.
            (is_call && n == 1 && text.is_some())
                || text.is_some_and(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
                    && (!is_call || !self.program.layout.frames_of(n as u32, true).is_empty())
        };
        // The frames the step can reach, and the one each line runs in (the function,
        // class body or module it belongs to).
        let scope_of = |n: usize| self.program.layout.frames_of(n as u32, is_call);
        // A script's module frame is the only one at depth 0.
        let prev = self.prev;
        let script = (prev.depth == 0 && prev.function == "<module>")
            || prev.stack.first().is_some_and(|f| f.function == "<module>");
        let at_depth = |scope: &str, d: u32| !script || (d == 0) == (scope == "<module>");
        let flows_to = |n: usize, d: u32| {
            reach
                .flow
                .is_none_or(|(at, lines)| *at != d || lines.contains(&(n as u32)))
        };
        // Line `n` at depth `d` in frame `f` (any if `None`): control flows there and
        // some frame that runs the line fits (a line-1 `call` is the module's, never
        // at depth 1 of a script).
        let fits = |n: usize, d: u32, f: Option<&str>| {
            flows_to(n, d)
                && scope_of(n)
                    .iter()
                    .any(|scope| f.is_none_or(|f| f == *scope) && at_depth(scope, d))
        };
        let reachable = |n: usize, depth: Option<u32>| match frames {
            None => depth.is_none_or(|d| fits(n, d, None)),
            Some(fs) => fs
                .iter()
                .any(|&(d, f)| depth.is_none_or(|depth| depth == d) && fits(n, d, f)),
        };
        let line_ok = digits(fields[0])
            && if fields.len() > 1 {
                fields[0]
                    .parse::<usize>()
                    .is_ok_and(|n| code_line(n) && hit(n) && reachable(n, None))
            } else {
                (1..=self.program.lines.len()).any(|n| {
                    code_line(n)
                        && hit(n)
                        && reachable(n, None)
                        && n.to_string().starts_with(fields[0])
                })
            };
        let line: usize = fields[0].parse().unwrap_or(0);
        let depth_ok = fields.get(1).is_none_or(|f| {
            let whole = fields.len() > 2;
            // Reachable frames name their depths below; otherwise every depth from 1
            // up runs the same frames, so a prefix stands for them all.
            let fits = frames.is_some()
                || f.is_empty()
                || f.parse().is_ok_and(|d| reachable(line, Some(d)));
            digits(f)
                && f.len() <= 4
                && fits
                && frames.as_ref().is_none_or(|fs| {
                    fs.iter().any(|(d, _)| {
                        let text = d.to_string();
                        reachable(line, Some(*d))
                            && if whole {
                                text == *f
                            } else {
                                text.starts_with(f)
                            }
                    })
                })
        });
        // The function must be one that runs the line, at the depth written.
        let depth: Option<u32> = fields.get(1).and_then(|f| f.parse().ok());
        let scopes: Vec<&str> = scope_of(line)
            .into_iter()
            .filter(|scope| depth.is_none_or(|d| at_depth(scope, d)))
            .filter(|scope| {
                frames.as_ref().is_none_or(|fs| {
                    fs.iter().any(|(d, f)| {
                        depth.is_none_or(|depth| depth == *d) && f.is_none_or(|f| f == *scope)
                    })
                })
            })
            .collect();
        let name_ok = fields.get(2).is_none_or(|f| {
            let whole = rest.is_some();
            if whole {
                scopes.contains(f)
            } else {
                scopes.iter().any(|scope| scope.starts_with(f))
            }
        });
        let filled = fields
            .iter()
            .enumerate()
            .all(|(i, f)| !f.is_empty() || i + 1 == fields.len() && rest.is_none());
        if fields.len() > 3 || !(line_ok && depth_ok && name_ok && filled) {
            return false;
        }
        let Some(rest) = rest else { return true };
        if fields.len() < 3 {
            return false;
        }
        let number: usize = fields[0].parse().unwrap_or(1);
        let expected = format!("{}\n", self.program.lines[number - 1]);
        if rest.len() <= expected.len() {
            expected.starts_with(rest)
        } else {
            // Then the locals, a JSON object.
            rest.starts_with(&expected) && rest[expected.len()..].starts_with('{')
        }
    }
}
