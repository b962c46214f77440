//! Recursive-descent parser for Python over the token stream of `lexer`.
//!
//! Everything a kernel body may contain is parsed into `ast` nodes with
//! CPython's positions (an operator node starts where its left operand starts;
//! parentheses are not part of an expression's position). Top-level statements
//! that are not function definitions (imports, classes, `if __name__ ...`,
//! test code) are passed over as balanced token runs, so any real module
//! parses whatever it holds around its kernels.

use super::ast::*;
use super::lexer::{NameSet, Token, TokenKind, tokenize, word};
use crate::lower::LowerError;
use bumpalo::Bump;
use bumpalo::collections::{String as BString, Vec as BVec};

type PResult<T> = Result<T, LowerError>;

struct Parser<'t, 'a> {
    toks: &'t [Token<'a>],
    i: usize,
    /// `toks[i]`, kept at hand: the parser looks at the current token several
    /// times a token, and a field read needs no index and no bounds check.
    /// A reference, not a copy: moving to the next token copies no token.
    cur: &'t Token<'a>,
    /// Where the tree's nodes and lists go (see `ast::with_arena`).
    arena: &'a Bump,
    /// Nested constructs the parser is inside of (see [`Parser::enter`]).
    nest: usize,
}

/// The deepest syntax tree accepted: CPython's parser stops near this depth
/// (`RecursionError: maximum recursion depth exceeded during ast
/// construction`, about 3,000 less the frames of the code calling it), and
/// the lowering's walks of a tree recurse as deep as it is.
pub const MAX_TREE_DEPTH: usize = 2900;

fn too_deep(line: usize, col: usize) -> LowerError {
    LowerError {
        line,
        col,
        message: format!(
            "too many nested expressions and statements (more than {MAX_TREE_DEPTH} levels; \
             Python stops with RecursionError: maximum recursion depth exceeded during ast construction)"
        ),
    }
}

const COMPOUND_KEYWORDS: &[&str] = &["if", "while", "for", "try", "with", "def", "class", "async"];

fn pos_of(t: &Token<'_>) -> Pos {
    Pos {
        line: t.line(),
        col: t.col(),
    }
}

impl<'t, 'a> Parser<'t, 'a> {
    /// Enters a construct the parser recurses into (a unary operand, an
    /// `else` of a conditional expression, an `elif`, ...): these are what
    /// can nest without brackets, which the lexer bounds. Paired with
    /// [`Parser::leave`] on success; an error ends the parse (or the module
    /// level resets the count).
    #[inline(always)]
    fn enter(&mut self) -> PResult<()> {
        self.nest += 1;
        if self.nest > MAX_TREE_DEPTH {
            let t = self.peek();
            return Err(too_deep(t.line(), t.col()));
        }
        Ok(())
    }

    #[inline(always)]
    fn leave(&mut self) {
        self.nest -= 1;
    }

