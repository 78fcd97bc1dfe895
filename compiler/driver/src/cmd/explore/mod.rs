//! `flowc explore FILE [--entry L] [--env ENV] [--static ENV] [--fuel N]
//! [--threshold N] [--max-blocks N] -o OUT.html`: one self-contained HTML
//! page showing everything flowc does with a program — its source, the IR
//! from the front end and after each of the eight passes (with diffs, the
//! passes that changed nothing folded), each step's CFG drawn, the final
//! machine code, the JIT's traces and bridges with their machine code and
//! guard failures, every engine's result and cost, and the AOT hot loop
//! beside the trace of the same loop. Hovering an IR line highlights its
//! source statement and the machine code it became, and the other way
//! round.
//!
//! The page needs no server and no network: its data is embedded as JSON
//! ([`data`]), its script and styles inlined (`page.js`, `page.css`).
//! Large programs stay usable: the page renders one function of one step
//! at a time (a filter picks the function), CFGs of more than
//! `--max-blocks` blocks are not drawn and long listings are cut, each
//! with a note saying so.

mod data;
mod json;

use std::path::PathBuf;

use crate::cmd::compare;
use crate::{input, Failure};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    engines: compare::EngineArgs,
    /// Draw the CFGs of functions with at most N blocks.
    #[arg(long, value_name = "N", default_value_t = data::Limits::default().max_blocks)]
    max_blocks: usize,
    /// The page to write (`-` for standard output).
    #[arg(short = 'o', long = "output", value_name = "OUT.html")]
    output: PathBuf,
}

const PAGE: &str = include_str!("page.html");
const SCRIPT: &str = include_str!("page.js");
const STYLE: &str = include_str!("page.css");

/// The page for `data` (JSON): the template with the title, styles, data
/// and script filled in (in one pass: text filled in is not searched for
/// placeholders again).
fn page(title: &str, data: &str) -> String {
    let title = title.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    let mut out = String::with_capacity(PAGE.len() + SCRIPT.len() + STYLE.len() + data.len() + title.len());
    let mut rest = PAGE;
    while let Some(at) = rest.find("{{") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find("}}").map_or(rest.len(), |e| at + e + 2);
        out.push_str(match &rest[at..end] {
            "{{title}}" => &title,
            "{{style}}" => STYLE,
            "{{script}}" => SCRIPT,
            "{{data}}" => data,
            other => other,
        });
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

pub fn main(args: Args) -> Result<(), Failure> {
    let file = &args.engines.start.source.file;
    let written = input::read_source(file)?;
    let name = if file == "-" { "<stdin>" } else { file.as_str() };
    let (program, comments) = flowc_lang::syntax::parse_with_comments(name, &written).map_err(Failure::input)?;
    let (label, env, runs) = args.engines.run(&program)?;
    let limits = data::Limits { max_blocks: args.max_blocks, ..data::Limits::default() };
    let input = data::Input { name, written: &written, program: &program, comments: &comments, label, env: &env };
    let json = data::collect(&input, &runs, &limits);
    let mut text = String::new();
    json.write(&mut text);
    let html = page(&format!("flowc explore {name}"), &text);
    if args.output.as_os_str() == "-" {
        print!("{html}");
    } else {
        std::fs::write(&args.output, html)
            .map_err(|e| Failure::input(format!("cannot write {}: {e}", args.output.display())))?;
    }
    Ok(())
}
