//! Lvalue origins and references: warp's `_LValueOrigin` (the path from an
//! addressable root to the value a variable reads), `wp.ref[T]` parameters of
//! `@wp.func`s, arguments passed to them by address, and `wp.address_of()`.
//!
//! warp records an origin on every variable that reads storage: array
//! elements and views, struct fields, vector, matrix, quaternion and
//! transform components. A reference argument is then passed as a pointer
//! built from that path (`&(var_3)`, `wp::index(var_2, var_4)`,
//! `&(((*wp::address(var_a, var_0))).inner)`), and its adjoint as the same
//! path rooted at the adjoint (`&(adj_3)`, `wp::address(adj_a, var_0)`).

use super::*;

/// The indices of a step: at most four (array dimensions), inline.
pub(super) type StepVars = SmallVec<[VarId; 4]>;

/// One step of an origin path (warp's `_LValueStep`).
#[derive(Debug, Clone)]
pub(super) enum Step {
    /// A struct field, or a transform's `p` / `q`.
    Field(&'static str),
    /// An element of an array (`wp::address`).
    Array(StepVars),
    /// A view of an array (fewer indices than dimensions).
    View(StepVars),
    /// A component of a vector, matrix, quaternion or transform (`wp::index`).
    Index(StepVars),
}

/// Where a variable's value lives: a root variable (a local, an array, or a
/// `wp.ref[T]` parameter, which is a pointer) and the steps from it.
#[derive(Debug, Clone)]
pub(super) struct Origin {
    root: VarId,
    ref_param: bool,
    steps: SmallVec<[Step; 2]>,
}

impl Origin {
    pub(super) fn local(root: VarId) -> Origin {
        Origin {
            root,
            ref_param: false,
            steps: SmallVec::new(),
        }
    }

    pub(super) fn extend(&self, step: Step) -> Origin {
        let mut o = self.clone();
        o.steps.push(step);
        o
    }
}

/// A recorded origin: its root, or one step from another record. A value
/// read from storage (every array element or component read) records its
/// step alone, not a copy of the whole path, which only the rare reference
/// arguments and adjoint targets spell out.
#[derive(Debug)]
pub(super) struct OriginNode {
    root: VarId,
    ref_param: bool,
    /// The record this one extends by `step` ([`NO_ORIGIN`]: the root itself).
    parent: u32,
    step: Option<Step>,
}

/// No origin recorded for a variable.
const NO_ORIGIN: u32 = u32::MAX;

/// Where the origin of a variable's reads starts (see [`Adjoint::origin_start`]).
enum OriginStart {
    /// A recorded origin.
    Record(u32),
    /// A named local: its own storage.
    Local(VarId),
}

impl<'a> Adjoint<'a> {
    /// The record of a variable's origin (warp's `Var.ref_origin`).
    fn origin_node(&self, id: VarId) -> Option<u32> {
        self.origin_index
            .get(id.0)
            .copied()
            .filter(|&i| i != NO_ORIGIN)
    }

    /// The whole path of record `node`.
    fn origin_path(&self, node: u32) -> Origin {
        let mut steps = SmallVec::new();
        let mut at = node;
        while at != NO_ORIGIN {
            let n = &self.origin_pool[at as usize];
            steps.extend(n.step.clone());
            at = n.parent;
        }
        steps.reverse();
        let n = &self.origin_pool[node as usize];
        Origin {
            root: n.root,
            ref_param: n.ref_param,
            steps,
        }
    }

    /// The origin recorded on a variable (warp's `Var.ref_origin`).
    pub(super) fn raw_origin(&self, id: VarId) -> Option<Origin> {
        self.origin_node(id).map(|n| self.origin_path(n))
    }

    fn record_origin(&mut self, id: VarId, node: OriginNode) {
        let at = self.origin_pool.len() as u32;
        self.origin_pool.push(node);
        self.set_origin_node(id, at);
    }

    fn set_origin_node(&mut self, id: VarId, node: u32) {
        if self.origin_index.len() <= id.0 {
            self.origin_index.resize(id.0 + 1, NO_ORIGIN);
        }
        self.origin_index[id.0] = node;
    }