    fn alloc<T>(&self, value: T) -> &'a T {
        self.arena.alloc(value)
    }

    fn vec<T>(&self) -> BVec<'a, T> {
        BVec::new_in(self.arena)
    }

    /// An empty list with room for `n` items: a list growing from empty
    /// reallocates at 1, 2 and 4 items, each time copying (its items'
    /// children were allocated after it, so it cannot grow in place).
    fn vec_for<T>(&self, n: usize) -> BVec<'a, T> {
        BVec::with_capacity_in(n, self.arena)
    }

    /// A list that starts with `first` (most hold a few items).
    fn vec1<T>(&self, first: T) -> BVec<'a, T> {
        let mut v = self.vec_for(4);
        v.push(first);
        v
    }

    fn peek(&self) -> &'t Token<'a> {
        self.cur
    }

    fn peek_at(&self, k: usize) -> &'t Token<'a> {
        &self.toks[(self.i + k).min(self.toks.len() - 1)]
    }

    fn bump(&mut self) -> &'t Token<'a> {
        let t = self.cur;
        if self.i + 1 < self.toks.len() {
            self.i += 1;
            self.cur = &self.toks[self.i];
        }
        t
    }

    /// Goes back to token `i` (after a statement failed to parse).
    fn seek(&mut self, i: usize) {
        self.i = i;
        self.cur = &self.toks[i];
    }

    // Inlined with a literal argument, `word(op)` folds to a constant and
    // each check is one integer compare. The word alone tells an operator
    // or a keyword: no token of another kind packs to it (names and
    // numbers hold letters or digits, strings quotes, the rest a line
    // break or no text; see `word_tells_operators_and_keywords`).
    #[inline(always)]
    fn is_op(&self, op: &str) -> bool {
        self.peek().word == word(op)
    }

    #[inline(always)]
    fn is_kw(&self, kw: &str) -> bool {
        self.peek().word == word(kw)
    }

    #[inline(always)]
    fn eat_op(&mut self, op: &str) -> bool {
        if self.is_op(op) {
            self.bump();
            true
        } else {
            false
        }
    }

    #[inline(always)]
    fn eat_kw(&mut self, kw: &str) -> bool {
        if self.is_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn error_here(&self, message: impl Into<String>) -> LowerError {
        let t = self.peek();
        LowerError {
            line: t.line(),
            col: t.col(),
            message: message.into(),
        }
    }

    fn unexpected(&self) -> LowerError {
        let t = self.peek();
        let what = match t.kind {
            TokenKind::Newline => "end of line".to_string(),
            TokenKind::Indent => "indent".to_string(),
            TokenKind::Dedent => "dedent".to_string(),
            TokenKind::EndMarker => "end of file".to_string(),
            _ => format!("'{}'", t.text),
        };
        self.error_here(format!("invalid syntax: unexpected {what}"))
    }

    fn expect_op(&mut self, op: &str) -> PResult<()> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(self.error_here(format!("invalid syntax: expected '{op}'")))
        }
    }

    fn expect_kw(&mut self, kw: &str) -> PResult<()> {
        if self.eat_kw(kw) {
            Ok(())
        } else {
            Err(self.error_here(format!("invalid syntax: expected '{kw}'")))
        }
    }

    fn expect_name(&mut self) -> PResult<&'a str> {
        let t = self.peek();
        if t.kind == TokenKind::Name && !is_keyword_word(t.word) {
            self.bump();
            Ok(t.text)
        } else {
            Err(self.error_here("invalid syntax: expected a name"))
        }
    }

    fn expect_newline(&mut self) -> PResult<()> {
        match self.peek().kind {
            TokenKind::Newline => {
                self.bump();
                Ok(())
            }
            TokenKind::EndMarker | TokenKind::Dedent => Ok(()),
            _ => Err(self.unexpected()),
        }
    }

    // ---------------------------------------------------------------- module

    fn module(&mut self) -> PResult<Module<'a>> {
        let mut body = self.vec();
        loop {
            // A statement that failed and was passed over may have left its count.
            self.nest = 0;
            match self.peek().kind {
                TokenKind::EndMarker => break,
                TokenKind::Newline => {
                    self.bump();
                }
                TokenKind::Indent => return Err(self.error_here("unexpected indent")),
                _ => {
                    if self.is_op("@") || self.is_kw("def") {
                        let start = self.i;
                        match self.decorated_or_def() {
                            Ok(stmt) => body.push(stmt),
                            // A plain Python function may use syntax the kernel parser does not
                            // model; only Warp functions have to parse.
                            Err(e) if self.is_warp_definition(start) => return Err(e),
                            Err(_) => {
                                self.seek(start);
                                while self.is_op("@") {
                                    self.skip_statement()?;
                                }
                                body.push(self.skip_statement()?);
                            }
                        }
                    } else if self.is_kw("class") {
                        // A plain class: kernels may read its attributes as
                        // constants (`Flags.ENABLED`). Its body need not parse.
                        let start = self.i;
                        match self.plain_class() {
                            Ok(stmt) => body.push(stmt),
                            Err(_) => {
                                self.seek(start);
                                body.push(self.skip_statement()?);
                            }
                        }
                    } else if self.peek().kind == TokenKind::Name
                        && !COMPOUND_KEYWORDS.contains(&self.peek().text)
                        && !matches!(self.peek().text, "import" | "from")
                    {
                        // Simple statements at module level: `NAME = value` (kernels may read
                        // it as a constant), `wp.config.x = ...`, `wp.set_module_options(...)`.
                        let start = self.i;
                        let len = body.len();
                        if self.simple_statements(&mut body).is_err() {
                            body.truncate(len);
                            self.seek(start);
                            body.push(self.skip_statement()?);
                        }
                    } else {
                        body.push(self.skip_statement()?);
                    }
                }
            }
        }
        Ok(Module {
            body: body.into_bump_slice(),
        })
    }

    /// Whether the decorators starting at token `start` mark a Warp kernel or function.
    fn is_warp_definition(&self, start: usize) -> bool {
        let mut k = start;
        while k < self.toks.len()
            && !(self.toks[k].kind == TokenKind::Name && self.toks[k].text == "def")
        {
            if self.toks[k].kind == TokenKind::Name
                && matches!(self.toks[k].text, "kernel" | "func")
            {
                return true;
            }
            k += 1;
        }
        false
    }

    /// Passes over one top-level statement that is not a function definition,
    /// keeping only its kind (for imports, which the lowering reads) and position.
    fn skip_statement(&mut self) -> PResult<Stmt<'a>> {
        let start = self.peek();
        if start.kind == TokenKind::Name && (start.text == "import" || start.text == "from") {
            let save = self.i;
            if let Ok(stmt) = self.import_statement() {
                if self.expect_newline().is_ok() {
                    return Ok(stmt);
                }
            }
            self.seek(save);
        }
        let kind = match start.text {
            "import" => "Import",
            "from" => "ImportFrom",
            "class" => "ClassDef",
            _ if start.kind == TokenKind::Name && COMPOUND_KEYWORDS.contains(&start.text) => {
                "Compound"
            }
            _ => "Statement",
        };
        let mut last = start;
        while !matches!(self.peek().kind, TokenKind::Newline | TokenKind::EndMarker) {
            last = self.bump();
        }
        self.bump();
        if last.kind == TokenKind::Op && last.text == ":" && self.peek().kind == TokenKind::Indent {
            self.skip_block();
        }
        Ok(Stmt {
            kind: StmtKind::Other(kind),
            pos: pos_of(start),
        })
    }

    fn dotted_name(&mut self) -> PResult<&'a str> {
        let first = self.expect_name()?;
        if !self.is_op(".") {
            return Ok(first);
        }
        let mut name = BString::from_str_in(first, self.arena);
        while self.eat_op(".") {
            name.push('.');
            name.push_str(self.expect_name()?);
        }
        Ok(name.into_bump_str())
    }

    fn alias(&mut self) -> PResult<Option<&'a str>> {
        if self.eat_kw("as") {
            Ok(Some(self.expect_name()?))
        } else {
            Ok(None)
        }
    }

    /// `import a.b as c, d` or `from a import (b as c, d)`.
    fn import_statement(&mut self) -> PResult<Stmt<'a>> {
        let t = self.bump();
        if t.text == "import" {
            let mut names = self.vec();
            loop {
                let module = self.dotted_name()?;
                names.push((module, self.alias()?));
                if !self.eat_op(",") {
                    break;
                }
            }
            return Ok(Stmt {
                kind: StmtKind::Import(names.into_bump_slice()),
                pos: pos_of(t),
            });
        }
        let mut module = BString::new_in(self.arena);
        while self.is_op(".") || self.is_op("...") {
            module.push_str(self.bump().text);
        }
        if !self.is_kw("import") {
            module.push_str(self.dotted_name()?);
        }
        self.expect_kw("import")?;
        let paren = self.eat_op("(");
        let mut names = self.vec();
        loop {
            if self.eat_op("*") {
                names.push(("*", None));
            } else {
                let name = self.expect_name()?;
                names.push((name, self.alias()?));
            }
            if !self.eat_op(",") || (paren && self.is_op(")")) {
                break;
            }
        }
        if paren {
            self.expect_op(")")?;
        }
        Ok(Stmt {
            kind: StmtKind::ImportFrom(module.into_bump_str(), names.into_bump_slice()),
            pos: pos_of(t),
        })
    }

    /// Skips an INDENT ... DEDENT block including nested blocks.
    fn skip_block(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.bump().kind {
                TokenKind::Indent => depth += 1,
                TokenKind::Dedent => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                TokenKind::EndMarker => return,
                _ => {}
            }
        }
    }

    fn decorated_or_def(&mut self) -> PResult<Stmt<'a>> {
        let first = self.peek();
        let mut decorators = self.vec();
        while self.eat_op("@") {
            decorators.push(self.namedexpr_test()?);
            self.expect_newline()?;
        }
        let struct_decorator = decorators.iter().any(|d| match &d.kind {
            ExprKind::Attribute(_, a) => *a == "struct",
            ExprKind::Name(n) => *n == "struct",
            _ => false,
        });
        if self.is_kw("def") {
            self.funcdef(decorators.into_bump_slice(), first.line())
        } else if self.is_kw("class") && struct_decorator {
            self.class_def(decorators.into_bump_slice(), first)
        } else if self.is_kw("class") || self.is_kw("async") {
            let mut s = self.skip_statement()?;
            s.pos = pos_of(first);
            Ok(s)
        } else {
            Err(self.error_here("invalid syntax: expected 'def' or 'class' after decorator"))
        }
    }

    /// `class Name(bases): body`, at `class`; `first` is the statement's
    /// first token (its first decorator's `@`).
    fn class_def(&mut self, decorators: &'a [Expr<'a>], first: &'t Token<'a>) -> PResult<Stmt<'a>> {
        self.bump();
        let name = self.expect_name()?;
        let mut bases = self.vec();
        if self.eat_op("(") {
            while !self.eat_op(")") {
                bases.push(self.test()?);
                self.eat_op(",");
            }
        }
        self.expect_op(":")?;
        let body = self.suite()?.into_bump_slice();
        Ok(Stmt {
            kind: StmtKind::ClassDef(self.alloc(ClassDef {
                name,
                bases: bases.into_bump_slice(),
                decorators,
                body,
            })),
            pos: pos_of(first),
        })
    }

    /// An undecorated top-level class.
    fn plain_class(&mut self) -> PResult<Stmt<'a>> {
        let first = self.peek();
        self.class_def(&[], first)
    }

    fn funcdef(&mut self, decorators: &'a [Expr<'a>], first_line: usize) -> PResult<Stmt<'a>> {
        let def = self.bump();
        let name = self.expect_name()?;
        self.expect_op("(")?;
        let mut args = self.vec_for(8);
        let mut has_complex_args = false;
        let mut has_defaults = false;
        while !self.is_op(")") {
            if self.eat_op("*") || self.eat_op("**") {
                has_complex_args = true;
                if self.is_op(",") || self.is_op(")") {
                    // bare `*` separator
                } else {
                    self.expect_name()?;
                    if self.eat_op(":") {
                        self.test()?;
                    }
                }
            } else if self.eat_op("/") {
                has_complex_args = true;
            } else {
                let t = self.peek();
                let arg_name = self.expect_name()?;
                let annotation = if self.eat_op(":") {
                    Some(self.test()?)
                } else {
                    None
                };
                let default = if self.eat_op("=") {
                    has_defaults = true;
                    Some(self.test()?)
                } else {
                    None
                };
                args.push(Arg {
                    name: arg_name,
                    annotation,
                    default,
                    pos: pos_of(t),
                });
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        let returns = if self.eat_op("->") {
            Some(self.test()?)
        } else {
            None
        };
        self.expect_op(":")?;
        let body = self.suite()?;
        let end_line = self.peek().line();
        Ok(Stmt {
            kind: StmtKind::FunctionDef(self.alloc(FunctionDef {
                name,
                args: args.into_bump_slice(),
                has_complex_args,
                has_defaults,
                returns,
                decorators,
                body: body.into_bump_slice(),
                first_line,
                end_line,
            })),
            pos: pos_of(def),
        })
    }

    // ------------------------------------------------------------ statements

    fn suite(&mut self) -> PResult<BVec<'a, Stmt<'a>>> {
        if self.peek().kind == TokenKind::Newline {
            self.bump();
            if self.peek().kind != TokenKind::Indent {
                return Err(self.error_here("expected an indented block"));
            }
            self.bump();
            let mut body = self.vec_for(8);
            while !matches!(self.peek().kind, TokenKind::Dedent | TokenKind::EndMarker) {
                self.statement(&mut body)?;
            }
            self.bump();
            Ok(body)
        } else {
            let mut body = self.vec();
            self.simple_statements(&mut body)?;
            Ok(body)
        }
    }

    /// Appends the statement (or the `;`-separated simple statements) at the
    /// current token to `out`.
    fn statement(&mut self, out: &mut BVec<'a, Stmt<'a>>) -> PResult<()> {
        let t = self.peek();
        if t.kind == TokenKind::Indent {
            return Err(self.error_here("unexpected indent"));
        }
        if t.kind == TokenKind::Op && t.text == "@" {
            out.push(self.decorated_or_def()?);
            return Ok(());
        }
        if t.kind == TokenKind::Name {
            match t.text {
                "if" => {
                    out.push(self.if_stmt()?);
                    return Ok(());
                }
                "while" => {
                    self.bump();
                    let test = self.namedexpr_test()?;
                    self.expect_op(":")?;
                    let body = self.suite()?.into_bump_slice();
                    let orelse = self.else_clause()?;
                    out.push(Stmt {
                        kind: StmtKind::While(test, body, orelse),
                        pos: pos_of(t),
                    });
                    return Ok(());
                }
                "for" => {
                    self.bump();
                    let target = self.target_list()?;
                    self.expect_kw("in")?;
                    let iter = self.testlist()?;
                    self.expect_op(":")?;
                    let body = self.suite()?.into_bump_slice();
                    let orelse = self.else_clause()?;
                    out.push(Stmt {
                        kind: StmtKind::For(target, iter, body, orelse),
                        pos: pos_of(t),
                    });
                    return Ok(());
                }
                "def" => {
                    out.push(self.funcdef(&[], t.line())?);
                    return Ok(());
                }
                "try" | "with" | "class" | "async" => {
                    out.push(self.other_compound()?);
                    return Ok(());
                }
                "match" if self.looks_like_match() => {
                    out.push(self.other_compound()?);
                    return Ok(());
                }
                _ => {}
            }
        }
        self.simple_statements(out)
    }

    /// `match` is a soft keyword: a statement starting with it is a match
    /// statement only when its line ends with ':'.
    fn looks_like_match(&self) -> bool {
        let next = self.peek_at(1);
        if next.kind == TokenKind::Op && (next.text == "=" || next.text == "." || next.text == "(")
        {
            // `match = ...`, `match.group()`, `match(...)` — most likely a call or assignment
            let mut k = 1;
            while !matches!(
                self.peek_at(k).kind,
                TokenKind::Newline | TokenKind::EndMarker
            ) {
                k += 1;
            }
            let last = self.peek_at(k - 1);
            return last.kind == TokenKind::Op && last.text == ":" && next.text == "(";
        }
        let mut k = 1;
        while !matches!(
            self.peek_at(k).kind,
            TokenKind::Newline | TokenKind::EndMarker
        ) {
            k += 1;
        }
        let last = self.peek_at(k - 1);
        last.kind == TokenKind::Op && last.text == ":"
    }

    /// try/with/class/async/match and their clauses: kept as `Other`, body skipped.
    fn other_compound(&mut self) -> PResult<Stmt<'a>> {
        let start = self.peek();
        let kind = match start.text {
            "try" => "Try",
            "with" => "With",
            "class" => "ClassDef",
            "async" => "AsyncFunctionDef",
            _ => "Match",
        };
        self.skip_clause()?;
        // Sibling clauses of try (except/else/finally) and match cases.
        while self.is_kw("except") || self.is_kw("else") || self.is_kw("finally") {
            self.skip_clause()?;
        }
        Ok(Stmt {
            kind: StmtKind::Other(kind),
            pos: pos_of(start),
        })
    }

    fn skip_clause(&mut self) -> PResult<()> {
        let mut last = self.peek();
        while !matches!(self.peek().kind, TokenKind::Newline | TokenKind::EndMarker) {
            last = self.bump();
        }
        self.bump();
        if last.kind == TokenKind::Op && last.text == ":" {
            if self.peek().kind != TokenKind::Indent {
                return Err(self.error_here("expected an indented block"));
            }
            self.skip_block();
        }
        Ok(())
    }

    fn else_clause(&mut self) -> PResult<&'a [Stmt<'a>]> {
        if self.eat_kw("else") {
            self.expect_op(":")?;
            Ok(self.suite()?.into_bump_slice())
        } else {
            Ok(&[])
        }
    }

    fn if_stmt(&mut self) -> PResult<Stmt<'a>> {
        let t = self.bump(); // `if` or `elif`
        let test = self.namedexpr_test()?;
        self.expect_op(":")?;
        let body = self.suite()?.into_bump_slice();
        let orelse = if self.is_kw("elif") {
            self.enter()?;
            let elif = self.if_stmt()?;
            self.leave();
            std::slice::from_ref(self.alloc(elif))
        } else {
            self.else_clause()?
        };
        Ok(Stmt {
            kind: StmtKind::If(test, body, orelse),
            pos: pos_of(t),
        })
    }

    fn simple_statements(&mut self, out: &mut BVec<'a, Stmt<'a>>) -> PResult<()> {
        out.push(self.small_statement()?);
        while self.eat_op(";") {
            if matches!(self.peek().kind, TokenKind::Newline | TokenKind::EndMarker) {
                break;
            }
            out.push(self.small_statement()?);
        }
        self.expect_newline()
    }

    fn small_statement(&mut self) -> PResult<Stmt<'a>> {
        let t = self.peek();
        let pos = pos_of(t);
        if t.kind == TokenKind::Name {
            let simple = |kind| Ok(Stmt { kind, pos });
            match t.text {
                "pass" => {
                    self.bump();
                    return simple(StmtKind::Pass);
                }
                "break" => {
                    self.bump();
                    return simple(StmtKind::Break);
                }
                "continue" => {
                    self.bump();
                    return simple(StmtKind::Continue);
                }
                "return" => {
                    self.bump();
                    let value = if self.at_statement_end() {
                        None
                    } else {
                        Some(self.testlist_star()?)
                    };
                    return simple(StmtKind::Return(value));
                }
                "assert" => {
                    self.bump();
                    let test = self.test()?;
                    let msg = if self.eat_op(",") {
                        Some(self.test()?)
                    } else {
                        None
                    };
                    return simple(StmtKind::Assert(test, msg));
                }
                "import" | "from" | "global" | "nonlocal" | "del" | "raise" => {
                    let kind = match t.text {
                        "import" => "Import",
                        "from" => "ImportFrom",
                        "global" => "Global",
                        "nonlocal" => "Nonlocal",
                        "del" => "Delete",
                        _ => "Raise",
                    };
                    while !self.at_statement_end() {
                        self.bump();
                    }
                    return simple(StmtKind::Other(kind));
                }
                _ => {}
            }
        }
        // `yield` starts an expression only here, after `=` and in brackets
        // (as in Python): an operand never is one, so it cannot nest unbounded.
        let first = if self.is_kw("yield") {
            self.yield_expr()?
        } else {
            self.testlist_star()?
        };
        if self.eat_op(":") {
            let annotation = self.test()?;
            let value = if self.eat_op("=") {
                Some(self.testlist_star()?)
            } else {
                None
            };
            return Ok(Stmt {
                kind: StmtKind::AnnAssign(first, annotation, value),
                pos,
            });
        }
        if let Some(op) = self.augassign_op() {
            self.bump();
            let value = if self.is_kw("yield") {
                self.yield_expr()?
            } else {
                self.testlist()?
            };
            return Ok(Stmt {
                kind: StmtKind::AugAssign(first, op, value),
                pos,
            });
        }
        if self.is_op("=") {
            let mut targets = self.vec1(first);
            let mut value;
            loop {
                self.bump();
                value = if self.is_kw("yield") {
                    self.yield_expr()?
                } else {
                    self.testlist_star()?
                };
                if !self.is_op("=") {
                    break;
                }
                targets.push(value);
            }
            return Ok(Stmt {
                kind: StmtKind::Assign(targets.into_bump_slice(), value),
                pos,
            });
        }
        Ok(Stmt {
            kind: StmtKind::Expr(first),
            pos,
        })
    }

    fn at_statement_end(&self) -> bool {
        matches!(self.peek().kind, TokenKind::Newline | TokenKind::EndMarker) || self.is_op(";")
    }

    fn augassign_op(&self) -> Option<BinOp> {
        let t = self.peek();
        if t.kind != TokenKind::Op {
            return None;
        }
        Some(match t.text {
            "+=" => BinOp::Add,
            "-=" => BinOp::Sub,
            "*=" => BinOp::Mult,
            "/=" => BinOp::Div,
            "//=" => BinOp::FloorDiv,
            "%=" => BinOp::Mod,
            "**=" => BinOp::Pow,
            "@=" => BinOp::MatMult,
            "<<=" => BinOp::LShift,
            ">>=" => BinOp::RShift,
            "&=" => BinOp::BitAnd,
            "|=" => BinOp::BitOr,
            "^=" => BinOp::BitXor,
            _ => return None,
        })
    }

    // ----------------------------------------------------------- expressions

    fn yield_expr(&mut self) -> PResult<Expr<'a>> {
        let t = self.bump();
        if self.eat_kw("from") {
            self.test()?;
        } else if !self.at_statement_end() && !self.is_op(")") && !self.is_op("=") {
            self.testlist_star()?;
        }
        Ok(Expr {
            kind: ExprKind::Other("Yield"),
            pos: pos_of(t),
        })
    }

    /// A comma-separated list of expressions (and starred ones); a tuple when
    /// there is a comma. Inlined, as [`Parser::test_or_star`] is.
    #[inline(always)]
    fn testlist_star(&mut self) -> PResult<Expr<'a>> {
        let first = self.test_or_star()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let pos = first.pos;
        let mut elts = self.vec1(first);
        while self.eat_op(",") {
            if self.at_expr_list_end() {
                break;
            }
            elts.push(self.test_or_star()?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(elts.into_bump_slice()),
            pos,
        })
    }

    fn testlist(&mut self) -> PResult<Expr<'a>> {
        self.testlist_star()
    }

    fn at_expr_list_end(&self) -> bool {
        let t = self.peek();
        matches!(t.kind, TokenKind::Newline | TokenKind::EndMarker)
            || (t.kind == TokenKind::Op && matches!(t.text, "=" | ")" | "]" | "}" | ":" | ";"))
            || self.augassign_op().is_some()
            || (t.kind == TokenKind::Name && t.text == "in")
    }

    fn target_list(&mut self) -> PResult<Expr<'a>> {
        let first = self.target()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let pos = first.pos;
        let mut elts = self.vec1(first);
        while self.eat_op(",") {
            if self.is_kw("in") || self.is_op("=") {
                break;
            }
            elts.push(self.target()?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(elts.into_bump_slice()),
            pos,
        })
    }

    fn target(&mut self) -> PResult<Expr<'a>> {
        if self.is_op("*") {
            let t = self.bump();
            let e = self.or_expr()?;
            return Ok(Expr {
                kind: ExprKind::Starred(self.alloc(e)),
                pos: pos_of(t),
            });
        }
        self.or_expr()
    }

    // Inlined: as a call of its own, it only passed `test`'s result on,
    // copying the expression twice (~50 instructions per list item).
    #[inline(always)]
    fn test_or_star(&mut self) -> PResult<Expr<'a>> {
        if self.is_op("*") {
            let t = self.bump();
            let e = self.or_expr()?;
            return Ok(Expr {
                kind: ExprKind::Starred(self.alloc(e)),
                pos: pos_of(t),
            });
        }
        self.namedexpr_test()
    }

    fn namedexpr_test(&mut self) -> PResult<Expr<'a>> {
        let e = self.test()?;
        if self.is_op(":=") {
            self.bump();
            self.test()?;
            return Ok(Expr {
                kind: ExprKind::Other("NamedExpr"),
                pos: e.pos,
            });
        }
        Ok(e)
    }

    fn test(&mut self) -> PResult<Expr<'a>> {
        if self.lone_atom_ahead() {
            // A name already known not to be a keyword, or a number: not
            // asked again by `atom`.
            let t = self.bump();
            if t.kind == TokenKind::Name {
                return Ok(Expr {
                    kind: ExprKind::Name(t.text),
                    pos: pos_of(t),
                });
            }
            return self.number(t);
        }
        self.enter()?;
        let e = self.test_inner();
        self.leave();
        e
    }

    fn test_inner(&mut self) -> PResult<Expr<'a>> {
        if self.is_kw("lambda") {
            let t = self.bump();
            // Parameters: names, defaults, stars — skipped up to the ':'.
            let mut depth = 0usize;
            while !(depth == 0 && self.is_op(":")) {
                if self.peek().kind == TokenKind::Newline
                    || self.peek().kind == TokenKind::EndMarker
                {
                    return Err(self.unexpected());
                }
                let tok = self.bump();
                if tok.kind == TokenKind::Op {
                    match tok.text {
                        "(" | "[" | "{" => depth += 1,
                        ")" | "]" | "}" => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                }
            }
            self.bump();
            self.test()?;
            return Ok(Expr {
                kind: ExprKind::Other("Lambda"),
                pos: pos_of(t),
            });
        }
        const NOT: u64 = word("not");
        const AWAIT: u64 = word("await");
        const MINUS: u64 = word("-");
        const PLUS: u64 = word("+");
        const TILDE: u64 = word("~");
        let t = self.peek();
        let body = match (t.kind, t.word) {
            (TokenKind::Name, NOT | AWAIT) | (TokenKind::Op, MINUS | PLUS | TILDE) => {
                self.or_test()?
            }
            // Anything else is where `or_test` would come to by way of
            // `primary`: parse that, and go on from it only if the next
            // token can continue an expression (most operands end there).
            _ => {
                let operand = self.primary()?;
                if ends_expression(self.peek()) {
                    return Ok(operand);
                }
                let operand = self.power_from(operand)?;
                let operand = self.binary_level_from(operand, 0)?;
                self.or_test_from(operand)?
            }
        };
        if self.is_kw("if") {
            self.bump();
            let test = self.or_test()?;
            self.expect_kw("else")?;
            let orelse = self.test()?;
            let pos = body.pos;
            return Ok(Expr {
                kind: ExprKind::IfExp(self.alloc(test), self.alloc(body), self.alloc(orelse)),
                pos,
            });
        }
        Ok(body)
    }

    /// Whether the expression here is a lone name or number: one followed by
    /// a token no level of an expression continues with (`,` `)` `]` `}` `:`
    /// `=`, end of line). Then every level from `test` down to `atom` would
    /// only pass the atom up; about half the atoms of a kernel are such
    /// (indices, arguments, assignment targets).
    #[inline]
    fn lone_atom_ahead(&self) -> bool {
        let t = self.peek();
        let atom = match t.kind {
            TokenKind::Number => true,
            TokenKind::Name => !is_keyword_word(t.word),
            _ => false,
        };
        atom && ends_expression(self.peek_at(1))
    }

    fn test_nocond(&mut self) -> PResult<Expr<'a>> {
        self.or_test()
    }

    fn or_test(&mut self) -> PResult<Expr<'a>> {
        // Unless it starts with `not`, the first operand of every level from
        // `or` down to the comparison is one `or_expr`: parsed here and handed
        // up, not passed up through a call per level (most tests are that).
        if self.is_kw("not") {
            return self.bool_chain("or", false);
        }
        let first = self.or_expr()?;
        self.or_test_from(first)
    }

    /// [`Parser::or_test`] once its first `or_expr` is parsed.
    #[inline(always)]
    fn or_test_from(&mut self, first: Expr<'a>) -> PResult<Expr<'a>> {
        let first = self.comparison_from(first)?;
        let first = self.bool_chain_from("and", true, first)?;
        self.bool_chain_from("or", false, first)
    }

    fn bool_chain(&mut self, kw: &str, is_and: bool) -> PResult<Expr<'a>> {
        let first = if is_and {
            self.not_test()?
        } else {
            self.bool_chain("and", true)?
        };
        self.bool_chain_from(kw, is_and, first)
    }

    /// [`Parser::bool_chain`] once its first operand is parsed.
    #[inline(always)]
    fn bool_chain_from(&mut self, kw: &str, is_and: bool, first: Expr<'a>) -> PResult<Expr<'a>> {
        if !self.is_kw(kw) {
            return Ok(first);
        }
        let pos = first.pos;
        let mut values = self.vec1(first);
        while self.eat_kw(kw) {
            values.push(if is_and {
                self.not_test()?
            } else {
                self.bool_chain("and", true)?
            });
        }
        Ok(Expr {
            kind: ExprKind::BoolOp(is_and, values.into_bump_slice()),
            pos,
        })
    }

    fn not_test(&mut self) -> PResult<Expr<'a>> {
        if self.is_kw("not") {
            let t = self.bump();
            self.enter()?;
            let operand = self.not_test()?;
            self.leave();
            return Ok(Expr {
                kind: ExprKind::UnaryOp(UnaryOp::Not, self.alloc(operand)),
                pos: pos_of(t),
            });
        }
        self.comparison()
    }

    fn comp_op(&mut self) -> Option<CmpOp> {
        const LT: u64 = word("<");
        const LE: u64 = word("<=");
        const GT: u64 = word(">");
        const GE: u64 = word(">=");
        const EQ: u64 = word("==");
        const NE: u64 = word("!=");
        const IN: u64 = word("in");
        const IS: u64 = word("is");
        const NOT: u64 = word("not");
        let t = self.peek();
        let op = match (t.kind, t.word) {
            (TokenKind::Op, LT) => CmpOp::Lt,
            (TokenKind::Op, LE) => CmpOp::LtE,
            (TokenKind::Op, GT) => CmpOp::Gt,
            (TokenKind::Op, GE) => CmpOp::GtE,
            (TokenKind::Op, EQ) => CmpOp::Eq,
            (TokenKind::Op, NE) => CmpOp::NotEq,
            (TokenKind::Name, IN) => CmpOp::In,
            (TokenKind::Name, IS) => {
                self.bump();
                return Some(if self.eat_kw("not") {
                    CmpOp::IsNot
                } else {
                    CmpOp::Is
                });
            }
            (TokenKind::Name, NOT) if self.peek_at(1).word == IN => {
                self.bump();
                self.bump();
                return Some(CmpOp::NotIn);
            }
            _ => return None,
        };
        self.bump();
        Some(op)
    }

    fn comparison(&mut self) -> PResult<Expr<'a>> {
        let left = self.or_expr()?;
        self.comparison_from(left)
    }

    /// [`Parser::comparison`] once its left operand is parsed.
    #[inline(always)]
    fn comparison_from(&mut self, left: Expr<'a>) -> PResult<Expr<'a>> {
        let mut comps = self.vec();
        while let Some(op) = self.comp_op() {
            comps.push((op, self.or_expr()?));
        }
        if comps.is_empty() {
            return Ok(left);
        }
        let pos = left.pos;
        Ok(Expr {
            kind: ExprKind::Compare(self.alloc(left), comps.into_bump_slice()),
            pos,
        })
    }

    /// Python's binary operators from `|` up to `*`-like, by precedence
    /// climbing: one loop instead of one recursion per level, which is what
    /// every operand of every expression would otherwise pass through.
    fn binary_level(&mut self, min_precedence: u8) -> PResult<Expr<'a>> {
        let left = self.factor()?;
        self.binary_level_from(left, min_precedence)
    }

    /// [`Parser::binary_level`] once its first operand is parsed.
    #[inline(always)]
    fn binary_level_from(&mut self, mut left: Expr<'a>, min_precedence: u8) -> PResult<Expr<'a>> {
        loop {
            let t = self.peek();
            let Some((op, precedence)) = binary_op(t).filter(|&(_, p)| p >= min_precedence) else {
                return Ok(left);
            };
            self.bump();
            // Left-associative: the right operand binds only tighter operators.
            let right = self.binary_level(precedence + 1)?;
            let pos = left.pos;
            left = Expr {
                kind: ExprKind::BinOp(self.alloc([left, right]), op),
                pos,
            };
        }
    }

    fn or_expr(&mut self) -> PResult<Expr<'a>> {
        self.binary_level(0)
    }

    fn factor(&mut self) -> PResult<Expr<'a>> {
        const MINUS: u64 = word("-");
        const PLUS: u64 = word("+");
        const TILDE: u64 = word("~");
        let t = self.peek();
        let op = match (t.kind, t.word) {
            (TokenKind::Op, MINUS) => UnaryOp::Neg,
            (TokenKind::Op, PLUS) => UnaryOp::Pos,
            (TokenKind::Op, TILDE) => UnaryOp::Invert,
            _ => return self.power(),
        };
        self.bump();
        self.enter()?;
        let operand = self.factor()?;
        self.leave();
        Ok(Expr {
            kind: ExprKind::UnaryOp(op, self.alloc(operand)),
            pos: pos_of(t),
        })
    }

    fn power(&mut self) -> PResult<Expr<'a>> {
        if self.is_kw("await") {
            let t = self.bump();
            self.primary()?;
            return Ok(Expr {
                kind: ExprKind::Other("Await"),
                pos: pos_of(t),
            });
        }
        let base = self.primary()?;
        self.power_from(base)
    }

    /// [`Parser::power`] once its (non-`await`) base is parsed.
    #[inline(always)]
    fn power_from(&mut self, base: Expr<'a>) -> PResult<Expr<'a>> {
        if self.eat_op("**") {
            self.enter()?;
            let exp = self.factor()?;
            self.leave();
            let pos = base.pos;
            return Ok(Expr {
                kind: ExprKind::BinOp(self.alloc([base, exp]), BinOp::Pow),
                pos,
            });
        }
        Ok(base)
    }

    fn primary(&mut self) -> PResult<Expr<'a>> {
        let mut e = self.atom()?;
        loop {
            if self.eat_op("(") {
                let (args, keywords) = self.call_args()?;
                let pos = e.pos;
                e = Expr {
                    kind: ExprKind::Call(self.alloc(e), args, keywords),
                    pos,
                };
            } else if self.eat_op("[") {
                let slice = self.subscript_list()?;
                self.expect_op("]")?;
                let pos = e.pos;
                e = Expr {
                    kind: ExprKind::Subscript(self.alloc([e, slice])),
                    pos,
                };
            } else if self.eat_op(".") {
                let attr = self.expect_name_or_keyword()?;
                let pos = e.pos;
                e = Expr {
                    kind: ExprKind::Attribute(self.alloc(e), attr),
                    pos,
                };
            } else {
                return Ok(e);
            }
        }
    }

    fn expect_name_or_keyword(&mut self) -> PResult<Ident<'a>> {
        let t = self.peek();
        if t.kind == TokenKind::Name {
            self.bump();
            Ok(t.text)
        } else {
            Err(self.error_here("invalid syntax: expected an attribute name"))
        }
    }

    #[allow(clippy::type_complexity)]
    fn call_args(&mut self) -> PResult<(&'a [Expr<'a>], &'a [Keyword<'a>])> {
        let mut args = self.vec_for(4);
        let mut keywords = self.vec();
        while !self.is_op(")") {
            if self.eat_op("**") {
                let value = self.test()?;
                keywords.push(Keyword { arg: None, value });
            } else if self.is_op("*") {
                let t = self.bump();
                let value = self.test()?;
                args.push(Expr {
                    kind: ExprKind::Starred(self.alloc(value)),
                    pos: pos_of(t),
                });
            } else if self.peek().kind == TokenKind::Name
                && self.peek_at(1).kind == TokenKind::Op
                && self.peek_at(1).text == "="
            {
                let name = self.expect_name()?;
                self.bump();
                let value = self.test()?;
                keywords.push(Keyword {
                    arg: Some(name),
                    value,
                });
            } else {
                let e = self.namedexpr_test()?;
                if self.is_kw("for") || self.is_kw("async") {
                    let pos = e.pos;
                    self.comp_for()?;
                    args.push(Expr {
                        kind: ExprKind::Other("GeneratorExp"),
                        pos,
                    });
                } else {
                    args.push(e);
                }
            }
            if !self.eat_op(",") {
                break;
            }
        }
        self.expect_op(")")?;
        Ok((args.into_bump_slice(), keywords.into_bump_slice()))
    }

    fn comp_for(&mut self) -> PResult<()> {
        loop {
            self.eat_kw("async");
            if !self.eat_kw("for") {
                return Ok(());
            }
            self.target_list()?;
            self.expect_kw("in")?;
            self.or_test()?;
            while self.eat_kw("if") {
                self.test_nocond()?;
            }
        }
    }

    fn subscript_list(&mut self) -> PResult<Expr<'a>> {
        let first = self.subscript()?;
        if !self.is_op(",") {
            return Ok(first);
        }
        let pos = first.pos;
        let mut elts = self.vec1(first);
        while self.eat_op(",") {
            if self.is_op("]") {
                break;
            }
            elts.push(self.subscript()?);
        }
        Ok(Expr {
            kind: ExprKind::Tuple(elts.into_bump_slice()),
            pos,
        })
    }

    fn subscript(&mut self) -> PResult<Expr<'a>> {
        let pos = pos_of(self.peek());
        let lower = if self.is_op(":") {
            None
        } else {
            Some(self.test_or_star()?)
        };
        if !self.is_op(":") {
            return lower.ok_or_else(|| self.unexpected());
        }
        self.bump();
        let bound = |p: &mut Self| -> PResult<Option<&'a Expr<'a>>> {
            if p.is_op(":") || p.is_op("]") || p.is_op(",") {
                Ok(None)
            } else {
                let e = p.test()?;
                Ok(Some(p.alloc(e)))
            }
        };
        let upper = bound(self)?;
        let step = if self.eat_op(":") { bound(self)? } else { None };
        Ok(Expr {
            kind: ExprKind::Slice(lower.map(|e| self.alloc(e)), upper, step),
            pos,
        })
    }

    fn atom(&mut self) -> PResult<Expr<'a>> {
        let t = self.peek();
        let pos = pos_of(t);
        match t.kind {
            TokenKind::Name => {
                const TRUE: u64 = word("True");
                const FALSE: u64 = word("False");
                const NONE: u64 = word("None");
                let kind = match t.word {
                    TRUE => ExprKind::Constant(Constant::Bool(true)),
                    FALSE => ExprKind::Constant(Constant::Bool(false)),
                    NONE => ExprKind::Constant(Constant::None),
                    w if is_keyword_word(w) => return Err(self.unexpected()),
                    _ => ExprKind::Name(t.text),
                };
                self.bump();
                Ok(Expr { kind, pos })
            }
            TokenKind::Number => {
                self.bump();
                self.number(t)
            }
            TokenKind::String => {
                let mut text = BString::new_in(self.arena);
                let mut other = None;
                while self.peek().kind == TokenKind::String {
                    let s = self.bump();
                    match parse_string(s.text) {
                        Ok(v) => text.push_str(&v),
                        Err(kind) => other = Some(kind),
                    }
                }
                let kind = match other {
                    Some(kind) => ExprKind::Other(kind),
                    None => ExprKind::Constant(Constant::Str(text.into_bump_str())),
                };
                Ok(Expr { kind, pos })
            }
            TokenKind::Op => match t.text {
                "(" => {
                    self.bump();
                    if self.eat_op(")") {
                        return Ok(Expr {
                            kind: ExprKind::Tuple(&[]),
                            pos,
                        });
                    }
                    if self.is_kw("yield") {
                        let e = self.yield_expr()?;
                        self.expect_op(")")?;
                        return Ok(e);
                    }
                    let first = self.test_or_star()?;
                    if self.is_kw("for") || self.is_kw("async") {
                        self.comp_for()?;
                        self.expect_op(")")?;
                        return Ok(Expr {
                            kind: ExprKind::Other("GeneratorExp"),
                            pos,
                        });
                    }
                    if self.eat_op(")") {
                        return Ok(first);
                    }
                    let mut elts = self.vec1(first);
                    while self.eat_op(",") {
                        if self.is_op(")") {
                            break;
                        }
                        elts.push(self.test_or_star()?);
                    }
                    self.expect_op(")")?;
                    Ok(Expr {
                        kind: ExprKind::Tuple(elts.into_bump_slice()),
                        pos,
                    })
                }
                "[" => {
                    self.bump();
                    let mut elts = self.vec();
                    while !self.is_op("]") {
                        let e = self.test_or_star()?;
                        if self.is_kw("for") || self.is_kw("async") {
                            self.comp_for()?;
                            self.expect_op("]")?;
                            return Ok(Expr {
                                kind: ExprKind::Other("ListComp"),
                                pos,
                            });
                        }
                        elts.push(e);
                        if !self.eat_op(",") {
                            break;
                        }
                    }
                    self.expect_op("]")?;
                    Ok(Expr {
                        kind: ExprKind::List(elts.into_bump_slice()),
                        pos,
                    })
                }
                "{" => {
                    self.bump();
                    let mut kind = "Set";
                    let mut first = true;
                    while !self.is_op("}") {
                        if self.eat_op("**") {
                            kind = "Dict";
                            self.or_expr()?;
                        } else {
                            self.test_or_star()?;
                            if self.eat_op(":") {
                                kind = "Dict";
                                self.test()?;
                            }
                        }
                        if first && (self.is_kw("for") || self.is_kw("async")) {
                            self.comp_for()?;
                            kind = if kind == "Dict" {
                                "DictComp"
                            } else {
                                "SetComp"
                            };
                            break;
                        }
                        first = false;
                        if !self.eat_op(",") {
                            break;
                        }
                    }
                    self.expect_op("}")?;
                    Ok(Expr {
                        kind: ExprKind::Other(kind),
                        pos,
                    })
                }
                "..." => {
                    self.bump();
                    Ok(Expr {
                        kind: ExprKind::Constant(Constant::Ellipsis),
                        pos,
                    })
                }
                _ => Err(self.unexpected()),
            },
            _ => Err(self.unexpected()),
        }
    }

    /// The number token `t` (already passed) as a constant.
    fn number(&self, t: &Token<'_>) -> PResult<Expr<'a>> {
        Ok(Expr {
            kind: ExprKind::Constant(parse_number(t.text).map_err(|m| self.error_at(t, m))?),
            pos: pos_of(t),
        })
    }

    fn error_at(&self, t: &Token<'_>, message: String) -> LowerError {
        LowerError {
            line: t.line(),
            col: t.col(),
            message,
        }
    }
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// Whether `t` is one no level of an expression continues with (`,` `)`
/// `]` `}` `:` `=`, end of line): an operand before it is the whole expression.
#[inline]
fn ends_expression(t: &Token<'_>) -> bool {
    const COMMA: u64 = word(",");
    const RPAR: u64 = word(")");
    const RSQB: u64 = word("]");
    const RBRACE: u64 = word("}");
    const COLON: u64 = word(":");
    const EQUAL: u64 = word("=");
    match t.kind {
        TokenKind::Newline | TokenKind::EndMarker => true,
        TokenKind::Op => matches!(t.word, COMMA | RPAR | RSQB | RBRACE | COLON | EQUAL),
        _ => false,
    }
}

/// Asked of nearly every name token: by hash, not a scan of the list.
fn is_keyword_word(w: u64) -> bool {
    const SET: NameSet<{ KEYWORDS.len() }> = NameSet::new(KEYWORDS);
    // Every keyword is at most 8 bytes: a longer name (no word) is none;
    // 0 (NUL bytes) marks an empty slot of the table.
    w != u64::MAX && w != 0 && SET.contains_word(w, "")
}

/// A number literal's value, as Python reads it.
fn parse_number(text: &str) -> Result<Constant<'static>, String> {
    // Most literals are digits with at most a `.` (`0`, `128`, `1.5`): read
    // as they are, without the case folding and prefix tests below.
    if text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        if text.contains('.') {
            return text
                .parse::<f64>()
                .map(Constant::Float)
                .map_err(|_| format!("invalid float literal: {text}"));
        }
        // (Leading zeros and values past 64 bits are left to the general path.)
        if (text.len() == 1 || !text.starts_with('0'))
            && let Ok(v) = text.parse::<u64>()
        {
            return Ok(Constant::Int(v.into()));
        }
    }
    // Most literals have no `_` and no capitals: read those in place.
    let lower: std::borrow::Cow<str> = if text.bytes().any(|b| b == b'_' || b.is_ascii_uppercase())
    {
        let clean: String = text.chars().filter(|&c| c != '_').collect();
        clean.to_ascii_lowercase().into()
    } else {
        text.into()
    };
    if lower.ends_with('j') {
        return Ok(Constant::Other("complex"));
    }
    let radix = |digits: &str, r: u32| {
        i128::from_str_radix(digits, r)
            .map(Constant::Int)
            .map_err(|_| format!("integer literal too large: {text}"))
    };
    if let Some(d) = lower.strip_prefix("0x") {
        return radix(d, 16);
    }
    if let Some(d) = lower.strip_prefix("0o") {
        return radix(d, 8);
    }
    if let Some(d) = lower.strip_prefix("0b") {
        return radix(d, 2);
    }
    if lower.contains(['.', 'e']) {
        return lower
            .parse::<f64>()
            .map(Constant::Float)
            .map_err(|_| format!("invalid float literal: {text}"));
    }
    if lower.len() > 1 && lower.starts_with('0') && lower.bytes().any(|b| b != b'0') {
        return Err("leading zeros in decimal integer literals are not permitted".into());
    }
    radix(&lower, 10)
}

