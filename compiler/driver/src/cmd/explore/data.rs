//! What the explorer page shows, gathered as JSON. The shape (read by
//! `page.js`):
//!
//! ```text
//! { title, entry, env, agree, notes: [text],
//!   source: { text, written },          // readable syntax with comments; the file as written
//!   engines: [{ name, result, run_ms, compile_ms, code_bytes }],
//!   steps: [{ name, ms, changed, functions: [FUNCTION] }],   // front end, then the eight passes
//!   machine: [{ name, address, bytes, lines: [[offset, hex, text, key]] }],
//!   traces: [{ kind, name, anchor, start, entries, iterations, function: FUNCTION,
//!              machine, exits: [{ key, label, to_driver, linked, bridge, no_bridge }] }],
//!   hot: { function, header, blocks: [block index], trace: index | null, note } }
//! FUNCTION = { name, kind, ir: [[text, key, source line]], svg | null, diff: [[tag, text]] | null, note }
//! ```
//!
//! A *key* names what a line shows inside its function: `b3` a block's
//! header, `i5` an instruction (phis included), `t3` block 3's terminator;
//! machine code lines carry the key of the IR they came from
//! (`flowc_codegen::code_map`). Instruction numbers are arena indices,
//! which passes keep, so a key means the same instruction in every step.
//! Source lines are 1-based lines of `source.text` (0: none).

use std::collections::HashMap;

use flowc_codegen::{FunctionCode, IrPlace};
use flowc_ir::{Function, InstKind, Module};
use flowc_lang::syntax::comments::Comments;
use flowc_lang::syntax::readable_print::{print_mapped, StmtLine};
use flowc_lang::{Program, Symbol, Value};
use flowc_passes::{Context, Pass, PIPELINE};

use super::json::Json;
use crate::cmd::compare::{self, Runs};

/// Where the page stops drawing and listing, so large programs stay
/// usable.
pub struct Limits {
    /// CFGs of functions with more blocks are not drawn.
    pub max_blocks: usize,
    /// IR lines shown per function and step.
    pub max_ir_lines: usize,
    /// Machine code lines shown per function.
    pub max_machine_lines: usize,
    /// Pieces of JIT code shown.
    pub max_traces: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { max_blocks: 300, max_ir_lines: 5000, max_machine_lines: 20_000, max_traces: 50 }
    }
}

/// The program as given.
pub struct Input<'a> {
    pub name: &'a str,
    pub written: &'a str,
    pub program: &'a Program,
    pub comments: &'a Comments,
    pub label: Symbol,
    pub env: &'a [(Symbol, Value)],
}

/// Source lines of statements: (function, block, statement) to line.
type LineMap = HashMap<(Option<Symbol>, Symbol, u32), u32>;

fn key(place: IrPlace) -> String {
    match place {
        IrPlace::Inst(i) => format!("i{}", i.into_raw().into_u32()),
        IrPlace::Term(b) => format!("t{}", b.into_raw().into_u32()),
    }
}