    /// Records that `id` is its own storage: an array argument, or a
    /// `wp.ref[T]` parameter (`ref_param`, a pointer).
    pub(super) fn set_root_origin(&mut self, id: VarId, ref_param: bool) {
        let root = OriginNode {
            root: id,
            ref_param,
            parent: NO_ORIGIN,
            step: None,
        };
        self.record_origin(id, root);
    }

    /// Records `origin` on `id`: its root, then a record per step.
    pub(super) fn set_origin(&mut self, id: VarId, origin: Origin) {
        let (root, ref_param) = (origin.root, origin.ref_param);
        let node = |parent, step| OriginNode {
            root,
            ref_param,
            parent,
            step,
        };
        let mut at = self.origin_pool.len() as u32;
        if origin.steps.is_empty() {
            self.origin_pool.push(node(NO_ORIGIN, None));
        }
        let mut parent = NO_ORIGIN;
        for step in origin.steps {
            at = self.origin_pool.len() as u32;
            self.origin_pool.push(node(parent, Some(step)));
            parent = at;
        }
        self.set_origin_node(id, at);
    }

    /// `to` reads the storage `from` reads (an array descriptor copied): the
    /// same record, or none.
    pub(super) fn copy_origin(&mut self, to: VarId, from: VarId) {
        match self.origin_node(from) {
            Some(n) => self.set_origin_node(to, n),
            None => {
                if let Some(i) = self.origin_index.get_mut(to.0) {
                    *i = NO_ORIGIN;
                }
            }
        }
    }

    /// warp's `reference_origin_for_var`, where a path from `id` starts: a
    /// reference's recorded origin; an array's recorded origin (descriptors
    /// alias their storage); a named local is its own storage; an anonymous
    /// temporary keeps the origin of the expression it was read from.
    fn origin_start(&self, id: VarId) -> Option<OriginStart> {
        let ty = self.ty(id);
        let recorded = self.origin_node(id);
        if ty.is_ref() || (matches!(ty, Type::Array { .. }) && recorded.is_some()) {
            return recorded.map(OriginStart::Record);
        }
        if self.symbols.iter().any(|s| s.var == id) {
            return Some(OriginStart::Local(id));
        }
        recorded.map(OriginStart::Record)
    }

    /// warp's `reference_origin_for_var` (see [`Adjoint::origin_start`]).
    pub(super) fn origin_of(&self, id: VarId) -> Option<Origin> {
        Some(match self.origin_start(id)? {
            OriginStart::Record(node) => self.origin_path(node),
            OriginStart::Local(root) => Origin::local(root),
        })
    }

    /// Records on `out` the origin of `from` (as `origin_of` sees it) extended by `step`.
    pub(super) fn note_origin_step(&mut self, from: VarId, out: VarId, step: Step) {
        let node = match self.origin_start(from) {
            None => return,
            Some(OriginStart::Record(parent)) => {
                let p = &self.origin_pool[parent as usize];
                OriginNode {
                    root: p.root,
                    ref_param: p.ref_param,
                    parent,
                    step: Some(step),
                }
            }
            Some(OriginStart::Local(root)) => OriginNode {
                root,
                ref_param: false,
                parent: NO_ORIGIN,
                step: Some(step),
            },
        };
        self.record_origin(out, node);
    }

    /// The indices of an index step: one for vectors, quaternions and
    /// transforms, one or two for matrices, all integers (else no origin).
    pub(super) fn note_component_origin(&mut self, target: VarId, indices: &[VarId], out: VarId) {
        let ints = indices
            .iter()
            .all(|i| self.ty(*i).strip_ref().scalar().is_some_and(Scalar::is_int));
        let ok = match self.ty(target).strip_ref() {
            Type::Matrix(..) => (1..=2).contains(&indices.len()) && ints,
            Type::Vector(..) | Type::Quat(_) | Type::Transform(_) => indices.len() == 1 && ints,
            _ => false,
        };
        if ok {
            self.note_origin_step(target, out, Step::Index(indices.iter().copied().collect()));
        }
    }

    fn push_indices(&self, out: &mut String, indices: &[VarId]) {
        self.push_names(out, indices.iter().map(|a| self.emit(*a)));
    }

