//! The IR text format: parsing what [`crate::print`] prints, exactly —
//! value, block and resume numbers included, so `print(parse(text)) == text`.
//! Numbers missing from the text become detached placeholders in the arenas.
//!
//! The parser checks syntax only; whether the IR is valid is the checker's
//! question (flowc-ir-checker), so invalid-but-well-formed IR parses — and
//! parses as written, never repaired: a phi written after an ordinary
//! instruction stays among the ordinary instructions, a reference to a
//! resume record the text does not define stays a reference outside the
//! arena, and operation forms are taken as written. The parser rejects only
//! what the data structure cannot represent (an operation with the wrong
//! number of operands for its name, a value defined twice).

use la_arena::Arena;

use flowc_lang::ast::Operator;
use flowc_lang::ops::{Form, Op};
use flowc_lang::syntax::diag::{ParseError, RawError};
use flowc_lang::syntax::lex::{lex_line_into, Line, Tok};
use flowc_lang::{Symbol, Value};

use crate::function::{BlockData, BlockId, Function, FunctionKind, InstData, Module, ValueData, ValueDef, ValueId};
use crate::inst::{Args, GuardKind, InstKind, Operand, PhiInputs, Terminator, Trap};
use crate::resume::{ResumeData, ResumeFrame, ResumeId, ResumeValue, VirtualObject};

/// Parses a module.
pub fn module(file: &str, src: &str) -> Result<Module, ParseError> {
    let max_number = u32::try_from(src.len()).unwrap_or(u32::MAX).saturating_mul(16).max(MIN_MAX_NUMBER);
    Parser { max_number, ..Parser::default() }.run(src).map_err(|e| e.locate(file, src))
}

/// Parses a text holding exactly one function.
pub fn function(file: &str, src: &str) -> Result<Function, ParseError> {
    let mut m = module(file, src)?;
    if m.functions.len() != 1 {
        return Err(ParseError::at(file, src, 0, format!("expected one function, found {}", m.functions.len())));
    }
    Ok(m.functions.pop().unwrap())
}

/// Numbers up to this are always accepted, whatever the text's size
/// (placeholders up to it cost a few megabytes at most).
pub const MIN_MAX_NUMBER: u32 = 1 << 20;

enum State {
    Top,
    /// Inside a function: the block being read (if any) and whether it has
    /// its terminator.
    Function {
        block: Option<(BlockId, bool)>,
    },
    Resume(ResumeId),
}

struct Open {
    func: Function,
    /// Line offset of the function header, for errors at its end.
    pos: usize,
    /// The resume records the text defines so far.
    defined_resumes: std::collections::HashSet<u32>,
}

#[derive(Default)]
struct Parser {
    module: Module,
    open: Option<Open>,
    /// The largest `vN`/`bN`/`rN` number accepted. Numbers may be sparse
    /// (an optimized function keeps few of its values, a trace few of its
    /// resume records), so a short text may name big numbers; but a number
    /// makes the parser fill the arena up to it, so one far beyond the
    /// text's size is refused ("number too large") rather than allocated:
    /// up to 16 per byte of text, and always up to [`MIN_MAX_NUMBER`].
    max_number: u32,
}

/// A numbered reference like `v12`, `b3`, `r0`.
fn numbered(tok: Option<&Tok>, prefix: char) -> Option<u32> {
    match tok {
        Some(Tok::Ident(s)) if s.starts_with(prefix) && s.len() > 1 && s[1..].bytes().all(|b| b.is_ascii_digit()) => {
            s[1..].parse().ok()
        }
        _ => None,
    }
}

/// The `.object` after `get` or `set` (at `pos`): whether the optimizer
/// proved the operand an object ([`InstKind::Get`]).
fn object_proof(line: &mut Line, pos: usize) -> Result<bool, RawError> {
    if !line.is_punct(".") {
        return Ok(false);
    }
    line.bump();
    match line.bump() {
        Some(Tok::Ident(s)) if *s == "object" => Ok(true),
        _ => Err(RawError::new(pos, "expected `.object`")),
    }
}

