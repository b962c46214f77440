//! Module-level lowering: find the kernels of a file, lower each body with
//! `Adjoint`, and assemble warp's CPU or CUDA module around them.

use crate::text::Put;
use std::collections::BTreeSet;
use std::sync::LazyLock;

use std::cell::RefCell;

use super::adjoint::{Adjoint, BuiltFunc, FuncTable};
use super::lines::Lines;
use super::templates::*;
use super::types::{ConstVal, Scalar, StructDef, StructId, Type, Value, composite_type};
use super::{KernelIr, LowerError, Lowered, Target, TargetIr};
use crate::lang::ast::*;
use crate::lang::parse_module;

/// What the module level tells the lowering: source lines (for the line
/// comments), the names bound to the warp module and names imported from it.
pub struct Scope<'a> {
    pub lines: Vec<&'a str>,
    /// The syntax tree's arena, where the lowering puts the statements it
    /// rewrites (`continue` in unrolled loops) and the names they bind.
    pub arena: &'a bumpalo::Bump,
    /// The file name printed in `// file:line` comments above functions.
    pub filename: String,
    /// Module-level `@wp.func` definitions with their C++ names.
    functions: Vec<(&'a FunctionDef<'a>, Pos, String)>,
    warp_aliases: Vec<String>,
    /// (local name, warp name) from `from warp import x as y`.
    warp_imports: Vec<(String, String)>,
    /// Module-level constants (`TILE = wp.constant(16)`, `N = 8`): the last assignment wins.
    constants: Vec<(String, ConstVal)>,
    /// Module-level names bound to types: `@wp.struct` classes and aliases
    /// such as `vec5 = wp.types.vector(length=5, dtype=float)`.
    type_names: Vec<(String, Value)>,
}

type LResult<T> = Result<T, LowerError>;

fn err_at(pos: Pos, message: impl Into<String>) -> LowerError {
    LowerError {
        line: pos.line,
        col: pos.col,
        message: message.into(),
    }
}

impl<'a> Scope<'a> {
    fn new(
        source: &'a str,
        filename: &str,
        module: &'a Module<'a>,
        arena: &'a bumpalo::Bump,
    ) -> Self {
        let mut warp_aliases = Vec::new();
        let mut warp_imports = Vec::new();
        for stmt in module.body {
            match &stmt.kind {
                StmtKind::Import(names) => {
                    for (m, alias) in names.iter() {
                        if *m == "warp" {
                            warp_aliases.push(alias.unwrap_or("warp").to_string());
                        }
                    }
                }
                StmtKind::ImportFrom(m, names) if *m == "warp" => {
                    for (n, alias) in names.iter() {
                        warp_imports.push((alias.unwrap_or(n).to_string(), n.to_string()));
                    }
                }
                _ => {}
            }
        }
        let mut scope = Scope {
            lines: split_lines(source),
            arena,
            filename: filename.to_string(),
            functions: Vec::new(),
            warp_aliases,
            warp_imports,
            constants: Vec::new(),
            type_names: Vec::new(),
        };
        scope.collect_type_names(module);
        for stmt in module.body {
            if let StmtKind::Assign(targets, value) = &stmt.kind {
                if let [
                    Expr {
                        kind: ExprKind::Name(name),
                        ..
                    },
                ] = targets[..]
                {
                    scope.constants.retain(|(n, _)| n != name);
                    if let Some(c) = scope.module_constant_value(value) {
                        scope.constants.push((name.to_string(), c));
                    }
                }
            }
        }
        // warp numbers functions per name, globally, as they are decorated;
        // importing warp already defined some names.
        let mut counts: Vec<(String, usize)> = Vec::new();
        for stmt in module.body {
            if let StmtKind::FunctionDef(def) = &stmt.kind {
                if def.decorators.iter().any(|d| scope.names_warp(d, "func")) {
                    let key = native_identifier(def.name);
                    let n = match counts.iter_mut().find(|(k, _)| *k == key) {
                        Some(entry) => {
                            entry.1 += 1;
                            entry.1
                        }
                        None => {
                            let base = warp_defined_function_count(&key);
                            counts.push((key.clone(), base));
                            base
                        }
                    };
                    scope.functions.push((def, stmt.pos, format!("{key}_{n}")));
                }
            }
        }
        scope
    }

    /// The module-level `@wp.func` called `name` (the last definition wins, as in Python).
    pub fn user_function(&self, name: &str) -> Option<(&'a FunctionDef<'a>, Pos, &str)> {
        self.functions
            .iter()
            .rev()
            .find(|(d, _, _)| d.name == name)
            .map(|(d, p, n)| (*d, *p, n.as_str()))
    }