    /// `base` followed by one step, as an lvalue expression.
    fn step_lvalue(&self, base: &str, step: &Step) -> String {
        let mut s = String::with_capacity(base.len() + 32);
        match step {
            Step::Field(f) => s.put_all(&["(", base, ").", f]),
            Step::Array(idx) => {
                s.put_all(&["(*wp::address(", base, ", "]);
                self.push_indices(&mut s, idx);
                s.put("))");
            }
            Step::View(idx) => {
                s.put_all(&["wp::view(", base, ", "]);
                self.push_indices(&mut s, idx);
                s.put(")");
            }
            Step::Index(idx) => {
                s.put_all(&["(*wp::index(", base, ", "]);
                self.push_indices(&mut s, idx);
                s.put("))");
            }
        }
        s
    }

    fn root_name(&self, o: &Origin, adjoint: bool) -> &str {
        let v = self.var(o.root);
        if adjoint { v.adj() } else { v.name() }
    }

    /// warp's `emit_lvalue`: the storage an origin names.
    pub(super) fn origin_lvalue(&self, o: &Origin, adjoint: bool) -> String {
        let root = self.root_name(o, adjoint);
        let mut expr = if o.ref_param {
            format!("*({root})")
        } else {
            root.to_string()
        };
        for step in &o.steps {
            expr = self.step_lvalue(&expr, step);
        }
        expr
    }

    /// warp's `emit_pointer`: the address of an origin's storage. With a
    /// `prelude`, views on the way are first bound to locals
    /// (`auto _wp_ref_view_N = ...;`), numbered by the label counter.
    pub(super) fn origin_pointer(
        &mut self,
        o: &Origin,
        adjoint: bool,
        mut prelude: Option<&mut Vec<String>>,
    ) -> String {
        let root = self.root_name(o, adjoint).to_string();
        let Some((last, init)) = o.steps.split_last() else {
            return if o.ref_param {
                root
            } else {
                format!("&({root})")
            };
        };
        let mut expr = if o.ref_param {
            format!("*({root})")
        } else {
            root
        };
        for step in init {
            match (&mut prelude, step) {
                (Some(pre), Step::View(_)) => {
                    let name = format!("_wp_ref_view_{}", self.label_count);
                    self.label_count += 1;
                    pre.push(format!("auto {name} = {};", self.step_lvalue(&expr, step)));
                    expr = name;
                }
                _ => expr = self.step_lvalue(&expr, step),
            }
        }
        let mut s = String::with_capacity(expr.len() + 32);
        match last {
            Step::Array(idx) => {
                s.put_all(&["wp::address(", &expr, ", "]);
                self.push_indices(&mut s, idx);
                s.put(")");
            }
            Step::Index(idx) => {
                s.put_all(&["wp::index(", &expr, ", "]);
                self.push_indices(&mut s, idx);
                s.put(")");
            }
            step => s.put_all(&["&(", &self.step_lvalue(&expr, step), ")"]),
        }
        s
    }

    /// warp's `emit_addressable_reference`: the pointer expression through
    /// which `var` (evaluated from `node`) is passed by reference, and its
    /// origin. A reference is passed as it is; a value read from storage
    /// (`v.y`, `m[1, 2]`) by the address of that storage; a named local by its own.
    pub(super) fn addressable_reference(
        &mut self,
        node: Option<&Expr<'a>>,
        var: VarId,
        purpose: &str,
    ) -> LResult<(String, Origin)> {
        let not_addressable = || {
            format!(
                "{purpose} requires an addressable expression (local variable, array element, struct field, or wp.ref[T] parameter)"
            )
        };
        let name = match node.map(|n| &n.kind) {
            Some(ExprKind::Name(n)) => Some(*n),
            _ => None,
        };
        if let (Some(n), Some(c)) = (name, self.var(var).constant) {
            let ty = self.ty(var).strip_ref();
            let ctor = match ty {
                Type::Scalar(s) => format!("wp.{}", s.name()),
                t => t.to_string(),
            };
            return Err(self.err(format!(
                "Error taking a mutable reference to constant local '{n}', use the following syntax: {n} = {ctor}({}) to declare a dynamic variable",
                match c {
                    ConstVal::Int(i) => i.to_string(),
                    ConstVal::Float(f) => crate::lower::types::python_float_repr(f),
                    ConstVal::Bool(b) => if b { "True" } else { "False" }.to_string(),
                    ConstVal::Composite(_) => "...".to_string(),
                }
            )));
        }
        if self.ty(var).is_ref() {
            let origin = self
                .raw_origin(var)
                .ok_or_else(|| self.err(not_addressable()))?;
            return Ok((self.emit(var).to_string(), origin));
        }
        if let (Some(o), None) = (self.raw_origin(var), name) {
            let ptr = self.origin_pointer(&o, false, None);
            return Ok((ptr, o));
        }
        if name.is_some() {
            let o = Origin::local(var);
            let ptr = self.origin_pointer(&o, false, None);
            return Ok((ptr, o));
        }
        Err(self.err(not_addressable()))
    }