impl Parser {
    fn run(mut self, src: &str) -> Result<Module, RawError> {
        let mut state = State::Top;
        let mut offset = 0;
        // One buffer for every line's tokens.
        let mut toks = Vec::new();
        for raw in src.split_inclusive('\n') {
            let text = raw.trim_end_matches(['\n', '\r']);
            toks.clear();
            lex_line_into(text, offset, &mut toks)?;
            if !toks.is_empty() {
                let line = Line { toks: &toks, at: 0, end: offset + text.len() };
                state = self.line(state, line)?;
            }
            offset += raw.len();
        }
        match state {
            State::Top => Ok(self.module),
            _ => Err(RawError::new(self.open.map_or(offset, |o| o.pos), "function not closed with `}`")),
        }
    }

    fn func(&mut self) -> &mut Function {
        &mut self.open.as_mut().expect("inside a function").func
    }

    fn value(&mut self, n: u32) -> ValueId {
        let values = &mut self.func().values;
        while values.len() <= n as usize {
            values.alloc(ValueData { def: ValueDef::Detached, name: None });
        }
        la_arena::Idx::from_raw(la_arena::RawIdx::from_u32(n))
    }

    fn block(&mut self, n: u32) -> BlockId {
        let blocks = &mut self.func().blocks;
        while blocks.len() <= n as usize {
            blocks.alloc(BlockData {
                name: None,
                phis: Default::default(),
                insts: Default::default(),
                term: placeholder(),
            });
        }
        la_arena::Idx::from_raw(la_arena::RawIdx::from_u32(n))
    }

    /// The record `rN` defined by `resume rN {`: records up to `N` exist
    /// afterwards (numbers the text skips are empty records, which the
    /// checker rejects when used). A reference alone creates nothing.
    fn define_resume(&mut self, n: u32, pos: usize) -> Result<ResumeId, RawError> {
        let open = self.open.as_mut().expect("inside a function");
        if !open.defined_resumes.insert(n) {
            return Err(RawError::new(pos, format!("r{n} is defined twice")));
        }
        let id = la_arena::Idx::from_raw(la_arena::RawIdx::from_u32(n));
        let resumes = &mut open.func.resumes;
        while resumes.len() <= n as usize {
            resumes.alloc(ResumeData::default());
        }
        Ok(id)
    }

    fn line(&mut self, state: State, mut line: Line) -> Result<State, RawError> {
        for (tok, pos) in line.toks {
            let big = ['v', 'b', 'r'].iter().any(|&p| numbered(Some(tok), p).is_some_and(|n| n > self.max_number));
            if big {
                return Err(RawError::new(*pos, "number too large for this text"));
            }
        }
        match state {
            State::Top => self.top(line),
            State::Resume(r) => {
                if line.is_punct("}") {
                    line.bump();
                    line.done()?;
                    return Ok(State::Function { block: None });
                }
                self.resume_line(r, &mut line)?;
                line.done()?;
                Ok(State::Resume(r))
            }
            State::Function { block } => {
                if line.is_punct("}") {
                    line.bump();
                    line.done()?;
                    if let Some((b, false)) = block {
                        return Err(RawError::new(line.toks[0].1, format!("block b{} has no terminator", raw(b))));
                    }
                    let open = self.open.take().unwrap();
                    self.module.functions.push(open.func);
                    return Ok(State::Top);
                }
                if let Some(n) = numbered(line.peek(), 'b') {
                    if let Some((b, false)) = block {
                        return Err(RawError::new(line.toks[0].1, format!("block b{} has no terminator", raw(b))));
                    }
                    line.bump();
                    let name = if line.is_punct(":") { None } else { Some(line.name("a block label")?) };
                    line.punct(":")?;
                    line.done()?;
                    let b = self.block(n);
                    let f = self.func();
                    if f.layout.contains(&b) {
                        return Err(RawError::new(line.toks[0].1, format!("block b{n} defined twice")));
                    }
                    if f.layout.is_empty() {
                        f.entry = b;
                    }
                    f.layout.push(b);
                    f.blocks[b].name = name;
                    return Ok(State::Function { block: Some((b, false)) });
                }
                if line.is_keyword("resume") {
                    line.bump();
                    let Some(n) = numbered(line.peek(), 'r') else { return Err(line.error("a resume number like r0")) };
                    let pos = line.pos();
                    line.bump();
                    line.punct("{")?;
                    line.done()?;
                    if let Some((b, false)) = block {
                        return Err(RawError::new(line.toks[0].1, format!("block b{} has no terminator", raw(b))));
                    }
                    return Ok(State::Resume(self.define_resume(n, pos)?));
                }
                let Some((b, false)) = block else {
                    return Err(RawError::new(line.pos(), "expected a block header `bN label:`, `resume rN {` or `}`"));
                };
                let terminated = self.inst_line(b, &mut line)?;
                line.done()?;
                Ok(State::Function { block: Some((b, terminated)) })
            }
        }
    }

