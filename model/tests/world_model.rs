//! The world model against expectations written by hand: for each program in
//! `tests/programs/`, the exact events of its run, how it ends, and where every forward
//! and inverse action leads from several states. Then the trace language round-trips
//! every outcome of every action from every state of every program.
//!
//! Event lines read `INDEX EVENT LINE FUNCTION@DEPTH | locals & globals -> value out="stdout"`.
//! Action lines read `FROM: into= over= ret= bp(L,..)= cont= iinto= iover= icall= ibp(L,..)=`
//! with a state index, `end` (the program's end) or `start` (nothing earlier).

use neural_model::language::{parse_outcome, render_episode, render_outcome, Locals};
use neural_model::{
    trace, Action, Event, Exit, Limits, Outcome, Program, State, Trace, Transition,
};
use std::path::PathBuf;

fn program_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/programs")
        .join(format!("{name}.py"))
}

fn record(name: &str, call: Option<&str>, limits: &Limits) -> Trace {
    let program = Program::load(&program_path(name), call.map(str::to_string)).unwrap();
    trace(&program, limits).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn summary(s: &State) -> String {
    let join = |vars: &neural_model::Vars| {
        vars.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut text = format!("{} {} {}@{}", s.event, s.line, s.function, s.depth);
    if !s.locals.is_empty() {
        text += &format!(" | {}", join(&s.locals));
    }
    if !s.globals.is_empty() {
        text += &format!(" & {}", join(&s.globals));
    }
    if let Some(value) = &s.value {
        text += &format!(" -> {value}");
    }
    if !s.stdout.is_empty() {
        text += &format!(" out={}", serde_json::Value::from(s.stdout.as_str()));
    }
    text
}

fn check_events(name: &str, trace: &Trace, expected: &str) {
    let expected: Vec<&str> = expected
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let actual: Vec<String> = trace
        .tree
        .states()
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{i} {}", summary(s)))
        .collect();
    for (i, (want, got)) in expected.iter().zip(&actual).enumerate() {
        assert_eq!(
            *want,
            got,
            "{name}: event {i}\nwhole trace:\n{}",
            actual.join("\n")
        );
    }
    assert_eq!(
        expected.len(),
        actual.len(),
        "{name}: event count\nwhole trace:\n{}",
        actual.join("\n")
    );
}

fn parse_target(text: &str) -> Transition {
    match text {
        "end" => Transition::End,
        "start" => Transition::Start,
        n => Transition::To(n.parse().unwrap_or_else(|_| panic!("bad target {n:?}"))),
    }
}

/// `bp(3,5)` -> Action::Breakpoint({3, 5}); `into` -> StepInto; ...
fn parse_check_action(key: &str) -> Action {
    let (name, lines) = match key.split_once('(') {
        Some((name, lines)) => (name, Some(lines.trim_end_matches(')'))),
        None => (key, None),
    };
    let full = match name {
        "into" => "step_into",
        "over" => "step_over",
        "ret" => "step_return",
        "bp" => "breakpoint",
        "cont" => "continue",
        "iinto" => "inv_step_into",
        "iover" => "inv_step_over",
        "icall" => "inv_step_call",
        "ibp" => "inv_breakpoint",
        other => panic!("unknown action key {other}"),
    };
    match lines {
        Some(lines) => format!("{full}:{lines}").parse().unwrap(),
        None => full.parse().unwrap(),
    }
}

fn check_actions(name: &str, trace: &Trace, checks: &[&str]) {
    for check in checks {
        let (from, rest) = check.split_once(':').unwrap();
        let from: usize = from.trim().parse().unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for item in rest.split_whitespace() {
            let (key, target) = item.split_once('=').unwrap();
            let action = parse_check_action(key);
            seen.insert(action.name());
            let got = trace.tree.transition(from, &action);
            assert_eq!(got, parse_target(target), "{name}: {action} from {from}");
        }
        assert_eq!(
            seen.len(),
            Action::NAMES.len(),
            "{name}: check {from} must try every action"
        );
    }
}

struct Case {
    name: &'static str,
    call: Option<&'static str>,
    limits: Limits,
    events: &'static str,
    exit: Exit,
    checks: &'static [&'static str],
}

fn case(
    name: &'static str,
    call: Option<&'static str>,
    events: &'static str,
    checks: &'static [&'static str],
) -> Case {
    Case {
        name,
        call,
        limits: Limits::default(),
        events,
        exit: Exit::Normal,
        checks,
    }
}

fn error(kind: &str, message: &str) -> Exit {
    Exit::Error {
        r#type: kind.into(),
        message: message.into(),
    }
}