    /// `x = value` (or `x op= value`) where `x` is a `wp.ref[T]` parameter:
    /// the value is stored through the pointer (warp's `store_ref_param_value`).
    pub(super) fn store_ref_param(
        &mut self,
        name: &str,
        value: VarId,
        augmented: bool,
    ) -> LResult<()> {
        let param = self
            .symbol(name)
            .expect("a reference parameter is always bound");
        let value = self.load(value)?;
        let want = self.ty(param).strip_ref();
        let got = *self.ty(value);
        if !same_type(&got, &want) {
            return Err(self.err(if augmented {
                format!(
                    "Error, augmented assignment to ref parameter `{name}` ({want}) produces different type ({got})"
                )
            } else {
                format!(
                    "Error, assigning to ref parameter '{name}' ({want}) with value of different type ({got})"
                )
            }));
        }
        let line = format!("*{} = {};", self.emit(param), self.emit(value));
        self.add_forward(&line, None, false);
        Ok(())
    }

    /// Whether `name` is a `wp.ref[T]` parameter of the function being lowered.
    pub(super) fn is_ref_param(&self, name: &str) -> bool {
        self.ref_params.iter().any(|n| same(n, name))
    }

    /// `wp.address_of(expr)`: the address of an addressable expression, as a `uint64`.
    pub(super) fn address_of(
        &mut self,
        args: &[Expr<'a>],
        kwargs: &[Keyword<'a>],
    ) -> LResult<VarId> {
        let ([arg], []) = (args, kwargs) else {
            return Err(self.err("wp.address_of() takes exactly one positional argument"));
        };
        if !matches!(
            arg.kind,
            ExprKind::Name(_) | ExprKind::Subscript(_) | ExprKind::Attribute(..)
        ) {
            return Err(self.err(
                "wp.address_of() requires an addressable expression (local variable, array element, struct field, or wp.ref[T] parameter)",
            ));
        }
        let var = self.expr(arg)?;
        let (ptr, _) = self.addressable_reference(Some(arg), var, "wp.address_of()")?;
        let out = self.add_var(Type::Scalar(Scalar::UInt64), None);
        forward!(self, "{} = (wp::uint64)({ptr});", self.emit(out));
        Ok(out)
    }
}

impl<'a> Adjoint<'a> {
    /// warp's `indexref`: the address of a component of a vector, matrix,
    /// quaternion or transform held by reference (`&(*v)[i]`, `&(*m)[i, j]`).
    pub(super) fn index_ref(&mut self, target: VarId, indices: &[VarId]) -> LResult<VarId> {
        let value = match (self.ty(target).strip_ref(), indices.len()) {
            (Type::Vector(_, s) | Type::Quat(s) | Type::Transform(s), 1) => Value::Scalar(s),
            (Type::Matrix(_, c, s), 1) => Value::Vector(c, s),
            (Type::Matrix(_, _, s), 2) => Value::Scalar(s),
            (t, n) => {
                return Err(self.err(format!(
                    "cannot take a reference to a component of {t} with {n} index(es)"
                )));
            }
        };
        let out = self.add_var(Type::Ref(value), None);
        let mut loaded = Vars::new();
        for &i in indices {
            loaded.push(self.load(i)?);
        }
        let mut line = String::with_capacity(64);
        line.put_all(&[self.emit(out), " = wp::indexref(", self.emit(target), ", "]);
        self.push_names(&mut line, loaded.iter().map(|a| self.emit(*a)));
        line.put(");");
        let replay = format!("// {line}");
        self.add_forward(&line, Some(&replay), false);
        Ok(out)
    }

    /// warp's `store` builtin: `value` written through the reference `ptr`
    /// (not replayed, no adjoint).
    pub(super) fn store_through(&mut self, ptr: VarId, value: VarId) -> LResult<()> {
        let value = self.load(value)?;
        let (want, got) = (self.ty(ptr).strip_ref(), *self.ty(value));
        if !same_type(&want, &got) {
            return Err(self.err(format!(
                "store() value argument type ({got}) must be of the same type as the reference ({want})"
            )));
        }
        let line = format!("wp::store({}, {});", self.emit(ptr), self.emit(value));
        let replay = format!("// {line}");
        self.add_forward(&line, Some(&replay), false);
        Ok(())
    }
}

/// warp's `codegen_snippet`: a `@wp.func_native` function, its C++ body the
/// user's snippet. Parameters keep their Python names; a `wp.ref[T]` one
/// arrives as a pointer `_wp_ref_NAME` bound to a C++ reference `NAME`
/// (and its adjoint `_wp_ref_adj_NAME` to `adj_NAME`).
pub(super) fn native_function(
    scope: &Scope<'_>,
    def: &FunctionDef<'_>,
    native: &str,
    snippets: super::super::module::NativeSnippets,
) -> LResult<BuiltFunc> {
    let mut params = Vec::with_capacity(def.args.len());
    let mut forward_args = Vec::with_capacity(def.args.len());
    let mut adj_args = Vec::with_capacity(def.args.len());
    let mut forward_aliases = String::new();
    let mut reverse_aliases = String::new();
    for arg in def.args {
        let Some(annotation) = &arg.annotation else {
            return Err(LowerError {
                line: arg.pos.line,
                col: arg.pos.col,
                message: format!("argument '{}' has no type annotation", arg.name),
            });
        };
        let ty = scope.annotation_type(annotation)?;
        if matches!(ty, Type::Tile(_)) {
            return Err(LowerError {
                line: annotation.pos.line,
                col: annotation.pos.col,
                message: "tile parameters of native functions are not supported by this version of the lowering".into(),
            });
        }
        let ctype = ty.ctype(false);
        let label = arg.name;
        if ty.is_ref() {
            let value = ty.ctype(true);
            forward_args.push(format!("{ctype} _wp_ref_{label}"));
            let alias = format!("    {value}& {label} = *_wp_ref_{label};\n");
            forward_aliases.put(&alias);
            reverse_aliases.put(&alias);
            adj_args.push(format!("{ctype} _wp_ref_adj_{label}"));
        } else {
            forward_args.push(format!("{ctype} {label}"));
            adj_args.push(format!("{ctype} & adj_{label}"));
        }
        params.push(ty);
    }
    for (arg, ty) in def.args.iter().zip(&params) {
        if ty.is_ref() {
            reverse_aliases.put(&format!(
                "    {}& adj_{} = *_wp_ref_adj_{};\n",
                ty.ctype(true),
                arg.name,
                arg.name
            ));
        }
    }
    let ret = match (&def.returns, snippets.single_decorator) {
        (Some(annotation), true) => {
            let ty = scope.annotation_type(annotation)?;
            if ty.is_ref() {
                return Err(LowerError {
                    line: annotation.pos.line,
                    col: annotation.pos.col,
                    message: format!("Native function '{}' has unsupported return type", def.name),
                });
            }
            Some(ty)
        }
        _ => None,
    };
    let mut reverse_args = forward_args.clone();
    reverse_args.extend(adj_args);
    if let Some(r) = &ret {
        reverse_args.push(format!("{} & adj_ret", r.ctype(false)));
    }
    let replay_name = format!("replay_{native}");
    let text = FunctionSource {
        template: String::new(),
        forward_args,
        reverse_args,
        forward_body: format!("{forward_aliases}{}", snippets.forward),
        reverse_body: format!(
            "{reverse_aliases}{}",
            snippets.adjoint.as_deref().unwrap_or("")
        ),
    };
    Ok(BuiltFunc {
        native: native.to_string(),
        params,
        ret,
        outputs: Vec::new(),
        inline_attr: "",
        forward_only: false,
        replay: (snippets.replay.is_some() && ret.is_none()).then_some(replay_name),
        callees: Vec::new(),
        used_by_backward: false,
        generated_bytes: text.forward_body.len() + text.reverse_body.len(),
        text: FunctionText::Written(text),
        first_line: def.first_line,
        custom_grad: false,
        manual_ref_adjoint: snippets.adjoint.is_some(),
        backward_error: None,
        snippet: true,
        snippet_replay: snippets.replay.map(|r| format!("{forward_aliases}{r}")),
        custom_grad_source: None,
        features: crate::lower::Features::empty(),
        tile_structs: Vec::new(),
    })
}

/// Lowers the `@wp.func_grad` function `def` of the function at `forward`
/// in the table (warp builds it after the kernels, in custom reverse mode).
pub(crate) fn build_custom_grad<'a>(
    scope: &'a Scope<'a>,
    funcs: &'a std::cell::RefCell<FuncTable>,
    def: &'a FunctionDef<'a>,
    pos: Pos,
    forward: usize,
) -> LResult<(Vec<String>, String, usize)> {
    let n = funcs.borrow().built[forward].1.params.len();
    let mut adj = Adjoint::new(scope, funcs, def, true)?;
    adj.max_unroll = MAX_UNROLL;
    adj.lower_function(def, pos)?;
    Ok(super::super::module::render_custom_grad(&adj, def, n))
}

impl<'a> Adjoint<'a> {
    /// `wp.adjoint[slice]` when `e` is that expression: the slice.
    pub(super) fn adjoint_slice<'e>(&self, e: &'e Expr<'a>) -> Option<&'e Expr<'a>> {
        match &e.kind {
            ExprKind::Subscript([value, slice]) if self.scope.names_warp(value, "adjoint") => {
                Some(slice)
            }
            _ => None,
        }
    }