    fn top(&mut self, mut line: Line) -> Result<State, RawError> {
        let start = line.pos();
        let kind = match line.peek() {
            Some(Tok::Ident(w)) if *w == "pure" => {
                line.bump();
                let f = line.name("a function name")?;
                line.done()?;
                self.module.pure.push(f);
                return Ok(State::Top);
            }
            Some(Tok::Ident(w)) if *w == "immutable" => {
                line.bump();
                let class = line.name("a class name")?;
                line.punct("(")?;
                let mut fields = Vec::new();
                while !line.is_punct(")") {
                    if !fields.is_empty() {
                        line.punct(",")?;
                    }
                    fields.push(line.name("a field name")?);
                }
                line.punct(")")?;
                line.done()?;
                self.module.immutable.push((class, fields));
                return Ok(State::Top);
            }
            Some(Tok::Ident(w)) if *w == "main" => FunctionKind::Main,
            Some(Tok::Ident(w)) if *w == "function" => FunctionKind::Function,
            Some(Tok::Ident(w)) if *w == "trace" => FunctionKind::Trace,
            _ => return Err(line.error("`pure`, `immutable`, `main`, `function` or `trace`")),
        };
        line.bump();
        let name = line.name("a function name")?;
        let mut func = Function {
            kind,
            name,
            params: Vec::new(),
            entry: la_arena::Idx::from_raw(la_arena::RawIdx::from_u32(0)),
            layout: Vec::new(),
            blocks: Arena::new(),
            insts: Arena::new(),
            values: Arena::new(),
            resumes: Arena::new(),
            sites: Default::default(),
        };
        func.blocks.alloc(BlockData {
            name: None,
            phis: Default::default(),
            insts: Default::default(),
            term: placeholder(),
        });
        self.open = Some(Open { func, pos: start, defined_resumes: Default::default() });
        line.punct("(")?;
        while !line.is_punct(")") {
            if !self.func().params.is_empty() {
                line.punct(",")?;
            }
            let v = self.def(&mut line)?;
            let n = self.func().params.len() as u32;
            let f = self.func();
            f.values[v].def = ValueDef::Param(n);
            f.params.push(v);
        }
        line.punct(")")?;
        line.punct("{")?;
        line.done()?;
        Ok(State::Function { block: None })
    }

    /// `vN` or `vN:name`; sets the name.
    fn def(&mut self, line: &mut Line) -> Result<ValueId, RawError> {
        let Some(n) = numbered(line.peek(), 'v') else { return Err(line.error("a value like v3")) };
        line.bump();
        let v = self.value(n);
        let name = match line.peek() {
            Some(Tok::Atom(s)) => {
                let s = Symbol::intern(s);
                line.bump();
                Some(s)
            }
            _ => None,
        };
        if self.func().values[v].def != ValueDef::Detached {
            return Err(RawError::new(line.pos(), format!("v{n} is defined twice")));
        }
        self.func().values[v].name = name;
        Ok(v)
    }

    fn operand(&mut self, line: &mut Line) -> Result<Operand, RawError> {
        if let Some(n) = numbered(line.peek(), 'v') {
            line.bump();
            return Ok(Operand::Value(self.value(n)));
        }
        match line.peek() {
            Some(Tok::Int(_) | Tok::Atom(_) | Tok::Punct("[")) => Ok(Operand::Const(line.constant()?)),
            _ => Err(line.error("a value (vN) or a constant")),
        }
    }

    /// `a, b, c` up to (not including) `close`.
    fn operand_list(&mut self, line: &mut Line, close: &str) -> Result<Vec<Operand>, RawError> {
        let mut out = Vec::new();
        while !line.is_punct(close) {
            if !out.is_empty() {
                line.punct(",")?;
            }
            out.push(self.operand(line)?);
        }
        Ok(out)
    }

    fn block_ref(&mut self, line: &mut Line) -> Result<BlockId, RawError> {
        let Some(n) = numbered(line.peek(), 'b') else { return Err(line.error("a block like b2")) };
        line.bump();
        Ok(self.block(n))
    }