    /// The value of a literal, or of `wp.constant(literal)`, at module level.
    fn module_constant_value(&self, value: &Expr) -> Option<ConstVal> {
        let literal = |e: &Expr| match &e.kind {
            ExprKind::Constant(Constant::Int(v)) => Some(ConstVal::Int(*v)),
            ExprKind::Constant(Constant::Float(v)) => Some(ConstVal::Float(*v)),
            ExprKind::UnaryOp(UnaryOp::Neg, inner) => match inner.kind {
                ExprKind::Constant(Constant::Int(v)) => Some(ConstVal::Int(-v)),
                ExprKind::Constant(Constant::Float(v)) => Some(ConstVal::Float(-v)),
                _ => None,
            },
            _ => None,
        };
        match &value.kind {
            ExprKind::Call(func, args, kwargs) if kwargs.is_empty() && args.len() == 1 => {
                if self.names_warp(func, "constant") {
                    literal(&args[0])
                } else {
                    None
                }
            }
            _ => literal(value),
        }
    }

    /// A module-level int or float constant referenced by name inside a kernel.
    pub fn module_constant(&self, name: &str) -> Option<ConstVal> {
        self.constants
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| *c)
    }

    /// The C++ template spelling and element type of a `dtype=` argument:
    /// a Python builtin type keeps its name (`float`), a warp type is `wp::float32`.
    pub fn dtype_arg(&self, expr: &Expr) -> Option<(String, Scalar)> {
        let s = self.scalar_type(expr)?;
        match &expr.kind {
            ExprKind::Name(n) if matches!(*n, "float" | "int" | "bool") => Some((n.to_string(), s)),
            _ => Some((format!("wp::{}", s.name()), s)),
        }
    }

    pub fn is_warp_module(&self, name: &str) -> bool {
        self.warp_aliases.iter().any(|a| a == name)
    }

    /// The warp name behind a local name imported with `from warp import ...`.
    pub fn imported_builtin(&self, name: &str) -> Option<&str> {
        self.warp_imports
            .iter()
            .find(|(local, _)| local == name)
            .map(|(_, w)| w.as_str())
    }

    /// `expr` names warp attribute `attr` (`wp.kernel`, or `kernel` imported from warp).
    fn names_warp(&self, expr: &Expr, attr: &str) -> bool {
        match &expr.kind {
            ExprKind::Attribute(base, a) => {
                *a == attr && matches!(&base.kind, ExprKind::Name(m) if self.is_warp_module(m))
            }
            ExprKind::Name(n) => self.imported_builtin(n) == Some(attr),
            _ => false,
        }
    }

    /// The module-level struct or type alias called `name`.
    pub fn type_name(&self, name: &str) -> Option<Value> {
        self.type_names
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }

    /// `wp.X` or `wp.types.X` (or `X` imported from warp): the `X`.
    fn warp_attr<'e>(&self, expr: &'e Expr) -> Option<&'e str> {
        match &expr.kind {
            ExprKind::Attribute(base, a) => match &base.kind {
                ExprKind::Name(m) if self.is_warp_module(m) => Some(a),
                ExprKind::Attribute(inner, t) if *t == "types" => {
                    matches!(&inner.kind, ExprKind::Name(m) if self.is_warp_module(m)).then_some(*a)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// The scalar, vector, matrix, quaternion, transform or struct type an expression names.
    pub fn value_type(&self, expr: &Expr) -> Option<Value> {
        if let ExprKind::Name(n) = &expr.kind {
            if let Some(v) = self.type_name(n) {
                return Some(v);
            }
        }
        if let Some(s) = self.scalar_type(expr) {
            return Some(Value::Scalar(s));
        }
        if let ExprKind::Call(func, args, kwargs) = &expr.kind {
            return self.type_constructor_call(func, args, kwargs);
        }
        let name = match &expr.kind {
            ExprKind::Name(n) => self.imported_builtin(n)?,
            _ => self.warp_attr(expr)?,
        };
        composite_type(name)
    }

    /// `wp.types.vector(length=N, dtype=T)`, `wp.types.matrix(shape=(R, C), dtype=T)`,
    /// `wp.types.quaternion(dtype=T)`, `wp.types.transformation(dtype=T)`.
    fn type_constructor_call(
        &self,
        func: &Expr,
        args: &[Expr],
        kwargs: &[Keyword],
    ) -> Option<Value> {
        let name = match &func.kind {
            ExprKind::Name(n) => self.imported_builtin(n)?,
            _ => self.warp_attr(func)?,
        };
        let params: &[&str] = match name {
            "vector" => &["length", "dtype"],
            "matrix" => &["shape", "dtype"],
            "quaternion" | "transformation" => &["dtype"],
            _ => return None,
        };
        let mut bound: [Option<&Expr>; 2] = [None, None];
        for (i, a) in args.iter().enumerate() {
            *bound.get_mut(i).filter(|_| i < params.len())? = Some(a);
        }
        for kw in kwargs {
            let i = params.iter().position(|p| Some(*p) == kw.arg)?;
            bound[i] = Some(&kw.value);
        }
        let int = |e: Option<&Expr>| match e?.kind {
            ExprKind::Constant(Constant::Int(n)) if (1..=255).contains(&n) => Some(n as u8),
            _ => None,
        };
        let dtype = |e: Option<&Expr>| match e {
            Some(e) => self.scalar_type(e),
            None => Some(Scalar::Float32),
        };
        match name {
            "vector" => Some(Value::Vector(int(bound[0])?, dtype(bound[1])?)),
            "matrix" => {
                let ExprKind::Tuple(dims) = &bound[0]?.kind else {
                    return None;
                };
                let [r, c] = &dims[..] else {
                    return None;
                };
                Some(Value::Matrix(
                    int(Some(r))?,
                    int(Some(c))?,
                    dtype(bound[1])?,
                ))
            }
            "quaternion" => Some(Value::Quat(dtype(bound[0])?)),
            _ => Some(Value::Transform(dtype(bound[0])?)),
        }
    }

    /// Module-level `@wp.struct` classes and type aliases, in definition order.
    fn collect_type_names(&mut self, module: &Module) {
        for stmt in module.body {
            match &stmt.kind {
                StmtKind::ClassDef(class)
                    if class
                        .decorators
                        .iter()
                        .any(|d| self.names_warp(d, "struct")) =>
                {
                    let mut fields = Vec::new();
                    let mut ok = true;
                    for s in class.body {
                        if let StmtKind::AnnAssign(target, annotation, _) = &s.kind {
                            match (&target.kind, self.annotation_type(annotation)) {
                                (ExprKind::Name(n), Ok(t)) if !matches!(t, Type::Ref(_)) => {
                                    fields.push((n.to_string(), t))
                                }
                                _ => ok = false,
                            }
                        }
                    }
                    self.type_names.retain(|(n, _)| n != class.name);
                    if ok {
                        let key = native_identifier(class.name);
                        let id = StructId::intern(StructDef::new(&key, fields));
                        self.type_names
                            .push((class.name.to_string(), Value::Struct(id)));
                    }
                }
                StmtKind::Assign(targets, value) => {
                    if let [
                        Expr {
                            kind: ExprKind::Name(name),
                            ..
                        },
                    ] = targets[..]
                    {
                        let ty = match &value.kind {
                            ExprKind::Call(..) | ExprKind::Attribute(..) | ExprKind::Name(_) => {
                                self.value_type(value)
                            }
                            _ => None,
                        };
                        self.type_names.retain(|(n, _)| n != name);
                        if let Some(v) = ty {
                            self.type_names.push((name.to_string(), v));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn scalar_type(&self, expr: &Expr) -> Option<Scalar> {
        let name = match &expr.kind {
            ExprKind::Name(n) => match *n {
                "float" => return Some(Scalar::Float32),
                "int" => return Some(Scalar::Int32),
                "bool" => return Some(Scalar::Bool),
                _ => self.imported_builtin(n)?,
            },
            _ => self.warp_attr(expr)?,
        };
        match name {
            "float" => Some(Scalar::Float32),
            "int" => Some(Scalar::Int32),
            "handle" => Some(Scalar::UInt64),
            n => Scalar::from_name(n),
        }
    }

    /// The type a parameter annotation denotes.
    pub fn annotation_type(&self, expr: &Expr) -> LResult<Type> {
        if let Some(v) = self.value_type(expr) {
            return Ok(v.to_type());
        }
        // The subscript spelling: `wp.array[float]`, `wp.array2d[wp.vec3]`, `wp.array[float, 2]`.
        if let ExprKind::Subscript([base, index]) = &expr.kind {
            let array_ndim = ["array", "array1d", "array2d", "array3d", "array4d"]
                .iter()
                .position(|a| self.names_warp(base, a))
                .map(|k| k.max(1));
            if let Some(default_ndim) = array_ndim {
                let (dtype, ndim) = match &index.kind {
                    ExprKind::Tuple(items) if items.len() == 2 && default_ndim == 1 => {
                        match items[1].kind {
                            ExprKind::Constant(Constant::Int(n)) if (1..=4).contains(&n) => {
                                (&items[0], n as usize)
                            }
                            _ => {
                                return Err(err_at(
                                    items[1].pos,
                                    "array ndim must be an integer from 1 to 4",
                                ));
                            }
                        }
                    }
                    _ => (index, default_ndim),
                };
                let value = self.value_type(dtype).ok_or_else(|| {
                    err_at(
                        dtype.pos,
                        "arrays of this dtype are not supported by this version of the lowering",
                    )
                })?;
                return Ok(Type::Array { dtype: value, ndim });
            }
        }
        if let ExprKind::Call(func, args, kwargs) = &expr.kind {
            let array_ndim = ["array", "array1d", "array2d", "array3d", "array4d"]
                .iter()
                .position(|a| self.names_warp(func, a))
                .map(|k| k.max(1));
            if let Some(default_ndim) = array_ndim {
                let mut dtype = None;
                let mut ndim = default_ndim;
                for (k, a) in args.iter().enumerate() {
                    if k == 0 && default_ndim >= 1 {
                        dtype = Some(a);
                    } else {
                        return Err(err_at(
                            a.pos,
                            "unexpected positional argument in array annotation",
                        ));
                    }
                }
                for kw in kwargs.iter() {
                    match kw.arg {
                        Some("dtype") => dtype = Some(&kw.value),
                        Some("ndim")
                            if array_ndim == Some(1)
                                && matches!(func.kind, ExprKind::Attribute(_, a) if a == "array") =>
                        {
                            match kw.value.kind {
                                ExprKind::Constant(Constant::Int(n)) if (1..=4).contains(&n) => {
                                    ndim = n as usize
                                }
                                _ => {
                                    return Err(err_at(
                                        kw.value.pos,
                                        "ndim must be an integer from 1 to 4",
                                    ));
                                }
                            }
                        }
                        _ => {
                            return Err(err_at(
                                kw.value.pos,
                                "unsupported argument in array annotation",
                            ));
                        }
                    }
                }
                let dtype =
                    dtype.ok_or_else(|| err_at(expr.pos, "array annotation needs a dtype"))?;
                let scalar = self.value_type(dtype).ok_or_else(|| {
                    err_at(
                        dtype.pos,
                        "arrays of this dtype are not supported by this version of the lowering",
                    )
                })?;
                return Ok(Type::Array {
                    dtype: scalar,
                    ndim,
                });
            }
        }
        Err(err_at(
            expr.pos,
            "unsupported type annotation for a kernel argument",
        ))
    }
}

/// warp's `make_full_qualified_name`: only `[0-9a-zA-Z_]` survive in C++ names.
pub fn native_identifier(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// How many `@wp.func`s of this name warp 1.19.0 itself defines when it is
/// imported (its math helpers); user functions of the same name count on.
fn warp_defined_function_count(key: &str) -> usize {
    match key {
        "transform_compose"
        | "transform_decompose"
        | "transform_from_matrix"
        | "transform_to_matrix" => 3,
        "norm_huber"
        | "norm_l1"
        | "norm_l2"
        | "norm_pseudo_huber"
        | "quat_between_vectors"
        | "quat_from_euler"
        | "quat_to_euler"
        | "quat_to_rpy"
        | "quat_twist"
        | "quat_twist_angle"
        | "quat_twist_angle_signed"
        | "smooth_normalize"
        | "transform_twist"
        | "transform_wrench"
        | "velocity_at_point" => 1,
        _ => 0,
    }
}

/// Python's `str.splitlines()` for the line terminators that occur in source files.
fn split_lines(source: &str) -> Vec<&str> {
    source
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// A kernel found at module level, with its options, or why its decorator
/// cannot be honoured (kept per kernel, so `--keep-going` can pass over it).
struct KernelDef<'m> {
    def: &'m FunctionDef<'m>,
    pos: Pos,
    enable_backward: bool,
    option_error: Option<LowerError>,
}

/// The options of a `@wp.kernel(...)` decorator.
fn kernel_options(args: &[Expr], kwargs: &[Keyword]) -> LResult<bool> {
    if let Some(a) = args.first() {
        return Err(err_at(a.pos, "unexpected positional argument to wp.kernel"));
    }
    let mut enable_backward = true;
    for kw in kwargs.iter() {
        match (kw.arg, &kw.value.kind) {
            (Some("enable_backward"), ExprKind::Constant(Constant::Bool(b))) => {
                enable_backward = *b
            }
            _ => {
                return Err(err_at(
                    kw.value.pos,
                    "unsupported wp.kernel option (this version supports enable_backward=True/False)",
                ));
            }
        }
    }
    Ok(enable_backward)
}

fn find_kernels<'m>(scope: &Scope<'_>, module: &'m Module<'m>) -> Vec<KernelDef<'m>> {
    let mut out = Vec::new();
    for stmt in module.body {
        let StmtKind::FunctionDef(def) = &stmt.kind else {
            continue;
        };
        let mut kernel = None;
        for d in def.decorators {
            if scope.names_warp(d, "kernel") {
                kernel = Some(Ok(true));
            } else if let ExprKind::Call(func, args, kwargs) = &d.kind {
                if scope.names_warp(func, "kernel") {
                    kernel = Some(kernel_options(args, kwargs));
                }
            }
        }
        if let Some(options) = kernel {
            let (enable_backward, option_error) = match options {
                Ok(b) => (b, None),
                Err(e) => (true, Some(e)),
            };
            out.push(KernelDef {
                def,
                pos: stmt.pos,
                enable_backward,
                option_error,
            });
        }
    }
    out
}

/// A lowered kernel body, ready to be placed in either target's template.
struct KernelBody<'s> {
    name: String,
    mangled: String,
    enable_backward: bool,
    adj: Adjoint<'s>,
}

fn mangle(source: &str, name: &str) -> String {
    let h = xxhash_rust::xxh3::xxh3_64_with_seed(source.as_bytes(), name.len() as u64)
        ^ xxhash_rust::xxh3::xxh3_64(name.as_bytes());
    format!("{}_{:08x}", native_identifier(name), h as u32)
}

pub fn lower_module(
    source: &str,
    filename: &str,
    cpu: bool,
    cuda: bool,
    keep_going: bool,
) -> LResult<Lowered> {
    with_arena(|arena| {
        lower_parsed(
            source,
            parse_module(source, arena)?,
            arena,
            filename,
            (cpu, cuda, true),
            keep_going,
        )
    })
}

/// Lowers a parsed module for the targets asked for. The CPU module source is
/// always assembled (the CPU checks read its entry points); the CUDA one only
/// when `cuda_module`, since its kernels are the whole of what the CUDA checks
/// need and joining tens of KB per sample that nobody keeps is pure cost.
///
/// With `keep_going`, a kernel that fails is left out of the module and its
/// error kept in `Lowered::skipped`; otherwise the first failure is the result.
pub fn lower_parsed<'a>(
    source: &'a str,
    module: Module<'a>,
    arena: &'a bumpalo::Bump,
    filename: &str,
    (cpu, cuda, cuda_module): (bool, bool, bool),
    keep_going: bool,
) -> LResult<Lowered> {
    let scope = Scope::new(source, filename, &module, arena);
    let funcs = RefCell::new(FuncTable::default());
    let kernel_defs = find_kernels(&scope, &module);
    let mut bodies = Vec::with_capacity(kernel_defs.len());
    let mut used_builtins = BTreeSet::new();
    let mut dtypes = BTreeSet::new();
    let mut skipped = Vec::new();
    for k in &kernel_defs {
        let built_before = funcs.borrow().built.len();
        let structs_before = funcs.borrow().structs.len();
        let lowered = match &k.option_error {
            Some(e) => Err(e.clone()),
            None => Adjoint::new(&scope, &funcs, k.def, false).and_then(|mut adj| {
                adj.lower_function(k.def, k.pos)?;
                Ok(adj)
            }),
        };
        let adj = match lowered {
            Ok(adj) => adj,
            Err(e) if keep_going => {
                // The functions only this kernel reached go with it.
                funcs.borrow_mut().built.truncate(built_before);
                funcs.borrow_mut().structs.truncate(structs_before);
                skipped.push((k.def.name.to_string(), e));
                continue;
            }
            Err(e) => return Err(e),
        };
        used_builtins.extend(adj.builtins_used.iter().cloned());
        dtypes.extend(adj.dtypes());
        bodies.push(KernelBody {
            name: k.def.name.to_string(),
            mangled: mangle(source, k.def.name),
            enable_backward: k.enable_backward,
            adj,
        });
    }
    mark_backward_use(&mut funcs.borrow_mut(), &bodies);
    let table = funcs.borrow();
    let generate = |target, module| assemble(target, &scope, &table, &bodies, module);
    Ok(Lowered {
        cpu: cpu.then(|| generate(Target::Cpu, true)),
        cuda: cuda.then(|| generate(Target::Cuda, cuda_module)),
        builtins: used_builtins.into_iter().collect(),
        dtypes: dtypes.into_iter().map(String::from).collect(),
        launch_dims: bodies
            .iter()
            .map(|k| k.adj.kernel_dim as u32)
            .max()
            .unwrap_or(0),
        skipped,
    })
}

/// A function's adjoint is generated only when a kernel with a backward pass reaches it.
fn mark_backward_use(funcs: &mut FuncTable, bodies: &[KernelBody<'_>]) {
    let mut work: Vec<usize> = bodies
        .iter()
        .filter(|k| k.enable_backward)
        .flat_map(|k| k.adj.called.iter().copied())
        .collect();
    while let Some(i) = work.pop() {
        let f = &mut funcs.built[i].1;
        if !f.used_by_backward {
            f.used_by_backward = true;
            work.extend(f.callees.iter().copied());
        }
    }
}

/// Renders a lowered `@wp.func` into the pieces both targets' templates need.
pub(super) fn render_function(adj: &Adjoint<'_>, def: &FunctionDef, native: &str) -> BuiltFunc {
    let indent = "    ";
    let ret = adj
        .return_var
        .as_ref()
        .and_then(|r| (r.len() == 1).then(|| adj.var(r[0]).ty.clone()));
    let params: Vec<Type> = adj.args.iter().map(|a| adj.var(*a).ty.clone()).collect();
    let forward_args: Vec<String> = adj
        .args
        .iter()
        .map(|a| {
            format!(
                "{} var_{}",
                adj.var(*a).ty.ctype(false),
                adj.var(*a).label()
            )
        })
        .collect();
    let mut reverse_args = forward_args.clone();
    for a in &adj.args {
        let v = adj.var(*a);
        reverse_args.push(format!("{} & adj_{}", v.ty.ctype(false), v.label()));
    }
    if let Some(r) = &ret {
        reverse_args.push(format!("{} & adj_ret", r.ctype(false)));
    }
    BuiltFunc {
        native: native.to_string(),
        params,
        ret,
        callees: adj.called.clone(),
        used_by_backward: false,
        forward_args,
        reverse_args,
        forward_body: forward_body(adj, Body::Function, indent),
        reverse_body: reverse_body(adj, Body::Function, indent),
        first_line: def.first_line,
    }
}

fn function_source(target: Target, scope: &Scope<'_>, f: &BuiltFunc, reverse: bool) -> String {
    let callable = if target == Target::Cuda {
        "CUDA_CALLABLE "
    } else {
        ""
    };
    let ret = f
        .ret
        .as_ref()
        .map_or("void".to_string(), |t| t.ctype(false).into_owned());
    let (ret, name, args, body) = if reverse {
        let body = if f.used_by_backward {
            f.reverse_body.clone()
        } else {
            "\t// reverse mode disabled (no backward-enabled kernel depends on this function)\n"
                .to_string()
        };
        (
            "void".to_string(),
            format!("adj_{}", f.native),
            &f.reverse_args,
            body,
        )
    } else {
        (
            ret,
            f.native.clone(),
            &f.forward_args,
            f.forward_body.clone(),
        )
    };
    format!(
        "\n// {}:{}\nstatic {callable}{ret} {name}(\n    {})\n{{\n{body}}}\n\n",
        scope.filename,
        f.first_line,
        args.join(",\n    ")
    )
}

fn assemble(
    target: Target,
    scope: &Scope<'_>,
    funcs: &FuncTable,
    bodies: &[KernelBody<'_>],
    with_module: bool,
) -> TargetIr {
    let kernels: Vec<KernelIr> = bodies
        .iter()
        .map(|k| {
            let (forward, backward) = match target {
                Target::Cuda => cuda_kernel(k),
                Target::Cpu => cpu_kernel(k),
            };
            KernelIr {
                name: k.name.clone(),
                forward,
                backward: backward.unwrap_or_default(),
            }
        })
        .collect();
    let module = with_module.then(|| module_source(target, scope, funcs, bodies, &kernels));
    TargetIr { module, kernels }
}

/// The whole module: header, every function, then per kernel its forward and
/// backward functions (and, for the CPU, its args struct and entry points).
fn module_source(
    target: Target,
    scope: &Scope<'_>,
    funcs: &FuncTable,
    bodies: &[KernelBody<'_>],
    kernels: &[KernelIr],
) -> String {
    // Every piece is made first and the module joined once at its exact size:
    // a module's IR is tens of KB, and growing a String by doubling, then
    // copying it behind the header, cost more than the pieces themselves.
    let functions: Vec<String> = [false, true]
        .into_iter()
        .flat_map(|adjoint| {
            // Forward functions first, then every adjoint (callees before callers, as built).
            funcs
                .built
                .iter()
                .map(move |(_, f)| function_source(target, scope, f, adjoint))
        })
        .collect();
    // The CPU module's args structs and entry points.
    let cpu_parts: Vec<(String, String)> = match target {
        Target::Cuda => Vec::new(),
        Target::Cpu => bodies
            .iter()
            .map(|k| {
                let ndim = k.adj.kernel_dim.to_string();
                let fill = |t: &str| t.replace("@NAME@", &k.mangled).replace("@NDIM@", &ndim);
                let mut entries = fill(CPU_MODULE_FORWARD);
                if k.enable_backward {
                    entries.put(&fill(CPU_MODULE_BACKWARD));
                }
                (args_struct(k), entries)
            })
            .collect(),
    };
    let structs: Vec<String> = funcs
        .structs
        .iter()
        .map(|id| super::adjoint::structs::struct_source(id.def()))
        .collect();
    let mut pieces: Vec<&str> =
        Vec::with_capacity(structs.len() + functions.len() + 8 * kernels.len());
    pieces.extend(structs.iter().map(String::as_str));
    pieces.extend(functions.iter().map(String::as_str));
    for (i, k) in kernels.iter().enumerate() {
        let cpu = cpu_parts.get(i);
        pieces.extend(cpu.map(|(args, _)| args.as_str()));
        pieces.extend(["\n\n", &k.forward, "\n\n"]);
        if !k.backward.is_empty() {
            pieces.extend(["\n\n", &k.backward, "\n\n"]);
        }
        pieces.extend(cpu.map(|(_, entries)| entries.as_str()));
    }
    let header = if target == Target::Cpu {
        CPU_HEADER
    } else {
        CUDA_HEADER
    };
    // SIMD substring search: the pieces are the whole module, tens of KB.
    static BFLOAT16: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new("bfloat16"));
    let bfloat16 = pieces.iter().any(|p| BFLOAT16.find(p.as_bytes()).is_some());
    let prefix = [if bfloat16 { "" } else { NO_BFLOAT16 }, header, CAST_MACROS];
    let len = prefix.iter().chain(&pieces).map(|p| p.len()).sum();
    let mut module = String::with_capacity(len);
    for p in prefix.iter().chain(&pieces) {
        module.put(p);
    }
    module
}

fn args_struct(k: &KernelBody<'_>) -> String {
    let mut s = format!("struct wp_args_{} {{\n", k.mangled);
    for &a in &k.adj.args {
        let v = k.adj.var(a);
        s.put(&format!("    {} {};\n", v.ty.ctype(false), v.label()));
    }
    s.put("};\n");
    s
}

/// Appends body lines under the function's indentation, as warp's `codegen_func_*` joins them.
fn push_lines<'l>(out: &mut String, indent: &str, lines: impl IntoIterator<Item = &'l str>) {
    for l in lines {
        out.put(indent);
        out.put(l);
        out.push('\n');
    }
}

/// One body line built in place: `indent` + pieces + newline.
fn push_line(out: &mut String, indent: &str, pieces: &[&str]) {
    out.put(indent);
    for p in pieces {
        out.put(p);
    }
    out.push('\n');
}

fn push_argument_vars(out: &mut String, adj: &Adjoint<'_>, indent: &str, with_adjoints: bool) {
    push_lines(out, indent, ["//---------", "// argument vars"]);
    for &a in &adj.args {
        let v = adj.var(a);
        push_typed(out, indent, &v.ty, false, v.name());
        out.put_all(&[" = _wp_args->", v.label(), ";\n"]);
    }
    if with_adjoints {
        for &a in &adj.args {
            let v = adj.var(a);
            push_typed(out, indent, &v.ty, false, v.adj());
            out.put_all(&[" = _wp_adj_args->", v.label(), ";\n"]);
        }
    }
}

/// Starts a declaration line: `indent`, the C++ type, a space, the name.
fn push_typed(out: &mut String, indent: &str, ty: &Type, value_type: bool, name: &str) {
    out.put(indent);
    ty.push_ctype(out, value_type);
    out.push(' ');
    out.put(name);
}

fn push_primal_vars(out: &mut String, adj: &Adjoint<'_>, indent: &str, requires_grad: bool) {
    push_lines(out, indent, ["//---------", "// primal vars"]);
    for &id in &adj.locals {
        let v = adj.var(id);
        if let Type::Tile(t) = v.ty {
            push_line(
                out,
                indent,
                &[
                    &t.ctype(),
                    " ",
                    v.name(),
                    " = ",
                    &t.cinit(requires_grad),
                    ";",
                ],
            );
            continue;
        }
        if let Type::StorageStr(shared) = v.ty {
            let text = if shared { "\"shared\"" } else { "\"register\"" };
            push_line(out, indent, &["const wp::str ", v.name(), " = ", text, ";"]);
            continue;
        }
        match v.constant {
            None => {
                push_typed(out, indent, &v.ty, false, v.name());
                out.put(";\n");
            }
            Some(c) => {
                out.put(indent);
                out.put("const ");
                push_typed(out, "", &v.ty, false, v.name());
                out.put(" = ");
                c.push_c_str(out);
                // warp's `constant_str` suffixes wide and unsigned integers.
                if let (ConstVal::Int(_), Type::Scalar(s)) = (c, v.ty) {
                    match s {
                        Scalar::UInt32 => out.push('u'),
                        Scalar::Int64 => out.put("ll"),
                        Scalar::UInt64 => out.put("ull"),
                        _ => {}
                    }
                }
                out.put(";\n");
            }
        }
    }
}

fn push_dual_vars(out: &mut String, adj: &Adjoint<'_>, indent: &str) {
    push_lines(out, indent, ["//---------", "// dual vars"]);
    for &id in &adj.locals {
        let v = adj.var(id);
        match v.ty {
            // Shared tiles hold their gradient: the adjoint aliases the primal.
            Type::Tile(t) if t.shared => push_line(
                out,
                indent,
                &[&t.ctype(), "& ", v.adj(), " = ", v.name(), ";"],
            ),
            Type::Tile(t) => push_line(out, indent, &[&t.ctype(), " ", v.adj(), "{};"]),
            _ => {
                push_typed(out, indent, &v.ty, true, v.adj());
                out.put(" = {};\n");
            }
        }
    }
}

/// Which function a body is generated for: argument loading and the exit of
/// the reverse pass depend on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Body {
    CpuKernel,
    CudaKernel,
    Function,
}

/// Bytes a body will take, roughly: enough that appending it rarely grows the string.
fn body_estimate(adj: &Adjoint<'_>, reverse: bool) -> usize {
    let passes: &[&Lines] = if reverse {
        &[adj.body_replay(), adj.body_reverse()]
    } else {
        &[adj.body_forward()]
    };
    let declarations = adj.locals.len() * if reverse { 2 } else { 1 };
    let body: usize = passes.iter().map(|l| l.text_len() + 9 * l.len()).sum();
    body + 64 * (declarations + adj.args.len()) + 512
}

fn forward_body(adj: &Adjoint<'_>, kind: Body, indent: &str) -> String {
    let mut out = String::with_capacity(body_estimate(adj, false));
    push_forward_body(&mut out, adj, kind, indent);
    out
}

/// Appends the forward body; returns where its primal-var block sits in `out`.
fn push_forward_body(
    out: &mut String,
    adj: &Adjoint<'_>,
    kind: Body,
    indent: &str,
) -> std::ops::Range<usize> {
    if kind == Body::CpuKernel {
        push_argument_vars(out, adj, indent, false);
    }
    let primal_start = out.len();
    push_primal_vars(out, adj, indent, false);
    let primal = primal_start..out.len();
    push_lines(out, indent, ["//---------", "// forward"]);
    let grid_stride = kind == Body::CudaKernel;
    for f in adj.body_forward().iter() {
        // A grid-stride CUDA kernel leaves the thread's iteration instead of returning.
        if grid_stride && f.trim_start().starts_with("return;") {
            push_line(out, indent, &[&f.replace("return;", "continue;")]);
        } else {
            push_line(out, indent, &[f]);
        }
    }
    primal
}

/// Whether the primal-var block reads the same in the forward and the
/// backward pass: only a shared tile's initializer names `requires_grad`.
fn primal_vars_pass_independent(adj: &Adjoint<'_>) -> bool {
    !adj.locals
        .iter()
        .any(|&id| matches!(adj.var(id).ty, Type::Tile(t) if t.shared && !t.view))
}

fn reverse_body(adj: &Adjoint<'_>, kind: Body, indent: &str) -> String {
    let mut out = String::with_capacity(body_estimate(adj, true));
    push_reverse_body(&mut out, adj, kind, indent, None);
    out
}

/// Appends the backward body. `primal` is the forward pass's primal-var
/// block, at the same indent, when it reads the same in both passes
/// ([`primal_vars_pass_independent`]): copied rather than written again.
fn push_reverse_body(
    out: &mut String,
    adj: &Adjoint<'_>,
    kind: Body,
    indent: &str,
    primal: Option<&str>,
) {
    if kind == Body::CpuKernel {
        push_argument_vars(out, adj, indent, true);
    }
    match primal {
        Some(block) => out.put(block),
        None => push_primal_vars(out, adj, indent, true),
    }
    push_dual_vars(out, adj, indent);
    push_lines(out, indent, ["//---------", "// forward"]);
    push_lines(out, indent, adj.body_replay().iter());
    push_lines(out, indent, ["//---------", "// reverse"]);
    push_lines(out, indent, adj.body_reverse().iter().rev());
    push_lines(
        out,
        indent,
        [if kind == Body::CudaKernel {
            "continue;"
        } else {
            "return;"
        }],
    );
}

/// Appends `template` with each placeholder replaced by its pieces, in one pass.
fn fill_template(out: &mut String, template: &str, fills: &[(&str, &[&str])]) {
    let mut rest = template;
    while let Some(at) = rest.find('@') {
        let hit = fills.iter().find(|(key, _)| rest[at..].starts_with(key));
        let Some((key, pieces)) = hit else {
            out.put(&rest[..=at]);
            rest = &rest[at + 1..];
            continue;
        };
        out.put(&rest[..at]);
        pieces.iter().for_each(|p| out.put(p));
        rest = &rest[at + key.len()..];
    }
    out.put(rest);
}

fn cuda_kernel(k: &KernelBody<'_>) -> (String, Option<String>) {
    let indent = "        ";
    const SEP: &str = ",\n    ";
    // The parameter lists written in place: `format!` per parameter and a
    // `join` cost more than the text (kernels take up to 16 parameters).
    let params = |out: &mut String, prefix: &str| {
        for &a in &k.adj.args {
            let v = k.adj.var(a);
            out.put(SEP);
            v.ty.push_ctype(out, false);
            out.put_all(&[" ", prefix, v.label()]);
        }
    };
    let mut fwd_args = String::with_capacity(48 * (k.adj.args.len() + 1));
    fwd_args.put_all(&[
        "wp::launch_bounds_t<",
        itoa::Buffer::new().format(k.adj.kernel_dim),
        "> dim",
    ]);
    params(&mut fwd_args, "var_");
    let open = |name: &str, args: &str, room: usize| {
        let mut s = String::with_capacity(CUDA_KERNEL_OPEN.len() + args.len() + room);
        fill_template(
            &mut s,
            CUDA_KERNEL_OPEN,
            &[("@NAME@", &[&k.mangled, name]), ("@ARGS@", &[args])],
        );
        s
    };
    let mut forward = open(
        "_cuda_kernel_forward",
        &fwd_args,
        body_estimate(&k.adj, false),
    );
    let primal = push_forward_body(&mut forward, &k.adj, Body::CudaKernel, indent);
    forward.put(CUDA_KERNEL_CLOSE);
    let backward = k.enable_backward.then(|| {
        let mut args = fwd_args;
        params(&mut args, "adj_");
        let mut b = open("_cuda_kernel_backward", &args, body_estimate(&k.adj, true));
        let primal = primal_vars_pass_independent(&k.adj).then(|| &forward[primal]);
        push_reverse_body(&mut b, &k.adj, Body::CudaKernel, indent, primal);
        b.put(CUDA_KERNEL_CLOSE);
        b
    });
    (forward, backward)
}

fn cpu_kernel(k: &KernelBody<'_>) -> (String, Option<String>) {
    let indent = "    ";
    let open = |kind: &str, args: &str| {
        CPU_KERNEL_OPEN
            .replace("@NAME@", &k.mangled)
            .replace("@KIND@", kind)
            .replace("@ARGS@", args)
    };
    let base = format!(
        "wp::launch_bounds_t<{}> dim,\n    size_t task_index",
        k.adj.kernel_dim
    );
    let mut forward = open(
        "forward",
        &format!("{base},\n    wp_args_{} *_wp_args", k.mangled),
    );
    forward.reserve(body_estimate(&k.adj, false));
    let primal = push_forward_body(&mut forward, &k.adj, Body::CpuKernel, indent);
    forward.push('}');
    let backward = k.enable_backward.then(|| {
        let mut b = open(
            "backward",
            &format!(
                "{base},\n    wp_args_{0} *_wp_args,\n    wp_args_{0} *_wp_adj_args",
                k.mangled
            ),
        );
        b.reserve(body_estimate(&k.adj, true));
        let primal = primal_vars_pass_independent(&k.adj).then(|| &forward[primal]);
        push_reverse_body(&mut b, &k.adj, Body::CpuKernel, indent, primal);
        b.push('}');
        b
    });
    (forward, backward)
}