    /// A variable spelled `name` in C++ and never declared (warp's unprefixed `Var`).
    fn raw_var(&mut self, name: &str, ty: Type) -> VarId {
        let id = VarId(self.vars.len());
        let mut names = String::with_capacity(2 * name.len());
        names.put_all(&[name, name]);
        self.vars.push(VarInfo {
            names: Cow::Owned(names),
            ty,
            constant: None,
        });
        id
    }

    /// The label and type `wp.adjoint[e]` refers to, and the variable `e`
    /// evaluates to (a struct field is named by its path, `x.vec`, unevaluated).
    fn adjoint_source(&mut self, e: &Expr<'a>) -> LResult<(String, Type, Option<VarId>)> {
        if let ExprKind::Attribute(base, attr) = &e.kind {
            let (label, ty, _) = self.adjoint_source(base)?;
            let Type::Struct(id) = ty.strip_ref() else {
                return Err(self.err(format!("`{attr}` is not an attribute of {ty}")));
            };
            let def = id.def();
            let Some((_, field)) = def.field(attr) else {
                return Err(self.err(format!("'{}' has no attribute '{attr}'", def.key)));
            };
            return Ok((format!("{label}.{attr}"), field, None));
        }
        let v = self.expr(e)?;
        Ok((self.var(v).label().to_string(), *self.ty(v), Some(v)))
    }