/// The value of a plain string literal; `Err(kind)` for bytes and f-strings.
fn parse_string(text: &str) -> Result<String, &'static str> {
    let quote_at = text.find(['"', '\'']).unwrap_or(0);
    let prefix = text[..quote_at].to_ascii_lowercase();
    if prefix.contains('b') {
        return Err("Bytes");
    }
    if prefix.contains('f') || prefix.contains('t') {
        return Err("JoinedStr");
    }
    let body = &text[quote_at..];
    let q = if body.starts_with("\"\"\"") || body.starts_with("'''") {
        3
    } else {
        1
    };
    let inner = &body[q..body.len() - q];
    if prefix.contains('r') {
        return Ok(inner.to_string());
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some('\\') => out.push('\\'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\n') => {}
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Ok(out)
}

/// Parse a whole Python module.
/// A binary operator token of the `or_expr` grammar and its precedence
/// (`|` lowest, `*` `/` `//` `%` `@` highest).
fn binary_op(t: &Token<'_>) -> Option<(BinOp, u8)> {
    const OPS: [(&str, BinOp, u8); 12] = [
        ("|", BinOp::BitOr, 0),
        ("^", BinOp::BitXor, 1),
        ("&", BinOp::BitAnd, 2),
        ("<<", BinOp::LShift, 3),
        (">>", BinOp::RShift, 3),
        ("+", BinOp::Add, 4),
        ("-", BinOp::Sub, 4),
        ("*", BinOp::Mult, 5),
        ("/", BinOp::Div, 5),
        ("//", BinOp::FloorDiv, 5),
        ("%", BinOp::Mod, 5),
        ("@", BinOp::MatMult, 5),
    ];
    const WORDS: [u64; 12] = {
        let mut w = [0; 12];
        let mut i = 0;
        while i < 12 {
            w[i] = word(OPS[i].0);
            i += 1;
        }
        w
    };
    if t.kind != TokenKind::Op {
        return None;
    }
    let i = WORDS.iter().position(|&w| w == t.word)?;
    Some((OPS[i].1, OPS[i].2))
}

/// Parses `src` into a tree in `arena` (see `ast::with_arena`).
pub fn parse_module<'a>(src: &'a str, arena: &'a Bump) -> Result<Module<'a>, LowerError> {
    parse_tokens(&tokenize(src)?, arena)
}

/// Parses tokens `tokenize` made (a caller that needs them for something
/// else too tokenizes once) into a tree in `arena`.
pub fn parse_tokens<'a>(toks: &[Token<'a>], arena: &'a Bump) -> Result<Module<'a>, LowerError> {
    crate::lower::with_stack(|| parse_tokens_here(toks, arena))
}