/// The lines of `f` as printed (`text`), each with its key and source
/// line.
fn ir_lines(f: &Function, text: &str, lines: &LineMap, limits: &Limits, notes: &mut Vec<String>) -> Json {
    let printed: Vec<&str> = text.lines().collect();
    let src = |site: Option<flowc_ir::Site>| -> u32 {
        site.and_then(|s| lines.get(&(s.function, s.block, s.statement)).copied()).unwrap_or(0)
    };
    // What each printed line shows, in print order (`print::function`):
    // the header, per block its header, instructions and terminator, then
    // resume records and the closing brace.
    let function = (f.kind == flowc_ir::FunctionKind::Function).then_some(f.name);
    let mut keys: Vec<(String, u32)> = vec![(String::new(), 0)];
    // The instruction of each line that shows one (checked in debug builds).
    let mut shown: Vec<Option<flowc_ir::InstId>> = vec![None];
    for &b in &f.layout {
        let block_src = f.blocks[b].name.and_then(|n| lines.get(&(function, n, 0)).copied()).unwrap_or(0);
        keys.push((format!("b{}", b.into_raw().into_u32()), block_src));
        shown.push(None);
        for i in f.block_insts(b) {
            // A phi is no statement: it shows where its block starts.
            let line = match src(f.sites.inst(i)) {
                0 if f.blocks[b].phis.contains(&i) => block_src,
                line => line,
            };
            keys.push((key(IrPlace::Inst(i)), line));
            shown.push(Some(i));
        }
        keys.push((key(IrPlace::Term(b)), src(f.sites.term(b))));
        shown.push(None);
    }
    let mut out = Vec::new();
    for (k, line) in printed.iter().enumerate() {
        if k == limits.max_ir_lines {
            notes.push(format!(
                "{}: IR cut at {} of {} lines (flowc opt --dump-after all prints it whole)",
                f.name,
                limits.max_ir_lines,
                printed.len()
            ));
            break;
        }
        let (key, src) = keys.get(k).cloned().unwrap_or_default();
        debug_assert!(
            shown.get(k).copied().flatten().is_none_or(|i| line.trim() == flowc_ir::print::inst_to_string(f, i)),
            "the keys follow print::function's order: {line} is not {key}"
        );
        out.push(Json::Arr(vec![Json::from(*line), Json::from(key), Json::from(src)]));
    }
    Json::Arr(out)
}

/// `f` as one step shows it, whether it changed, and its text; `before` is
/// the text of the same function in the step before (for the diff).
fn function(f: &Function, before: Option<&str>, lines: &LineMap, limits: &Limits) -> (Json, bool, String) {
    let mut notes = Vec::new();
    let now = flowc_ir::print::function(f);
    let ir = ir_lines(f, &now, lines, limits, &mut notes);
    let svg = if f.layout.len() <= limits.max_blocks {
        Json::from(flowc_ir::draw::svg(f))
    } else {
        notes.push(format!(
            "{}: CFG not drawn: {} blocks, more than --max-blocks {}",
            f.name,
            f.layout.len(),
            limits.max_blocks
        ));
        Json::Null
    };
    let (diff, changed) = match before {
        Some(then) if then == now => (Json::Null, false),
        Some(then) => {
            let diff = similar::TextDiff::from_lines(then, &now);
            let mut out = Vec::new();
            for group in diff.grouped_ops(3) {
                if let Some(first) = group.first() {
                    let (o, n) = (first.old_range().start + 1, first.new_range().start + 1);
                    out.push(Json::Arr(vec![Json::from("@"), Json::from(format!("@@ line {o} -> {n} @@"))]));
                }
                for op in group {
                    for change in diff.iter_changes(&op) {
                        let tag = match change.tag() {
                            similar::ChangeTag::Equal => " ",
                            similar::ChangeTag::Delete => "-",
                            similar::ChangeTag::Insert => "+",
                        };
                        let text = change.value().trim_end_matches('\n').to_owned();
                        out.push(Json::Arr(vec![Json::from(tag), Json::from(text)]));
                    }
                }
            }
            (Json::Arr(out), true)
        }
        None => (Json::Null, true),
    };
    let json = Json::Obj(vec![
        ("name", Json::from(f.name.as_str())),
        ("kind", Json::from(f.kind.keyword())),
        ("ir", ir),
        ("svg", svg),
        ("diff", diff),
        ("notes", Json::from(notes)),
    ]);
    (json, changed, now)
}

/// The front end's module and the module after each pass, with the time
/// each took.
fn steps(module: Module) -> Vec<(&'static str, Module, f64)> {
    let mut out = Vec::new();
    let mut cx = Context::new(&module);
    let mut m = module.clone();
    out.push(("front end", module, 0.0));
    let mut last = std::time::Instant::now();
    let mut observe = |pass: &Pass, m: &Module, _: &Context| {
        out.push((pass.name, m.clone(), last.elapsed().as_secs_f64() * 1e3));
        last = std::time::Instant::now();
    };
    flowc_passes::optimize(&mut m, &mut cx, &mut observe);
    debug_assert_eq!(out.len(), PIPELINE.len() + 1);
    out
}