    /// warp's `make_adjoint_target_var`: the adjoint storage `wp.adjoint[slice]`
    /// names (`adj_x`, `adj_x.vec`; an array's through its origin).
    pub(super) fn adjoint_target(&mut self, slice: &Expr<'a>) -> LResult<VarId> {
        let (label, ty, source) = self.adjoint_source(slice)?;
        let array = matches!(ty.strip_ref(), Type::Array { .. });
        let origin = match (array, source) {
            (true, Some(v)) => self.raw_origin(v),
            _ => None,
        };
        let name = match origin {
            Some(o) => self.origin_lvalue(&o, true),
            None => format!("adj_{label}"),
        };
        let ty = if array { ty.strip_ref() } else { ty };
        Ok(self.raw_var(&name, ty))
    }

    /// `wp.adjoint[slice] = value` (or `op=`): written in the forward code.
    pub(super) fn adjoint_store(
        &mut self,
        slice: &Expr<'a>,
        op: Option<BinOp>,
        value: &Expr<'a>,
    ) -> LResult<()> {
        let result = match op {
            None => self.expr(value)?,
            Some(op) => {
                let current = self.adjoint_target(slice)?;
                let rhs = self.expr(value)?;
                self.add_value_call(binop_builtin(op), &[current, rhs])?
            }
        };
        let target = self.adjoint_target(slice)?;
        forward!(self, "{} = {};", self.emit(target), self.emit(result));
        Ok(())
    }
}