    fn resume_ref(&mut self, line: &mut Line) -> Result<ResumeId, RawError> {
        let Some(n) = numbered(line.peek(), 'r') else { return Err(line.error("a resume record like r0")) };
        line.bump();
        Ok(la_arena::Idx::from_raw(la_arena::RawIdx::from_u32(n)))
    }

    /// One instruction or terminator line of block `b`; returns whether it
    /// was the terminator.
    fn inst_line(&mut self, b: BlockId, line: &mut Line) -> Result<bool, RawError> {
        let word = match line.peek() {
            Some(Tok::Ident(w)) => *w,
            _ => return Err(line.error("an instruction or a terminator")),
        };
        if let Some(term) = self.terminator(word, line)? {
            self.func().blocks[b].term = term;
            return Ok(true);
        }
        let result = if numbered(line.peek(), 'v').is_some() {
            let v = self.def(line)?;
            line.punct("=")?;
            Some(v)
        } else {
            None
        };
        let pos = line.pos();
        let Some(&Tok::Ident(word)) = line.bump() else {
            return Err(RawError::new(pos, "expected an instruction"));
        };
        let kind = match word {
            "phi" => {
                line.punct("[")?;
                let mut inputs = Vec::new();
                while !line.is_punct("]") {
                    if !inputs.is_empty() {
                        line.punct(",")?;
                    }
                    let from = self.block_ref(line)?;
                    line.punct(":")?;
                    inputs.push((from, self.operand(line)?));
                }
                line.punct("]")?;
                InstKind::Phi(PhiInputs::from_vec(inputs))
            }
            "check_bound" => InstKind::CheckBound(self.operand(line)?),
            "iterations" => InstKind::Iterations(self.operand(line)?),
            "unbound" => InstKind::Unbound(line.name("a variable name")?),
            "new" => InstKind::New(line.name("a class name")?),
            "get" | "set" => {
                let proven = object_proof(line, pos)?;
                let obj = self.operand(line)?;
                line.punct(",")?;
                let field = line.name("a field name")?;
                if word == "get" {
                    InstKind::Get { obj, field, proven }
                } else {
                    line.punct(",")?;
                    InstKind::Set { obj, field, value: self.operand(line)?, proven }
                }
            }
            "walk" => {
                let obj = self.operand(line)?;
                line.punct(",")?;
                let field = line.name("a field name")?;
                line.punct(",")?;
                let pos = line.pos();
                let links = match line.constant()? {
                    Value::Int(n) if n > 0 && n <= i64::from(u32::MAX) => n as u32,
                    _ => return Err(RawError::new(pos, "expected a positive count of links")),
                };
                InstKind::Walk { obj, field, links }
            }
            "call" | "missing_op" => {
                let name = line.name("a name")?;
                line.punct("(")?;
                let args = Args::from_vec(self.operand_list(line, ")")?);
                line.punct(")")?;
                if word == "call" {
                    InstKind::Call { func: name, args }
                } else {
                    InstKind::Op { op: Operator::Unknown(name), form: Form::Generic, args }
                }
            }
            "guard_true" | "guard_false" | "guard_value" | "guard_class" | "guard_not_class" | "guard_link"
            | "guard_int" | "guard_row" | "guard_at" | "guard_cold" => {
                let o = self.operand(line)?;
                line.punct(",")?;
                let kind = match word {
                    "guard_true" => GuardKind::True(o),
                    "guard_false" => GuardKind::False(o),
                    "guard_cold" => GuardKind::Cold(o),
                    "guard_value" => {
                        let c = line.constant()?;
                        line.punct(",")?;
                        GuardKind::Value(o, c)
                    }
                    "guard_int" | "guard_row" => {
                        let bound = |line: &mut Line| {
                            let pos = line.pos();
                            match line.constant()? {
                                Value::Int(n) => {
                                    line.punct(",")?;
                                    Ok(n)
                                }
                                _ => Err(RawError::new(pos, "expected an integer bound")),
                            }
                        };
                        let lo = bound(line)?;
                        let hi = bound(line)?;
                        if word == "guard_row" {
                            let class = line.name("a class name")?;
                            line.punct(",")?;
                            let next = line.name("a field name")?;
                            line.punct(",")?;
                            let prev = line.name("a field name")?;
                            line.punct(",")?;
                            let pos = line.pos();
                            let Value::Int(stride) = line.constant()? else {
                                return Err(RawError::new(pos, "expected a stride in bytes"));
                            };
                            line.punct(",")?;
                            line.keyword("row")?;
                            let pos = line.pos();
                            let row = match line.constant()? {
                                Value::Int(n) => u8::try_from(n).map_err(|_| RawError::new(pos, "expected a row"))?,
                                _ => return Err(RawError::new(pos, "expected a row")),
                            };
                            line.punct(",")?;
                            GuardKind::Row(o, crate::RowSpan { lo, hi, class, next, prev, stride, row })
                        } else {
                            GuardKind::Int(o, lo, hi)
                        }
                    }
                    "guard_at" => {
                        let base = self.operand(line)?;
                        line.punct(",")?;
                        let pos = line.pos();
                        let Value::Int(delta) = line.constant()? else {
                            return Err(RawError::new(pos, "expected a distance in bytes"));
                        };
                        line.punct(",")?;
                        GuardKind::At(o, base, delta)
                    }
                    _ => {
                        let class = line.name("a class name")?;
                        line.punct(",")?;
                        match word {
                            "guard_class" => GuardKind::Class(o, class),
                            "guard_link" => GuardKind::Link(o, class),
                            _ => GuardKind::NotClass(o, class),
                        }
                    }
                };
                let resume = self.resume_ref(line)?;
                line.keyword("else")?;
                InstKind::Guard { kind, resume, label: line.name("a label")? }
            }
            name => {
                let Some(op) = Op::from_name(name) else {
                    return Err(RawError::new(pos, format!("unknown instruction `{name}`")));
                };
                let form = if line.is_punct(".") {
                    line.bump();
                    match line.bump() {
                        Some(Tok::Ident(s)) if *s == "int" => Form::Int,
                        Some(Tok::Ident(s)) if *s == "word" => Form::Word,
                        _ => return Err(RawError::new(pos, "expected the form `.int` or `.word`")),
                    }
                } else {
                    Form::Generic
                };
                let args = Args::from_vec(self.operand_list_to_end(line)?);
                if args.len() != op.arity() {
                    return Err(RawError::new(pos, format!("`{name}` takes {} operand(s)", op.arity())));
                }
                InstKind::Op { op: Operator::Known(op), form, args }
            }
        };
        if kind.has_result() != result.is_some() {
            let msg = if kind.has_result() {
                "this instruction defines a value: write `vN = ...`"
            } else {
                "this instruction defines no value"
            };
            return Err(RawError::new(pos, msg));
        }
        let f = self.func();
        let i = f.insts.alloc(InstData { kind, result });
        if let Some(v) = result {
            f.values[v].def = ValueDef::Inst(i);
        }
        let data = &mut f.blocks[b];
        // Phis written before every ordinary instruction are the block's
        // phis; a phi written later stays where it is (the checker says so).
        if matches!(f.insts[i].kind, InstKind::Phi(_)) && data.insts.is_empty() {
            data.phis.push(i);
        } else {
            data.insts.push(i);
        }
        Ok(false)
    }

