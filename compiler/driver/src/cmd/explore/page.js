// The explorer page: renders the data `flowc explore` embedded (see
// data.rs for its shape). Only what is on screen is rendered: one function
// of one step, the CFG when asked for, a trace when its panel opens.
//
// Links: every line that shows something carries `data-k`, a list of keys:
// `s12` (line 12 of the source), `f:NAME:i5` (instruction 5 of function
// NAME; machine code lines carry the key of the IR they came from),
// `T3:i5` (instruction 5 of the JIT's code number 3). Hovering a line
// highlights every line sharing a key with it, and every line sharing a
// key with those (so source -> IR -> machine code); clicking scrolls the
// first linked line of each other panel into view.
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("data").textContent);
  const $ = (id) => document.getElementById(id);
  const state = { step: Math.max(0, D.steps.length - 1), fn: null, view: "ir", written: false };

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v !== null && v !== undefined) e.setAttribute(k, v);
    }
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function fail(message) {
    const box = $("errors");
    box.hidden = false;
    box.textContent += message + "\n";
    document.body.dataset.error = message;
  }
  window.addEventListener("error", (e) => fail("script error: " + e.message));

  // ---- Summary and engines -------------------------------------------------
  function renderSummary() {
    $("title").textContent = D.title;
    const s = $("summary");
    s.textContent = "entry " + D.entry + ", environment " + D.env + " — ";
    const agree = el("span", { class: D.agree ? "agree" : "disagree" }, D.agree ? "every engine agrees" : "the engines disagree");
    s.appendChild(agree);
  }

  function fmtMs(x) {
    return x === null || x === undefined ? "" : x.toFixed(3) + " ms";
  }

  function renderEngines() {
    const t = $("engines");
    const head = el("tr");
    for (const h of ["engine", "result", "run", "compile", "machine code"]) head.appendChild(el("th", {}, h));
    t.appendChild(head);
    for (const e of D.engines) {
      const r = el("tr", { "data-engine": e.name });
      r.appendChild(el("td", {}, e.name));
      r.appendChild(el("td", { class: "result mono" }, e.result));
      r.appendChild(el("td", {}, fmtMs(e.run_ms)));
      r.appendChild(el("td", {}, fmtMs(e.compile_ms)));
      r.appendChild(el("td", {}, e.code_bytes === null ? "" : e.code_bytes + " bytes"));
      t.appendChild(r);
    }
  }

  // ---- Functions and steps ------------------------------------------------
  const names = [];
  for (const step of D.steps) for (const f of step.functions) if (!names.includes(f.name)) names.push(f.name);
  const mainName = D.hot && D.hot.function;
  state.fn = names.includes(mainName) ? mainName : names[0] || null;

  // The view is kept in the address (`#step=2&fn=main&view=cfg`), so a
  // link or a reload shows the same.
  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    const step = D.steps.findIndex((s) => s.name === h.get("step"));
    if (step >= 0) state.step = step;
    if (names.includes(h.get("fn"))) state.fn = h.get("fn");
    if (["ir", "diff", "cfg"].includes(h.get("view"))) state.view = h.get("view");
  }
  function writeHash() {
    const step = D.steps[state.step];
    const h = new URLSearchParams();
    if (step) h.set("step", step.name);
    if (state.fn) h.set("fn", state.fn);
    h.set("view", state.view);
    history.replaceState(null, "", "#" + h.toString());
  }
  readHash();

  function renderFunctionList() {
    const sel = $("function");
    const filter = $("filter").value.trim().toLowerCase();
    sel.textContent = "";
    const shown = names.filter((n) => n.toLowerCase().includes(filter));
    for (const n of shown) sel.appendChild(el("option", { value: n }, n));
    if (shown.length === 0) sel.appendChild(el("option", { value: "", disabled: "" }, "(no function matches)"));
    if (shown.includes(state.fn)) sel.value = state.fn;
    else if (shown.length > 0) {
      state.fn = shown[0];
      sel.value = state.fn;
      renderMain();
    }
  }

  function renderSteps() {
    const box = $("steps");
    box.textContent = "";
    let k = 0;
    while (k < D.steps.length) {
      const step = D.steps[k];
      if (!step.changed && k !== state.step) {
        // A run of passes that changed nothing folds into one button.
        let j = k;
        while (j < D.steps.length && !D.steps[j].changed && j !== state.step) j++;
        const first = k;
        const run = D.steps.slice(first, j).map((s) => s.name);
        const fold = el("button", { type: "button", class: "fold", title: "no change: " + run.join(", ") }, "… " + run.length + " unchanged");
        fold.addEventListener("click", () => {
          fold.replaceWith(...run.map((_, i) => stepButton(first + i)));
        });
        box.appendChild(fold);
        k = j;
        continue;
      }
      box.appendChild(stepButton(k));
      k++;
    }
  }

  function stepButton(k) {
    const step = D.steps[k];
    const b = el("button", { type: "button", "data-step": String(k), title: fmtMs(step.ms) }, step.name);
    if (k === state.step) b.classList.add("on");
    if (!step.changed) b.classList.add("unchanged");
    b.addEventListener("click", () => {
      state.step = k;
      renderSteps();
      renderMain();
    });
    return b;
  }

  function currentFunction() {
    const step = D.steps[state.step];
    return step ? step.functions.find((f) => f.name === state.fn) || null : null;
  }

  // ---- Listings -------------------------------------------------------------
  function line(keys, parts, cls) {
    const d = el("div", { class: "ln" + (cls ? " " + cls : "") });
    if (keys.length) d.setAttribute("data-k", keys.join(" "));
    for (const [c, text] of parts) {
      if (c) d.appendChild(el("span", { class: c }, text));
      else d.appendChild(document.createTextNode(text));
    }
    return d;
  }

  function irKeys(prefix, entry) {
    const [, key, src] = entry;
    const keys = [];
    if (key) keys.push(prefix + key);
    if (src) keys.push("s" + src);
    return keys;
  }

  // The IR lines of function JSON `f`, keys under `prefix`; `badges` maps a
  // key to a note shown on its line.
  function irListing(box, f, prefix, badges, only) {
    const frag = document.createDocumentFragment();
    let inBlock = null;
    for (const entry of f.ir) {
      const [text, key] = entry;
      if (key.startsWith("b")) inBlock = key;
      else if (!key) inBlock = null;
      if (only && !only.has(inBlock)) continue;
      const d = line(irKeys(prefix, entry), [[null, text]], key.startsWith("b") ? "key" : "");
      const badge = badges && badges[key];
      if (badge) d.appendChild(el("span", { class: "badge" + (badge.zero ? " zero" : ""), title: badge.title }, badge.text));
      frag.appendChild(d);
    }
    box.appendChild(frag);
  }

  function cfgInto(box, f, prefix) {
    if (!f.svg) {
      box.appendChild(el("div", { class: "notes" }, "the CFG is not drawn (see the notes)"));
      return;
    }
    const wrap = el("div", { class: "cfg-wrap" });
    wrap.innerHTML = f.svg;
    const src = {};
    for (const [, key, s] of f.ir) if (key && s) src[key] = s;
    for (const t of wrap.querySelectorAll("text[data-inst], text[data-term]")) {
      const key = t.hasAttribute("data-inst") ? "i" + t.getAttribute("data-inst") : "t" + t.getAttribute("data-term");
      const keys = [prefix + key];
      if (src[key]) keys.push("s" + src[key]);
      t.setAttribute("data-k", keys.join(" "));
    }
    box.appendChild(wrap);
  }

  function machineListing(box, code, prefix) {
    const frag = document.createDocumentFragment();
    frag.appendChild(line([], [["no", ""], [null, "; " + code.name + ": " + code.bytes + " bytes at " + code.address]], "key"));
    for (const [offset, hex, text, key] of code.lines) {
      const off = offset.toString(16).padStart(5, " ");
      frag.appendChild(line(key ? [prefix + key] : [], [["no", off + ":"], ["hex", hex], [null, text]]));
    }
    box.appendChild(frag);
  }

  function renderSource() {
    const box = $("source");
    box.textContent = "";
    $("show-readable").classList.toggle("on", !state.written);
    $("show-written").classList.toggle("on", state.written);
    if (state.written) {
      const text = D.source.written === null ? D.source.text : D.source.written;
      text.split("\n").forEach((t, i) => box.appendChild(line([], [["no", String(i + 1)], [null, t]])));
      return;
    }
    const frag = document.createDocumentFragment();
    D.source.text.replace(/\n$/, "").split("\n").forEach((t, i) => {
      frag.appendChild(line(["s" + (i + 1)], [["no", String(i + 1)], [null, t]]));
    });
    box.appendChild(frag);
  }

  function renderMain() {
    writeHash();
    const f = currentFunction();
    const step = D.steps[state.step];
    const ir = $("ir");
    ir.textContent = "";
    $("ir-notes").textContent = "";
    for (const b of document.querySelectorAll("#views button")) b.classList.toggle("on", b.dataset.view === state.view);
    if (!step) {
      $("ir-title").textContent = "IR";
      ir.appendChild(el("div", { class: "notes" }, "no IR: see the notes"));
    } else if (!f) {
      $("ir-title").textContent = "IR " + (step ? "after " + step.name : "");
      ir.appendChild(el("div", { class: "notes" }, state.fn + " is not in the module " + (state.step ? "after " + step.name : "of the front end")));
    } else {
      const where = state.step === 0 ? "from the front end" : "after " + step.name;
      $("ir-title").textContent = "IR of " + f.name + " " + where;
      $("ir-notes").textContent = f.notes.join("; ");
      const prefix = "f:" + f.name + ":";
      if (state.view === "cfg") cfgInto(ir, f, prefix);
      else if (state.view === "diff") {
        if (state.step === 0) ir.appendChild(el("div", { class: "notes" }, "the front end's IR is the first step: nothing to compare with"));
        else if (!f.diff) ir.appendChild(el("div", { class: "notes" }, step.name + " changed nothing in " + f.name));
        else {
          for (const [tag, text] of f.diff) {
            const cls = tag === "+" ? "add" : tag === "-" ? "del" : tag === "@" ? "hunk" : "";
            ir.appendChild(line([], [[null, (tag === "@" ? "" : tag + " ") + text]], cls));
          }
        }
      } else irListing(ir, f, prefix, null, null);
    }
    renderMachine();
  }

  function renderMachine() {
    const box = $("machine");
    box.textContent = "";
    const code = D.machine.filter((m) => m.name === state.fn);
    const last = D.steps.length - 1;
    $("machine-title").textContent = "Machine code of " + (state.fn || "?");
    $("machine-notes").textContent =
      code.length === 0
        ? "no machine code for this function"
        : state.step === last
          ? "the final code, after the eight passes"
          : "the final code, after the eight passes: its lines link to the instructions of this step that survived";
    for (const c of code) machineListing(box, c, "f:" + c.name + ":");
  }

  // ---- The hot loop and the JIT ---------------------------------------------
  function renderHot() {
    const box = $("hot");
    const h = D.hot;
    const cols = el("div", { class: "columns" });
    const left = el("div", { class: "col", id: "hot-aot" });
    const right = el("div", { class: "col", id: "hot-trace" });
    const last = D.steps[D.steps.length - 1];
    const main = last && h.function ? last.functions.find((f) => f.name === h.function) : null;
    if (main) {
      left.appendChild(el("h3", {}, "native: the loop at " + h.header + " after the eight passes"));
      const listing = el("div", { class: "listing" });
      irListing(listing, main, "f:" + main.name + ":", null, new Set(h.blocks.map((b) => "b" + b)));
      left.appendChild(listing);
    } else left.appendChild(el("div", { class: "notes" }, h.note || "no loop"));
    if (h.trace !== null) {
      const t = D.traces[h.trace];
      right.appendChild(el("h3", {}, "jit: " + t.kind + " " + t.name + " at " + t.start + ", optimized"));
      const listing = el("div", { class: "listing" });
      irListing(listing, t.function, "T" + h.trace + ":", exitBadges(t), null);
      right.appendChild(listing);
    } else right.appendChild(el("div", { class: "notes" }, h.note || "no loop got hot"));
    cols.appendChild(left);
    cols.appendChild(right);
    box.appendChild(cols);
  }

  function exitBadges(t) {
    const badges = {};
    for (const e of t.exits) {
      const n = e.to_driver + e.linked;
      const text = (e.guard ? "guard" : "exit") + " failed " + n + "×" + (e.bridge ? " → " + e.bridge : "");
      badges[e.key] = {
        text,
        zero: n === 0,
        title:
          "to " + e.label + ": " + e.to_driver + " to the interpreter, " +
          (e.direct ? "then straight into its bridge (not counted)" : e.linked + " into its bridge") +
          (e.no_bridge ? "; no bridge: " + e.no_bridge : ""),
      };
    }
    return badges;
  }

  function renderJit() {
    const box = $("jit");
    if (D.traces.length === 0) {
      box.appendChild(el("div", { class: "notes" }, "no loop got hot: the JIT compiled nothing"));
      return;
    }
    D.traces.forEach((t, k) => {
      const d = el("details", { class: "trace", "data-trace": String(k) });
      const failures = t.exits.reduce((n, e) => n + e.to_driver + e.linked, 0);
      d.appendChild(
        el(
          "summary",
          {},
          t.kind + " " + t.name + " at " + t.start + " — entered " + t.entries + "×, " + t.iterations + " iterations, " +
            t.machine.bytes + " bytes, exits taken " + failures + "×",
        ),
      );
      d.addEventListener("toggle", () => {
        if (!d.open || d.dataset.rendered) return;
        d.dataset.rendered = "1";
        const cols = el("div", { class: "columns three" });
        const ir = el("div", { class: "col" });
        ir.appendChild(el("h3", {}, "trace IR"));
        const irBox = el("div", { class: "listing" });
        irListing(irBox, t.function, "T" + k + ":", exitBadges(t), null);
        ir.appendChild(irBox);
        const cfg = el("div", { class: "col" });
        cfg.appendChild(el("h3", {}, "CFG"));
        cfgInto(cfg, t.function, "T" + k + ":");
        const mc = el("div", { class: "col" });
        mc.appendChild(el("h3", {}, "machine code"));
        const mcBox = el("div", { class: "listing" });
        machineListing(mcBox, t.machine, "T" + k + ":");
        mc.appendChild(mcBox);
        cols.appendChild(ir);
        cols.appendChild(cfg);
        cols.appendChild(mc);
        d.appendChild(cols);
      });
      box.appendChild(d);
    });
  }

  function renderNotes() {
    const ul = $("notes");
    const all = D.notes.slice();
    for (const step of D.steps) for (const f of step.functions) for (const n of f.notes) if (!all.includes(n)) all.push(n);
    for (const t of D.traces) for (const n of t.function.notes) if (!all.includes(n)) all.push(n);
    if (all.length === 0) all.push("nothing was left out");
    for (const n of all) ul.appendChild(el("li", {}, n));
  }

  // ---- Links ------------------------------------------------------------------
  function keysOf(e) {
    const k = e.getAttribute("data-k");
    return k ? k.split(" ") : [];
  }

  function withKeys(keys) {
    const found = new Set();
    for (const k of keys) for (const e of document.querySelectorAll('[data-k~="' + CSS.escape(k) + '"]')) found.add(e);
    return found;
  }

  // The lines linked to `e`: sharing a key with it, or with those.
  function linked(e) {
    const first = withKeys(keysOf(e));
    const keys = new Set(keysOf(e));
    for (const f of first) for (const k of keysOf(f)) keys.add(k);
    return withKeys(keys);
  }

  let lit = [];
  function highlight(e) {
    for (const x of lit) x.classList.remove("hl");
    lit = e ? Array.from(linked(e)) : [];
    for (const x of lit) x.classList.add("hl");
  }

  document.addEventListener("mouseover", (ev) => {
    const e = ev.target.closest ? ev.target.closest("[data-k]") : null;
    highlight(e);
  });

  document.addEventListener("click", (ev) => {
    const e = ev.target.closest ? ev.target.closest("[data-k]") : null;
    if (!e) return;
    highlight(e);
    const here = e.closest(".panel, details.trace");
    const seen = new Set([here]);
    for (const x of lit) {
      const panel = x.closest(".listing, .cfg-wrap");
      if (!panel || seen.has(panel) || (here && here.contains(x))) continue;
      seen.add(panel);
      x.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
  });

  // ---- Controls -------------------------------------------------------------
  $("filter").addEventListener("input", renderFunctionList);
  $("function").addEventListener("change", (ev) => {
    state.fn = ev.target.value;
    renderMain();
  });
  for (const b of document.querySelectorAll("#views button")) {
    b.addEventListener("click", () => {
      state.view = b.dataset.view;
      renderMain();
    });
  }
  $("show-readable").addEventListener("click", () => {
    state.written = false;
    renderSource();
  });
  $("show-written").addEventListener("click", () => {
    state.written = true;
    renderSource();
  });

  try {
    renderSummary();
    renderEngines();
    renderFunctionList();
    renderSteps();
    renderSource();
    renderMain();
    renderHot();
    renderJit();
    renderNotes();
    document.body.dataset.ready = "1";
  } catch (e) {
    fail("rendering failed: " + e.message);
    throw e;
  }
})();
