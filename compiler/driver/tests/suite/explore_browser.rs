//! `flowc explore`'s pages in a real browser: headless Chromium, driven
//! over the DevTools protocol by [`crate::cdp`]. Each page of
//! a few bundled examples must render every panel, link IR, source and
//! machine code when the mouse is over a line, switch steps and views,
//! open the JIT's traces, filter functions, and raise no script error. A
//! screenshot of each is saved in `target/explore-screenshots/`.
//!
//! Chromium is found through `FLOWC_CHROMIUM`, else `chromium`,
//! `chromium-browser` or `google-chrome` on the PATH; `.ci/run` installs
//! Debian's `chromium` when it is missing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::cdp::{Browser, Tab};

/// A point on screen, in CSS pixels.
type Point = (f64, f64);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("FLOWC_CHROMIUM") {
        return PathBuf::from(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "the explorer's browser test needs Chromium: install it (`apt-get install chromium`; .ci/run does) or point FLOWC_CHROMIUM at a Chrome binary"
    );
}

/// Writes the explorer page of `example` and returns its path.
fn page(example: &str, extra: &[&str]) -> PathBuf {
    let out = root().join("target/explore-pages");
    std::fs::create_dir_all(&out).unwrap();
    let html = out.join(format!("{}.html", example.replace('.', "_")));
    let status = Command::new(env!("CARGO_BIN_EXE_flowc"))
        .arg("explore")
        .arg(root().join("examples").join(example))
        .args(extra)
        .arg("-o")
        .arg(&html)
        .status()
        .unwrap();
    assert!(status.success(), "flowc explore {example} failed");
    html.canonicalize().unwrap()
}

fn count(b: &mut Browser, tab: &Tab, selector: &str) -> usize {
    b.eval(tab, &format!("document.querySelectorAll({selector:?}).length")).parse().unwrap()
}

/// Marks with `data-probe` the first element `js_find` (an expression
/// evaluating to an element or null) returns, scrolled into view; the
/// middle of it on screen, or `None` if there is no such element.
fn probe(b: &mut Browser, tab: &Tab, js_find: &str) -> Option<Point> {
    let at = b.eval(tab,
        &format!(
            "(() => {{ const e = {js_find}; for (const old of document.querySelectorAll('[data-probe]')) old.removeAttribute('data-probe'); if (!e) return 'none'; e.setAttribute('data-probe', '1'); e.scrollIntoView({{block: 'center', inline: 'nearest'}}); const r = e.getBoundingClientRect(); return (r.left + Math.min(r.width / 2, 40)) + ',' + (r.top + r.height / 2); }})()"
        ),
    );
    let (x, y) = at.split_once(',')?;
    Some((x.parse().ok()?, y.parse().ok()?))
}

/// A real click (mouse moved, pressed and released) on the element
/// `selector` finds.
fn click(b: &mut Browser, tab: &Tab, selector: &str) {
    let at = probe(b, tab, &format!("document.querySelector({selector:?})"))
        .unwrap_or_else(|| panic!("nothing matches {selector}"));
    b.click(tab, at);
}

fn open(b: &mut Browser, html: &Path) -> Tab {
    b.open(&format!("file://{}", html.display()), "document.querySelector(\"body[data-ready='1']\")")
}

fn no_errors(b: &mut Browser, tab: &Tab, example: &str) {
    assert_eq!(b.eval(tab, "document.body.dataset.error || ''"), "", "{example}: the page reported an error");
}