/// The machine code of `code`, a line per instruction, with the key of
/// the IR each came from.
fn machine(code: &FunctionCode, limits: &Limits, notes: &mut Vec<String>) -> Json {
    let insts = flowc_codegen::disasm::instructions(&code.bytes);
    let mut lines = Vec::new();
    let mut places = code.places.iter().peekable();
    for (k, l) in insts.iter().enumerate() {
        if k == limits.max_machine_lines {
            notes.push(format!(
                "{}: machine code cut at {} of {} instructions (flowc opt --disasm prints it whole)",
                code.name,
                limits.max_machine_lines,
                insts.len()
            ));
            break;
        }
        while places.next_if(|p| p.end <= l.offset).is_some() {}
        let key = match places.peek() {
            Some(p) if p.start <= l.offset => self::key(p.place),
            _ => String::new(),
        };
        lines.push(Json::Arr(vec![
            Json::from(l.offset),
            Json::from(l.bytes.clone()),
            Json::from(l.text.clone()),
            Json::from(key),
        ]));
    }
    Json::Obj(vec![
        ("name", Json::from(code.name.as_str())),
        ("address", Json::from(format!("{:#x}", code.address))),
        ("bytes", Json::from(code.bytes.len())),
        ("lines", Json::Arr(lines)),
    ])
}

fn ms(d: Option<std::time::Duration>) -> Json {
    d.map_or(Json::Null, |d| Json::Num(d.as_secs_f64() * 1e3))
}