fn parse_tokens_here<'a>(toks: &[Token<'a>], arena: &'a Bump) -> Result<Module<'a>, LowerError> {
    let module = Parser {
        toks,
        i: 0,
        cur: &toks[0],
        arena,
        nest: 0,
    }
    .module()?;
    // A node's tokens include its children's and at least one more, so a
    // tree is no deeper than its tokens are many (plus the statement levels
    // a `;` or a line's end may add): only a long source can be too deep.
    if toks.len() + 200 > MAX_TREE_DEPTH {
        check_depth(&module)?;
    }
    Ok(module)
}

/// Fails on the first node deeper than [`MAX_TREE_DEPTH`] (the module is
/// depth 1, as in CPython). Walked with a stack of its own, not recursion:
/// it is what keeps the recursive walks after it safe.
fn check_depth<'a>(module: &Module<'a>) -> PResult<()> {
    enum Node<'a> {
        S(&'a Stmt<'a>),
        E(&'a Expr<'a>),
    }
    let mut stack: Vec<(Node<'a>, usize)> = module.body.iter().map(|s| (Node::S(s), 2)).collect();
    while let Some((node, depth)) = stack.pop() {
        let (pos, d) = match &node {
            Node::S(s) => (s.pos, depth),
            Node::E(e) => (e.pos, depth),
        };
        if d > MAX_TREE_DEPTH {
            return Err(too_deep(pos.line, pos.col));
        }
        let next = d + 1;
        let e = move |x: &'a Expr<'a>| (Node::E(x), next);
        match node {
            Node::S(s) => match &s.kind {
                StmtKind::Expr(x) | StmtKind::Return(Some(x)) => stack.push(e(x)),
                StmtKind::Assign(targets, value) => {
                    stack.extend(targets.iter().map(e));
                    stack.push(e(value));
                }
                StmtKind::AugAssign(t, _, v) => {
                    stack.push(e(t));
                    stack.push(e(v));
                }
                StmtKind::AnnAssign(t, a, v) => {
                    stack.push(e(t));
                    stack.push(e(a));
                    stack.extend(v.iter().map(e));
                }
                StmtKind::If(test, body, orelse) | StmtKind::While(test, body, orelse) => {
                    stack.push(e(test));
                    stack.extend(body.iter().chain(orelse.iter()).map(|s| (Node::S(s), next)));
                }
                StmtKind::For(target, iter, body, orelse) => {
                    stack.push(e(target));
                    stack.push(e(iter));
                    stack.extend(body.iter().chain(orelse.iter()).map(|s| (Node::S(s), next)));
                }
                StmtKind::Assert(test, msg) => {
                    stack.push(e(test));
                    stack.extend(msg.iter().map(e));
                }
                StmtKind::FunctionDef(f) => {
                    stack.extend(f.decorators.iter().map(e));
                    stack.extend(f.args.iter().filter_map(|a| a.annotation.as_ref()).map(e));
                    stack.extend(f.returns.iter().map(e));
                    stack.extend(f.body.iter().map(|s| (Node::S(s), next)));
                }
                StmtKind::ClassDef(c) => {
                    stack.extend(c.decorators.iter().map(e));
                    stack.extend(c.body.iter().map(|s| (Node::S(s), next)));
                }
                StmtKind::Return(None)
                | StmtKind::Pass
                | StmtKind::Break
                | StmtKind::Continue
                | StmtKind::Import(_)
                | StmtKind::ImportFrom(..)
                | StmtKind::Other(_) => {}
            },
            Node::E(x) => match &x.kind {
                ExprKind::Name(_) | ExprKind::Constant(_) | ExprKind::Other(_) => {}
                ExprKind::Attribute(v, _) | ExprKind::Starred(v) | ExprKind::UnaryOp(_, v) => {
                    stack.push(e(v))
                }
                ExprKind::Subscript(vs) | ExprKind::BinOp(vs, _) => stack.extend(vs.iter().map(e)),
                ExprKind::Slice(a, b, c) => {
                    stack.extend([a, b, c].into_iter().flatten().map(|v| e(v)))
                }
                ExprKind::Call(f, args, keywords) => {
                    stack.push(e(f));
                    stack.extend(args.iter().map(e));
                    stack.extend(keywords.iter().map(|k| e(&k.value)));
                }
                ExprKind::BoolOp(_, vs) | ExprKind::Tuple(vs) | ExprKind::List(vs) => {
                    stack.extend(vs.iter().map(e))
                }
                ExprKind::Compare(left, comps) => {
                    stack.push(e(left));
                    stack.extend(comps.iter().map(|(_, v)| e(v)));
                }
                ExprKind::IfExp(a, b, c) => stack.extend([a, b, c].map(|v| e(v))),
            },
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expression statement `src` as a fully parenthesized string.
    fn grouping(src: &str) -> String {
        fn show(e: &Expr) -> String {
            match &e.kind {
                ExprKind::BinOp(lr, op) => format!("({} {op:?} {})", show(&lr[0]), show(&lr[1])),
                ExprKind::Name(n) => n.to_string(),
                other => format!("{other:?}"),
            }
        }
        let f = kernel(&format!("def f():\n    {src}"));
        match &f.body[0].kind {
            StmtKind::Expr(e) => show(e),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn binary_operators_group_by_python_precedence() {
        assert_eq!(grouping("a - b - c\n"), "((a Sub b) Sub c)");
        assert_eq!(grouping("a + b * c\n"), "(a Add (b Mult c))");
        assert_eq!(grouping("a * b + c\n"), "((a Mult b) Add c)");
        assert_eq!(
            grouping("a | b ^ c & d << e + f * g\n"),
            "(a BitOr (b BitXor (c BitAnd (d LShift (e Add (f Mult g))))))"
        );
        assert_eq!(
            grouping("a // b % c @ d >> e - f | g\n"),
            "(((((a FloorDiv b) Mod c) MatMult d) RShift (e Sub f)) BitOr g)"
        );
    }

    /// `parse_module` for a test: the source and the tree live to the end.
    fn parse(src: &str) -> Result<Module<'static>, LowerError> {
        let src: &'static str = Box::leak(src.into());
        parse_module(src, Box::leak(Box::default()))
    }

    fn kernel(src: &str) -> &'static FunctionDef<'static> {
        let m = parse(src).unwrap();
        m.body
            .iter()
            .find_map(|s| match s.kind {
                StmtKind::FunctionDef(f) => Some(f),
                _ => None,
            })
            .unwrap()
    }

    #[test]
    fn classes_keep_their_bases() {
        let m = parse("class Task(enum.IntEnum, Mixin):\n    A = 1\n").unwrap();
        let StmtKind::ClassDef(task) = &m.body[0].kind else {
            panic!("{:?}", m.body[0].kind)
        };
        assert!(matches!(
            task.bases[0].kind,
            ExprKind::Attribute(_, "IntEnum")
        ));
        assert!(matches!(task.bases[1].kind, ExprKind::Name("Mixin")));
    }

    #[test]
    fn plain_classes_keep_their_body_when_it_parses() {
        let m = parse(
            "class Flags:\n    ON = True\n    N = 3\n\n\nclass Odd:\n    x = 1 +\n\n\nX = 1\n",
        )
        .unwrap();
        let StmtKind::ClassDef(flags) = &m.body[0].kind else {
            panic!("{:?}", m.body[0].kind)
        };
        assert_eq!((flags.name, flags.body.len()), ("Flags", 2));
        assert!(flags.decorators.is_empty());
        // A body that does not parse is passed over, as every class was before.
        assert_eq!(m.body[1].kind, StmtKind::Other("ClassDef"));
        assert_eq!(m.body[1].pos.line, 6);
        assert!(matches!(m.body[2].kind, StmtKind::Assign(..)));
    }

    #[test]
    fn parses_kernel_with_positions() {
        let f = kernel(
            "import warp as wp\n\n\n@wp.kernel\ndef k(a: wp.array(dtype=float), s: float):\n    i = wp.tid()\n    a[i] = -a[i] * s + 2.0 ** 3\n",
        );
        assert_eq!(f.name, "k");
        assert_eq!(f.first_line, 4);
        assert_eq!(f.args.len(), 2);
        assert_eq!(f.body.len(), 2);
        let StmtKind::Assign(targets, value) = &f.body[1].kind else {
            panic!()
        };
        assert!(matches!(targets[0].kind, ExprKind::Subscript(..)));
        // `-a[i] * s + 2.0 ** 3` is Add(Mult(Neg(a[i]), s), Pow(2.0, 3)), starting at column 12.
        let ExprKind::BinOp(lr, BinOp::Add) = &value.kind else {
            panic!("{value:?}")
        };
        assert_eq!(value.pos, Pos { line: 7, col: 12 });
        assert!(matches!(lr[0].kind, ExprKind::BinOp(_, BinOp::Mult)));
        assert!(matches!(lr[1].kind, ExprKind::BinOp(_, BinOp::Pow)));
    }

    #[test]
    fn lone_atoms_and_atoms_that_go_on() {
        let f = kernel(
            "def k(a: float):\n    x = a\n    y = f(a, 1)[i:j]\n    z = a if b else 2\n    w = a.b\n    v = a ** 2\n    u = not a\n",
        );
        let value = |i: usize| match &f.body[i].kind {
            StmtKind::Assign(t, v) => {
                assert!(matches!(t[0].kind, ExprKind::Name(_)));
                &v.kind
            }
            other => panic!("{other:?}"),
        };
        assert!(matches!(value(0), ExprKind::Name("a")));
        let ExprKind::Subscript(call_slice) = value(1) else {
            panic!("{:?}", value(1))
        };
        let ExprKind::Call(_, args, _) = &call_slice[0].kind else {
            panic!()
        };
        assert!(matches!(args[0].kind, ExprKind::Name("a")));
        assert_eq!(args[1].kind, ExprKind::Constant(Constant::Int(1)));
        assert_eq!(args[1].pos, Pos { line: 3, col: 14 });
        let ExprKind::Slice(Some(lo), Some(hi), None) = &call_slice[1].kind else {
            panic!()
        };
        assert!(matches!(
            (&lo.kind, &hi.kind),
            (ExprKind::Name("i"), ExprKind::Name("j"))
        ));
        assert!(matches!(value(2), ExprKind::IfExp(..)));
        assert!(matches!(value(3), ExprKind::Attribute(_, "b")));
        assert!(matches!(value(4), ExprKind::BinOp(_, BinOp::Pow)));
        assert!(matches!(value(5), ExprKind::UnaryOp(UnaryOp::Not, _)));
    }

    #[test]
    fn elif_chain_nests_like_cpython() {
        let f = kernel(
            "def k():\n    if a:\n        x = 1\n    elif b:\n        x = 2\n    else:\n        x = 3\n",
        );
        let StmtKind::If(_, _, orelse) = &f.body[0].kind else {
            panic!()
        };
        assert_eq!(orelse.len(), 1);
        assert_eq!(orelse[0].pos.line, 4);
        let StmtKind::If(_, _, inner_else) = &orelse[0].kind else {
            panic!()
        };
        assert_eq!(inner_else.len(), 1);
    }

    #[test]
    fn accepts_arbitrary_python_around_kernels() {
        let src = "import warp as wp\nfrom x import (a,\n  b)\nclass C:\n    def m(self):\n        return {k: v for k, v in d.items()}\ntry:\n    pass\nexcept Exception as e:\n    raise\nelse:\n    x = [i async for i in y]\nfinally:\n    y = lambda q, r=1: q\nif __name__ == '__main__':\n    with open('f') as f, g():\n        print(f'{x!r}')\n@wp.kernel\ndef k():\n    pass\n";
        let m = parse(src).unwrap();
        let defs = m
            .body
            .iter()
            .filter(|s| matches!(s.kind, StmtKind::FunctionDef(_)))
            .count();
        assert_eq!(defs, 1);
    }

    /// What `is_op` and `is_kw` rely on: a token that packs to an
    /// operator's or a keyword's word is that operator or keyword.
    #[test]
    fn word_tells_operators_and_keywords() {
        let src = "@wp.kernel\ndef f(a: int, *b, **c) -> None:\n    x = [1, 2.5e-3, .5, 0x1F, 'in', b'if', f'{a}']\n    \
                   y = not a in b is not c or d and e if f else g\n    x[i:j, ...] @= a ** -b // c % d << e >> f & g | h ^ ~i\n    \
                   return (lambda q: q)(x) != {1: 2} <= 3 >= 4 == 5 < 6 > 7; pass\n\nclass C: pass\n";
        let toks = tokenize(src).unwrap();
        let ops = [
            "(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "...", "@", "=", "->", "**", "*",
            "//", "/", "%", "+", "-", "~", "<<", ">>", "&", "|", "^", "<", ">", "<=", ">=", "==",
            "!=", "@=", ":=",
        ];
        for t in &toks {
            if ops.iter().any(|op| word(op) == t.word) {
                assert_eq!(t.kind, TokenKind::Op, "{:?}", t.text);
            }
            if KEYWORDS.iter().any(|kw| word(kw) == t.word) {
                assert_eq!(t.kind, TokenKind::Name, "{:?}", t.text);
            }
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("1_000").unwrap(), Constant::Int(1000));
        assert_eq!(parse_number("0x1F").unwrap(), Constant::Int(31));
        assert_eq!(parse_number("1e-5").unwrap(), Constant::Float(1e-5));
        assert_eq!(parse_number(".5").unwrap(), Constant::Float(0.5));
        // With and without `_` or capitals (read in place or cleaned first).
        assert_eq!(parse_number("0x1f").unwrap(), Constant::Int(31));
        assert_eq!(parse_number("0X_1F").unwrap(), Constant::Int(31));
        assert_eq!(parse_number("1E5").unwrap(), Constant::Float(1e5));
        assert_eq!(parse_number("0b101").unwrap(), Constant::Int(5));
        assert_eq!(parse_number("0O17").unwrap(), Constant::Int(15));
        assert_eq!(parse_number("3J").unwrap(), Constant::Other("complex"));
        assert_eq!(parse_number("2.5").unwrap(), Constant::Float(2.5));
        assert!(parse_number("007").is_err());
        // Plain digits, read at once or by the general path.
        assert_eq!(parse_number("0").unwrap(), Constant::Int(0));
        assert_eq!(parse_number("000").unwrap(), Constant::Int(0));
        assert_eq!(parse_number("128").unwrap(), Constant::Int(128));
        assert_eq!(
            parse_number("18446744073709551616").unwrap(),
            Constant::Int(1 << 64)
        );
        assert!(parse_number("170141183460469231731687303715884105728").is_err());
        assert_eq!(parse_number("1.").unwrap(), Constant::Float(1.0));
        assert_eq!(parse_number("00.5").unwrap(), Constant::Float(0.5));
    }

    /// Python's limits, as CPython 3.11 applies them: 200 nested brackets,
    /// 100 levels of indentation, a tree about 3,000 deep; flat lists of any
    /// length (`and` chains, comparisons, arguments) are fine.
    #[test]
    fn python_nesting_limits() {
        let kernel = |body: &str| format!("@wp.kernel\ndef k():\n{body}");
        let message = |src: &str| parse(src).err().map(|e| (e.line, e.col, e.message));
        let brackets = |n: usize| kernel(&format!("    x = {}1{}\n", "(".repeat(n), ")".repeat(n)));
        assert_eq!(message(&brackets(200)), None);
        let (line, col, m) = message(&brackets(201)).unwrap();
        assert_eq!((line, col), (3, 9 + 200));
        assert!(m.contains("too many nested parentheses"), "{m}");
        let lists = format!("    x = {}1{}\n", "[".repeat(5000), "]".repeat(5000));
        assert!(message(&kernel(&lists)).unwrap().2.contains("parentheses"));

        let indented = |levels: usize| {
            let mut body = String::new();
            for l in 1..levels {
                body += &format!("{}if x:\n", " ".repeat(l));
            }
            kernel(&(body + &" ".repeat(levels) + "pass\n"))
        };
        assert_eq!(message(&indented(99)), None);
        let (line, col, m) = message(&indented(100)).unwrap();
        assert_eq!((line, col), (102, 101));
        assert!(m.contains("too many levels of indentation"), "{m}");

        let deep = [
            |n: usize| format!("    x = {}1\n", "-".repeat(n)),
            |n: usize| format!("    x = {}1\n", "not ".repeat(n)),
            |n: usize| format!("    x = {}1\n", "a ** ".repeat(n)),
            |n: usize| format!("    x = {}\n", vec!["a"; n].join(" + ")),
            |n: usize| format!("    x = a{}\n", ".b".repeat(n)),
            |n: usize| format!("    x = a{}\n", "()".repeat(n)),
            |n: usize| format!("    x = {}1\n", "a if b else ".repeat(n)),
            |n: usize| format!("    x = {}1\n", "lambda: ".repeat(n)),
            |n: usize| {
                format!(
                    "    if a:\n        pass\n{}",
                    "    elif a:\n        pass\n".repeat(n)
                )
            },
        ];
        for (i, make) in deep.iter().enumerate() {
            assert_eq!(message(&kernel(&make(2800))), None, "case {i}");
            let (_, _, m) = message(&kernel(&make(3000))).unwrap();
            assert!(m.contains("too many nested expressions"), "case {i}: {m}");
        }
        for flat in [
            format!("    x = {}\n", vec!["a"; 20_000].join(" and ")),
            format!("    x = {}\n", vec!["a"; 20_000].join(" < ")),
            format!("    x = f({})\n", vec!["a"; 20_000].join(", ")),
        ] {
            assert_eq!(message(&kernel(&flat)), None);
        }
        // `yield` starts no operand (as in Python), so it cannot nest unbounded.
        assert!(message(&kernel(&format!("    x = ({}1)\n", "yield ".repeat(5000)))).is_some());
        assert_eq!(
            message("@wp.func\ndef g():\n    yield x\n    y = yield\n    z = (yield a)\n"),
            None
        );
    }

    #[test]
    fn syntax_errors_have_positions() {
        let e = parse("@wp.kernel\ndef k(a b):\n    pass\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 9));
        // A plain Python function with a syntax error is passed over, not fatal.
        assert!(parse("def helper(a b):\n    pass\n").is_ok());
        let e = parse("@wp.func\ndef k():\n    x = = 1\n").unwrap_err();
        assert_eq!(e.line, 3);
    }
}