fn screenshot(b: &mut Browser, tab: &Tab, name: &str) {
    let png = b.screenshot(tab);
    assert!(png.len() > 10_000 && png.starts_with(b"\x89PNG"), "{name}: the screenshot is not a picture");
    let dir = root().join("target/explore-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

fn browser() -> Browser {
    Browser::launch(&chromium(), 1600, 1400)
}

/// Hovering a line of `from` lights lines in each panel of `to` (and the
/// line itself).
fn hover_links(b: &mut Browser, tab: &Tab, example: &str, find: &str, to: &[&str]) {
    let at = probe(b, tab, find).unwrap_or_else(|| panic!("{example}: no line to hover ({find})"));
    b.move_mouse(tab, at);
    assert!(
        b.eval(tab, "document.querySelector('[data-probe]').classList.contains('hl')") == "true",
        "{example}: the hovered line is not lit"
    );
    for panel in to {
        assert!(count(b, tab, &format!("{panel} .hl")) > 0, "{example}: hovering {find} lit nothing in {panel}");
    }
}

#[test]
fn explorer_pages_render_and_link_in_chromium() {
    let mut b = browser();
    let b = &mut b;
    // Examples of every shape: a loop with a hint, a recursive function
    // without one, objects, and Part 4's interpreter (bridges, guard_value).
    for (example, extra) in [
        ("gcd.fg", &[][..]),
        ("fib.fg", &[][..]),
        ("points.pl", &[][..]),
        ("bytecode.pl", &[][..]),
        ("stack_machine.fg", &["--max-blocks", "4"][..]),
    ] {
        let html = page(example, extra);
        let tab = open(b, &html);
        no_errors(b, &tab, example);

        // Every panel renders.
        let engines = count(b, &tab, "#engines tr");
        assert_eq!(engines, 5, "{example}: a header and four engines");
        assert!(count(b, &tab, "#source .ln") > 5, "{example}: source");
        assert!(count(b, &tab, "#ir .ln") > 3, "{example}: IR");
        assert!(count(b, &tab, "#machine .ln") > 10, "{example}: machine code");
        assert!(count(b, &tab, "#steps button") >= 2, "{example}: steps");
        assert!(count(b, &tab, "#notes li") >= 1, "{example}: notes");
        assert!(count(b, &tab, "#hot .col") == 2, "{example}: the hot loop's two columns");

        // IR -> source and machine code; machine code -> IR; source -> IR.
        hover_links(b, &tab,
            example,
            "[...document.querySelectorAll('#ir .ln[data-k]')].find(l => { const ks = l.getAttribute('data-k').split(' '); return ks.some(k => k.startsWith('s')) && ks.some(k => k.startsWith('f:') && document.querySelector('#machine [data-k~=\"' + CSS.escape(k) + '\"]')); })",
            &["#source", "#machine"],
        );
        hover_links(b, &tab, example, "document.querySelector('#machine .ln[data-k]')", &["#ir"]);
        hover_links(b, &tab,
            example,
            "[...document.querySelectorAll('#source .ln')].find(l => document.querySelector('#ir [data-k~=\"' + l.getAttribute('data-k') + '\"]'))",
            &["#ir"],
        );
        // Clicking brings the linked machine code into view.
        let at = probe(b, &tab, "document.querySelector('[data-probe]')").unwrap();
        b.click(&tab, at);
        no_errors(b, &tab, example);

        // The front end's step, and the CFG view.
        click(b, &tab, "#steps button[data-step='0']");
        assert!(
            b.eval(&tab, "document.getElementById('ir-title').textContent").contains("from the front end"),
            "{example}"
        );
        click(b, &tab, "#views button[data-view='cfg']");
        if example == "stack_machine.fg" {
            // More blocks than --max-blocks: not drawn, with a note.
            assert_eq!(count(b, &tab, "#ir svg.cfg"), 0, "{example}: drawn despite --max-blocks");
            assert!(
                b.eval(&tab, "document.getElementById('ir-notes').textContent").contains("--max-blocks"),
                "{example}"
            );
        } else {
            assert!(count(b, &tab, "#ir svg.cfg g.block") >= 1, "{example}: CFG");
            assert!(count(b, &tab, "#ir svg.cfg text[data-k]") >= 1, "{example}: CFG lines carry links");
            hover_links(
                b,
                &tab,
                example,
                "document.querySelector('#ir svg.cfg text[data-k~=\"t0\"], #ir svg.cfg text[data-k]')",
                &["#ir"],
            );
        }

        // A step that changed something has a diff.
        let changed = b.eval(&tab,
            "(() => { const b = [...document.querySelectorAll('#steps button[data-step]')].find(b => b.dataset.step !== '0' && !b.classList.contains('unchanged')); if (!b) return 'none'; b.click(); return b.dataset.step; })()",
        );
        assert_ne!(changed, "none", "{example}: no pass changed anything?");
        click(b, &tab, "#views button[data-view='diff']");
        let diff_lines = count(b, &tab, "#ir .ln.add") + count(b, &tab, "#ir .ln.del");
        let unchanged_note = b.eval(&tab, "document.getElementById('ir').textContent").contains("changed nothing");
        assert!(diff_lines > 0 || unchanged_note, "{example}: step {changed} shows no diff");
        // Folded runs of unchanged passes open.
        if count(b, &tab, "#steps button.fold") > 0 {
            let before = count(b, &tab, "#steps button[data-step]");
            click(b, &tab, "#steps button.fold");
            assert!(count(b, &tab, "#steps button[data-step]") > before, "{example}: the fold did not open");
        }
        // The JIT's code opens on demand, with machine code and exits.
        let traces = count(b, &tab, "#jit details.trace");
        if example == "fib.fg" {
            // Recursion without a loop: nothing gets hot, and the page says so.
            assert_eq!(traces, 0, "{example}");
            assert!(
                b.eval(&tab, "document.getElementById('jit').textContent").contains("no loop got hot"),
                "{example}"
            );
            assert!(b.eval(&tab, "document.getElementById('hot').textContent").contains("no loop"), "{example}");
        } else {
            assert!(traces >= 1, "{example}: the JIT compiled nothing");
            click(b, &tab, "#jit details.trace summary");
            // The listing is drawn when the `toggle` event comes.
            assert!(
                b.wait_until(
                    &tab,
                    "document.querySelectorAll('#jit details.trace[open] .ln').length > 5",
                    Duration::from_secs(10)
                ),
                "{example}: the trace's listing"
            );
            assert!(count(b, &tab, "#jit details.trace[open] svg.cfg") == 1, "{example}: the trace's CFG");
            assert!(count(b, &tab, "#jit details.trace[open] .badge") >= 1, "{example}: the trace's exits");
            assert!(
                count(b, &tab, "#hot-trace .ln") > 0 && count(b, &tab, "#hot-aot .ln") > 0,
                "{example}: the hot loop"
            );
            hover_links(b, &tab,
                example,
                "[...document.querySelectorAll('#jit details.trace[open] .ln[data-k]')].find(l => l.getAttribute('data-k').split(' ').some(k => k.startsWith('T') && document.querySelectorAll('#jit [data-k~=\"' + CSS.escape(k) + '\"]').length > 1))",
                &["#jit"],
            );
        }

        // The function filter.
        click(b, &tab, "#filter");
        b.type_text(&tab, "zzz");
        assert!(
            b.eval(&tab, "document.getElementById('function').textContent").contains("no function matches"),
            "{example}"
        );
        no_errors(b, &tab, example);
        b.eval(&tab, "window.scrollTo(0, 0)");
        screenshot(b, &tab, example);
        b.close(tab);
    }
}

#[test]
fn a_program_with_functions_shows_each() {
    let mut b = browser();
    let b = &mut b;
    let html = page("fib.fg", &[]);
    let tab = open(b, &html);
    let names = b.eval(&tab, "[...document.querySelectorAll('#function option')].map(o => o.value).join(' ')");
    let names: Vec<&str> = names.split(' ').collect();
    assert!(names.len() >= 2, "fib.fg has a main graph and a function: {names:?}");
    // Filtering to one function shows its IR and its machine code.
    let other =
        names.iter().find(|n| !b.eval(&tab, "document.getElementById('ir-title').textContent").contains(*n)).unwrap();
    click(b, &tab, "#filter");
    b.type_text(&tab, other);
    let title = b.eval(&tab, "document.getElementById('ir-title').textContent");
    assert!(title.contains(other), "filtering to {other} shows {title}");
    assert!(count(b, &tab, "#ir .ln") > 1);
    assert!(b.eval(&tab, "document.getElementById('machine-title').textContent").contains(other));
    no_errors(b, &tab, "fib.fg");
}