    fn operand_list_to_end(&mut self, line: &mut Line) -> Result<Vec<Operand>, RawError> {
        let mut out = Vec::new();
        while line.peek().is_some() {
            if !out.is_empty() {
                line.punct(",")?;
            }
            out.push(self.operand(line)?);
        }
        Ok(out)
    }

    fn terminator(&mut self, word: &str, line: &mut Line) -> Result<Option<Terminator>, RawError> {
        let two_blocks = |p: &mut Parser, line: &mut Line| -> Result<(BlockId, BlockId), RawError> {
            line.punct(",")?;
            let a = p.block_ref(line)?;
            line.punct(",")?;
            Ok((a, p.block_ref(line)?))
        };
        let term = match word {
            "jump" => {
                line.bump();
                Terminator::Jump(self.block_ref(line)?)
            }
            "branch" => {
                line.bump();
                let cond = self.operand(line)?;
                let (then_block, else_block) = two_blocks(self, line)?;
                Terminator::Branch { cond, then_block, else_block }
            }
            "if_class" => {
                line.bump();
                let obj = self.operand(line)?;
                line.punct(",")?;
                let class = line.name("a class name")?;
                let (then_block, else_block) = two_blocks(self, line)?;
                Terminator::IfClass { obj, class, then_block, else_block }
            }
            "print" => {
                line.bump();
                Terminator::Print(self.operand(line)?)
            }
            "return" => {
                line.bump();
                Terminator::Return(self.operand(line)?)
            }
            "exit" => {
                line.bump();
                let resume = self.resume_ref(line)?;
                line.keyword("to")?;
                Terminator::Exit { resume, label: line.name("a label")? }
            }
            "jump_trace" => {
                line.bump();
                let target = line.name("a trace name")?;
                line.punct("(")?;
                let args = Args::from_vec(self.operand_list(line, ")")?);
                line.punct(")")?;
                Terminator::JumpTrace { target, args }
            }
            "trap" => {
                line.bump();
                let pos = line.pos();
                let Some(&Tok::Ident(kind)) = line.bump() else {
                    return Err(RawError::new(pos, "expected a trap kind"));
                };
                if kind == "return_outside_function" {
                    return Ok(Some(Terminator::Trap(Trap::ReturnOutsideFunction)));
                }
                if kind == "unreachable" {
                    return Ok(Some(Terminator::Trap(Trap::Unreachable)));
                }
                line.punct("(")?;
                let n = line.name("a name")?;
                let trap = match kind {
                    "error" => Trap::Error(n),
                    "unknown_label" => Trap::UnknownLabel(n),
                    "unknown_function" => Trap::UnknownFunction(n),
                    "argument_count" => {
                        line.punct(",")?;
                        let expected = count(line)?;
                        line.punct(",")?;
                        Trap::ArgumentCount { func: n, expected, got: count(line)? }
                    }
                    _ => return Err(RawError::new(pos, format!("unknown trap `{kind}`"))),
                };
                line.punct(")")?;
                Terminator::Trap(trap)
            }
            _ => return Ok(None),
        };
        Ok(Some(term))
    }