fn cases() -> Vec<Case> {
    vec![
        case(
            "nested_calls",
            None,
            "0 call 1 <module>@0
             1 line 1 <module>@0
             2 line 4 <module>@0
             3 line 8 <module>@0
             4 line 11 <module>@0
             5 call 8 f@1 | x=3
             6 line 9 f@1 | x=3
             7 call 4 g@2 | y=3
             8 line 5 g@2 | y=3
             9 call 1 h@3 | z=4
             10 line 2 h@3 | z=4
             11 return 2 h@3 | z=4 -> 8
             12 line 6 g@2 | y=3, w=8
             13 return 6 g@2 | y=3, w=8 -> 8
             14 return 9 f@1 | x=3 -> 9
             15 return 11 <module>@0 | r=9 -> None",
            &[
                "6: into=7 over=14 ret=14 bp(5)=8 cont=end iinto=5 iover=5 icall=5 ibp(11)=4",
                "11: into=12 over=12 ret=13 bp(2)=end cont=end iinto=10 iover=10 icall=9 ibp(2)=10",
                "9: into=10 over=10 ret=11 bp(6)=12 cont=end iinto=8 iover=8 icall=7 ibp(1,4)=2",
                "0: into=1 over=1 ret=15 bp(11)=4 cont=end iinto=start iover=start icall=start ibp(1)=start",
                "15: into=end over=end ret=end bp(1)=end cont=end iinto=14 iover=4 icall=0 ibp(9)=6",
            ],
        ),
        case(
            "recursion",
            Some("fact(3)"),
            "0 call 1 fact@0 | n=3
             1 line 2 fact@0 | n=3
             2 line 4 fact@0 | n=3
             3 call 1 fact@1 | n=2
             4 line 2 fact@1 | n=2
             5 line 4 fact@1 | n=2
             6 call 1 fact@2 | n=1
             7 line 2 fact@2 | n=1
             8 line 3 fact@2 | n=1
             9 return 3 fact@2 | n=1 -> 1
             10 return 4 fact@1 | n=2 -> 2
             11 return 4 fact@0 | n=3 -> 6",
            &[
                "2: into=3 over=11 ret=11 bp(3)=8 cont=end iinto=1 iover=1 icall=0 ibp(2)=1",
                "9: into=10 over=10 ret=10 bp(2,3)=end cont=end iinto=8 iover=8 icall=6 ibp(4)=5",
                "6: into=7 over=7 ret=9 bp(4)=end cont=end iinto=5 iover=5 icall=3 ibp(4)=5",
            ],
        ),
        case(
            "loop_break_continue",
            Some("scan([1, -2, 12, 3])"),
            "0 call 1 scan@0 | xs=[1, -2, 12, 3]
             1 line 2 scan@0 | xs=[1, -2, 12, 3]
             2 line 3 scan@0 | xs=[1, -2, 12, 3], total=0
             3 line 4 scan@0 | xs=[1, -2, 12, 3], total=0, x=1
             4 line 6 scan@0 | xs=[1, -2, 12, 3], total=0, x=1
             5 line 8 scan@0 | xs=[1, -2, 12, 3], total=0, x=1
             6 line 3 scan@0 | xs=[1, -2, 12, 3], total=1, x=1
             7 line 4 scan@0 | xs=[1, -2, 12, 3], total=1, x=-2
             8 line 5 scan@0 | xs=[1, -2, 12, 3], total=1, x=-2
             9 line 3 scan@0 | xs=[1, -2, 12, 3], total=1, x=-2
             10 line 4 scan@0 | xs=[1, -2, 12, 3], total=1, x=12
             11 line 6 scan@0 | xs=[1, -2, 12, 3], total=1, x=12
             12 line 7 scan@0 | xs=[1, -2, 12, 3], total=1, x=12
             13 line 9 scan@0 | xs=[1, -2, 12, 3], total=1, x=12
             14 return 9 scan@0 | xs=[1, -2, 12, 3], total=1, x=12 -> 1",
            &[
                "5: into=6 over=6 ret=14 bp(3)=6 cont=end iinto=4 iover=4 icall=0 ibp(3)=2",
                "12: into=13 over=13 ret=14 bp(4)=end cont=end iinto=11 iover=11 icall=0 ibp(4,5)=10",
                "14: into=end over=end ret=end bp(3)=end cont=end iinto=13 iover=13 icall=0 ibp(8)=5",
            ],
        ),
        case(
            "for_else",
            Some("find([4, 5], 9)"),
            "0 call 1 find@0 | xs=[4, 5], target=9
             1 line 2 find@0 | xs=[4, 5], target=9
             2 line 3 find@0 | xs=[4, 5], target=9, i=0, x=4
             3 line 2 find@0 | xs=[4, 5], target=9, i=0, x=4
             4 line 3 find@0 | xs=[4, 5], target=9, i=1, x=5
             5 line 2 find@0 | xs=[4, 5], target=9, i=1, x=5
             6 line 6 find@0 | xs=[4, 5], target=9, i=1, x=5
             7 line 7 find@0 | xs=[4, 5], target=9, i=-1, x=5
             8 return 7 find@0 | xs=[4, 5], target=9, i=-1, x=5 -> -1",
            &[
                "6: into=7 over=7 ret=8 bp(7)=7 cont=end iinto=5 iover=5 icall=0 ibp(3)=4",
                "0: into=1 over=1 ret=8 bp(6)=6 cont=end iinto=start iover=start icall=start ibp(2)=start",
            ],
        ),
        case(
            "comprehension",
            Some("build(3)"),
            "0 call 4 build@0 | n=3
             1 line 5 build@0 | n=3
             2 call 1 sq@1 | v=0
             3 line 2 sq@1 | v=0
             4 return 2 sq@1 | v=0 -> 0
             5 call 1 sq@1 | v=1
             6 line 2 sq@1 | v=1
             7 return 2 sq@1 | v=1 -> 1
             8 call 1 sq@1 | v=2
             9 line 2 sq@1 | v=2
             10 return 2 sq@1 | v=2 -> 4
             11 line 6 build@0 | n=3, squares=[0, 1, 4]
             12 line 7 build@0 | n=3, squares=[0, 1, 4], index={0: 0, 1: 1, 4: 2}
             13 return 7 build@0 | n=3, squares=[0, 1, 4], index={0: 0, 1: 1, 4: 2} -> ([0, 1, 4], {0: 0, 1: 1, 4: 2})",
            &[
                "4: into=5 over=11 ret=13 bp(2)=6 cont=end iinto=3 iover=3 icall=2 ibp(5)=1",
                "5: into=6 over=6 ret=7 bp(6)=11 cont=end iinto=4 iover=1 icall=0 ibp(2)=3",
            ],
        ),
        case(
            "lambda_sort",
            Some(r#"by_len(["ccc", "a", "bb"])"#),
            "0 call 1 by_len@0 | words=['ccc', 'a', 'bb']
             1 line 2 by_len@0 | words=['ccc', 'a', 'bb']
             2 line 3 by_len@0 | words=['ccc', 'a', 'bb'], out=['a', 'bb', 'ccc']
             3 return 3 by_len@0 | words=['ccc', 'a', 'bb'], out=['a', 'bb', 'ccc'] -> ['a', 'bb', 'ccc']",
            &["1: into=2 over=2 ret=3 bp(3)=2 cont=end iinto=0 iover=0 icall=0 ibp(3)=start"],
        ),
        case(
            "generator",
            Some("total(2)"),
            "0 call 6 total@0 | n=2
             1 line 7 total@0 | n=2
             2 line 8 total@0 | n=2, s=0
             3 call 1 countdown@1 | n=2
             4 line 2 countdown@1 | n=2
             5 line 3 countdown@1 | n=2
             6 return 3 countdown@1 | n=2 -> 2
             7 line 9 total@0 | n=2, s=0, v=2
             8 line 8 total@0 | n=2, s=2, v=2
             9 call 3 countdown@1 | n=2
             10 line 4 countdown@1 | n=2
             11 line 2 countdown@1 | n=1
             12 line 3 countdown@1 | n=1
             13 return 3 countdown@1 | n=1 -> 1
             14 line 9 total@0 | n=2, s=2, v=1
             15 line 8 total@0 | n=2, s=3, v=1
             16 call 3 countdown@1 | n=1
             17 line 4 countdown@1 | n=1
             18 line 2 countdown@1 | n=0
             19 return 2 countdown@1 | n=0 -> None
             20 line 10 total@0 | n=2, s=3, v=1
             21 return 10 total@0 | n=2, s=3, v=1 -> 3",
            &[
                "6: into=7 over=7 ret=21 bp(8)=8 cont=end iinto=5 iover=5 icall=3 ibp(2)=4",
                "9: into=10 over=10 ret=13 bp(2)=11 cont=end iinto=8 iover=8 icall=0 ibp(9)=7",
            ],
        ),
        case(
            "class_methods",
            None,
            "0 call 1 <module>@0
             1 line 1 <module>@0
             2 call 1 Counter@1
             3 line 1 Counter@1
             4 line 2 Counter@1
             5 line 5 Counter@1
             6 return 5 Counter@1 -> None
             7 line 9 <module>@0
             8 call 2 __init__@1 | self=Counter(), start=5
             9 line 3 __init__@1 | self=Counter(), start=5
             10 return 3 __init__@1 | self=Counter(count=5), start=5 -> None
             11 line 10 <module>@0 | c=Counter(count=5)
             12 call 5 bump@1 | self=Counter(count=5), by=2 & c=Counter(count=5)
             13 line 6 bump@1 | self=Counter(count=5), by=2 & c=Counter(count=5)
             14 line 7 bump@1 | self=Counter(count=7), by=2 & c=Counter(count=7)
             15 return 7 bump@1 | self=Counter(count=7), by=2 & c=Counter(count=7) -> 7
             16 return 10 <module>@0 | c=Counter(count=7), n=7 -> None",
            &[
                "8: into=9 over=9 ret=10 bp(10)=11 cont=end iinto=7 iover=7 icall=0 ibp(1)=3",
                "14: into=15 over=15 ret=15 bp(6)=end cont=end iinto=13 iover=13 icall=12 ibp(9)=7",
            ],
        ),
        case(
            "exception_caught",
            Some("safe(-1)"),
            "0 call 6 safe@0 | x=-1
             1 line 7 safe@0 | x=-1
             2 line 8 safe@0 | x=-1
             3 call 1 check@1 | x=-1
             4 line 2 check@1 | x=-1
             5 line 3 check@1 | x=-1
             6 exception 3 check@1 | x=-1 -> ValueError('negative')
             7 exception 8 safe@0 | x=-1 -> ValueError('negative')
             8 line 9 safe@0 | x=-1
             9 line 10 safe@0 | x=-1, e=ValueError('negative')
             10 return 10 safe@0 | x=-1 -> 'negative'",
            &[
                "5: into=6 over=6 ret=6 bp(9)=8 cont=end iinto=4 iover=4 icall=3 ibp(7)=1",
                "6: into=7 over=7 ret=10 bp(10)=9 cont=end iinto=5 iover=5 icall=3 ibp(8)=2",
                "7: into=8 over=8 ret=10 bp(2)=end cont=end iinto=6 iover=2 icall=0 ibp(3)=5",
            ],
        ),
        Case {
            exit: error("KeyError", "'missing'"),
            ..case(
                "exception_uncaught",
                None,
                "0 call 1 <module>@0
                 1 line 1 <module>@0
                 2 line 4 <module>@0
                 3 line 8 <module>@0
                 4 call 4 outer@1
                 5 line 5 outer@1
                 6 line 6 outer@1 | data={'a': 1}
                 7 call 1 inner@2 | d={'a': 1}
                 8 line 2 inner@2 | d={'a': 1}
                 9 exception 2 inner@2 | d={'a': 1} -> KeyError('missing')
                 10 exception 6 outer@1 | data={'a': 1} -> KeyError('missing')
                 11 exception 8 <module>@0 -> KeyError('missing')",
                &[
                    "9: into=10 over=10 ret=10 bp(8)=end cont=end iinto=8 iover=8 icall=7 ibp(5)=5",
                    "11: into=end over=end ret=end bp(1)=end cont=end iinto=10 iover=3 icall=0 ibp(6)=6",
                    "4: into=5 over=5 ret=10 bp(2)=8 cont=end iinto=3 iover=3 icall=0 ibp(4)=2",
                ],
            )
        },
        case(
            "with_block",
            None,
            "0 call 1 <module>@0
             1 line 1 <module>@0
             2 call 1 Box@1
             3 line 1 Box@1
             4 line 2 Box@1
             5 line 5 Box@1
             6 return 5 Box@1 -> None
             7 line 8 <module>@0
             8 call 2 __enter__@1 | self=Box()
             9 line 3 __enter__@1 | self=Box()
             10 return 3 __enter__@1 | self=Box() -> 7
             11 line 9 <module>@0 | b=7
             12 line 8 <module>@0 | b=7, c=8
             13 call 5 __exit__@1 | self=Box(), kind=None, value=None, tb=None & b=7, c=8
             14 line 6 __exit__@1 | self=Box(), kind=None, value=None, tb=None & b=7, c=8
             15 return 6 __exit__@1 | self=Box(), kind=None, value=None, tb=None & b=7, c=8 -> False
             16 line 10 <module>@0 | b=7, c=8
             17 return 10 <module>@0 | b=7, c=8, d=8 -> None",
            &[
                "11: into=12 over=12 ret=17 bp(10)=16 cont=end iinto=10 iover=7 icall=0 ibp(8)=7",
                "10: into=11 over=11 ret=17 bp(6)=14 cont=end iinto=9 iover=9 icall=8 ibp(1)=3",
            ],
        ),
        case(
            "globals_mutated",
            None,
            "0 call 1 <module>@0
             1 line 1 <module>@0
             2 line 3 <module>@0 | count=0
             3 line 7 <module>@0 | count=0
             4 call 3 bump@1 & count=0
             5 line 5 bump@1 & count=0
             6 return 5 bump@1 & count=1 -> None
             7 line 8 <module>@0 | count=1
             8 call 3 bump@1 & count=1
             9 line 5 bump@1 & count=1
             10 return 5 bump@1 & count=2 -> None
             11 return 8 <module>@0 | count=2 -> None",
            &[
                "5: into=6 over=6 ret=6 bp(5)=9 cont=end iinto=4 iover=4 icall=4 ibp(7)=3",
                "7: into=8 over=11 ret=11 bp(3)=end cont=end iinto=6 iover=3 icall=0 ibp(5)=5",
            ],
        ),
        case(
            "two_calls_one_line",
            None,
            "0 call 1 <module>@0
             1 line 1 <module>@0
             2 line 4 <module>@0
             3 line 7 <module>@0
             4 call 1 f@1 | a=1
             5 line 2 f@1 | a=1
             6 return 2 f@1 | a=1 -> 2
             7 call 4 g@1 | b=2
             8 line 5 g@1 | b=2
             9 return 5 g@1 | b=2 -> 4
             10 line 8 <module>@0 | x=6
             11 return 8 <module>@0 | x=6, y=6 -> None",
            &[
                "6: into=7 over=10 ret=11 bp(5)=8 cont=end iinto=5 iover=5 icall=4 ibp(7)=3",
                "7: into=8 over=8 ret=9 bp(8)=10 cont=end iinto=6 iover=3 icall=0 ibp(2)=5",
            ],
        ),
        Case {
            exit: error("RecursionError", "maximum recursion depth exceeded"),
            limits: Limits { max_depth: 5, ..Limits::default() },
            ..case(
                "deep_recursion",
                None,
                "0 call 1 <module>@0
                 1 line 1 <module>@0
                 2 line 4 <module>@0
                 3 call 1 down@1 | n=0
                 4 line 2 down@1 | n=0
                 5 call 1 down@2 | n=1
                 6 line 2 down@2 | n=1
                 7 call 1 down@3 | n=2
                 8 line 2 down@3 | n=2
                 9 call 1 down@4 | n=3
                 10 line 2 down@4 | n=3
                 11 exception 2 down@4 | n=3 -> RecursionError('maximum recursion depth exceeded')
                 12 exception 2 down@3 | n=2 -> RecursionError('maximum recursion depth exceeded')
                 13 exception 2 down@2 | n=1 -> RecursionError('maximum recursion depth exceeded')
                 14 exception 2 down@1 | n=0 -> RecursionError('maximum recursion depth exceeded')
                 15 exception 4 <module>@0 -> RecursionError('maximum recursion depth exceeded')",
                &[
                    "10: into=11 over=11 ret=11 bp(4)=end cont=end iinto=9 iover=9 icall=9 ibp(2)=8",
                    "11: into=12 over=12 ret=12 bp(2)=end cont=end iinto=10 iover=10 icall=9 ibp(4)=2",
                ],
            )
        },
        case(
            "stdout_lines",
            None,
            r#"0 call 1 <module>@0
             1 line 1 <module>@0
             2 line 2 <module>@0 | i=0
             3 line 1 <module>@0 | i=0 out="i = 0\n"
             4 line 2 <module>@0 | i=1
             5 line 1 <module>@0 | i=1 out="i = 1\n"
             6 line 3 <module>@0 | i=1
             7 return 3 <module>@0 | i=1 -> None out="done\n""#,
            &["2: into=3 over=3 ret=7 bp(3)=6 cont=end iinto=1 iover=1 icall=0 ibp(2)=start"],
        ),
        case(
            "while_loop",
            Some("halve(5)"),
            "0 call 1 halve@0 | n=5
             1 line 2 halve@0 | n=5
             2 line 3 halve@0 | n=5, steps=0
             3 line 4 halve@0 | n=5, steps=0
             4 line 5 halve@0 | n=2, steps=0
             5 line 3 halve@0 | n=2, steps=1
             6 line 4 halve@0 | n=2, steps=1
             7 line 5 halve@0 | n=1, steps=1
             8 line 3 halve@0 | n=1, steps=2
             9 line 6 halve@0 | n=1, steps=2
             10 return 6 halve@0 | n=1, steps=2 -> 2",
            &[
                "4: into=5 over=5 ret=10 bp(3)=5 cont=end iinto=3 iover=3 icall=0 ibp(3)=2",
                "9: into=10 over=10 ret=10 bp(4)=end cont=end iinto=8 iover=8 icall=0 ibp(4,5)=7",
            ],
        ),
        case(
            "early_return",
            None,
            "0 call 1 <module>@0
             1 line 1 <module>@0
             2 line 8 <module>@0
             3 call 1 sign@1 | x=-4
             4 line 2 sign@1 | x=-4
             5 line 4 sign@1 | x=-4
             6 line 5 sign@1 | x=-4
             7 return 5 sign@1 | x=-4 -> -1
             8 line 9 <module>@0 | a=-1
             9 call 1 sign@1 | x=0 & a=-1
             10 line 2 sign@1 | x=0 & a=-1
             11 line 4 sign@1 | x=0 & a=-1
             12 line 6 sign@1 | x=0 & a=-1
             13 return 6 sign@1 | x=0 & a=-1 -> 0
             14 return 9 <module>@0 | a=-1, b=0 -> None",
            &[
                "7: into=8 over=8 ret=14 bp(2)=10 cont=end iinto=6 iover=6 icall=3 ibp(4)=5",
                "8: into=9 over=14 ret=14 bp(6)=12 cont=end iinto=7 iover=2 icall=0 ibp(2,4)=5",
            ],
        ),
        case(
            "string_building",
            Some(r#"join(["a", "b"])"#),
            "0 call 1 join@0 | parts=['a', 'b']
             1 line 2 join@0 | parts=['a', 'b']
             2 line 3 join@0 | parts=['a', 'b'], s=''
             3 line 4 join@0 | parts=['a', 'b'], s='', p='a'
             4 line 3 join@0 | parts=['a', 'b'], s='A', p='a'
             5 line 4 join@0 | parts=['a', 'b'], s='A', p='b'
             6 line 3 join@0 | parts=['a', 'b'], s='AB', p='b'
             7 line 5 join@0 | parts=['a', 'b'], s='AB', p='b'
             8 return 5 join@0 | parts=['a', 'b'], s='AB', p='b' -> 'AB'",
            &["3: into=4 over=4 ret=8 bp(5)=7 cont=end iinto=2 iover=2 icall=0 ibp(4)=start"],
        ),
        case(
            "dict_ops",
            Some(r#"tally(["x", "y", "x"])"#),
            "0 call 1 tally@0 | words=['x', 'y', 'x']
             1 line 2 tally@0 | words=['x', 'y', 'x']
             2 line 3 tally@0 | words=['x', 'y', 'x'], counts={}
             3 line 4 tally@0 | words=['x', 'y', 'x'], counts={}, w='x'
             4 line 3 tally@0 | words=['x', 'y', 'x'], counts={'x': 1}, w='x'
             5 line 4 tally@0 | words=['x', 'y', 'x'], counts={'x': 1}, w='y'
             6 line 3 tally@0 | words=['x', 'y', 'x'], counts={'x': 1, 'y': 1}, w='y'
             7 line 4 tally@0 | words=['x', 'y', 'x'], counts={'x': 1, 'y': 1}, w='x'
             8 line 3 tally@0 | words=['x', 'y', 'x'], counts={'x': 2, 'y': 1}, w='x'
             9 line 5 tally@0 | words=['x', 'y', 'x'], counts={'x': 2, 'y': 1}, w='x'
             10 return 5 tally@0 | words=['x', 'y', 'x'], counts={'x': 2, 'y': 1}, w='x' -> {'x': 2, 'y': 1}",
            &["8: into=9 over=9 ret=10 bp(4)=end cont=end iinto=7 iover=7 icall=0 ibp(4)=7"],
        ),
        case(
            "closure",
            Some("use()"),
            "0 call 6 use@0
             1 line 7 use@0
             2 call 1 make_adder@1 | k=2
             3 line 2 make_adder@1 | k=2
             4 line 4 make_adder@1 | k=2
             5 return 4 make_adder@1 | k=2 -> <function make_adder.<locals>.add>
             6 line 8 use@0 | add2=<function make_adder.<locals>.add>
             7 call 2 add@1 | v=5, k=2
             8 line 3 add@1 | v=5, k=2
             9 return 3 add@1 | v=5, k=2 -> 7
             10 return 8 use@0 | add2=<function make_adder.<locals>.add> -> 7",
            &[
                "5: into=6 over=6 ret=10 bp(3)=8 cont=end iinto=4 iover=4 icall=2 ibp(7)=1",
                "7: into=8 over=8 ret=9 bp(8)=end cont=end iinto=6 iover=6 icall=0 ibp(2)=3",
            ],
        ),
        case(
            "try_finally",
            Some("guarded(0)"),
            "0 call 1 guarded@0 | x=0
             1 line 2 guarded@0 | x=0
             2 line 3 guarded@0 | x=0, log=[]
             3 line 4 guarded@0 | x=0, log=[]
             4 exception 4 guarded@0 | x=0, log=[] -> ZeroDivisionError('integer division or modulo by zero')
             5 line 5 guarded@0 | x=0, log=[]
             6 line 6 guarded@0 | x=0, log=[]
             7 line 8 guarded@0 | x=0, log=['div0']
             8 line 9 guarded@0 | x=0, log=['div0', 'end']
             9 return 9 guarded@0 | x=0, log=['div0', 'end'] -> ['div0', 'end']",
            &["4: into=5 over=5 ret=9 bp(8)=7 cont=end iinto=3 iover=3 icall=0 ibp(3)=2"],
        ),
        case(
            "mutual_recursion",
            Some("is_even(2)"),
            "0 call 1 is_even@0 | n=2
             1 line 2 is_even@0 | n=2
             2 line 4 is_even@0 | n=2
             3 call 6 is_odd@1 | n=1
             4 line 7 is_odd@1 | n=1
             5 line 9 is_odd@1 | n=1
             6 call 1 is_even@2 | n=0
             7 line 2 is_even@2 | n=0
             8 line 3 is_even@2 | n=0
             9 return 3 is_even@2 | n=0 -> True
             10 return 9 is_odd@1 | n=1 -> True
             11 return 4 is_even@0 | n=2 -> True",
            &[
                "5: into=6 over=10 ret=10 bp(3)=8 cont=end iinto=4 iover=4 icall=3 ibp(2)=1",
                "10: into=11 over=11 ret=11 bp(9)=end cont=end iinto=9 iover=5 icall=3 ibp(7)=4",
            ],
        ),
        case(
            "object_repr",
            Some("make()"),
            "0 call 6 make@0
             1 line 7 make@0
             2 call 2 __init__@1 | self=Point(), x=1, y=[2]
             3 line 3 __init__@1 | self=Point(), x=1, y=[2]
             4 line 4 __init__@1 | self=Point(x=1), x=1, y=[2]
             5 return 4 __init__@1 | self=Point(x=1, y=[2]), x=1, y=[2] -> None
             6 line 8 make@0 | p=Point(x=1, y=[2])
             7 line 9 make@0 | p=Point(x=1, y=[2]), loop=[Point(x=1, y=[2])]
             8 line 10 make@0 | p=Point(x=1, y=[2]), loop=[Point(x=1, y=[2]), [...]]
             9 return 10 make@0 | p=Point(x=1, y=[2]), loop=[Point(x=1, y=[2]), [...]] -> [Point(x=1, y=[2]), [...]]",
            &["6: into=7 over=7 ret=9 bp(3)=end cont=end iinto=5 iover=1 icall=0 ibp(4)=4"],
        ),
        case(
            "module_constants",
            Some("remember(8)"),
            "0 call 4 remember@0 | v=8 & LIMIT=3, SEEN=[]
             1 line 5 remember@0 | v=8 & LIMIT=3, SEEN=[]
             2 line 6 remember@0 | v=8 & LIMIT=3, SEEN=[]
             3 line 7 remember@0 | v=8 & LIMIT=3, SEEN=[8]
             4 return 7 remember@0 | v=8 & LIMIT=3, SEEN=[8] -> 1",
            &["2: into=3 over=3 ret=4 bp(5)=end cont=end iinto=1 iover=1 icall=0 ibp(5)=1"],
        ),
    ]
}

#[test]
fn every_program_runs_exactly_as_written_by_hand() {
    for case in cases() {
        let trace = record(case.name, case.call, &case.limits);
        check_events(case.name, &trace, case.events);
        assert_eq!(trace.tree.exit(), &case.exit, "{}: exit", case.name);
        check_actions(case.name, &trace, case.checks);
    }
}

#[test]
fn a_loop_that_never_ends_is_cut_at_the_event_budget() {
    let limits = Limits {
        max_events: 20,
        ..Limits::default()
    };
    let trace = record("nonterminating", None, &limits);
    let mut expected = vec![
        "0 call 1 <module>@0".to_string(),
        "1 line 1 <module>@0".to_string(),
        "2 line 2 <module>@0 | n=0".to_string(),
    ];
    // Python 3.11 reports the `while True:` line on every iteration, then the body.
    expected
        .extend((3..20).map(|i| format!("{i} line {} <module>@0 | n={}", 2 + i % 2, (i - 2) / 2)));
    check_events("nonterminating", &trace, &expected.join("\n"));
    assert_eq!(
        trace.tree.exit(),
        &Exit::Never {
            reason: "more than 20 events".into()
        }
    );
    check_actions(
        "nonterminating",
        &trace,
        &[
            "3: into=4 over=4 ret=end bp(2)=4 cont=end iinto=2 iover=2 icall=0 ibp(2)=2",
            "19: into=end over=end ret=end bp(3)=end cont=end iinto=18 iover=18 icall=0 ibp(3)=17",
            "18: into=19 over=19 ret=end bp(2)=end cont=end iinto=17 iover=17 icall=0 ibp(1)=1",
        ],
    );
}

#[test]
fn a_program_that_sleeps_past_the_time_budget_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sleepy.py");
    std::fs::write(&path, "import time\nx = 1\ntime.sleep(60)\n").unwrap();
    let limits = Limits {
        max_seconds: 0.5,
        ..Limits::default()
    };
    let started = std::time::Instant::now();
    let trace = trace(&Program::load(&path, None).unwrap(), &limits).unwrap();
    assert!(
        matches!(trace.tree.exit(), Exit::Never { .. }),
        "{:?}",
        trace.tree.exit()
    );
    assert_eq!(trace.tree.state(trace.tree.len() - 1).line, 3);
    // Generous: the point is that a 60 s sleep does not hold the tracer.
    assert!(started.elapsed().as_secs() < 30);
}

#[test]
fn outcomes_carry_the_stdout_printed_on_the_way() {
    let trace = record("stdout_lines", None, &Limits::default());
    let jump = trace.tree.outcome(2, &"breakpoint:3".parse().unwrap());
    assert_eq!(jump.state().unwrap().stdout, "i = 0\ni = 1\n");
    match trace.tree.outcome(2, &Action::Continue) {
        Outcome::Exit { exit, stdout } => {
            assert_eq!(exit, Exit::Normal);
            assert_eq!(stdout, "i = 0\ni = 1\ndone\n");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        trace
            .tree
            .outcome(5, &Action::InvStepInto)
            .state()
            .unwrap()
            .stdout,
        ""
    );
}

#[test]
fn long_reprs_are_cut_with_a_visible_marker() {
    let trace = record("long_repr", Some("grow(100)"), &Limits::default());
    let xs = &trace.tree.state(2).locals["xs"];
    assert!(xs.starts_with("[0, 1, 2, "), "{xs}");
    assert!(xs.ends_with('…'), "{xs}");
    assert_eq!(xs.chars().count(), Limits::default().max_repr + 1);
    assert_eq!(trace.tree.state(3).value.as_deref(), Some("100"));
}

#[test]
fn reprs_are_the_same_from_run_to_run() {
    let a = record("object_repr", Some("make()"), &Limits::default());
    let b = record("object_repr", Some("make()"), &Limits::default());
    assert_eq!(a.tree, b.tree);
    assert!(a
        .tree
        .states()
        .iter()
        .all(|s| s.locals.values().all(|v| !v.contains(" at 0x"))));
}

#[test]
fn the_call_stack_names_every_caller_with_its_line() {
    let trace = record("nested_calls", None, &Limits::default());
    let stack: Vec<(String, u32)> = trace
        .tree
        .state(10)
        .stack
        .iter()
        .map(|f| (f.function.clone(), f.line))
        .collect();
    assert_eq!(
        stack,
        vec![("<module>".into(), 11), ("f".into(), 9), ("g".into(), 5)]
    );
}

fn all_actions(lines: &[u32]) -> Vec<Action> {
    let set: std::collections::BTreeSet<u32> = lines.iter().copied().collect();
    vec![
        Action::StepInto,
        Action::StepOver,
        Action::StepReturn,
        Action::Breakpoint(set.clone()),
        Action::Continue,
        Action::InvStepInto,
        Action::InvStepOver,
        Action::InvStepCall,
        Action::InvBreakpoint(set),
    ]
}

#[test]
fn the_trace_language_round_trips_every_outcome_of_every_program() {
    let mut runs: Vec<Trace> = cases()
        .iter()
        .map(|c| record(c.name, c.call, &c.limits))
        .collect();
    runs.push(record(
        "nonterminating",
        None,
        &Limits {
            max_events: 20,
            ..Limits::default()
        },
    ));
    let mut seen_events = std::collections::BTreeSet::new();
    let mut seen_outcomes = std::collections::BTreeSet::new();
    for run in &runs {
        let lines: Vec<u32> = run
            .tree
            .states()
            .iter()
            .map(|s| s.line)
            .step_by(3)
            .collect();
        for from in 0..run.tree.len() {
            let prev = run.tree.state(from);
            for action in all_actions(&lines) {
                let outcome = run.tree.outcome(from, &action);
                let text = render_outcome(Some(prev), Some(&action), &outcome);
                let mut parsed = parse_outcome(&text, Some(prev)).unwrap_or_else(|e| {
                    panic!(
                        "{}: {action} from {from}: {e}\n{text}",
                        run.program.path.display()
                    )
                });
                if let (Some(state), Some(truth)) = (parsed.state().cloned(), outcome.state()) {
                    seen_events.insert(state.event);
                    if action.is_single_step() && !action.is_inverse() {
                        assert_eq!(
                            state.stack, truth.stack,
                            "forward steps derive the stack exactly"
                        );
                    }
                    // The stack is not written; the rest must come back exactly.
                    let fixed = State {
                        stack: truth.stack.clone(),
                        ..state
                    };
                    parsed = match parsed {
                        Outcome::Start { .. } => Outcome::Start { state: fixed },
                        _ => Outcome::State { state: fixed },
                    };
                }
                seen_outcomes.insert(match &outcome {
                    Outcome::State { .. } => "state".to_string(),
                    Outcome::Start { .. } => "start".to_string(),
                    Outcome::Exit { exit, .. } => exit.kind().to_string(),
                });
                assert_eq!(parsed, outcome, "{action} from {from}:\n{text}");
            }
        }
    }
    assert_eq!(
        seen_events.len(),
        Event::ALL.len(),
        "every event kind round-trips"
    );
    assert_eq!(
        seen_outcomes.len(),
        5,
        "states, starts and every kind of exit: {seen_outcomes:?}"
    );
}

#[test]
fn whole_episodes_render_with_their_targets() {
    let trace = record("recursion", Some("fact(3)"), &Limits::default());
    let actions = [
        Action::StepInto,
        Action::StepOver,
        Action::StepInto,
        Action::StepReturn,
        Action::Continue,
    ];
    let mut at = 0;
    let mut steps = Vec::new();
    for action in actions {
        let outcome = trace.tree.outcome(at, &action);
        if let Transition::To(next) = trace.tree.transition(at, &action) {
            at = next;
        }
        steps.push((action, outcome));
    }
    let (text, targets) = render_episode(
        &trace.program.source,
        Some("fact(3)"),
        trace.tree.state(0),
        &steps,
        Locals::Diff,
    );
    assert!(text.starts_with("<|source|>\n1 def fact(n):\n"));
    assert_eq!(targets.len(), steps.len());
    let mut prev = trace.tree.state(0).clone();
    for (range, (_, outcome)) in targets.iter().zip(&steps) {
        let parsed = parse_outcome(&text[range.clone()], Some(&prev)).unwrap();
        assert_eq!(
            parsed.state().map(|s| (s.event, s.line)),
            outcome.state().map(|s| (s.event, s.line))
        );
        if let Some(state) = outcome.state() {
            prev = state.clone();
        }
    }
    assert!(text.ends_with("<|exit_normal|><|action_sep|>"), "{text}");
}

#[test]
fn a_program_gets_its_arguments_and_working_directory() {
    let dir = std::env::temp_dir().join(format!("neural-args-{}", std::process::id()));
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("data.txt"), "from cwd").unwrap();
    let path = dir.join("prog.py");
    std::fs::write(
        &path,
        "import sys\nprint(sys.argv[1:])\nprint(open('data.txt').read())\n",
    )
    .unwrap();
    let mut program = Program::load(&path, None).unwrap();
    program.args = vec!["-v".into(), "two words".into()];
    program.cwd = Some(work.clone());
    let run = trace(&program, &Limits::default()).unwrap();
    let printed = match run.tree.outcome(0, &Action::Continue) {
        Outcome::Exit { stdout, .. } => stdout,
        other => panic!("{other:?}"),
    };
    assert_eq!(printed, "['-v', 'two words']\nfrom cwd\n");

    program.cwd = Some(dir.join("missing"));
    let error = trace(&program, &Limits::default()).unwrap_err().to_string();
    assert!(error.contains("cannot run in"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn programs_that_cannot_run_fail_clearly() {
    use neural_model::TraceError;
    let limits = Limits::default();
    let syntax = trace(
        &Program::load(&program_path("syntax_error"), None).unwrap(),
        &limits,
    )
    .unwrap_err();
    assert!(
        matches!(&syntax, TraceError::Program { kind, line: Some(1), .. } if kind == "SyntaxError"),
        "{syntax}"
    );
    let bad_call = Program::load(&program_path("recursion"), Some("fact(".into())).unwrap();
    let error = trace(&bad_call, &limits).unwrap_err().to_string();
    assert!(
        error.contains("SyntaxError") && error.contains("call expression"),
        "{error}"
    );

    let missing = Program::load(&program_path("no_such_program"), None).unwrap_err();
    assert!(
        matches!(missing, TraceError::Unreadable { .. }),
        "{missing}"
    );

    let dir = tempfile::tempdir().unwrap();
    let latin1 = dir.path().join("latin1.py");
    std::fs::write(&latin1, b"s = 'caf\xe9'\n").unwrap();
    let error = Program::load(&latin1, None).unwrap_err();
    assert!(
        matches!(error, TraceError::NotUtf8 { offset: 8, .. }),
        "{error}"
    );
}

#[test]
fn the_entry_state_is_worked_out_without_python() {
    for case in cases().iter().filter(|c| c.call.is_some()) {
        let trace = record(case.name, case.call, &case.limits);
        let entry = neural_model::entry::entry_state(&trace.program.source, case.call).unwrap();
        assert_eq!(&entry, trace.tree.state(0), "{}", case.name);
    }
    let trace = record("nested_calls", None, &Limits::default());
    let entry = neural_model::entry::entry_state(&trace.program.source, None).unwrap();
    assert_eq!(
        &entry,
        trace.tree.state(1),
        "a script starts at its first line"
    );
}