/// Everything the page shows.
pub fn collect(input: &Input, runs: &Runs, limits: &Limits) -> Json {
    let mut notes: Vec<String> = Vec::new();
    let mut stmt_lines: Vec<StmtLine> = Vec::new();
    let text = print_mapped(input.program, input.comments, Some(&mut stmt_lines));
    let lines: LineMap = stmt_lines.iter().map(|l| ((l.function, l.block, l.statement), l.line)).collect();

    // The passes, step by step.
    let mut step_json = Vec::new();
    let mut last: Option<Module> = None;
    if let Some(lowered) = &runs.lowered {
        let all = steps(lowered.clone());
        // The texts of the previous step's functions, by name (each
        // function is printed once per step).
        let mut previous: Option<HashMap<Symbol, String>> = None;
        for (name, m, took) in &all {
            // A step that removes a function changed the module.
            let mut changed = previous.as_ref().is_none_or(|p| p.len() != m.functions.len());
            let mut texts = HashMap::new();
            let mut functions = Vec::with_capacity(m.functions.len());
            for f in &m.functions {
                let before = previous.as_ref().and_then(|texts| texts.get(&f.name)).map(String::as_str);
                let (json, c, text) = function(f, before, &lines, limits);
                changed |= c;
                texts.insert(f.name, text);
                functions.push(json);
            }
            step_json.push(Json::Obj(vec![
                ("name", Json::from(*name)),
                ("ms", Json::Num(*took)),
                ("changed", Json::from(changed)),
                ("functions", Json::Arr(functions)),
            ]));
            previous = Some(texts);
        }
        last = all.into_iter().last().map(|(_, m, _)| m);
    } else {
        notes.push(format!("the program cannot be lowered from `{}`: no IR, no machine code", input.label));
    }

    // The final module's machine code.
    let mut machine_json = Vec::new();
    if let Some(m) = &last {
        match flowc_codegen::Native::compile(m) {
            Ok(native) => {
                for code in native.functions() {
                    machine_json.push(machine(&code, limits, &mut notes));
                }
            }
            Err(e) => notes.push(format!("code generation failed: {e}")),
        }
    }

    // The JIT's code.
    let views = runs.jit.views();
    if views.len() > limits.max_traces {
        notes.push(format!("the JIT made {} pieces of code; the first {} are shown", views.len(), limits.max_traces));
    }
    let mut traces = Vec::new();
    for v in views.iter().take(limits.max_traces) {
        let (f, _, _) = function(v.function, None, &lines, limits);
        // Guards by resume record: an exit is a guard's, else a block's `exit`.
        let guards: HashMap<flowc_ir::ResumeId, flowc_ir::InstId> = v
            .function
            .all_insts()
            .filter_map(|(_, i)| match &v.function.insts[i].kind {
                InstKind::Guard { resume, .. } => Some((*resume, i)),
                _ => None,
            })
            .collect();
        let exits: Vec<Json> = v
            .exits
            .iter()
            .map(|e| {
                let place = match guards.get(&e.resume).copied() {
                    Some(i) => IrPlace::Inst(i),
                    None => IrPlace::Term(e.block),
                };
                Json::Obj(vec![
                    ("key", Json::from(key(place))),
                    ("guard", Json::from(e.guard)),
                    ("label", Json::from(e.label.as_str())),
                    ("to_driver", Json::from(e.to_driver)),
                    ("linked", Json::from(e.linked)),
                    ("direct", Json::from(e.direct)),
                    ("bridge", Json::from(e.bridge.map(|b| b.as_str()))),
                    ("no_bridge", Json::from(e.no_bridge.map(|w| w.describe()))),
                ])
            })
            .collect();
        traces.push(Json::Obj(vec![
            ("kind", Json::from(v.kind)),
            ("name", Json::from(v.function.name.as_str())),
            ("anchor", Json::from(v.anchor.as_str())),
            ("start", Json::from(v.start.clone())),
            ("entries", Json::from(v.entries)),
            ("iterations", Json::from(v.iterations)),
            ("function", f),
            ("machine", machine(&v.machine, limits, &mut notes)),
            ("exits", Json::Arr(exits)),
        ]));
    }

    // The hot loop: the JIT's loop (its body when split), and the AOT
    // loop at the same label.
    let chosen = views
        .iter()
        .position(|v| v.kind == "loop body")
        .or_else(|| views.iter().position(|v| v.kind == "loop"))
        .or_else(|| views.iter().position(|v| v.kind == "entry"))
        .filter(|&k| k < limits.max_traces);
    let anchor = chosen.map(|k| views[k].anchor);
    let main = last.as_ref().and_then(|m| m.functions.iter().find(|f| f.kind == flowc_ir::FunctionKind::Main));
    let hot = match main.and_then(|f| compare::hot_loop(f, anchor).map(|h| (f, h))) {
        Some((f, (header, blocks))) => Json::Obj(vec![
            ("function", Json::from(f.name.as_str())),
            ("header", Json::from(header)),
            ("blocks", Json::from(blocks.iter().map(|b| b.into_raw().into_u32()).collect::<Vec<_>>())),
            ("trace", Json::from(chosen)),
            (
                "note",
                Json::from(if chosen.is_none() { Some("no loop got hot: the JIT compiled nothing") } else { None }),
            ),
        ]),
        None => Json::Obj(vec![
            ("function", Json::Null),
            ("header", Json::Null),
            ("blocks", Json::Arr(Vec::new())),
            ("trace", Json::from(chosen)),
            ("note", Json::from("the main graph has no loop after the eight passes")),
        ]),
    };

    let engines: Vec<Json> = runs
        .results
        .iter()
        .map(|(name, result, cost)| {
            Json::Obj(vec![
                ("name", Json::from(*name)),
                ("result", Json::from(result.clone())),
                ("run_ms", ms(cost.run)),
                ("compile_ms", ms(cost.compile)),
                ("code_bytes", Json::from(cost.code_bytes)),
            ])
        })
        .collect();
    let env: Vec<String> = input.env.iter().map(|(k, v)| format!("{k}/{}", v.to_print_string())).collect();
    let written =
        if input.written.trim_start_matches('\u{feff}') == text { Json::Null } else { Json::from(input.written) };
    Json::Obj(vec![
        ("title", Json::from(input.name)),
        ("entry", Json::from(input.label.as_str())),
        ("env", Json::from(format!("[{}]", env.join(",")))),
        ("agree", Json::from(runs.agree())),
        ("source", Json::Obj(vec![("text", Json::from(text)), ("written", written)])),
        ("engines", Json::Arr(engines)),
        ("steps", Json::Arr(step_json)),
        ("machine", Json::Arr(machine_json)),
        ("traces", Json::Arr(traces)),
        ("hot", hot),
        ("notes", Json::from(notes)),
    ])
}