    fn resume_value(&mut self, line: &mut Line) -> Result<ResumeValue, RawError> {
        if line.is_punct("@") {
            line.bump();
            return Ok(ResumeValue::Virtual(count(line)? as u32));
        }
        Ok(ResumeValue::Operand(self.operand(line)?))
    }

    fn bindings(&mut self, line: &mut Line) -> Result<Vec<(Symbol, ResumeValue)>, RawError> {
        line.punct("[")?;
        let mut out = Vec::new();
        while !line.is_punct("]") {
            if !out.is_empty() {
                line.punct(",")?;
            }
            let k = line.name("a variable name")?;
            line.punct("=")?;
            out.push((k, self.resume_value(line)?));
        }
        line.punct("]")?;
        Ok(out)
    }

    fn resume_line(&mut self, r: ResumeId, line: &mut Line) -> Result<(), RawError> {
        if line.is_keyword("frame") {
            line.bump();
            let function = if line.is_punct("[") { None } else { Some(line.name("a function name")?) };
            let env = self.bindings(line)?;
            let call = if line.is_keyword("call") {
                line.bump();
                let dst = line.name("a variable name")?;
                line.keyword("then")?;
                Some((dst, line.name("a label")?))
            } else {
                None
            };
            self.func().resumes[r].frames.push(ResumeFrame { function, env, call });
            return Ok(());
        }
        if line.is_keyword("virtual") {
            line.bump();
            line.punct("@")?;
            let pos = line.pos();
            let index = count(line)?;
            if index != self.func().resumes[r].virtuals.len() {
                return Err(RawError::new(pos, "virtual objects are numbered in order from @0"));
            }
            let class = line.name("a class name")?;
            let fields = self.bindings(line)?;
            self.func().resumes[r].virtuals.push(VirtualObject { class, fields });
            return Ok(());
        }
        Err(line.error("`frame`, `virtual` or `}`"))
    }
}

fn count(line: &mut Line) -> Result<usize, RawError> {
    match line.peek() {
        Some(Tok::Int(flowc_lang::Value::Int(i))) if *i >= 0 => {
            let n = *i as usize;
            line.bump();
            Ok(n)
        }
        _ => Err(line.error("a count")),
    }
}

fn raw(b: BlockId) -> u32 {
    b.into_raw().into_u32()
}

fn placeholder() -> Terminator {
    Terminator::Trap(Trap::ReturnOutsideFunction)
}
